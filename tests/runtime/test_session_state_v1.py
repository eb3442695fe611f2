"""The generated v1 `SessionState` (`acp_kit.v1`, npm-sdk-2.4.0's v1 lane): one test per rule of
v1's update semantics that v2's model does not share (the turn's state from the prompt's
answer, id-less chunks, the timeline, `tool_call`, one plan, the mode), each on the exact
snapshot JSON, plus the v1 docs' prompt turn replayed whole; alpha.3's v1 lane (without notices
and compactions) gets a rule for each of its kinds too. The shared rules are in
test_session_state.py."""

from __future__ import annotations

import json
import sys
import typing
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from acp_kit import v1 as acp_v1
from acp_kit.v1 import SessionState

from tests.support.lanes import seed_lane
from tests.support.toolkit_wire import text

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT.parent / "shared" / "acp-examples" / "v1"

EMPTY: dict[str, Any] = {
    "messages": [],
    "toolCalls": {},
    "timeline": [],
    "plan": None,
    "availableCommands": None,
    "currentModeId": None,
    "configOptions": None,
    "sessionInfo": {},
    "usage": None,
    "notices": [],
    "compactions": {},
    "state": "idle",
    "stopReason": None,
    "unknown": [],
}


def replay(*updates: dict[str, Any], state: Any = None, acp: ModuleType = acp_v1) -> Any:
    """Decode each wire update, apply it, and return the snapshot."""
    state = state or acp.SessionState()
    for update in updates:
        state.apply(acp.decode(acp.SessionUpdate, update))
    return state.snapshot()


def snapshot(**changes: Any) -> dict[str, Any]:
    return {**EMPTY, **changes}


def message(message_id: str | None, role: str, content: list[Any]) -> dict[str, Any]:
    return {"messageId": message_id, "role": role, "content": content}


def chunk(kind: str, block: dict[str, Any], message_id: str | None = None) -> dict[str, Any]:
    update = {"sessionUpdate": kind, "content": block}
    return update if message_id is None else {**update, "messageId": message_id}


def start(call_id: str, title: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": title, **fields}


def tool(call_id: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields}


def item(value: str) -> dict[str, Any]:
    return {"type": "content", "content": text(value)}


def entry(content: str, status: str = "pending") -> dict[str, Any]:
    return {"content": content, "priority": "medium", "status": status}


# -- the docs' prompt turn ---------------------------------------------------------------------
def docs_page(page: str) -> list[dict[str, Any]]:
    folder = DOCS / page
    if not folder.is_dir():
        pytest.skip(f"docs examples not found: {folder}")
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


def test_golden_the_v1_docs_prompt_turn_replays_to_this_snapshot() -> None:
    state = SessionState()
    for example in docs_page("prompt-turn"):
        if example.get("method") == "session/prompt":
            state.prompt_started()
        elif example.get("method") == "session/update":
            state.apply_json(example["params"]["update"])
        elif "result" in example:
            state.prompt_finished(example["result"]["stopReason"])
    analysis = (
        "Analysis complete:\n- No syntax errors found\n"
        "- Consider adding type hints for better clarity\n"
        "- The function could benefit from error handling for empty lists"
    )
    assert state.snapshot() == snapshot(
        messages=[
            message(
                "msg_agent_c42b9",
                "agent",
                [text("I'll analyze your code for potential issues. Let me examine it...")],
            )
        ],
        toolCalls={
            "call_001": {
                "toolCallId": "call_001",
                "title": "Analyzing Python code",
                "kind": "other",
                "status": "completed",
                "content": [item(analysis)],
            }
        },
        timeline=[{"message": 0}, {"toolCall": "call_001"}],
        plan={
            "entries": [
                {"content": "Check for syntax errors", "priority": "high", "status": "pending"},
                entry("Identify potential type issues"),
                entry("Review error handling patterns"),
                {"content": "Suggest improvements", "priority": "low", "status": "pending"},
            ]
        },
        usage={"used": 53000, "size": 200000, "cost": {"amount": 0.045, "currency": "USD"}},
        stopReason="end_turn",
    )


# -- the turn's state --------------------------------------------------------------------------
def test_the_prompt_request_sets_running_and_its_answer_idle_with_the_stop_reason() -> None:
    state = SessionState()
    state.prompt_started()
    assert (state.state, state.stop_reason) == ("running", None)
    state.prompt_finished("cancelled")
    assert state.snapshot() == snapshot(stopReason="cancelled")
    state.prompt_started()  # the next turn forgets the last stop reason
    assert state.snapshot() == snapshot(state="running")
    state.prompt_finished(None)  # answered with an error
    assert (state.state, state.stop_reason) == ("idle", None)


def test_no_update_changes_the_turns_state() -> None:
    state = SessionState()
    state.prompt_started()
    replay(chunk("agent_message_chunk", text("hi")), tool("c", status="completed"), state=state)
    assert (state.state, state.stop_reason) == ("running", None)


# -- messages ----------------------------------------------------------------------------------
def test_chunks_with_an_id_join_the_message_of_that_id_in_first_seen_order() -> None:
    assert replay(
        chunk("agent_message_chunk", text("A"), "a1"),
        chunk("agent_thought_chunk", text("hmm"), "t1"),
        chunk("agent_message_chunk", text("B"), "a1"),
        chunk("user_message_chunk", text("hi"), "u1"),
    ) == snapshot(
        messages=[
            message("a1", "agent", [text("A"), text("B")]),
            message("t1", "thought", [text("hmm")]),
            message("u1", "user", [text("hi")]),
        ],
        timeline=[{"message": 0}, {"message": 1}, {"message": 2}],
    )


def test_id_less_chunks_of_one_role_in_a_row_make_one_message() -> None:
    assert replay(
        chunk("agent_message_chunk", text("Hel")),
        chunk("agent_message_chunk", text("lo")),
        {"sessionUpdate": "usage_update", "used": 1, "size": 9},  # not an entry: no break
        chunk("agent_message_chunk", text("!")),
    )["messages"] == [message(None, "agent", [text("Hel"), text("lo"), text("!")])]


def test_an_id_less_chunk_after_another_role_or_a_tool_call_starts_a_new_message() -> None:
    view = replay(
        chunk("agent_thought_chunk", text("think")),
        chunk("agent_message_chunk", text("one")),
        start("c1", "Read"),
        chunk("agent_message_chunk", text("two")),
        chunk("agent_message_chunk", text("with id"), "a9"),
        chunk("agent_message_chunk", text("three")),
    )
    assert view["messages"] == [
        message(None, "thought", [text("think")]),
        message(None, "agent", [text("one")]),
        message(None, "agent", [text("two")]),
        message("a9", "agent", [text("with id")]),
        message(None, "agent", [text("three")]),
    ]
    assert view["timeline"] == [
        {"message": 0},
        {"message": 1},
        {"toolCall": "c1"},
        {"message": 2},
        {"message": 3},
        {"message": 4},
    ]


def test_a_null_or_invalid_message_id_counts_as_none() -> None:
    # messageId is nullable and default-on-error: both decode as no id.
    assert replay(
        {"sessionUpdate": "agent_message_chunk", "content": text("a"), "messageId": None},
        {"sessionUpdate": "agent_message_chunk", "content": text("b"), "messageId": 7},
    )["messages"] == [message(None, "agent", [text("a"), text("b")])]


def test_last_text_reads_the_latest_message_of_a_role() -> None:
    state = SessionState()
    assert state.last_text() == ""
    replay(
        chunk("agent_message_chunk", text("old")),
        chunk("user_message_chunk", text("q")),
        chunk("agent_message_chunk", {"type": "image", "data": "AA==", "mimeType": "image/png"}),
        chunk("agent_message_chunk", text("new")),
        state=state,
    )
    assert (state.last_text(), state.last_text("user"), state.last_text("thought")) == (
        "new",
        "q",
        "",
    )


# -- tool calls --------------------------------------------------------------------------------
def test_tool_call_reports_the_whole_call_with_the_fields_received() -> None:
    assert replay(start("c", "Read file", kind="read", rawInput={"path": "/a"})) == snapshot(
        toolCalls={
            "c": {
                "toolCallId": "c",
                "title": "Read file",
                "kind": "read",
                "rawInput": {"path": "/a"},
                "content": [],
            }
        },
        timeline=[{"toolCall": "c"}],
    )


def test_tool_call_again_replaces_the_call_whole_and_keeps_its_place() -> None:
    view = replay(
        start("c", "First", status="in_progress", content=[item("x")], locations=[{"path": "/a"}]),
        chunk("agent_message_chunk", text("between")),
        start("c", "Second", rawOutput=None),
    )
    assert view["toolCalls"] == {"c": {"toolCallId": "c", "title": "Second", "content": []}}
    assert view["timeline"] == [{"toolCall": "c"}, {"message": 0}]


def test_tool_call_update_changes_only_the_fields_it_carries_and_null_changes_nothing() -> None:
    state = SessionState()
    replay(
        start("c", "Edit", kind="edit", status="pending", rawInput={"a": 1}, name="edit"),
        state=state,
    )
    view = replay(
        tool("c", status="in_progress", title=None, kind=None, rawInput=None, name=None),
        state=state,
    )
    # `name` is ToolCall's own field in npm-sdk-2.4.0 and an extra key in alpha.3: kept alike
    assert view["toolCalls"]["c"] == {
        "toolCallId": "c",
        "title": "Edit",
        "kind": "edit",
        "status": "in_progress",
        "rawInput": {"a": 1},
        "name": "edit",
        "content": [],
    }
    assert (state.tool_call_status("unseen"), state.tool_call_status("c")) == (None, "in_progress")


def test_tool_call_update_lists_replace_the_whole_collection_and_empty_lists_clear() -> None:
    state = SessionState()
    replay(start("c", "T", content=[item("a"), item("b")], locations=[{"path": "/a"}]), state=state)
    replay(tool("c", content=[item("c")], locations=[]), state=state)
    assert state.snapshot()["toolCalls"]["c"] == {
        "toolCallId": "c",
        "title": "T",
        "content": [item("c")],
        "locations": [],
    }
    replay(tool("c", content=None, locations=None), state=state)  # null: unchanged
    assert state.snapshot()["toolCalls"]["c"]["content"] == [item("c")]


def test_tool_call_update_of_an_unseen_id_creates_the_call() -> None:
    assert replay(tool("late", status="completed", rawOutput={"ok": True})) == snapshot(
        toolCalls={
            "late": {
                "toolCallId": "late",
                "status": "completed",
                "rawOutput": {"ok": True},
                "content": [],
            }
        },
        timeline=[{"toolCall": "late"}],
    )


def test_tool_call_update_meta_replaces_the_calls_meta() -> None:
    state = SessionState()
    replay(start("c", "T", _meta={"a": 1}), tool("c", _meta={"b": 2}), state=state)
    assert state.snapshot()["toolCalls"]["c"]["_meta"] == {"b": 2}


# -- the other kinds ---------------------------------------------------------------------------
def test_each_plan_replaces_the_last_whole() -> None:
    state = SessionState()
    replay(
        {"sessionUpdate": "plan", "entries": [entry("a"), entry("b")], "_meta": {"v": 1}},
        state=state,
    )
    assert state.snapshot()["plan"] == {"entries": [entry("a"), entry("b")], "_meta": {"v": 1}}
    replay({"sessionUpdate": "plan", "entries": [entry("b", "completed")]}, state=state)
    assert state.snapshot() == snapshot(plan={"entries": [entry("b", "completed")]})


def test_the_current_mode_keeps_the_latest_value() -> None:
    assert replay(
        {"sessionUpdate": "current_mode_update", "currentModeId": "ask"},
        {"sessionUpdate": "current_mode_update", "currentModeId": "code", "_meta": {"m": 1}},
    ) == snapshot(currentModeId="code")


# -- kinds the npm-sdk-2.4.0 v1 schema adds ----------------------------------------------------
def test_compaction_update_is_an_upsert_with_patched_summary_error_and_meta() -> None:
    state = SessionState()

    def compaction(**fields: Any) -> dict[str, Any]:
        return {"sessionUpdate": "compaction_update", "compactionId": "k", **fields}

    replay(
        chunk("agent_message_chunk", text("before")),
        compaction(status="in_progress", summary=[text("a")], _meta={"m": 1}),
        state=state,
        acp=acp_v1,
    )
    replay(compaction(status="failed", error="too long"), state=state, acp=acp_v1)
    assert state.snapshot()["compactions"] == {
        "k": {
            "compactionId": "k",
            "status": "failed",
            "summary": [text("a")],
            "_meta": {"m": 1},
            "error": "too long",
        }
    }
    replay(
        compaction(status="completed", error=None, _meta=None, summary=[]), state=state, acp=acp_v1
    )
    assert state.snapshot() == snapshot(
        messages=[message(None, "agent", [text("before")])],
        compactions={"k": {"compactionId": "k", "status": "completed", "summary": []}},
        timeline=[{"message": 0}, {"compaction": "k"}],
    )
    replay(compaction(status="completed", summary=None), state=state, acp=acp_v1)
    assert state.snapshot()["compactions"]["k"]["summary"] == []


def test_compaction_summary_chunks_append_and_a_first_seen_id_starts_in_progress() -> None:
    def summary(block: dict[str, Any]) -> dict[str, Any]:
        return {"sessionUpdate": "compaction_summary_chunk", "compactionId": "k", "content": block}

    assert replay(summary(text("x")), summary(text("y")), acp=acp_v1) == snapshot(
        compactions={
            "k": {"compactionId": "k", "status": "in_progress", "summary": [text("x"), text("y")]}
        },
        timeline=[{"compaction": "k"}],
    )


def test_every_kind_of_alpha3s_v1_schema_has_a_rule() -> None:
    acp = seed_lane("v1")  # npm-sdk-2.4.0's: test_session_state.py
    module = sys.modules[acp.SessionState.__module__]
    variants = {cls.TAG: cls for cls in typing.get_args(acp.SessionUpdate) if hasattr(cls, "TAG")}
    assert module.KNOWN_KINDS == variants
    assert len(variants) == 11
    assert set(module._RULES) == set(variants.values())


# -- which lanes get this model ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("ref", "path", "model"),
    [
        ("npm-sdk-2.4.0", "v1/schema.json", "v1"),
        ("npm-sdk-2.4.0", "v1/schema.unstable.json", "v1"),  # has v2's StateUpdate too
        ("npm-sdk-2.4.0", "v2/schema.json", "v2"),
        ("schema-v2.0.0-alpha.3", "v2/schema.unstable.json", "v2"),
        ("v0.6.3", "schema.json", None),  # neither ToolCall nor StateUpdate
    ],
)
def test_each_lane_gets_its_own_session_model(ref: str, path: str, model: str | None) -> None:
    from codegen.config import default_templates
    from codegen.diagnostics import Diagnostics
    from codegen.pins import ensure_with_meta, read_lock
    from codegen.pipeline import Target, generate

    lock = read_lock(ROOT / "schema" / "pins.lock.json")
    schema = ensure_with_meta(lock, lock.find(ref, path))
    files = generate(Target("probe", schema), default_templates(), Diagnostics(), fmt=False).files
    [body] = [text for name, text in files.items() if name.endswith("/session_state.py")] or [None]
    docstring = {
        "v1": '"""The client\'s view of a v1 session,',
        "v2": '"""The client\'s view of a session,',
    }
    assert (body is not None) == (model is not None)
    if body is not None and model is not None:
        assert docstring[model] in body
