"""The version router: an `acp_kit.Agent` written once answers `initialize` with the highest
protocol version it serves at or below the one the client asks for, else -32022 naming both
sides' versions (the v2 schema's version negotiation), and serves the connection in that
version from then on. Exact JSON over
in-memory pipes; what the answer advertises on each version is here too."""

from __future__ import annotations

import json
from typing import Any

import acp_kit as kit
import pytest

from tests.support.rpc_wire import run
from tests.support.toolkit_wire import (
    V1,
    V2,
    ScriptAgent,
    Wire,
    WireLane,
    chunk,
    invalid,
    is_request,
    selected,
    text,
)

V1_ANSWER = {
    "protocolVersion": 1,
    "agentCapabilities": {
        "loadSession": True,
        "promptCapabilities": {"image": False, "audio": False, "embeddedContext": False},
        "mcpCapabilities": {"http": False, "sse": False},
        "sessionCapabilities": {
            "list": {},
            "delete": {},
            "additionalDirectories": {},
            "resume": {},
            "close": {},
        },
    },
    "authMethods": [],
    "agentInfo": {"name": "script-agent", "version": "1.0"},
}
V2_ANSWER = {
    "protocolVersion": 2,
    "info": {"name": "script-agent", "version": "1.0"},
    "capabilities": {"session": {"delete": {}, "additionalDirectories": {}}},
}
VERSION_ERROR = invalid("$.protocolVersion", "must be an integer from 0 to 65535")


async def initialize(params: Any, agent: kit.Agent | None = None) -> tuple[Wire, Any]:
    wire = Wire(agent or ScriptAgent())
    return wire, await wire.call("initialize", params, rid=0)


def test_each_version_is_answered_with_what_the_toolkit_implements(lane: WireLane) -> None:
    _, answer = run(initialize(lane.initialize))
    assert answer == {"jsonrpc": "2.0", "id": 0, "result": lane.pick(v1=V1_ANSWER, v2=V2_ANSWER)}


def test_the_answer_advertises_the_prompt_content_and_mcp_transports_accepted(
    lane: WireLane,
) -> None:
    class Rich(ScriptAgent):
        title = "Rich agent"
        image_prompts = True
        embedded_context = True
        mcp_transports = frozenset({"stdio", "http"})

    wire, answer = run(initialize(lane.initialize, Rich()))
    info = {"name": "script-agent", "version": "1.0", "title": "Rich agent"}
    if lane.v1:  # stdio MCP servers are every v1 agent's baseline: no flag for them
        capabilities = dict(V1_ANSWER["agentCapabilities"])  # type: ignore[arg-type]
        capabilities["promptCapabilities"] = {"image": True, "audio": False,
                                              "embeddedContext": True}  # fmt: skip
        capabilities["mcpCapabilities"] = {"http": True, "sse": False}
        expected = {**V1_ANSWER, "agentCapabilities": capabilities, "agentInfo": info}
    else:
        session = {"prompt": {"image": {}, "embeddedContext": {}},
                   "mcp": {"stdio": {}, "http": {}}, "delete": {},
                   "additionalDirectories": {}}  # fmt: skip
        expected = {**V2_ANSWER, "info": info, "capabilities": {"session": session}}
    assert answer["result"] == expected
    client = wire.side.client_info
    name = client.client_info.name if lane.v1 else client.info.name
    assert name == "test-client"


def test_a_v1_client_and_a_v2_client_share_one_agent_and_its_sessions() -> None:
    """The sessions are the agent's: one opened by a v1 client is listed and resumed (with its
    replay, in v2's shapes) by a v2 client once the first has gone away."""

    async def script(turn: kit.Turn) -> None:
        await turn.say(f"echo {turn.text}")

    async def scenario() -> tuple[list[Any], list[Any], list[Any]]:
        agent = ScriptAgent(script)
        old = await Wire.open(agent, V1)
        new = await Wire.open(agent, V2)
        sid = await old.new_session("/w")
        answers = [await old.turn(sid, "one"), await new.turn(await new.new_session("/v"), "two")]
        await old.peer.connection.close()
        await agent.sessions.get(sid).foreground.wait()  # type: ignore[union-attr]
        listed = (await new.call("session/list", {"cwd": "/w"}))["result"]["sessions"]
        new.take()
        params = {"sessionId": sid, "cwd": "/w", "replayFrom": {"type": "start"}}
        await new.call("session/resume", params)
        return (
            [a.get("result") for a in answers],
            [s["sessionId"] == sid for s in listed],
            (new.updates(sid)),
        )

    answers, listed, replayed = run(scenario())
    assert answers == [{"stopReason": "end_turn"}, {"messageId": "msg_user_1"}]
    assert listed == [True]
    assert replayed == [
        {"sessionUpdate": "user_message", "messageId": "msg_user_1", "content": [text("one")]},
        {"sessionUpdate": "agent_message", "messageId": "msg_agent_1",
         "content": [text("echo one")]},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("asked", "answered"),
    [(1, 1), (2, 2), (3, 2), (65535, 2)],
    ids=["v1", "v2", "newer", "largest"],
)
def test_the_answer_is_the_highest_version_served_at_or_below_the_one_asked_for(
    asked: int, answered: int
) -> None:
    info = {"name": "c", "version": "1"} if asked == 2 else None  # v2 requires it of v2 clients
    params = {"protocolVersion": asked} if info is None else {"protocolVersion": 2, "info": info}
    wire, answer = run(initialize(params))
    assert answer["result"]["protocolVersion"] == answered
    assert wire.side.lane.version == answered


UNSUPPORTED = {"code": -32022, "message": "Unsupported protocol version"}


def test_a_version_below_every_one_served_is_unsupported_naming_both_sides() -> None:
    class OnlyV2(ScriptAgent):
        lanes = ("v2",)

    async def scenario() -> tuple[Any, Any, Any]:
        wire = Wire(OnlyV2())
        refused = await wire.call("initialize", V1.initialize, rid=0)
        after = await wire.call("session/new", {"cwd": "/w"})  # still not initialized
        again = await wire.call("initialize", V2.initialize, rid=7)  # the client may retry
        return refused, after["error"]["code"], again["result"]["protocolVersion"]

    refused, after, again = run(scenario())
    assert refused["error"] == {**UNSUPPORTED, "data": {"requested": 1, "supported": [2]}}
    assert (after, again) == (-32601, 2)
    _, zero = run(initialize({"protocolVersion": 0}))
    assert zero["error"] == {**UNSUPPORTED, "data": {"requested": 0, "supported": [1, 2]}}


def test_a_newer_clients_request_is_read_as_far_as_the_answered_version_has_it() -> None:
    """A client asking for 3 may send fields v2 never had, and lack some it has: what parses
    is kept (its `info`), the rest dropped; a v2 client's `info` is a v1 agent's `clientInfo`."""
    newer = {"protocolVersion": 3, "info": {"name": "future", "version": "9"}, "hologram": {}}
    wire, answer = run(initialize(newer))
    assert answer["result"]["protocolVersion"] == 2
    assert wire.side.client_info.info.name == "future"
    broken = {"protocolVersion": 3, "info": {"name": 7}}
    wire, answer = run(initialize(broken))
    assert answer["result"]["protocolVersion"] == 2
    assert (wire.side.client_info.info.name, wire.side.client_info.info.version) == (
        "unknown",
        "unknown",
    )

    class OnlyV1(ScriptAgent):
        lanes = ("v1",)

    v2_client = {"protocolVersion": 2, "info": {"name": "v2-client", "version": "1"}}
    wire, answer = run(initialize(v2_client, OnlyV1()))
    assert answer["result"] == V1_ANSWER
    assert wire.side.client_info.client_info.name == "v2-client"


@pytest.mark.parametrize(
    "params",
    [{}, {"protocolVersion": "2"}, {"protocolVersion": -1}, {"protocolVersion": 65536},
     {"protocolVersion": 2.0}, {"protocolVersion": True}, None, [2]],
    ids=["missing", "string", "negative", "too-large", "float", "bool", "no-params", "array"],
)  # fmt: skip
def test_an_invalid_protocol_version_is_invalid_params_and_routes_nothing(params: Any) -> None:
    async def scenario() -> tuple[Any, Any, Any]:
        wire = Wire(ScriptAgent())
        refused = await wire.call("initialize", params, rid=0)
        after = await wire.call("session/new", {"cwd": "/w"})
        return refused, wire.side, after

    refused, side, after = run(scenario())
    assert refused == {"jsonrpc": "2.0", "id": 0, "error": VERSION_ERROR}
    assert side is None
    assert after["error"]["code"] == -32601  # still waiting for a valid initialize


def test_a_valid_version_with_a_request_that_does_not_decode_is_invalid_params() -> None:
    _, answer = run(initialize({"protocolVersion": 2, "info": "me"}))
    assert answer["error"] == invalid("$.info", "expected an object, got a string")


def test_requests_before_initialize_are_method_not_found_and_the_connection_carries_on() -> None:
    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent())
        before = [
            await wire.call("session/new", {"cwd": "/w", "mcpServers": []}),
            await wire.call("session/prompt", {"sessionId": "s", "prompt": []}),
            await wire.call("_vendor/ping", {}),
        ]
        wire.send("session/cancel", {"sessionId": "s"})  # a notification: ignored
        initialized = await wire.call("initialize", V1.initialize, rid=0)
        sid = (await wire.call("session/new", {"cwd": "/w", "mcpServers": []}))["result"]
        return [*(b["error"] for b in before), initialized["result"]["protocolVersion"], sid]

    *errors, version, new = run(scenario())
    assert errors == [
        {"code": -32601, "message": "Method not found", "data": "session/new"},
        {"code": -32601, "message": "Method not found", "data": "session/prompt"},
        {"code": -32601, "message": "Method not found", "data": "_vendor/ping"},
    ]
    assert version == 1 and new["sessionId"].startswith("sess_")


@pytest.mark.parametrize("valid", [True, False], ids=["initialized", "refused"])
def test_requests_pipelined_behind_initialize_are_answered_after_it_in_order(
    lane: WireLane, valid: bool
) -> None:
    """A client that does not wait for the initialize answer: what it sent meanwhile is served
    on the version chosen, after the answer (or is -32601 when initialize was refused)."""

    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent())
        init = lane.initialize if valid else {"protocolVersion": "one"}
        lines = [
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
            {"jsonrpc": "2.0", "id": 1, "method": "session/new",
             "params": {**lane.session_defaults, "cwd": "/w"}},
            {"jsonrpc": "2.0", "id": 2, "method": "session/list", "params": {"cwd": "w"}},
        ]  # fmt: skip
        wire.send_bytes(b"".join(json.dumps(m).encode() + b"\n" for m in lines))  # one read
        for rid in (0, 1, 2):
            await wire.answer_to(rid)
        return [(m["id"], "result" in m) for m in wire.wire] + [wire.wire[2].get("error")]

    *answers, last = run(scenario())
    if valid:
        assert answers == [(0, True), (1, True), (2, False)]
        assert last == invalid("$.cwd", "not an absolute path: 'w'")  # decoded on the lane
    else:
        assert answers == [(0, False), (1, False), (2, False)]
        assert last == {"code": -32601, "message": "Method not found", "data": "session/list"}


@pytest.mark.parametrize(
    "again",
    [{"protocolVersion": 1}, {"protocolVersion": 2, "info": {"name": "x", "version": "1"}},
     {"protocolVersion": 3}],
    ids=["asks-v1", "asks-v2", "asks-v3"],
)  # fmt: skip
def test_a_repeated_initialize_is_answered_on_the_connections_version(
    lane: WireLane, again: dict[str, Any]
) -> None:
    """The connection was routed once: a later initialize, whatever it asks, is read as the
    first was and answered with the same version; sessions carry on."""

    async def scenario() -> tuple[Any, Any, Any]:
        wire = await Wire.open(ScriptAgent(), lane)
        sid = await wire.new_session()
        answer = await wire.call("initialize", again)
        return answer, await wire.turn(sid), wire.side.lane.name

    answer, turn, name = run(scenario())
    assert answer["result"] == lane.pick(v1=V1_ANSWER, v2=V2_ANSWER)
    assert name == lane.name
    assert "result" in turn


def test_lanes_limits_the_versions_an_agent_serves() -> None:
    class OnlyV1(ScriptAgent):
        lanes = ("v1",)

    _, answer = run(initialize(V2.initialize, OnlyV1()))
    assert answer["result"] == V1_ANSWER  # the v2 client may go on in v1, or close
    assert [f.version for f in OnlyV1().features()] == [1]
    assert [f.version for f in ScriptAgent().features()] == [1, 2]

    class Unknown(ScriptAgent):
        lanes = ("v9",)

    with pytest.raises(ValueError, match="this package has no lane 'v9'; it has v1, v2"):
        Wire(Unknown())


def test_a_turn_on_each_version_of_one_agent_speaks_that_version() -> None:
    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call("T")
        if await turn.ask_permission(tool):
            await tool.complete()
        await turn.say(f"v{turn.features.version}")

    async def scenario(lane: WireLane) -> list[str]:
        wire = await Wire.open(ScriptAgent(script), lane)
        sid = await wire.new_session()
        pending = wire.prompt_later(sid)
        asked = await wire.until(is_request("session/request_permission"))
        wire.reply(asked["id"], selected("allow-once"))
        await wire.ended(pending)
        return [u["sessionUpdate"] for u in wire.updates(sid)] + [wire.updates(sid)[-2:]]

    *v1, last_v1 = run(scenario(V1))
    *v2, last_v2 = run(scenario(V2))
    assert v1 == ["tool_call", "tool_call_update", "agent_message_chunk"]
    assert v2 == [
        "user_message", "state_update", "tool_call_update", "state_update", "state_update",
        "tool_call_update", "agent_message_chunk", "state_update",
    ]  # fmt: skip
    assert last_v1[-1] == chunk("agent_message_chunk", "msg_agent_1", "v1")
    assert last_v2[0] == chunk("agent_message_chunk", "msg_agent_1", "v2")
