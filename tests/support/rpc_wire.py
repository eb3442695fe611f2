"""Helpers for the JSON-RPC runtime tests: in-memory pipes, a raw peer that speaks bytes to a
Connection under test, and a bounded `asyncio.run`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from typing import Any, TypeVar

from acp_kit import v2 as acp

T = TypeVar("T")
TIMEOUT = 10.0


def run(coro: Coroutine[Any, Any, T], timeout: float = TIMEOUT) -> T:
    """Run one test coroutine; a hang fails the test instead of the suite."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


class MemoryWriter:
    """The writing end of an in-memory pipe: bytes go straight into an asyncio.StreamReader."""

    def __init__(self, target: asyncio.StreamReader) -> None:
        self.target = target
        self.closed = False

    def write(self, data: bytes) -> None:
        if self.closed:
            raise BrokenPipeError("the pipe is closed")
        self.target.feed_data(data)

    async def drain(self) -> None:
        await asyncio.sleep(0)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.target.feed_eof()


def pipe() -> tuple[asyncio.StreamReader, MemoryWriter]:
    reader = asyncio.StreamReader()
    return reader, MemoryWriter(reader)


def connect_pair(
    agent: acp.AgentBase, client: acp.ClientBase
) -> tuple[acp.Connection, acp.Connection]:
    """Our agent and our client joined by two in-memory pipes, both started."""
    to_agent, client_out = pipe()
    to_client, agent_out = pipe()
    agent_conn = acp.Connection(agent, to_agent, agent_out)
    client_conn = acp.Connection(client, to_client, client_out)
    agent_conn.start()
    client_conn.start()
    return agent_conn, client_conn


class RawPeer:
    """The far end of a Connection under test: it writes raw lines and reads raw lines."""

    def __init__(self, handler: acp.jsonrpc.RoleBase, connection: type | None = None) -> None:
        """`connection`: the Connection class of the handler's package, when it is not
        acp_kit's (a package generated in a test has a runtime of its own)."""
        self.inbox, self._to_conn = pipe()  # what the connection reads
        self._from_conn, writer = pipe()  # what the connection writes
        made = acp.Connection if connection is None else connection
        self.connection = made(handler, self.inbox, writer)
        self.connection.start()

    def send_bytes(self, data: bytes) -> None:
        self._to_conn.write(data)

    def send(self, message: Any) -> None:
        self.send_bytes(json.dumps(message).encode() + b"\n")

    def eof(self) -> None:
        self._to_conn.close()

    async def recv_line(self, timeout: float = 5.0) -> bytes:
        line = await asyncio.wait_for(self._from_conn.readline(), timeout)
        assert line.endswith(b"\n"), f"the connection closed its output: {line!r}"
        return line

    async def recv(self, timeout: float = 5.0) -> Any:
        return json.loads(await self.recv_line(timeout))

    async def call(self, message: Any) -> Any:
        """Send one message and return the next thing the connection writes."""
        self.send(message)
        return await self.recv()

    async def rest(self) -> bytes:
        """Everything the connection writes until it closes its output."""
        return await asyncio.wait_for(self._from_conn.read(), 5.0)


def request(rid: Any, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def error(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": body}


INITIALIZE_PARAMS = {"protocolVersion": 2, "info": {"name": "test-client", "version": "1.0"}}

# The sessionUpdate kinds of one full turn of examples/echo_agent.py, in order.
FULL_TURN = [
    "user_message",
    "state_update",
    "plan_update",
    "agent_message_chunk",
    "agent_message_chunk",
    "agent_message_chunk",
    "tool_call_update",
    "state_update",
    "state_update",
    "tool_call_update",
    "tool_call_content_chunk",
    "tool_call_update",
    "usage_update",
    "state_update",
]
