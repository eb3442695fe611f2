"""The generated `SessionState` of each committed lane (`acp_kit.v1`, `acp_kit.v2`): the rules
both session models share, each on the exact snapshot JSON, and a real turn of the echo agent
on each protocol version replayed through it (`acp-codegen replay` of such a turn is in
tests/e2e/test_replay.py). What one model has alone is in test_session_state_v1.py and
test_session_state_v2.py."""

from __future__ import annotations

import asyncio
import json
import sys
import typing
from pathlib import Path
from types import ModuleType
from typing import Any

import acp_kit as kit
import pytest
from acp_kit import v1 as acp_v1
from acp_kit import v2 as acp_v2

from tests.support.toolkit_wire import text

ECHO_AGENT = Path(__file__).resolve().parents[2] / "examples" / "echo_agent.py"


@pytest.fixture(params=["v1", "v2"])
def acp(request: pytest.FixtureRequest) -> ModuleType:
    """Each committed lane's package, in turn."""
    return {"v1": acp_v1, "v2": acp_v2}[request.param]


def is_v1(acp: ModuleType) -> bool:
    return acp is acp_v1


def replay(acp: ModuleType, *updates: dict[str, Any], state: Any = None) -> dict[str, Any]:
    """Decode each wire update, apply it, and return the snapshot."""
    state = state or acp.SessionState()
    for update in updates:
        state.apply(acp.decode(acp.SessionUpdate, update))
    snapshot: dict[str, Any] = state.snapshot()
    return snapshot


def empty(acp: ModuleType) -> dict[str, Any]:
    """The snapshot of a new model: v1 has one plan, a timeline and the mode; v2 plans by id
    and terminals."""
    shared = {"messages": [], "toolCalls": {}, "availableCommands": None, "configOptions": None,
              "sessionInfo": {}, "usage": None, "notices": [], "compactions": {},
              "state": "idle", "stopReason": None, "unknown": []}  # fmt: skip
    if is_v1(acp):
        return {**shared, "timeline": [], "plan": None, "currentModeId": None}
    return {**shared, "plans": {}, "terminals": {}}


def message(acp: ModuleType, message_id: str, role: str, content: list[Any]) -> dict[str, Any]:
    """A message as the snapshot has it (v2 keeps the message's `_meta` as `meta`)."""
    out = {"messageId": message_id, "role": role, "content": content}
    return out if is_v1(acp) else {**out, "meta": None}


def chunk(kind: str, message_id: str, block: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": kind, "messageId": message_id, "content": block, **fields}


def test_a_new_model_is_empty_and_idle(acp: ModuleType) -> None:
    state = acp.SessionState()
    assert state.snapshot() == empty(acp)
    assert (state.state, state.stop_reason, state.message_ids) == ("idle", None, [])


def test_a_messages_role_is_fixed_when_its_id_is_first_seen(acp: ModuleType) -> None:
    state = acp.SessionState()
    view = replay(
        acp,
        chunk("user_message_chunk", "m", text("question")),
        chunk("agent_message_chunk", "m", text(" and more")),
        chunk("agent_thought_chunk", "t", text("hmm")),
        state=state,
    )
    assert view["messages"] == [
        message(acp, "m", "user", [text("question"), text(" and more")]),
        message(acp, "t", "thought", [text("hmm")]),
    ]
    assert (state.message_ids, state.message_role("m"), state.message_text("m")) == (
        ["m", "t"],
        "user",
        "question and more",
    )
    assert (state.message_role("nope"), state.message_text("nope")) == (None, "")


def test_message_text_joins_the_text_blocks_only(acp: ModuleType) -> None:
    state = acp.SessionState()
    link = {"type": "resource_link", "uri": "file:///a", "name": "a"}
    replay(
        acp,
        chunk("agent_message_chunk", "m", text("Hello")),
        chunk("agent_message_chunk", "m", link),
        chunk("agent_message_chunk", "m", text(", world")),
        state=state,
    )
    assert state.message_text("m") == "Hello, world"


def test_a_chunks_meta_is_chunk_scoped_and_not_stored(acp: ModuleType) -> None:
    assert replay(
        acp,
        chunk("agent_message_chunk", "m", text("a"), _meta={"chunk": 1}),
        chunk("agent_message_chunk", "m", text("b"), _meta=None),
    )["messages"] == [message(acp, "m", "agent", [text("a"), text("b")])]


def test_available_commands_and_config_options_keep_the_latest_list(acp: ModuleType) -> None:
    # the shapes differ: v2's commands are tagged (`type`), its options keyed by `configId`
    tag = {} if is_v1(acp) else {"type": "command"}
    ask = {**tag, "name": "ask", "description": "Ask a question"}
    web = {**tag, "name": "web", "description": "Search the web",
           "input": {"hint": "q"} if is_v1(acp) else {"type": "text", "hint": "q"}}  # fmt: skip
    option = (
        {"id": "model", "name": "Model", "type": "select", "currentValue": "fast",
         "options": [{"value": "fast", "name": "Fast"}]}
        if is_v1(acp)
        else {"type": "boolean", "configId": "fast", "name": "Fast mode", "currentValue": True}
    )  # fmt: skip
    state = acp.SessionState()
    first = replay(
        acp,
        {"sessionUpdate": "available_commands_update", "availableCommands": [ask]},
        {"sessionUpdate": "config_option_update", "configOptions": [option], "_meta": {"z": 1}},
        state=state,
    )
    assert (first["availableCommands"], first["configOptions"]) == ([ask], [option])
    assert replay(
        acp,
        {"sessionUpdate": "available_commands_update", "availableCommands": [web]},
        {"sessionUpdate": "config_option_update", "configOptions": []},
        state=state,
    ) == {**empty(acp), "availableCommands": [web], "configOptions": []}


def test_session_info_is_patched_and_null_removes_a_field(acp: ModuleType) -> None:
    state = acp.SessionState()
    replay(
        acp,
        {"sessionUpdate": "session_info_update", "title": "One", "updatedAt": "2026-01-01"},
        {"sessionUpdate": "session_info_update", "title": "Two", "_meta": {"tags": ["a"]}},
        state=state,
    )
    assert state.snapshot()["sessionInfo"] == {
        "title": "Two",
        "updatedAt": "2026-01-01",
        "_meta": {"tags": ["a"]},
    }
    assert replay(
        acp,
        {"sessionUpdate": "session_info_update", "updatedAt": None, "_meta": None},
        state=state,
    ) == {**empty(acp), "sessionInfo": {"title": "Two"}}


def test_usage_is_replaced_whole_and_a_null_cost_is_left_out(acp: ModuleType) -> None:
    cost = {"amount": 0.5, "currency": "EUR"}
    state = acp.SessionState()
    first = replay(
        acp, {"sessionUpdate": "usage_update", "used": 5, "size": 10, "cost": cost}, state=state
    )
    assert first["usage"] == {"used": 5, "size": 10, "cost": cost}
    second = replay(
        acp, {"sessionUpdate": "usage_update", "used": 6, "size": 10, "_meta": {}}, state=state
    )
    assert second["usage"] == {"used": 6, "size": 10}
    third = replay(
        acp, {"sessionUpdate": "usage_update", "used": 7, "size": 20, "cost": None}, state=state
    )
    assert third == {**empty(acp), "usage": {"used": 7, "size": 20}}


def test_notices_are_kept_in_arrival_order_and_never_merged(acp: ModuleType) -> None:
    first = {"sessionUpdate": "notice", "severity": "warning", "title": "Rate limited"}
    second = {**first, "description": "Retrying in 5 s", "_meta": {"k": 1}}
    third = {"sessionUpdate": "notice", "severity": "info", "title": "T", "description": None}
    # v1 keeps a notice as it came (`_meta`, a null description); v2 without `_meta` and nulls
    kept_meta = {"_meta": {"k": 1}} if is_v1(acp) else {}
    kept_null = {"description": None} if is_v1(acp) else {}
    assert replay(acp, first, second, third)["notices"] == [
        {"severity": "warning", "title": "Rate limited"},
        {"severity": "warning", "title": "Rate limited", "description": "Retrying in 5 s",
         **kept_meta},
        {"severity": "info", "title": "T", **kept_null},
    ]  # fmt: skip


def test_snapshots_are_deep_copies_and_never_alias_what_was_applied(acp: ModuleType) -> None:
    state = acp.SessionState()
    raw_input = {"list": [1]}
    update = acp.decode(
        acp.SessionUpdate,
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "rawInput": raw_input},
    )
    state.apply(update)
    update.raw_input["list"].append(2)
    first = state.snapshot()
    first["toolCalls"]["c"]["rawInput"]["list"].append(3)
    first["toolCalls"].clear()
    assert state.snapshot()["toolCalls"]["c"]["rawInput"] == {"list": [1]}


def test_apply_takes_decoded_updates_only_and_apply_json_decodes(acp: ModuleType) -> None:
    state = acp.SessionState()
    with pytest.raises(TypeError, match="expected a SessionUpdate, got dict"):
        state.apply({"sessionUpdate": "usage_update", "used": 1, "size": 2})
    with pytest.raises(acp.DecodeError, match=r"\$\.toolCallId: missing"):
        state.apply_json({"sessionUpdate": "tool_call_update"})
    state.apply_json({"sessionUpdate": "usage_update", "used": 1, "size": 2})
    assert state.snapshot() == {**empty(acp), "usage": {"used": 1, "size": 2}}


def test_every_kind_of_the_lane_has_a_rule(acp: ModuleType) -> None:
    module = sys.modules[acp.SessionState.__module__]
    variants = [cls for cls in typing.get_args(acp.SessionUpdate) if hasattr(cls, "TAG")]
    kinds = module.KNOWN_KINDS
    assert sorted(kinds) == sorted({cls.TAG for cls in variants})
    assert len(kinds) == (14 if is_v1(acp) else 19)
    for cls in variants:  # a kind's class, or one of its classes (v2's state_update, by `state`)
        assert kinds[cls.TAG] is cls or cls in typing.get_args(kinds[cls.TAG]), cls
    assert set(module._RULES) == set(variants)
    lead = "The client's view of a v1 session" if is_v1(acp) else "The client's view of a session"
    assert (module.__doc__ or "").startswith(lead)


# -- a real turn of the echo agent, on each protocol version -------------------------------------
def capture(acp: ModuleType, path: Path) -> dict[str, Any]:
    """One turn of examples/echo_agent.py, driven by our client on `acp`'s protocol version
    and recorded to `path`; the client's snapshot of the session."""

    async def run() -> dict[str, Any]:
        version = 1 if is_v1(acp) else 2
        with kit.TranscriptRecorder(path) as recorder:
            async with kit.spawn_agent(
                sys.executable, str(ECHO_AGENT), permissions=kit.allow, protocol=version,
                tap=recorder,
            ) as agent:  # fmt: skip
                session = await agent.new_session()
                await session.prompt("Echo this back please")
                snapshot: dict[str, Any] = session.state.snapshot()
        return snapshot

    return asyncio.run(asyncio.wait_for(run(), 30))


def test_a_turn_of_the_echo_agent_replays_to_the_clients_state(
    acp: ModuleType, tmp_path: Path
) -> None:
    path = tmp_path / "echo.jsonl"
    seen = capture(acp, path)
    assert (seen["state"], seen["stopReason"]) == ("idle", "end_turn")
    agent_text = "".join(
        "".join(b["text"] for b in m["content"] if b["type"] == "text")
        for m in seen["messages"]
        if m["role"] == "agent"
    )
    assert agent_text == "You said: Echo this back please."
    assert [c.get("status") for c in seen["toolCalls"].values()] == ["completed"]
    assert seen["usage"] == {"used": 1021, "size": 200000} and seen["unknown"] == []

    # The same state, rebuilt from the transcript (decoded again, applied in order).
    state = acp.SessionState()
    prompts = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        message = json.loads(line)
        if is_v1(acp) and message.get("method") == "session/prompt":
            state.prompt_started()
            prompts += 1
        elif message.get("method") == "session/update":
            state.apply_json(message["params"]["update"])
        elif is_v1(acp) and "stopReason" in message.get("result", {}):
            state.prompt_finished(message["result"]["stopReason"])
    assert state.snapshot() == seen
    assert prompts == (1 if is_v1(acp) else 0)
