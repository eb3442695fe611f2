"""The generated dispatcher, byte for byte: each error path answers exactly as JSON-RPC and
ACP say, handlers get typed params, notifications are never answered."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from acp_kit import v2 as acp

from tests.support.rpc_wire import INITIALIZE_PARAMS, RawPeer, error, notification, request, run

PROMPT = [{"type": "text", "text": "hi"}]  # the default lane's prompt needs at least one block


class Agent(acp.AgentBase):
    """Implements a few agent methods; records what reached it."""

    def __init__(self) -> None:
        self.seen: list[Any] = []
        self.cancelled: list[str] = []
        self.release = asyncio.Event()

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        self.seen.append(params)
        return acp.InitializeResponse(
            protocol_version=2, info=acp.Implementation(name="agent", version="1")
        )

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        if params.cwd == "/boom":
            raise RuntimeError("boom")
        if params.cwd == "/missing":
            raise acp.RpcError(-32002, "Resource not found", {"uri": "file:///missing"})
        if params.cwd == "/nan":
            return acp.NewSessionResponse(session_id="s", extra={"bad": float("nan")})
        return acp.NewSessionResponse(session_id="sess_" + params.cwd.strip("/"))

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        self.seen.append(params)
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled.append(params.session_id)
            raise
        return acp.PromptResponse(message_id="msg_" + params.session_id)

    async def session_cancel(self, params: acp.CancelSessionNotification) -> None:
        self.seen.append(params)

    async def ext_method(self, method: str, params: Any) -> Any:
        if method == "_test/echo":
            return {"method": method, "params": params}
        return await super().ext_method(method, params)

    async def ext_notification(self, method: str, params: Any) -> None:
        self.seen.append((method, params))


async def answer_to(raw: bytes | dict[str, Any]) -> Any:
    peer = RawPeer(Agent())
    if isinstance(raw, bytes):
        peer.send_bytes(raw)
    else:
        peer.send(raw)
    return await peer.recv()


def invalid_params(rid: Any, path: str, reason: str) -> dict[str, Any]:
    return error(rid, -32602, "Invalid params", {"path": path, "reason": reason})


DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize(
    ("raw", "answer"),
    [
        (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":NaN}\n',
         invalid_params(1, "$", "NaN is not JSON")),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","params":1e400}\n',
         invalid_params(1, "$", "the number 1e400 is out of range")),
        (b'{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":"s",'
         b'"prompt":[{"type":"text","text":"hi","_meta":{"n":[1,-1E+400]}}]}}\n',
         invalid_params("p", "$.prompt[0]._meta.n[1]", "the number -1E+400 is out of range")),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","params":-Infinity}\n',
         invalid_params(1, "$", "-Infinity is not JSON")),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"cwd":"\xff"}}\n',
         invalid_params(1, "$.cwd", "invalid UTF-8 at byte 54")),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"n":1' + b"0" * 5000 + b"}}\n",
         invalid_params(1, "$.n", "Exceeds the limit (4300 digits) for integer string "
                                  "conversion: value has 5001 digits")),
        (b'{"params":' + DEEP + b',"jsonrpc":"2.0","method":"x","id":null}\n',
         invalid_params(None, "$", "nested too deeply")),
        (b'{"jsonrpc":"2.0","id":1,"method":"\xff"}\n',
         error(1, -32602, "Invalid params",
               {"member": "method", "path": "$", "reason": "invalid UTF-8 at byte 34"})),
    ],
    ids=[
        "nan", "overflow", "deep-in-a-prompt", "infinity", "bad-utf8", "long-int", "deep",
        "unreadable-method",
    ],
)  # fmt: skip
def test_an_unreadable_request_whose_id_reads_is_answered_under_it(raw: bytes, answer: Any) -> None:
    assert run(answer_to(raw)) == answer


def parse_error(reason: str) -> dict[str, Any]:
    return error(None, -32700, "Parse error", reason)


@pytest.mark.parametrize(
    ("raw", "answer"),
    [
        (b"{not json\n",
         parse_error("Expecting property name enclosed in double quotes at character 1")),
        (DEEP + b"\n", parse_error("nested too deeply")),
        # JSON grammar, but no id to answer under: a notification, an id that is itself
        # refused, a syntax error after the id, an answer (to a call of ours we never made).
        (b'{"jsonrpc":"2.0","method":"x","params":1e400}\n',
         parse_error("the number 1e400 is out of range")),
        (b'{"jsonrpc":"2.0","id":1e400,"method":"x"}\n',
         parse_error("the number 1e400 is out of range")),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","params":1e400,}\n',
         parse_error("the number 1e400 is out of range")),
        (b'{"jsonrpc":"2.0","id":1,"result":NaN}\n', parse_error("NaN is not JSON")),
        (b"42\n", error(None, -32600, "Invalid request", "a message must be a JSON object")),
        (  # the default lane has no batches (alpha.3's answer: test_runtime_limits.py)
            b"[]\n",
            error(None, -32600, "Invalid request",
                  "this protocol version has no batches: send one message per line"),
        ),
        (b'{"jsonrpc":"2.0"}\n',
         error(None, -32600, "Invalid request", "a message needs a method or an id")),
    ],
    ids=[
        "garbage", "deep", "notification", "refused-id", "syntax-after-id", "answer", "scalar",
        "empty-batch", "no-method-no-id",
    ],
)  # fmt: skip
def test_unreadable_messages_without_an_id_are_answered_with_a_null_id(
    raw: bytes, answer: Any
) -> None:
    assert run(answer_to(raw)) == answer


@pytest.mark.parametrize(
    ("message", "answer"),
    [
        (
            {"id": 7, "method": "initialize", "params": INITIALIZE_PARAMS},
            error(7, -32600, "Invalid request", 'the message needs "jsonrpc": "2.0"'),
        ),
        (
            {"jsonrpc": "1.0", "id": "a", "method": "initialize"},
            error("a", -32600, "Invalid request", 'the message needs "jsonrpc": "2.0"'),
        ),
        (
            {"jsonrpc": "2.0", "id": 1.5, "method": "initialize"},
            error(None, -32600, "Invalid request", "the id must be a string, an integer or null"),
        ),
        (
            {"jsonrpc": "2.0", "id": True, "method": "initialize"},
            error(None, -32600, "Invalid request", "the id must be a string, an integer or null"),
        ),
        (
            {"jsonrpc": "2.0", "id": 3, "method": 12},
            error(3, -32600, "Invalid request", "the method must be a string"),
        ),
    ],
    ids=["no-jsonrpc", "wrong-jsonrpc", "fraction-id", "bool-id", "method-not-str"],
)
def test_invalid_requests(message: dict[str, Any], answer: Any) -> None:
    assert run(answer_to(message)) == answer


def test_a_message_without_jsonrpc_and_id_is_rejected_not_ignored() -> None:
    got = run(answer_to({"method": "session/cancel", "params": {"sessionId": "s"}}))
    assert got == error(None, -32600, "Invalid request", 'the message needs "jsonrpc": "2.0"')


@pytest.mark.parametrize(
    "method",
    [
        "no/such/method",
        "session/update",  # handled by the client, not by the agent
        "session/request_permission",
        "session/cancel",  # a notification, called as a request
        "$/cancel_request",
        "session/list",  # an agent method this agent does not implement
    ],
)
def test_unknown_or_unimplemented_methods_answer_32601_with_the_method(method: str) -> None:
    got = run(answer_to(request(5, method, {"sessionId": "s"})))
    assert got == error(5, -32601, "Method not found", method)


@pytest.mark.parametrize(
    ("params", "path", "reason"),
    [
        ({"sessionId": "s"}, "$.prompt", "missing required field"),
        ({"sessionId": 5, "prompt": []}, "$.sessionId", "expected a string, got an integer"),
        (
            {"sessionId": "s", "prompt": [{"type": "text", "text": "a"}, {"type": "text"}]},
            "$.prompt[1].text",
            "missing required field",
        ),
        ({"sessionId": "s", "prompt": []}, "$.prompt", "expected at least 1 item(s)"),
        ([1, 2], "$", "expected an object, got a list"),
        (None, "$.sessionId", "missing required field"),  # params left out: decoded as {}
    ],
    ids=["missing", "wrong-type", "nested", "empty", "array", "absent"],
)
def test_invalid_params_answer_32602_with_the_decode_path(
    params: Any, path: str, reason: str
) -> None:
    got = run(answer_to(request(9, "session/prompt", params)))
    assert got == error(9, -32602, "Invalid params", {"path": path, "reason": reason})


def test_handler_failures() -> None:
    async def scenario() -> None:
        peer = RawPeer(Agent())
        assert await peer.call(request(1, "session/new", {"cwd": "/boom"})) == error(
            1, -32603, "Internal error", "RuntimeError: boom"
        )
        assert await peer.call(request(2, "session/new", {"cwd": "/missing"})) == error(
            2, -32002, "Resource not found", {"uri": "file:///missing"}
        )
        got = await peer.call(request(3, "session/new", {"cwd": "/nan"}))
        assert got["id"] == 3 and got["error"]["code"] == -32603
        assert got["error"]["data"].startswith("the result is not JSON:")
        # The connection still serves after all of that.
        assert await peer.call(request(4, "session/new", {"cwd": "/ok"})) == {
            "jsonrpc": "2.0",
            "id": 4,
            "result": {"sessionId": "sess_ok"},
        }

    run(scenario())


def test_typed_params_reach_the_handler_and_ids_are_echoed_with_their_type() -> None:
    async def scenario() -> None:
        agent = Agent()
        peer = RawPeer(agent)
        for rid in ("init-1", 0, None, 2**53 + 1):
            got = await peer.call(request(rid, "initialize", INITIALIZE_PARAMS))
            assert got == {
                "jsonrpc": "2.0",
                "id": rid,
                "result": {"protocolVersion": 2, "info": {"name": "agent", "version": "1"}},
            }
        assert agent.seen[0] == acp.InitializeRequest(
            protocol_version=2, info=acp.Implementation(name="test-client", version="1.0")
        )

    run(scenario())


def test_notifications_are_never_answered_and_unknown_ones_are_ignored() -> None:
    async def scenario() -> None:
        agent = Agent()
        peer = RawPeer(agent)
        peer.send(notification("session/cancel", {"sessionId": "s1"}))
        peer.send(notification("session/cancel", {"sessionId": 1}))  # invalid params: dropped
        peer.send(notification("no/such/notification", {"x": 1}))
        peer.send(notification("session/prompt", {"sessionId": "s", "prompt": []}))  # a request
        peer.send(notification("$/unknown_protocol_thing"))
        peer.send(notification("_vendor/ping", {"n": 1}))
        peer.send(notification("_vendor/bare"))
        # The first thing written back is the answer to this request: nothing before it.
        assert (await peer.call(request(1, "session/new", {"cwd": "/x"})))["id"] == 1
        assert agent.seen == [
            acp.CancelSessionNotification(session_id="s1"),
            ("_vendor/ping", {"n": 1}),
            ("_vendor/bare", None),
        ]

    run(scenario())


def test_extension_methods_go_to_the_extension_hook() -> None:
    async def scenario() -> None:
        peer = RawPeer(Agent())
        got = await peer.call(request(1, "_test/echo", {"a": [1, 2]}))
        assert got == {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"method": "_test/echo", "params": {"a": [1, 2]}},
        }
        got = await peer.call(request(2, "_test/unknown"))
        assert got == error(2, -32601, "Method not found", "_test/unknown")

    run(scenario())


def test_cancel_request_answers_32800_and_cancels_the_handler() -> None:
    async def scenario() -> None:
        agent = Agent()
        peer = RawPeer(agent)
        peer.send(request("p1", "session/prompt", {"sessionId": "s1", "prompt": PROMPT}))
        peer.send(request(1, "session/prompt", {"sessionId": "s2", "prompt": PROMPT}))
        while len(agent.seen) < 2:
            await asyncio.sleep(0)
        # Ids match by value and type: "1" is not 1, and unknown ids are ignored.
        peer.send(notification("$/cancel_request", {"requestId": "1"}))
        peer.send(notification("$/cancel_request", {"requestId": 99}))
        peer.send(notification("$/cancel_request", {"requestId": "p1"}))
        assert await peer.recv() == error("p1", -32800, "Request cancelled")
        assert agent.cancelled == ["s1"]
        agent.release.set()
        assert await peer.recv() == {"jsonrpc": "2.0", "id": 1, "result": {"messageId": "msg_s2"}}

    run(scenario())


def test_a_request_id_still_in_flight_cannot_be_reused() -> None:
    async def scenario() -> None:
        agent = Agent()
        peer = RawPeer(agent)
        peer.send(request(4, "session/prompt", {"sessionId": "s", "prompt": PROMPT}))
        got = await peer.call(request(4, "session/new", {"cwd": "/x"}))
        assert got == error(4, -32600, "Invalid request", "a request with this id is still running")
        agent.release.set()
        assert await peer.recv() == {"jsonrpc": "2.0", "id": 4, "result": {"messageId": "msg_s"}}

    run(scenario())


class BatchingAgent(Agent):
    """The same agent on a lane whose schema defines batches (alpha.3's v2 does)."""

    BATCHES = True


def test_a_batch_is_answered_with_one_array() -> None:
    async def scenario() -> None:
        agent = BatchingAgent()
        peer = RawPeer(agent)
        peer.send(
            [
                request(1, "session/new", {"cwd": "/a"}),
                notification("session/cancel", {"sessionId": "a"}),
                request(2, "no/such"),
                7,
            ]
        )
        got = await peer.recv()
        assert isinstance(got, list)
        assert sorted(got, key=lambda r: json.dumps(r["id"])) == [
            {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "sess_a"}},
            error(2, -32601, "Method not found", "no/such"),
            error(None, -32600, "Invalid request", "a message must be a JSON object"),
        ]
        peer.send([notification("session/cancel", {"sessionId": "b"})])  # nothing to answer
        assert (await peer.call(request(3, "session/new", {"cwd": "/c"})))["id"] == 3
        assert agent.seen == [
            acp.CancelSessionNotification(session_id="a"),
            acp.CancelSessionNotification(session_id="b"),
        ]

    run(scenario())


def test_a_request_cancelled_before_its_handler_started_is_still_answered() -> None:
    async def scenario() -> None:
        agent = Agent()
        peer = RawPeer(agent)
        # One chunk: the request and its cancellation reach the dispatcher in the same step.
        lines = [
            request(1, "session/prompt", {"sessionId": "s", "prompt": PROMPT}),
            notification("$/cancel_request", {"requestId": 1}),
        ]
        peer.send_bytes(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
        assert await peer.recv() == error(1, -32800, "Request cancelled")
        assert agent.seen == []  # the handler never ran
        # The id is free again.
        agent.release.set()
        again = await peer.call(request(1, "session/prompt", {"sessionId": "s", "prompt": PROMPT}))
        assert again["result"] == {"messageId": "msg_s"}

    run(scenario())


def test_an_unreadable_answer_to_our_call_fails_that_call_saying_where() -> None:
    async def scenario() -> tuple[Any, Any]:
        peer = RawPeer(acp.ClientBase())
        call = asyncio.ensure_future(peer.connection.request("_x/ask", {}))
        asked = await peer.recv()
        peer.send_bytes(b'{"jsonrpc":"2.0","id":%d,"result":{"n":[1e400]}}\n' % asked["id"])
        with pytest.raises(acp.RpcError) as caught:
            await call
        answer = await peer.recv()  # the line itself is still a parse error for the peer
        await peer.connection.close()
        return caught.value.to_json(), answer

    failed, answer = run(scenario())
    reason = "the number 1e400 is out of range"
    assert failed == {
        "code": -32600,
        "message": "Invalid response",
        "data": {"member": "result", "path": "$.n[0]", "reason": reason},
    }
    assert answer == error(None, -32700, "Parse error", reason)
