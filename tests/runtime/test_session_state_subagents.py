"""Subagent sessions in the session model of the unstable v2 lane (npm-sdk-2.4.0's
`v2/schema.unstable.json`), one test per effect the schema's descriptions give:
`subagent_update` registers and patches a child, each child's updates are attributed by its own
`sessionId`, `session_message` / `session_message_chunk` are inter-session messages in a
transcript, a child's end and cancel are its own idle states (the association stays), and
`plan_removed` removes a plan. The stable lane has none of it."""

from __future__ import annotations

from typing import Any

import pytest
from acp_kit import v2, v2_unstable

U = v2_unstable
PARENT = "sess_parent"
CHILD = "sess_child"


def state_with_child(**fields: Any) -> Any:
    state = U.SessionState(PARENT)
    state.apply_json({"sessionUpdate": "subagent_update", "sessionId": CHILD, **fields})
    return state


def test_the_first_subagent_update_registers_the_child() -> None:
    state = state_with_child(title="Researcher")
    assert list(state.children) == [CHILD]
    assert state.child_info(CHILD) == {"sessionId": CHILD, "title": "Researcher"}
    child = state.child(CHILD)
    assert isinstance(child, U.SessionState)
    assert (child.session_id, child.state, child.stop_reason) == (CHILD, "idle", None)
    assert state.snapshot()["children"] == {
        CHILD: {"sessionId": CHILD, "title": "Researcher", "session": child.snapshot()}
    }
    assert state.snapshot()["messages"] == []  # the parent's own transcript is untouched


def test_later_updates_patch_the_association() -> None:
    state = state_with_child(
        title="Researcher",
        description="looks things up",
        cwd="/work",
        additionalDirectories=["/a", "/b"],
        capabilities={"cancel": {}},
        _meta={"vendor.io/kind": "research", "vendor.io/rank": 1},
    )
    for patch in (
        {"title": "Librarian"},  # a value replaces
        {"description": None},  # null clears
        {},  # omitted keeps
        {"additionalDirectories": ["/c"]},  # an array replaces the whole list
        {"_meta": {"vendor.io/rank": None, "vendor.io/x": {"deep": True}}},  # by top-level key
    ):
        state.apply_json({"sessionUpdate": "subagent_update", "sessionId": CHILD, **patch})
    assert state.child_info(CHILD) == {
        "sessionId": CHILD,
        "title": "Librarian",
        "cwd": "/work",
        "additionalDirectories": ["/c"],
        "capabilities": {"cancel": {}},
        "meta": {"vendor.io/kind": "research", "vendor.io/x": {"deep": True}},
    }
    state.apply_json({"sessionUpdate": "subagent_update", "sessionId": CHILD, "_meta": None})
    state.apply_json({"sessionUpdate": "subagent_update", "sessionId": CHILD, "cwd": None})
    assert "meta" not in state.child_info(CHILD) and "cwd" not in state.child_info(CHILD)
    assert list(state.children) == [CHILD]  # patches never register twice


def test_the_mirrored_state_is_replaced_whole_and_null_leaves_it_unconfirmed() -> None:
    state = state_with_child(state={"state": "running", "background": []})
    assert state.child_info(CHILD)["state"] == {"state": "running", "background": []}
    state.apply_json(
        {"sessionUpdate": "subagent_update", "sessionId": CHILD,
         "state": {"state": "idle", "stopReason": "end_turn"}}
    )  # fmt: skip
    assert state.child_info(CHILD)["state"] == {"state": "idle", "stopReason": "end_turn"}
    state.apply_json({"sessionUpdate": "subagent_update", "sessionId": CHILD, "state": None})
    assert "state" not in state.child_info(CHILD)  # not idle, not cancelled: unknown
    assert state.state == "idle" and state.stop_reason is None  # the parent's own state: its own


def test_each_child_s_updates_are_attributed_by_its_own_session_id() -> None:
    state = state_with_child()
    chunk = {"sessionUpdate": "agent_message_chunk", "messageId": "m1",
             "content": {"type": "text", "text": "child says"}}  # fmt: skip
    state.apply_json(chunk, CHILD)
    state.apply_json({**chunk, "content": {"type": "text", "text": "parent says"}}, PARENT)
    assert state.child(CHILD).message_text("m1") == "child says"
    assert state.message_text("m1") == "parent says"  # one id, two transcripts
    assert state.snapshot()["children"][CHILD]["session"]["messages"][0]["content"] == [
        {"type": "text", "text": "child says"}
    ]
    with pytest.raises(ValueError, match="an update of session 'sess_other', which is not"):
        state.apply_json(chunk, "sess_other")  # neither this session nor a child of it
    assert len(state.snapshot()["messages"]) == 1  # unchanged


def test_a_state_without_an_id_takes_unknown_ids_as_its_own() -> None:
    state = U.SessionState()
    state.apply_json({"sessionUpdate": "subagent_update", "sessionId": CHILD})
    state.apply_json({"sessionUpdate": "state_update", "state": "running"}, CHILD)
    state.apply_json({"sessionUpdate": "state_update", "state": "running"}, "whoever")
    assert (state.state, state.child(CHILD).state) == ("running", "running")


def test_children_of_children_are_followed_through_their_parent() -> None:
    state = state_with_child()
    state.apply_json({"sessionUpdate": "subagent_update", "sessionId": "sess_grandchild"}, CHILD)
    state.apply_json({"sessionUpdate": "state_update", "state": "running"}, "sess_grandchild")
    assert list(state.children) == [CHILD]  # the grandchild is the child's
    assert list(state.child(CHILD).children) == ["sess_grandchild"]
    assert state.child("sess_grandchild").state == "running"
    nested = state.snapshot()["children"][CHILD]["session"]["children"]
    assert nested["sess_grandchild"]["session"]["state"] == "running"


def test_nesting_is_bounded() -> None:
    state = U.SessionState("s0")
    for depth in range(1, 33):
        state.apply_json({"sessionUpdate": "subagent_update", "sessionId": f"s{depth}"},
                         f"s{depth - 1}")  # fmt: skip
    with pytest.raises(ValueError, match="nested over 32 deep"):
        state.apply_json({"sessionUpdate": "subagent_update", "sessionId": "s33"}, "s32")
    assert state.child("s33") is None


def test_session_messages_are_upserts_with_patched_links() -> None:
    state = U.SessionState(PARENT)
    link = {"senderSessionId": PARENT, "recipientSessionId": CHILD}
    state.apply_json(
        {"sessionUpdate": "session_message", "messageId": "out1", **link,
         "content": [{"type": "text", "text": "Find "}], "_meta": {"a": 1, "b": 2}}
    )  # fmt: skip
    state.apply_json({"sessionUpdate": "session_message_chunk", "messageId": "out1",
                      "content": {"type": "text", "text": "the answer"}})  # fmt: skip
    state.apply_json(
        {"sessionUpdate": "session_message", "messageId": "out1",
         "recipientMessageId": "in1", "_meta": {"b": None, "c": 3}}
    )  # fmt: skip
    [message] = state.snapshot()["messages"]
    assert message == {
        "messageId": "out1",
        "role": "session",
        "content": [{"type": "text", "text": "Find "}, {"type": "text", "text": "the answer"}],
        "meta": {"a": 1, "c": 3},
        "senderSessionId": PARENT,
        "recipientSessionId": CHILD,
        "recipientMessageId": "in1",
    }
    assert state.message_role("out1") == "session"
    assert state.message_text("out1") == "Find the answer"
    state.apply_json({"sessionUpdate": "session_message", "messageId": "out1",
                      "senderSessionId": None, "content": None})  # fmt: skip
    [message] = state.snapshot()["messages"]
    assert "senderSessionId" not in message and message["content"] == []


def test_a_chunk_may_come_before_its_message_s_participants() -> None:
    state = U.SessionState(PARENT)
    chunk = {"type": "text", "text": "hi"}
    state.apply_json({"sessionUpdate": "session_message_chunk", "messageId": "in1",
                      "content": chunk, "_meta": {"chunk": True}})  # fmt: skip
    state.apply_json({"sessionUpdate": "session_message", "messageId": "in1",
                      "senderSessionId": CHILD, "senderMessageId": "out9"})  # fmt: skip
    assert state.snapshot()["messages"] == [
        {
            "messageId": "in1",
            "role": "session",
            "content": [{"type": "text", "text": "hi"}],
            "meta": None,  # a chunk's _meta is the chunk's
            "senderSessionId": CHILD,
            "senderMessageId": "out9",
        }
    ]


def test_a_child_s_end_and_cancel_are_its_own_idle_states_and_keep_the_association() -> None:
    state = state_with_child(capabilities={"cancel": {}})
    running = {"sessionUpdate": "state_update", "state": "running"}
    state.apply_json(running, CHILD)
    state.apply_json({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
                     CHILD)  # fmt: skip
    child = state.child(CHILD)
    assert (child.state, child.stop_reason) == ("idle", "end_turn")
    # The parent may message the same child again: its next work, cancelled this time.
    state.apply_json(running, CHILD)
    state.apply_json({"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"},
                     CHILD)  # fmt: skip
    assert (child.state, child.stop_reason) == ("idle", "cancelled")
    assert list(state.children) == [CHILD] and state.state == "idle"
    assert state.stop_reason is None  # the parent's own work did not stop


def test_a_removed_plan_is_gone() -> None:
    state = U.SessionState()
    plan = {"type": "items", "planId": "p1", "entries": []}
    state.apply_json({"sessionUpdate": "plan_update", "plan": plan})
    state.apply_json({"sessionUpdate": "plan_update",
                      "plan": {"type": "markdown", "planId": "p2", "content": "# x"}})  # fmt: skip
    state.apply_json({"sessionUpdate": "plan_removed", "planId": "p1"})
    state.apply_json({"sessionUpdate": "plan_removed", "planId": "never"})  # nothing to remove
    assert list(state.snapshot()["plans"]) == ["p2"]


def test_tool_call_content_this_release_lacks_is_kept_verbatim() -> None:
    """npm-sdk-2.4.0 has no tool call content for a child session (later drafts reference one
    from a tool call); an unknown content type is kept and re-encoded unchanged, as the schema
    asks of receivers that do not understand it."""
    item = {"type": "session", "sessionId": CHILD, "_meta": {"vendor.io/x": 1}}
    update = U.decode(U.SessionUpdate, {"sessionUpdate": "tool_call_update",
                                        "toolCallId": "t1", "content": [item]})  # fmt: skip
    state = state_with_child()
    state.apply(update)
    assert state.snapshot()["toolCalls"]["t1"]["content"] == [item]
    assert U.encode(update)["content"] == [item]


def test_the_stable_lane_has_no_children() -> None:
    state = v2.SessionState("s")
    state.apply_json({"sessionUpdate": "subagent_update", "sessionId": CHILD})
    snapshot = state.snapshot()
    assert "children" not in snapshot
    assert snapshot["unknown"] == [{"sessionUpdate": "subagent_update", "sessionId": CHILD}]
    assert not hasattr(state, "child")
    with pytest.raises(ValueError, match="an update of session 'sess_child', which is not 's'"):
        state.apply_json({"sessionUpdate": "state_update", "state": "running"}, CHILD)
