"""`Connection.notifications_handled()`: once it returns, every notification read before the
call has been handled, in order, queued or held; it never waits forever (closed connection,
called from a notification handler). A v1 client needs it: a turn's updates all come before
its prompt's answer."""

from __future__ import annotations

import asyncio
from typing import Any

from acp_kit import v1 as acp
from acp_kit.runtime import jsonrpc

from tests.support.rpc_wire import run


def update(n: int) -> dict[str, Any]:
    content = {"type": "text", "text": str(n)}
    return {"sessionUpdate": "agent_message_chunk", "content": content}


class SlowClient(acp.ClientBase):
    """Takes a while over each update; can ask for the barrier from inside a handler."""

    def __init__(self) -> None:
        self.handled: list[str] = []
        self.inside: list[bool] = []

    async def session_update(self, params: acp.SessionNotification) -> None:
        await asyncio.sleep(0.002)
        self.handled.append(acp.encode(params.update)["content"]["text"])
        if len(self.handled) == 1:
            await self.connection.notifications_handled()  # would wait for itself
            self.inside.append(True)


def feed(updates: int, **options: Any) -> tuple[SlowClient, acp.Connection, Any]:
    client = SlowClient()
    peer, end = acp.memory_pair()
    connection = acp.Connection(client, end, **options)
    connection.start()
    for n in range(updates):
        note = acp.SessionNotification(
            session_id="s", update=acp.decode(acp.SessionUpdate, update(n))
        )
        message = {"jsonrpc": "2.0", "method": "session/update", "params": acp.encode(note)}
        peer.feed(jsonrpc.dump_line(message))
    return client, connection, peer


def test_it_returns_once_every_notification_read_before_was_handled() -> None:
    async def scenario() -> tuple[list[str], list[bool]]:
        client, connection, _ = feed(20)
        await asyncio.sleep(0)  # the reader takes the 20 lines in
        await connection.notifications_handled()
        handled = list(client.handled)
        await connection.close()
        return handled, client.inside

    handled, inside = run(scenario())
    assert handled == [str(n) for n in range(20)]
    assert inside == [True]  # asked from a handler, it returned at once


def test_held_notifications_count_too() -> None:
    async def scenario() -> list[str]:
        client, connection, _ = feed(30, max_queued_notifications=2, max_held_messages=100)
        await asyncio.sleep(0)
        await connection.notifications_handled()
        handled = list(client.handled)
        await connection.close()
        return handled

    assert run(scenario()) == [str(n) for n in range(30)]


def test_it_returns_at_once_when_nothing_more_can_be_handled() -> None:
    async def scenario() -> list[str]:
        client, connection, peer = feed(0)
        peer.feed_eof()  # EOF: the reader and the worker finish
        await connection.wait_closed()
        await asyncio.wait_for(connection.notifications_handled(), 1)
        unstarted = acp.Connection(SlowClient(), acp.memory_pair()[0])
        await asyncio.wait_for(unstarted.notifications_handled(), 1)
        return client.handled

    assert run(scenario()) == []
