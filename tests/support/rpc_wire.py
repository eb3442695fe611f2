"""Helpers for the JSON-RPC runtime tests: a raw peer that speaks bytes to a Connection under
test over an in-memory transport pair, in-memory pipes for the reader/writer form of
`Connection`, and a bounded `asyncio.run`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from typing import Any, TypeVar

from acp_kit import v2 as acp
from acp_kit.runtime import connection

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
    """Our agent and our client joined by an in-memory transport pair, both started."""
    agent_end, client_end = acp.memory_pair()
    agent_conn = acp.Connection(agent, agent_end)
    client_conn = acp.Connection(client, client_end)
    agent_conn.start()
    client_conn.start()
    return agent_conn, client_conn


class RawPeer:
    """The far end of a Connection under test, over an in-memory transport pair: it writes
    raw lines and reads raw lines."""

    def __init__(self, handler: connection.RoleBase, runtime: Any = None, **options: Any) -> None:
        """`runtime`: the package whose `Connection` and `memory_pair` serve the handler, when
        it is not acp_kit (a package generated in a test has a runtime of its own)."""
        made = acp if runtime is None else runtime
        self._end, theirs = made.memory_pair()
        self.connection = made.Connection(handler, theirs, **options)
        self.connection.start()
        self._buffer = b""
        self._eof = False

    def send_bytes(self, data: bytes) -> None:
        self._end.feed(data)

    def send(self, message: Any) -> None:
        self.send_bytes(json.dumps(message).encode() + b"\n")

    def eof(self) -> None:
        self._end.feed_eof()

    async def _more(self) -> bool:
        chunk = await self._end.receive()
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True

    async def readline(self) -> bytes:
        """The next line the connection writes, b"" once it closed its output (as
        `asyncio.StreamReader.readline`)."""
        while b"\n" not in self._buffer:
            if self._eof or not await self._more():
                data, self._buffer = self._buffer, b""
                return data
        end = self._buffer.index(b"\n") + 1
        found, self._buffer = self._buffer[:end], self._buffer[end:]
        return found

    async def recv_line(self, timeout: float = 5.0) -> bytes:
        line = await asyncio.wait_for(self.readline(), timeout)
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

        async def everything() -> bytes:
            while not self._eof and await self._more():
                pass
            data, self._buffer = self._buffer, b""
            return data

        return await asyncio.wait_for(everything(), 5.0)


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
