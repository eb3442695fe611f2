"""The generated v2 `SessionState`: one test per rule of the session model issue that v1's model
does not share (upserts, plans by id, state updates, terminals, chunk rules), each on the exact
snapshot JSON, plus the seed's own example. The shared rules are in test_session_state.py.

The rules are the seed's, written against schema-v2.0.0-alpha.3: they run on alpha.3's v2 lane
generated from the pins (tests/support/lanes.py)."""

from __future__ import annotations

import json
import sys
import typing
from pathlib import Path
from typing import Any

import pytest
from acp_kit import v1 as acp_v1

from tests.support.lanes import seed_lane
from tests.support.toolkit_wire import text

seed_v2 = seed_lane("v2")
SessionState = seed_v2.SessionState
session_state = sys.modules[SessionState.__module__]

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT.parent / "shared" / "seed"
ECHO_AGENT = ROOT / "examples" / "echo_agent.py"

EMPTY: dict[str, Any] = {
    "messages": [],
    "toolCalls": {},
    "plans": {},
    "availableCommands": None,
    "configOptions": None,
    "sessionInfo": {},
    "usage": None,
    "terminals": {},
    "state": "idle",
    "stopReason": None,
    "unknown": [],
}


def replay(*updates: dict[str, Any], state: SessionState | None = None) -> dict[str, Any]:
    """Decode each wire update, apply it, and return the snapshot."""
    state = state or SessionState()
    for update in updates:
        state.apply(seed_v2.decode(seed_v2.SessionUpdate, update))
    return state.snapshot()


def snapshot(**changes: Any) -> dict[str, Any]:
    return {**EMPTY, **changes}


def message(message_id: str, role: str, content: list[Any], meta: Any = None) -> dict[str, Any]:
    return {"messageId": message_id, "role": role, "content": content, "meta": meta}


def upsert(kind: str, message_id: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": kind, "messageId": message_id, **fields}


def chunk(kind: str, message_id: str, block: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": kind, "messageId": message_id, "content": block, **fields}


def tool(call_id: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields}


def tool_chunk(call_id: str, item: dict[str, Any]) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_content_chunk", "toolCallId": call_id, "content": item}


def item(value: str) -> dict[str, Any]:
    return {"type": "content", "content": text(value)}


def state_update(state: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "state_update", "state": state, **fields}


# -- the seed's own example --------------------------------------------------------------------
def test_golden_seed_example_chunks_append_and_an_array_replaces_everything() -> None:
    state = SessionState()
    a, b, c, d = text("A"), text("B"), text("C"), text("D")
    assert replay(upsert("agent_message", "m", content=[a]), state=state)["messages"] == [
        message("m", "agent", [a])
    ]
    assert replay(chunk("agent_message_chunk", "m", b), state=state)["messages"] == [
        message("m", "agent", [a, b])
    ]
    assert replay(upsert("agent_message", "m", content=[c]), state=state)["messages"] == [
        message("m", "agent", [c])
    ]
    assert replay(chunk("agent_message_chunk", "m", d), state=state) == snapshot(
        messages=[message("m", "agent", [c, d])]
    )


def seed_updates() -> list[dict[str, Any]]:
    """The `params.update` of every session/update example of the seed page, in page order."""
    if not SEED.is_dir():
        pytest.skip(f"seed page not found: {SEED}")
    page = "".join(p.read_text(encoding="utf-8") for p in sorted(SEED.glob("*.txt")))
    decoder, found, pos = json.JSONDecoder(), [], 0
    while (start := page.find("{\n", pos)) >= 0:
        value, pos = decoder.raw_decode(page, start)
        if value.get("method") == "session/update":
            found.append(value["params"]["update"])
    return found


def test_golden_seed_page_replays_to_this_snapshot() -> None:
    pending = {"priority": "medium", "status": "pending"}
    assert replay(*seed_updates()) == snapshot(
        messages=[
            message(
                "msg_user_8f7a1", "user", [text("Can you analyze this code for potential issues?")]
            ),
            message(
                "msg_agent_c42b9",
                "agent",
                [
                    text("I'll analyze your code for potential issues. Let me examine it..."),
                    text(" Let me examine it..."),
                ],
            ),
            message(
                "msg_thought_a12",
                "thought",
                [
                    text("Need to inspect the loop body before suggesting a fix."),
                ],
            ),
        ],
        toolCalls={
            "call_001": {
                "toolCallId": "call_001",
                "title": "Analyzing Python code",
                "kind": "other",
                "status": "completed",
                "content": [
                    item(
                        "Analysis complete:\n- No syntax errors found\n"
                        "- Consider adding type hints for better clarity\n"
                        "- The function could benefit from error handling for empty lists"
                    )
                ],
            }
        },
        plans={
            "plan-1": {
                "type": "items",
                "planId": "plan-1",
                "entries": [
                    {"content": "Check for syntax errors", "priority": "high", "status": "pending"},
                    {"content": "Identify potential type issues", **pending},
                    {"content": "Review error handling patterns", **pending},
                    {"content": "Suggest improvements", "priority": "low", "status": "pending"},
                ],
            }
        },
        usage={"used": 53000, "size": 200000, "cost": {"amount": 0.045, "currency": "USD"}},
        stopReason="end_turn",
    )


# -- messages ----------------------------------------------------------------------------------
def test_message_role_comes_from_the_kind_in_first_seen_order() -> None:
    assert replay(
        chunk("agent_thought_chunk", "t1", text("hmm")),
        upsert("user_message", "u1", content=[text("hi")]),
        chunk("agent_message_chunk", "a1", text("hello")),
        upsert("agent_thought", "t2", content=[]),
        chunk("user_message_chunk", "u2", text("more")),
        upsert("agent_message", "a2"),
    ) == snapshot(
        messages=[
            message("t1", "thought", [text("hmm")]),
            message("u1", "user", [text("hi")]),
            message("a1", "agent", [text("hello")]),
            message("t2", "thought", []),
            message("u2", "user", [text("more")]),
            message("a2", "agent", []),
        ]
    )


def test_message_is_keyed_by_id_alone_and_its_role_is_fixed_when_first_seen() -> None:
    assert replay(
        upsert("user_message", "m", content=[text("question")]),
        chunk("agent_message_chunk", "m", text(" and more")),
        upsert("agent_thought", "m", _meta={"k": 1}),
    ) == snapshot(messages=[message("m", "user", [text("question"), text(" and more")], {"k": 1})])


def test_message_upsert_content_omitted_keeps_null_and_empty_clear_array_replaces() -> None:
    state = SessionState()
    first = replay(
        upsert("agent_message", "m", content=[text("A")]),
        chunk("agent_message_chunk", "m", text("B")),
        upsert("agent_message", "m", _meta={"x": 1}),
        state=state,
    )
    assert first["messages"] == [message("m", "agent", [text("A"), text("B")], {"x": 1})]
    cleared = replay(upsert("agent_message", "m", content=None), state=state)
    assert cleared["messages"] == [message("m", "agent", [], {"x": 1})]
    refilled = replay(
        upsert("agent_message", "m", content=[text("C")]),
        chunk("agent_message_chunk", "m", text("D")),
        upsert("agent_message", "m", content=[]),
        state=state,
    )
    assert refilled == snapshot(messages=[message("m", "agent", [], {"x": 1})])


def test_message_upsert_meta_omitted_keeps_null_clears_object_replaces_whole() -> None:
    state = SessionState()
    assert replay(upsert("user_message", "u", _meta={"a": 1, "b": 2}), state=state)["messages"] == [
        message("u", "user", [], {"a": 1, "b": 2})
    ]
    assert replay(upsert("user_message", "u", _meta={"c": 3}), state=state)["messages"] == [
        message("u", "user", [], {"c": 3})
    ]
    assert replay(upsert("user_message", "u", content=[text("x")]), state=state)["messages"] == [
        message("u", "user", [text("x")], {"c": 3})
    ]
    assert replay(upsert("user_message", "u", _meta=None), state=state) == snapshot(
        messages=[message("u", "user", [text("x")], None)]
    )


def test_tool_call_created_by_its_first_update_or_chunk() -> None:
    assert replay(
        tool("a"),
        tool_chunk("b", item("out")),
        tool("c", title="Read", kind="read", status="pending"),
    ) == snapshot(
        toolCalls={
            "a": {"toolCallId": "a", "content": []},
            "b": {"toolCallId": "b", "content": [item("out")]},
            "c": {
                "toolCallId": "c",
                "title": "Read",
                "kind": "read",
                "status": "pending",
                "content": [],
            },
        }
    )


def test_tool_call_fields_omitted_keep_values_replace_whole_null_clears() -> None:
    state = SessionState()
    replay(
        tool(
            "c",
            title="Edit",
            kind="edit",
            status="pending",
            rawInput={"path": "a", "n": 1},
            _meta={"m": 1},
            _vendor="x",
        ),
        state=state,
    )
    after = replay(
        tool("c", status="in_progress", rawInput={"path": "b"}, rawOutput=[1, 2]),
        tool("c", title=None, _meta=None, _vendor=None, kind="_custom_kind"),
        state=state,
    )
    assert after == snapshot(
        toolCalls={
            "c": {
                "toolCallId": "c",
                "kind": "_custom_kind",
                "status": "in_progress",
                "rawInput": {"path": "b"},
                "rawOutput": [1, 2],
                "content": [],
            }
        }
    )
    assert state.tool_call_status("c") == "in_progress"
    assert state.tool_call_status("nope") is None


def test_tool_call_collections_null_and_empty_clear() -> None:
    where = [{"path": "/a.py", "line": 3}]
    state = SessionState()
    full = replay(tool("c", content=[item("x")], locations=where), state=state)
    assert full["toolCalls"]["c"] == {"toolCallId": "c", "content": [item("x")], "locations": where}
    assert replay(tool("c", content=None, locations=None), state=state)["toolCalls"] == {
        "c": {"toolCallId": "c", "content": []}
    }
    replay(tool("c", content=[item("y")], locations=where), state=state)
    assert replay(tool("c", content=[], locations=[]), state=state) == snapshot(
        toolCalls={"c": {"toolCallId": "c", "content": []}}
    )


def test_tool_call_chunks_append_an_update_with_content_replaces_later_chunks_append() -> None:
    assert replay(
        tool("c", status="in_progress"),
        tool_chunk("c", item("1")),
        tool_chunk("c", item("2")),
        tool("c", content=[item("all")]),
        tool_chunk("c", item("3")),
        tool("c", status="completed"),
    ) == snapshot(
        toolCalls={
            "c": {"toolCallId": "c", "status": "completed", "content": [item("all"), item("3")]}
        }
    )


def test_tool_call_chunk_meta_is_not_stored() -> None:
    assert replay(
        tool("c", _meta={"keep": 1}),
        {**tool_chunk("c", item("x")), "_meta": {"chunk": 1}},
    ) == snapshot(
        toolCalls={"c": {"toolCallId": "c", "_meta": {"keep": 1}, "content": [item("x")]}}
    )


# -- plans, lists, session info, usage ---------------------------------------------------------
def plan(plan_id: str, *entries: str, **extra: Any) -> dict[str, Any]:
    listed = [{"content": e, "priority": "medium", "status": "pending"} for e in entries]
    return {"type": "items", "planId": plan_id, "entries": listed, **extra}


def test_plan_update_replaces_by_id_side_by_side_and_keeps_unknown_types_verbatim() -> None:
    custom = {"type": "_mermaid", "planId": "p3", "source": "graph TD;", "n": [1, None]}
    assert replay(
        {"sessionUpdate": "plan_update", "plan": plan("p1", "a", "b")},
        {"sessionUpdate": "plan_update", "plan": plan("p2", "x")},
        {"sessionUpdate": "plan_update", "plan": plan("p1", "c"), "_meta": {"u": 1}},
        {"sessionUpdate": "plan_update", "plan": custom},
    ) == snapshot(plans={"p1": plan("p1", "c"), "p2": plan("p2", "x"), "p3": custom})


def test_only_state_update_moves_the_state_and_idle_takes_its_stop_reason() -> None:
    state = SessionState()
    assert replay(state_update("running", stopReason="end_turn"), state=state)["state"] == "running"
    assert state.stop_reason is None
    replay(
        upsert("agent_message", "m", content=[text("x")]), tool("c", status="pending"), state=state
    )
    assert (state.state, state.stop_reason) == ("running", None)
    replay(state_update("requires_action"), state=state)
    assert (state.state, state.stop_reason) == ("requires_action", None)
    replay(state_update("idle", stopReason="max_tokens"), state=state)
    assert (state.state, state.stop_reason) == ("idle", "max_tokens")
    replay(state_update("running"), state=state)
    assert (state.state, state.stop_reason) == ("running", None)
    replay(state_update("idle"), state=state)
    assert (state.state, state.stop_reason) == ("idle", None)
    replay(state_update("idle", stopReason="_vendor_timeout"), state=state)
    assert (state.state, state.stop_reason) == ("idle", "_vendor_timeout")
    replay(state_update("idle", stopReason=None), state=state)
    assert (state.state, state.stop_reason) == ("idle", None)
    replay(state_update("_paused", stopReason="end_turn"), state=state)
    assert state.snapshot()["state"] == "_paused"
    assert state.snapshot()["stopReason"] is None


def test_updates_while_idle_or_after_cancel_apply_and_cancel_keeps_tool_statuses() -> None:
    assert replay(
        state_update("running"),
        tool("c", status="in_progress"),
        state_update("idle", stopReason="cancelled"),
        chunk("agent_message_chunk", "late", text("after idle")),
        tool("d", status="pending"),
    ) == snapshot(
        messages=[message("late", "agent", [text("after idle")])],
        toolCalls={
            "c": {"toolCallId": "c", "status": "in_progress", "content": []},
            "d": {"toolCallId": "d", "status": "pending", "content": []},
        },
        stopReason="cancelled",
    )


# -- terminals ---------------------------------------------------------------------------------
def term(terminal_id: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "terminal_update", "terminalId": terminal_id, **fields}


def term_chunk(terminal_id: str, data: str) -> dict[str, Any]:
    return {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal_id, "data": data}


def test_terminal_created_by_update_or_chunk_fields_patch() -> None:
    state = SessionState()
    replay(
        term("t1", command="cargo test", cwd="/p", _meta={"a": 1}),
        term_chunk("t2", "aGk="),
        state=state,
    )
    assert state.snapshot()["terminals"] == {
        "t1": {"terminalId": "t1", "command": "cargo test", "cwd": "/p", "_meta": {"a": 1}},
        "t2": {"terminalId": "t2", "output": "aGk="},
    }
    assert replay(
        term("t1", cwd=None, _meta=None, exitStatus={"exitCode": 0, "signal": None}),
        term("t1", command="make"),
        state=state,
    )["terminals"]["t1"] == {
        "terminalId": "t1",
        "command": "make",
        "exitStatus": {"exitCode": 0, "signal": None},
    }
    assert replay(term("t1", exitStatus=None), state=state)["terminals"]["t1"] == {
        "terminalId": "t1",
        "command": "make",
    }


def test_terminal_output_replaced_by_update_appended_by_chunks_removed_by_null() -> None:
    state = SessionState()
    assert replay(term("t", command="ls"), state=state)["terminals"]["t"] == {
        "terminalId": "t",
        "command": "ls",
    }
    # Each chunk is decoded on its own: "aGk=" + "IQ==" is b"hi" + b"!", not one base64 text.
    replay(term_chunk("t", "aGk="), term_chunk("t", "IQ=="), state=state)
    assert state.snapshot()["terminals"]["t"]["output"] == "aGkh"
    assert state.terminal_output("t") == b"hi!"
    replay(term("t", output={"data": "cnVubmluZyB0ZXN0cw0K", "_meta": {"snap": 1}}), state=state)
    replay(term_chunk("t", "cGFzc2VkDQo="), state=state)
    assert state.terminal_output("t") == b"running tests\r\npassed\r\n"
    assert replay(term("t", output=None), state=state) == snapshot(
        terminals={"t": {"terminalId": "t", "command": "ls"}}
    )
    assert state.terminal_output("t") is None
    assert replay(term_chunk("t", ""), state=state)["terminals"]["t"]["output"] == ""


def test_terminal_output_that_is_not_base64_is_refused_and_changes_nothing() -> None:
    state = SessionState()
    replay(term_chunk("t", "aGk="), state=state)
    before = state.snapshot()
    for bad in (term_chunk("t", "not base64!"), term("t", command="x", output={"data": "%%%"})):
        with pytest.raises(ValueError, match="not valid base64"):
            replay(bad, state=state)
    assert state.snapshot() == before


# -- unknown kinds, copies, the schema ---------------------------------------------------------
def test_unknown_kinds_are_kept_raw_in_arrival_order() -> None:
    vendor = {"sessionUpdate": "_vendor_progress", "pct": 50, "nested": {"a": [1, None]}}
    future = {"sessionUpdate": "compaction_update", "messageId": "m", "content": None}
    assert replay(vendor, state_update("running"), future, vendor) == snapshot(
        state="running", unknown=[vendor, future, vendor]
    )


def test_known_kinds_are_the_union_variants_and_each_has_a_rule() -> None:
    classes = [cls for cls in typing.get_args(seed_v2.SessionUpdate) if hasattr(cls, "TAG")]
    kinds = session_state.KNOWN_KINDS
    assert sorted(kinds) == sorted({cls.TAG for cls in classes}) and len(kinds) == 16
    for cls in classes:  # a kind's class, or one of its classes (state_update's, by `state`)
        assert kinds[cls.TAG] is cls or cls in typing.get_args(kinds[cls.TAG]), cls
    assert typing.get_args(kinds["state_update"]) == typing.get_args(
        seed_v2.SessionUpdateStateUpdate
    )
    assert set(session_state._RULES) == set(classes)
    for v1 in (acp_v1, seed_lane("v1")):  # v1 has its own model
        doc = sys.modules[v1.SessionState.__module__].__doc__ or ""
        assert doc.startswith("The client's view of a v1 session")


def test_kinds_and_collections_follow_the_schema(tmp_path: Path, mirror: Path) -> None:
    """A schema with one more update kind, one more tool call list, and message chunks whose
    `messageId` is optional (as in v1): the new kind has no rule and the chunks' rule does not
    fit, so both are kept raw; the new list clears on `[]` like `locations`."""
    v2_schema = mirror / "schema-v2.0.0-alpha.3" / "v2" / "schema.json"
    from codegen.config import default_templates
    from codegen.diagnostics import Diagnostics
    from codegen.pipeline import Target, generate

    schema = json.loads(v2_schema.read_text(encoding="utf-8"))
    defs = schema["$defs"]
    defs["Notice"] = {"type": "object", "properties": {"text": {"type": "string"}}}
    branches = defs["SessionUpdate"]["anyOf"]
    notice = {"const": "notice", "type": "string"}
    branches.insert(
        -1,
        {
            "type": "object",
            "properties": {"sessionUpdate": notice},
            "required": ["sessionUpdate"],
            "allOf": [{"$ref": "#/$defs/Notice"}],
        },
    )
    branches[-1]["not"]["anyOf"].append(
        {"type": "object", "properties": {"sessionUpdate": notice}, "required": ["sessionUpdate"]}
    )
    defs["ToolCallUpdate"]["properties"]["tags"] = {
        "type": ["array", "null"],
        "items": {"type": "string"},
    }
    defs["ContentChunk"]["required"].remove("messageId")
    (tmp_path / "schema.json").write_text(json.dumps(schema), encoding="utf-8")
    (tmp_path / "meta.json").write_bytes(v2_schema.with_name("meta.json").read_bytes())

    files = generate(
        Target("acp_probe", tmp_path / "schema.json"), default_templates(), Diagnostics(), fmt=False
    ).files
    for name, body in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(body, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        probe = __import__("acp_probe")
        probe_state = sys.modules[probe.SessionState.__module__]
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == "acp_probe" or m.startswith("acp_probe.")]:
            del sys.modules[name]

    assert sorted(probe_state.KNOWN_KINDS) == sorted([*session_state.KNOWN_KINDS, "notice"])
    state = probe.SessionState()
    loose_chunk = {"sessionUpdate": "agent_message_chunk", "content": text("no id")}
    for update in (
        {"sessionUpdate": "notice", "text": "hi"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "tags": ["a"], "title": "T"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "tags": []},
        loose_chunk,
        upsert("agent_message", "m", content=[text("kept")]),
    ):
        state.apply(probe.decode(probe.SessionUpdate, update))
    assert state.snapshot() == snapshot(
        messages=[message("m", "agent", [text("kept")])],
        toolCalls={"c": {"toolCallId": "c", "title": "T", "content": []}},
        unknown=[{"sessionUpdate": "notice", "text": "hi"}, loose_chunk],
    )
