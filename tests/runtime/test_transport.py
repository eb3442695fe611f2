"""The transport seam: `memory_pair()` keeps order, bounds what is unread and ends in EOF; any
object with `receive`/`send`/`close`/`abort` carries a Connection (here one that hands over a
byte at a time, which the line reader must frame all the same)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acp_kit import v2 as acp
from acp_kit.runtime import jsonrpc

from tests.support.rpc_wire import request, run


def test_a_memory_pair_keeps_order_bounds_the_unread_and_ends_in_eof() -> None:
    async def scenario() -> list[Any]:
        left, right = acp.memory_pair(buffer_bytes=10)
        sent = asyncio.ensure_future(left.send(b"x" * 25))
        await asyncio.sleep(0.01)
        waiting = not sent.done()  # 25 bytes unread, over the 10 allowed: the sender waits
        got = await right.receive()
        await sent
        await left.send(b"yz")
        await left.close()
        rest = [await right.receive(), await right.receive(), await right.receive()]
        with pytest.raises(BrokenPipeError):
            await left.send(b"late")
        return [waiting, got, *rest]

    assert run(scenario()) == [True, b"x" * 25, b"yz", b"", b""]


def test_a_peer_that_closed_its_end_makes_sending_fail() -> None:
    async def scenario() -> None:
        left, right = acp.memory_pair()
        right.abort()
        with pytest.raises(BrokenPipeError):
            await left.send(b"anyone?")

    run(scenario())


class Trickle:
    """A transport of its own: the peer's bytes one at a time; what is sent is collected."""

    def __init__(self, data: bytes) -> None:
        self._data = list(data)
        self.sent = b""
        self.closed = False

    async def receive(self) -> bytes:
        await asyncio.sleep(0)
        return bytes([self._data.pop(0)]) if self._data else b""

    async def send(self, data: bytes) -> None:
        self.sent += data

    async def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True


def test_any_transport_carries_a_connection() -> None:
    class Agent(acp.AgentBase):
        async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
            return acp.NewSessionResponse(session_id="s_" + params.cwd.strip("/"))

    lines = [jsonrpc.dump_line(request(i, "session/new", {"cwd": f"/{i}"})) for i in (1, 2)]
    transport = Trickle(b"".join(lines))

    async def scenario() -> None:
        connection = acp.Connection(Agent(), transport)
        connection.start()
        await connection.wait_closed()  # EOF: the answers go out, then the transport closes

    run(scenario())
    assert transport.closed
    assert transport.sent == (
        b'{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s_1"}}\n'
        b'{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s_2"}}\n'
    )
