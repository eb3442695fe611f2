"""Helpers for the workspace tests: a bounded `asyncio.run`, the error a call answers with
(as the JSON of its answer), and whether a process still runs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

from templates.runtime.jsonrpc import RpcError

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T], timeout: float = 20.0) -> T:
    """Run one test coroutine; a hang fails the test instead of the suite."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


async def refusal(call: Awaitable[object]) -> dict[str, Any]:
    """The error a call answers with (it must fail with an RpcError)."""
    try:
        await call
    except RpcError as exc:
        return exc.to_json()
    raise AssertionError("the call succeeded")


def invalid(param: str, reason: str) -> dict[str, Any]:
    return {"code": -32602, "message": "Invalid params", "data": {"path": param, "reason": reason}}


def not_found(param: str, reason: str) -> dict[str, Any]:
    data = {"path": param, "reason": reason}
    return {"code": -32002, "message": "Resource not found", "data": data}


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie, waiting for its parent, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as file:
            state = file.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def gone_soon(pid: int, within: float = 5.0) -> bool:
    """Whether the process stops running within `within` seconds (SIGKILL is not instant)."""
    deadline = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
