"""Permission policies: how a client answers an agent's `session/request_permission`.

A policy is any `async def policy(request) -> option | None`: `request` is the lane's
`RequestPermissionRequest` (its `options` are the same in every protocol version), the result
one of its `options`, or None to dismiss the request (answered `cancelled`; an option that was
not offered is a dismissal too). `allow`, `deny` and `ask_user` are ready-made.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, TypeAlias

from ..vocab import PermissionOption, RequestPermissionRequest

__all__ = ["PermissionPolicy", "allow", "ask_user", "deny"]
PermissionPolicy: TypeAlias = Callable[
    [RequestPermissionRequest], Awaitable[PermissionOption | None]
]
"""Decides a permission request: the option picked, or None to dismiss it."""
_log: Final = logging.getLogger(__name__.rpartition(".")[0] + ".client")


def _first(options: Sequence[Any], *kinds: str) -> Any:
    for kind in kinds:
        for option in options:
            if str(option.kind) == kind:
                return option
    return None


async def allow(request: RequestPermissionRequest) -> PermissionOption | None:
    """Allow: `allow_once` if offered, else `allow_always`, else dismiss."""
    picked: PermissionOption | None = _first(request.options, "allow_once", "allow_always")
    return picked


async def deny(request: RequestPermissionRequest) -> PermissionOption | None:
    """Refuse: `reject_once` if offered, else `reject_always`, else dismiss."""
    picked: PermissionOption | None = _first(request.options, "reject_once", "reject_always")
    return picked


async def ask_user(request: RequestPermissionRequest) -> PermissionOption | None:
    """Ask on the terminal (the question on stderr, the answer from stdin); dismiss when stdin
    is not a terminal or the answer is empty or unknown."""
    title = _title(request)
    if not sys.stdin.isatty():
        _log.warning("permission request %r dismissed: stdin is not a terminal", title)
        return None
    options: Sequence[Any] = request.options
    lines = [title] + [f"  {n}. {o.name} ({o.kind})" for n, o in enumerate(options, 1)]
    print("\n".join(lines), file=sys.stderr, flush=True)
    print("choice (number, empty to dismiss): ", end="", file=sys.stderr, flush=True)
    answer = (await asyncio.to_thread(sys.stdin.readline)).strip()
    if answer.isdigit() and len(answer) < 4 and 1 <= int(answer) <= len(options):
        picked: PermissionOption = options[int(answer) - 1]
        return picked
    return None


def _title(request: Any) -> str:
    """What the request asks: v2's `title`, or v1's tool call."""
    title = getattr(request, "title", None)
    if isinstance(title, str):
        return title
    call = getattr(request, "tool_call", None)
    named = getattr(call, "title", None)
    return f"Allow {named if isinstance(named, str) else getattr(call, 'tool_call_id', '?')!r}?"
