"""Runtime limits and knobs: per-call timeouts, abandoned ids, duplicate ids until the answer
is in the output, unencodable values, batches per lane, the message tap, and the schema's
batch marker in the generator."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from acp_kit import v1 as acp_v1
from acp_kit import v2 as acp

from codegen.parse.methods import batch_titles
from tests.support.lanes import seed_lane
from tests.support.rpc_wire import MemoryWriter, RawPeer, error, notification, request, run


class Blocked(acp.AgentBase):
    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        await self.release.wait()
        return acp.NewSessionResponse(session_id="s")


def test_a_stub_call_times_out_with_a_clear_error_and_cancels_on_the_peer() -> None:
    async def scenario() -> None:
        peer = RawPeer(acp.ClientBase())
        stub = acp.AgentStub(peer.connection)
        call = asyncio.ensure_future(stub.session_new(acp.NewSessionRequest(cwd="/"), timeout=0.05))
        assert (await peer.recv())["id"] == 0
        with pytest.raises(TimeoutError) as caught:
            await call
        assert str(caught.value) == (
            "session/new: no answer within 0.05 s (request id 0); the peer was asked to cancel it"
        )
        assert await peer.recv() == notification("$/cancel_request", {"requestId": 0})
        peer.send({"jsonrpc": "2.0", "id": 0, "result": {"sessionId": "late"}})  # quiet
        # The connection's default applies when the call gives none.
        peer.connection.request_timeout = 0.05
        with pytest.raises(TimeoutError, match="request id 1"):
            await stub.session_new(acp.NewSessionRequest(cwd="/"))

    run(scenario())


def test_abandoned_ids_are_capped(caplog: pytest.LogCaptureFixture) -> None:
    from acp_kit.runtime.connection import MAX_ABANDONED_IDS

    async def scenario() -> None:
        peer = RawPeer(acp.ClientBase())
        calls = [
            asyncio.ensure_future(peer.connection.request("_x", timeout=0.01))
            for _ in range(MAX_ABANDONED_IDS + 904)
        ]
        results = await asyncio.gather(*calls, return_exceptions=True)
        assert all(isinstance(r, TimeoutError) for r in results)
        # Late answers: the newest MAX_ABANDONED_IDS are dropped quietly, older ones are not
        # remembered any more.
        for rid in (0, 903, 904, MAX_ABANDONED_IDS + 903):
            peer.send({"jsonrpc": "2.0", "id": rid, "result": None})
        peer.eof()
        await peer.connection.wait_closed()

    with caplog.at_level(logging.WARNING, logger="acp_v2.connection"):
        run(scenario())
    assert [r.getMessage() for r in caplog.records] == [
        "dropped a response to the unknown request id 0",
        "dropped a response to the unknown request id 903",
    ]


class StalledWriter(MemoryWriter):
    """A writer whose drain() waits until released: the peer does not read."""

    def __init__(self, target: asyncio.StreamReader) -> None:
        super().__init__(target)
        self.flowing = asyncio.Event()

    async def drain(self) -> None:
        await self.flowing.wait()


def test_a_request_id_stays_taken_until_its_answer_is_in_the_output() -> None:
    class Quick(acp.AgentBase):
        async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
            return acp.NewSessionResponse(session_id=params.cwd)

    async def scenario() -> None:
        inbox, out = asyncio.StreamReader(), asyncio.StreamReader()
        writer = StalledWriter(out)
        conn = acp.Connection(Quick(), inbox, writer, write_buffer_bytes=1)
        conn.start()
        inbox.feed_data(json.dumps(request(1, "session/new", {"cwd": "/a"})).encode() + b"\n")
        for _ in range(20):
            await asyncio.sleep(0)
        # The answer is written but not drained (the peer does not read): id 1 is still taken.
        inbox.feed_data(json.dumps(request(1, "session/new", {"cwd": "/b"})).encode() + b"\n")
        for _ in range(20):
            await asyncio.sleep(0)
        writer.flowing.set()
        first, second = json.loads(await out.readline()), json.loads(await out.readline())
        assert first == {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "/a"}}
        assert second == error(
            1, -32600, "Invalid request", "a request with this id is still running"
        )
        await conn.close()

    run(scenario())


def test_an_unencodable_value_fails_in_the_caller_and_the_connection_carries_on() -> None:
    async def scenario() -> None:
        peer = RawPeer(acp.ClientBase())
        with pytest.raises(acp.UnencodableMessage) as caught:
            await peer.connection.notify("_x/n", {"v": float("inf")})
        assert str(caught.value) == (
            "cannot send _x/n: the params are not JSON: a number is not finite (inf or nan)"
        )
        with pytest.raises(acp.UnencodableMessage, match="cannot send _x/r: .*object"):
            await peer.connection.request("_x/r", {"v": object()})
        await peer.connection.notify("_x/ok", {"v": 1})
        assert await peer.recv() == notification("_x/ok", {"v": 1})

    run(scenario())


BATCH = [request(1, "_x/unknown"), notification("_x/n")]


def test_a_lane_with_batches_answers_them_with_an_array() -> None:
    seed = seed_lane("v2")
    assert seed.AgentBase.BATCHES is True  # alpha.3's v2 defines batches
    assert acp.AgentBase.BATCHES is False  # the default lane (npm-sdk-2.4.0) does not

    async def scenario() -> Any:
        inbox, out = asyncio.StreamReader(), asyncio.StreamReader()
        conn = seed.Connection(seed.AgentBase(), inbox, MemoryWriter(out))
        conn.start()
        inbox.feed_data(json.dumps(BATCH).encode() + b"\n")
        answer = json.loads(await out.readline())
        await conn.close()
        return answer

    assert run(scenario()) == [error(1, -32601, "Method not found", "_x/unknown")]


def test_a_lane_without_batches_answers_an_array_with_one_error_and_carries_on() -> None:
    assert acp_v1.AgentBase.BATCHES is False  # v1 has none

    async def scenario() -> tuple[Any, Any]:
        inbox, out = asyncio.StreamReader(), asyncio.StreamReader()
        conn = acp_v1.Connection(acp_v1.AgentBase(), inbox, MemoryWriter(out))
        conn.start()
        inbox.feed_data(json.dumps(BATCH).encode() + b"\n")
        inbox.feed_data(json.dumps(request(2, "_x/unknown")).encode() + b"\n")
        answers = json.loads(await out.readline()), json.loads(await out.readline())
        await conn.close()
        return answers

    assert run(scenario()) == (
        error(
            None,
            -32600,
            "Invalid request",
            "this protocol version has no batches: send one message per line",
        ),
        error(2, -32601, "Method not found", "_x/unknown"),
    )


@pytest.mark.parametrize(
    ("ref", "lane", "batches"),
    [
        ("schema-v2.0.0-alpha.3", "v2", True),
        ("schema-v2.0.0-alpha.3", "v1", False),
        ("npm-sdk-2.4.0", "v2", False),
        ("npm-sdk-2.4.0", "v1", False),
    ],
)
def test_the_generator_reads_batches_from_the_schema(
    mirror: Path, ref: str, lane: str, batches: bool
) -> None:
    schema = json.loads((mirror / ref / lane / "schema.json").read_text(encoding="utf-8"))
    assert bool(batch_titles(schema)) is batches


def test_a_tap_sees_every_raw_message_both_ways_and_the_recorder_writes_them() -> None:
    class Agent(acp.AgentBase):
        async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
            return acp.NewSessionResponse(session_id="s1")

    seen: list[tuple[str, bytes]] = []
    sink = io.BytesIO()
    recorder = acp.TranscriptRecorder(sink)

    async def scenario() -> None:
        peer = RawPeer(Agent())
        remove = peer.connection.add_tap(lambda d, line: seen.append((d, line)))
        peer.connection.add_tap(recorder)
        peer.send_bytes(b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/"}}\n')
        await peer.recv()
        peer.send_bytes(b"not json\n")
        await peer.recv()
        remove()
        peer.send(request(2, "_x"))
        await peer.recv()

    run(scenario())
    assert seen == [
        ("in", b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/"}}'),
        ("out", b'{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}'),
        ("in", b"not json"),
        ("out", b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error",'
                b'"data":"Expecting value at character 0"}}'),
    ]  # fmt: skip
    recorder.close()
    assert sink.getvalue().splitlines() == [line for _, line in seen] + [
        b'{"jsonrpc": "2.0", "id": 2, "method": "_x"}',
        b'{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found",'
        b'"data":"_x"}}',
    ]
    assert recorder.count == 6


def test_options_are_checked() -> None:
    async def scenario() -> None:
        with pytest.raises(ValueError, match="max_running_requests must be at least 1, got 0"):
            acp.Connection(
                acp.AgentBase(),
                asyncio.StreamReader(),
                MemoryWriter(asyncio.StreamReader()),
                max_running_requests=0,
            )

    run(scenario())


def test_decoded_objects_share_one_read_only_empty_extra() -> None:
    first = acp.decode(acp.NewSessionResponse, {"sessionId": "a"})
    second = acp.decode(acp.NewSessionResponse, {"sessionId": "b"})
    assert first.extra == {} and first.extra is second.extra
    with pytest.raises(TypeError, match=r"assign a new dict instead \(obj.extra = \{...\}\)"):
        first.extra["x"] = 1
    first.extra = {"x": 1}
    assert acp.encode(first) == {"sessionId": "a", "x": 1}
    assert acp.NewSessionResponse(session_id="c").extra is not first.extra
