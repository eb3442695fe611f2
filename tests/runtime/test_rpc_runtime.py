"""The JSON-RPC runtime: calls in flight both ways, responses matched by id and decoded with
the request's result type, cancellation, ordered whole writes, framing, and shutdown."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import sys
from typing import Any

import pytest
from acp_kit import v2 as acp

from tests.support.lanes import seed_lane
from tests.support.rpc_wire import RawPeer, connect_pair, error, notification, request, run


def implementation() -> acp.Implementation:
    return acp.Implementation(name="test", version="1")


class Agent(acp.AgentBase):
    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        await asyncio.sleep(random.random() / 1000)  # answers come back out of order
        return acp.NewSessionResponse(session_id="sess" + params.cwd)


class Client(acp.ClientBase):
    def __init__(self) -> None:
        self.updates: list[acp.SessionUpdate] = []

    async def session_request_permission(
        self, params: acp.RequestPermissionRequest
    ) -> acp.RequestPermissionResponse:
        await asyncio.sleep(random.random() / 1000)
        return acp.RequestPermissionResponse(
            outcome=acp.RequestPermissionOutcomeSelected(option_id=params.title)
        )

    async def session_update(self, params: acp.UpdateSessionNotification) -> None:
        await asyncio.sleep(random.random() / 1000)  # a slow handler must not reorder updates
        self.updates.append(params.update)


def permission(title: str) -> acp.RequestPermissionRequest:
    option = acp.PermissionOption(option_id="o", name="O", kind="allow_once")
    return acp.RequestPermissionRequest(session_id="s", title=title, options=[option])


def chunk(index: int) -> acp.UpdateSessionNotification:
    text = acp.ContentBlockText(text=str(index))
    return acp.UpdateSessionNotification(
        session_id="s", update=acp.SessionUpdateAgentMessageChunk(message_id="m", content=text)
    )


def test_many_concurrent_requests_both_ways() -> None:
    async def scenario() -> None:
        agent, client = Agent(), Client()
        connect_pair(agent, client)
        sessions = [
            client.agent.session_new(acp.NewSessionRequest(cwd=f"/{i}")) for i in range(150)
        ]
        grants = [agent.client.session_request_permission(permission(f"t{i}")) for i in range(150)]
        answers = await asyncio.gather(*sessions, *grants)
        assert [a.session_id for a in answers[:150]] == [f"sess/{i}" for i in range(150)]
        assert all(isinstance(a, acp.NewSessionResponse) for a in answers[:150])
        assert [a.outcome for a in answers[150:]] == [
            acp.RequestPermissionOutcomeSelected(option_id=f"t{i}") for i in range(150)
        ]

    run(scenario())


def test_notifications_reach_the_handler_in_arrival_order() -> None:
    async def scenario() -> None:
        agent, client = Agent(), Client()
        _, client_conn = connect_pair(agent, client)
        await asyncio.gather(*(agent.client.session_update(chunk(i)) for i in range(100)))
        await agent.connection.close()
        await client_conn.wait_closed()  # EOF: queued notifications are handled before closing
        texts = [
            u.content.text
            for u in client.updates
            if isinstance(u, acp.SessionUpdateAgentMessageChunk)
        ]
        assert texts == [str(i) for i in range(100)]

    run(scenario())


def test_writes_are_whole_and_in_order_through_a_real_pipe() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        read_fd, write_fd = os.pipe()
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), os.fdopen(write_fd, "wb")
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        conn = acp.Connection(acp.AgentBase(), asyncio.StreamReader(), writer)
        reader = asyncio.StreamReader(limit=2**20)
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb")
        )
        payload = "x" * 50_000  # bigger than a pipe buffer: writers must wait on drain()
        sends = [conn.notify("_test/n", {"i": i, "pad": payload}) for i in range(60)]
        received: list[int] = []

        async def read_all() -> None:
            while len(received) < 60:
                received.append(json.loads(await reader.readline())["params"]["i"])

        await asyncio.gather(read_all(), *sends)
        assert received == list(range(60))
        await conn.close()

    run(scenario())


def test_responses_are_decoded_with_the_result_type_and_extra_keys_are_kept() -> None:
    async def scenario() -> None:
        peer = RawPeer(acp.ClientBase())
        stub = acp.AgentStub(peer.connection)
        prompt: list[acp.ContentBlock] = [acp.ContentBlockText(text="hi")]
        call = asyncio.ensure_future(
            stub.session_prompt(acp.PromptRequest(session_id="s", prompt=prompt))
        )
        sent = await peer.recv()
        assert sent == request(
            0, "session/prompt", {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}
        )
        peer.send({"jsonrpc": "2.0", "id": 0, "result": {"messageId": "m1", "_vendor": [1]}})
        answer = await call
        assert answer == acp.PromptResponse(message_id="m1", extra={"_vendor": [1]})
        assert acp.encode(answer) == {"messageId": "m1", "_vendor": [1]}

        call = asyncio.ensure_future(stub.session_new(acp.NewSessionRequest(cwd="/")))
        assert (await peer.recv())["id"] == 1
        peer.send({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": 5}})
        with pytest.raises(acp.DecodeError) as caught:
            await call
        assert str(caught.value) == "$.sessionId: expected a string, got an integer"

    run(scenario())


def test_error_and_malformed_responses_fail_the_call() -> None:
    async def scenario() -> None:
        peer = RawPeer(acp.ClientBase())
        cases = [
            ({"error": {"code": -32002, "message": "Resource not found", "data": {"x": 1}}}, None),
            ({"error": {"code": -32601, "message": "Method not found"}}, None),
            ({"result": {}, "error": {"code": 1, "message": "m"}}, "Invalid response"),
            ({"error": {"code": "x"}}, "Invalid response"),
        ]
        for rid, (body, problem) in enumerate(cases):
            call = asyncio.ensure_future(peer.connection.request("_x", {}))
            assert (await peer.recv())["id"] == rid
            peer.send({"jsonrpc": "2.0", "id": rid, **body})
            with pytest.raises(acp.RpcError) as caught:
                await call
            if problem is None:
                assert caught.value.to_json() == body["error"]
            else:
                assert (caught.value.code, caught.value.message) == (-32600, problem)
        call = asyncio.ensure_future(peer.connection.request("_x"))
        await peer.recv()
        peer.send({"id": 4, "result": {}})  # no "jsonrpc": "2.0"
        with pytest.raises(acp.RpcError, match="Invalid response"):
            await call

    run(scenario())


def test_unknown_response_ids_are_dropped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        peer = RawPeer(Agent())
        call = asyncio.ensure_future(peer.connection.request("_x"))
        await peer.recv()
        peer.send({"jsonrpc": "2.0", "id": "0", "result": "wrong id type"})
        peer.send({"jsonrpc": "2.0", "id": 42, "result": None})
        peer.send(error(None, -32700, "Parse error"))
        peer.send({"jsonrpc": "2.0", "id": 0, "result": "right"})
        assert await call == "right"

    with caplog.at_level(logging.WARNING, logger="acp_v2.connection"):
        run(scenario())
    assert [r.getMessage() for r in caplog.records] == [
        "dropped a response to the unknown request id '0'",
        "dropped a response to the unknown request id 42",
        "the peer reported an error: Parse error (-32700)",
    ]


def test_cancelling_a_call_sends_cancel_request_and_stops_waiting(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> None:
        peer = RawPeer(acp.ClientBase())
        stub = acp.AgentStub(peer.connection)
        call = asyncio.ensure_future(stub.session_new(acp.NewSessionRequest(cwd="/")))
        assert (await peer.recv())["id"] == 0
        call.cancel()
        assert await peer.recv() == notification("$/cancel_request", {"requestId": 0})
        with pytest.raises(asyncio.CancelledError):
            await call
        peer.send({"jsonrpc": "2.0", "id": 0, "result": {"sessionId": "late"}})  # dropped quietly
        # Ids are not reused after a cancelled call.
        call = asyncio.ensure_future(stub.session_new(acp.NewSessionRequest(cwd="/")))
        assert (await peer.recv())["id"] == 1
        peer.send({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}})
        assert (await call).session_id == "s1"

    with caplog.at_level(logging.DEBUG, logger="acp_v2.connection"):
        run(scenario())
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_timed_out_call_is_cancelled_on_the_peer_too() -> None:
    class Slow(acp.AgentBase):
        cancelled = asyncio.Event()

        async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
            raise AssertionError("not cancelled")

    async def scenario() -> None:
        agent, client = Slow(), Client()
        connect_pair(agent, client)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05):
                await client.agent.session_new(acp.NewSessionRequest(cwd="/"))
        await asyncio.wait_for(agent.cancelled.wait(), 5)

    run(scenario())


def test_eof_in_the_middle_of_a_message_fails_pending_calls() -> None:
    async def scenario() -> None:
        peer = RawPeer(acp.ClientBase())
        call = asyncio.ensure_future(peer.connection.request("_x"))
        await peer.recv()
        peer.send_bytes(b'{"jsonrpc":"2.0","id":0,"res')  # cut short by EOF
        peer.eof()
        with pytest.raises(acp.ConnectionClosed):
            await call
        await peer.connection.wait_closed()
        # The unfinished message was treated as a parse error, then the output was closed.
        assert json.loads(await peer.rest()) == error(
            None, -32700, "Parse error", "Unterminated string starting at character 24"
        )
        with pytest.raises(acp.ConnectionClosed):
            await peer.connection.request("_x")

    run(scenario())


def test_a_last_message_without_newline_is_still_handled() -> None:
    async def scenario() -> None:
        peer = RawPeer(Agent())
        peer.send_bytes(json.dumps(request(1, "session/new", {"cwd": "/z"})).encode())
        peer.eof()
        await peer.connection.wait_closed()
        assert json.loads(await peer.rest()) == {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"sessionId": "sess/z"},
        }

    run(scenario())


def test_eof_lets_running_handlers_answer_before_closing() -> None:
    async def scenario() -> None:
        peer = RawPeer(Agent())
        peer.send(request(1, "session/new", {"cwd": "/a"}))
        peer.send(request(2, "session/new", {"cwd": "/b"}))
        peer.eof()
        await peer.connection.wait_closed()
        lines = (await peer.rest()).splitlines()
        assert sorted(json.loads(line)["id"] for line in lines) == [1, 2]

    run(scenario())


def test_close_fails_pending_calls_and_cancels_running_handlers() -> None:
    class Blocked(acp.AgentBase):
        async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
            await asyncio.sleep(60)
            raise AssertionError("not cancelled")

    async def scenario() -> None:
        peer = RawPeer(Blocked())
        peer.send(request(7, "session/new", {"cwd": "/"}))
        call = asyncio.ensure_future(peer.connection.request("_x"))
        assert (await peer.recv())["id"] == 0
        await peer.connection.close()
        with pytest.raises(acp.ConnectionClosed):
            await call
        # The running request was answered -32800 before the output closed.
        assert json.loads(await peer.rest()) == error(7, -32800, "Request cancelled")
        assert peer.connection.closed
        with pytest.raises(acp.ConnectionClosed):
            await peer.connection.notify("_x")
        await peer.connection.close()  # idempotent

    run(scenario())


def test_a_peer_that_exits_fails_pending_calls_instead_of_hanging() -> None:
    script = 'import sys; sys.stdin.readline(); sys.stdout.write(\'{"jsonrpc":"2.0","id":0\')'

    async def scenario() -> None:
        async with acp.connect_process(Client(), sys.executable, "-c", script) as conn:
            with pytest.raises(acp.ConnectionClosed):
                await acp.AgentStub(conn).session_new(acp.NewSessionRequest(cwd="/"))
            await conn.wait_closed()
            assert await conn.wait() == 0

    run(scenario())


def test_frames_split_on_newline_only_and_line_separators_are_escaped_on_output() -> None:
    async def scenario() -> None:
        client = Client()
        peer = RawPeer(client)
        text = "a\u2028b\u2029c\u0085d"
        raw = json.dumps(notification("session/update", acp.encode(chunk(0))), ensure_ascii=False)
        peer.send_bytes(raw.replace('"0"', json.dumps(text, ensure_ascii=False)).encode() + b"\n")
        reply = asyncio.ensure_future(
            acp.AgentStub(peer.connection).session_new(acp.NewSessionRequest(cwd=text))
        )
        line = await peer.recv_line()
        assert b"\\u2028" in line and "\u2028".encode() not in line
        assert json.loads(line)["params"]["cwd"] == text
        reply.cancel()
        await peer.recv()  # the $/cancel_request
        peer.eof()
        await peer.connection.wait_closed()
        assert [u.content.text for u in client.updates] == [text]  # type: ignore[attr-defined]

    run(scenario())


def test_unknown_update_kinds_reach_the_handler_whole() -> None:
    async def scenario() -> None:
        client = Client()
        peer = RawPeer(client)
        update = {"sessionUpdate": "_vendor_progress", "pct": 50, "x": [1]}
        peer.send(notification("session/update", {"sessionId": "s", "update": update}))
        peer.eof()
        await peer.connection.wait_closed()
        assert isinstance(client.updates[0], acp.SessionUpdateOther)
        assert acp.encode(client.updates[0]) == update

    run(scenario())


def test_a_handler_serves_one_connection_and_needs_one_to_call_out() -> None:
    async def scenario() -> None:
        agent = Agent()
        with pytest.raises(RuntimeError, match="not attached"):
            _ = agent.client
        peer = RawPeer(agent)
        with pytest.raises(ValueError, match="already serves"):
            acp.Connection(agent, acp.memory_pair()[0])
        await peer.connection.close()

    run(scenario())


def test_rpc_error_text() -> None:
    assert (
        str(acp.RpcError(-32601, "Method not found", "x/y")) == 'Method not found (-32601): "x/y"'
    )
    assert str(acp.RpcError(-32800, "Request cancelled")) == "Request cancelled (-32800)"
    assert acp.RpcError(1, "m", None).to_json() == {"code": 1, "message": "m", "data": None}


@pytest.mark.parametrize("params", [{"requestId": 0.5}, {"requestId": [0]}, [0], None])
def test_malformed_cancel_requests_are_ignored(params: Any) -> None:
    async def scenario() -> None:
        peer = RawPeer(Agent())
        peer.send(notification("$/cancel_request", params))
        assert (await peer.call(request(1, "session/new", {"cwd": "/"})))["id"] == 1

    run(scenario())


# What the TypeScript SDK's draft (the default lane) sends that alpha.3 did not know, and the
# variant class each decodes to here.
DRAFT_UPDATES = [
    ({"sessionUpdate": "state_update", "state": "idle", "stopReason": "error",
      "error": {"code": -32603, "message": "boom"}, "background": []},
     "SessionUpdateStateUpdateIdleError"),
    ({"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "paused", "name": "n",
      "capabilities": {"cancel": {}}}, "SessionUpdateToolCallUpdate"),
    ({"sessionUpdate": "compaction_update", "compactionId": "k", "status": "in_progress"},
     "SessionUpdateCompactionUpdate"),
    ({"sessionUpdate": "notice", "severity": "info", "title": "T"}, "SessionUpdateNotice"),
    ({"sessionUpdate": "available_commands_update",
      "availableCommands": [{"type": "command", "name": "x", "description": "d"}]},
     "SessionUpdateAvailableCommandsUpdate"),
]  # fmt: skip
DRAFT_IDS = [update["sessionUpdate"] for update, _ in DRAFT_UPDATES]


@pytest.mark.parametrize(("update", "cls"), DRAFT_UPDATES, ids=DRAFT_IDS)
def test_draft_values_reach_the_handler_as_their_variant_and_are_kept(
    update: dict[str, Any], cls: str
) -> None:
    async def scenario() -> acp.SessionUpdate:
        client = Client()
        peer = RawPeer(client)
        peer.send(notification("session/update", {"sessionId": "s", "update": update}))
        peer.eof()
        await peer.connection.wait_closed()
        assert len(client.updates) == 1
        return client.updates[0]

    decoded = run(scenario())
    assert type(decoded) is getattr(acp, cls)
    assert acp.encode(decoded) == update


@pytest.mark.parametrize(("update", "cls"), DRAFT_UPDATES, ids=DRAFT_IDS)
def test_an_alpha_3_peer_keeps_the_draft_values_it_does_not_know(
    update: dict[str, Any], cls: str
) -> None:
    seed = seed_lane("v2")  # unknown kinds in the open variant, unknown fields in `extra`
    decoded = seed.decode(seed.SessionUpdate, update)
    if update["sessionUpdate"] == "state_update":  # alpha.3's idle state is one class
        assert type(decoded) is seed.SessionUpdateStateUpdateIdle
        assert decoded.extra == {"error": update["error"], "background": []}
    else:
        new_kind = not hasattr(seed, cls)  # notice and compaction_update came after alpha.3
        assert type(decoded) is (seed.SessionUpdateOther if new_kind else getattr(seed, cls))
    assert seed.encode(decoded) == update
