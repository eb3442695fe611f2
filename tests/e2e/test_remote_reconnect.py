"""Reconnecting, our client against our server, with the exact updates the client applied:

- over HTTP a stream cut mid-turn is opened again with `Last-Event-ID`: the turn's updates are
  exactly those of an undisturbed turn (nothing lost, nothing twice), and no re-attach happens;
- a session taken over by another connection answers the next POST 409: the client re-attaches
  it (`session/resume`, or `session/load` where the agent offers no resume) and the turn runs,
  the load's replay kept from the client: no update of the first turn is applied twice;
- over WebSocket a dropped socket is the connection's end (the agent stops the session's turn):
  a new socket is initialized and the session resumed, and what the client applied stays.
"""

from __future__ import annotations

import asyncio
from typing import Any

import acp_kit as acp
import pytest
from acp_kit.transports.server import AgentApp

from tests.support.remote import CuttingProxy, port_of, serving
from tests.support.rpc_wire import run

CHUNKS = [f"c{i} " for i in range(1, 11)]


class Gated(acp.Agent):
    """Ten chunks; the sixth waits for `gate` (so a test can cut the network between)."""

    gate: asyncio.Event

    async def prompt(self, turn: acp.Turn) -> acp.TurnStopReason:
        for index, chunk in enumerate(CHUNKS):
            if index == 5 and turn.text == "gated":
                await self.gate.wait()
            await turn.say(chunk)
        return "end_turn"


class NoResume(Gated):
    """Advertises no `session/resume` on v1: a re-attach there is a `session/load`."""

    def advertise(self, lane: Any, capabilities: Any) -> Any:
        if lane.dialect == "v1":
            capabilities.session_capabilities.resume = acp.UNSET
        return capabilities


def shape(update: Any) -> tuple[str, str]:
    wire = acp.encode(update)
    content = wire.get("content")
    text = content.get("text", "") if isinstance(content, dict) else wire.get("state", "")
    return wire["sessionUpdate"], text or ""


def expected_turn(version: int) -> list[tuple[str, str]]:
    chunks = [("agent_message_chunk", chunk) for chunk in CHUNKS]
    if version == 1:
        return chunks
    return [("user_message", ""), ("state_update", "running"), *chunks, ("state_update", "idle")]


@pytest.mark.parametrize("version", [1, 2])
def test_a_stream_cut_mid_turn_resumes_after_the_last_event(version: int) -> None:
    agent = Gated()

    async def main() -> tuple[list[tuple[str, str]], str | None, int]:
        agent.gate = asyncio.Event()
        async with serving(agent) as (_app, url, _ws):
            proxy = await CuttingProxy(port_of(url)).start()
            seen: list[Any] = []
            try:
                async with acp.connect_remote(proxy.url(url), protocol=version) as remote:
                    session = await remote.new_session()

                    def on_update(update: Any) -> None:
                        seen.append(update)
                        if shape(update) == ("agent_message_chunk", "c5 ") and not proxy.cuts:
                            proxy.cut()
                            asyncio.get_running_loop().call_later(0.3, agent.gate.set)

                    session.subscribe(on_update)
                    result = await session.prompt("gated")
                    transport = remote.connection.transport
                    reattached = len(transport.sessions.reattached)  # type: ignore[attr-defined]
                    assert [shape(u) for u in result.updates] == [shape(u) for u in seen]
                    return [shape(u) for u in seen], result.stop_reason, reattached
            finally:
                await proxy.close()

    updates, stop_reason, reattached = run(main(), 30)
    assert updates == expected_turn(version)
    assert (stop_reason, reattached) == ("end_turn", 0)


@pytest.mark.parametrize(("version", "agent_class"), [(2, Gated), (1, Gated), (1, NoResume)])
def test_a_session_taken_over_is_reattached_on_the_next_prompt(
    version: int, agent_class: type[Gated]
) -> None:
    agent = agent_class()

    async def main() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        async with serving(agent) as (_app, url, _ws):
            async with acp.connect_remote(url, protocol=version) as first:
                session = await first.new_session()
                seen: list[Any] = []
                session.subscribe(seen.append)
                await session.prompt("one")
                async with acp.connect_remote(url, protocol=version) as second:
                    await second.resume_session(session.id, replay=False)  # takes it over
                    result = await session.prompt("two")  # 409, re-attached, posted again
                made = first.connection.transport.sessions.reattached  # type: ignore[attr-defined]
                load = agent_class is NoResume
                assert made == [(session.id, "session/load" if load else "session/resume")]
                return [shape(u) for u in seen], [shape(u) for u in result.updates]

    everything, second_turn = run(main(), 30)
    turn = expected_turn(version)
    assert second_turn == turn
    # the first turn once (a load's replay is not applied); v2's resume reports the state once
    report = [("state_update", "idle")] if version == 2 else []
    assert everything == turn + report + turn


@pytest.mark.parametrize("version", [1, 2])
def test_a_dropped_websocket_is_opened_again_and_the_session_resumed(version: int) -> None:
    agent = Gated()

    async def main() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        async with serving(agent) as (_app, _url, ws_url):
            proxy = await CuttingProxy(port_of(ws_url)).start()
            try:
                async with acp.connect_remote(proxy.url(ws_url), protocol=version) as remote:
                    session = await remote.new_session()
                    seen: list[Any] = []
                    session.subscribe(seen.append)
                    await session.prompt("one")
                    proxy.cut()
                    await asyncio.sleep(0.5)  # the socket is opened again, the session resumed
                    result = await session.prompt("two")
                    made = remote.connection.transport.sessions.reattached  # type: ignore[attr-defined]
                    assert made == [(session.id, "session/resume")]
                    return [shape(u) for u in seen], [shape(u) for u in result.updates]
            finally:
                await proxy.close()

    everything, second_turn = run(main(), 30)
    turn = expected_turn(version)
    assert second_turn == turn
    # v2's resume reports the session's state (idle) once; nothing of the first turn again
    report = [("state_update", "idle")] if version == 2 else []
    assert everything == turn + report + turn


class Sticky(AgentApp):
    """Sets an affinity cookie on every answer (as a load balancer does) and records the
    `Cookie` header of every request."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cookies: list[tuple[str, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await super().__call__(scope, receive, send)
            return
        cookie = dict(scope["headers"]).get(b"cookie", b"").decode()
        self.cookies.append((scope["type"], cookie))

        async def sticky_send(message: Any) -> None:
            if message["type"] in ("http.response.start", "websocket.accept"):
                headers = [*message.get("headers", []), (b"set-cookie", b"worker=w1; Path=/")]
                message = {**message, "headers": headers}
            await send(message)

        await super().__call__(scope, receive, sticky_send)


def test_affinity_cookies_come_back_on_every_request_and_every_new_socket() -> None:
    async def main() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        app = Sticky(Gated())
        async with serving(app) as (_app, url, ws_url):
            async with acp.connect_remote(url) as remote:
                await (await remote.new_session()).prompt("one")
            over_http = list(app.cookies)
            app.cookies.clear()
            proxy = await CuttingProxy(port_of(ws_url)).start()
            try:
                async with acp.connect_remote(proxy.url(ws_url)) as remote:
                    session = await remote.new_session()
                    proxy.cut()
                    await asyncio.sleep(0.5)
                    await session.prompt("two")
            finally:
                await proxy.close()
            return over_http, list(app.cookies)

    over_http, over_ws = run(main(), 30)
    assert over_http[0] == ("http", "")  # initialize: nothing set yet
    assert set(over_http[1:]) == {("http", "worker=w1")}  # every POST, GET and DELETE after it
    assert over_ws == [("websocket", ""), ("websocket", "worker=w1")]
