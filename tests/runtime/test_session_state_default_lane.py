"""`SessionState` on the default v2 lane (npm-sdk-2.4.0, the committed `acp_kit.v2`): the kinds
that draft adds to the seed's, each with the effect its schema description gives it (notices,
which v1 has too, are in test_session_state.py)."""

from __future__ import annotations

import typing
from typing import Any

from acp_kit import v2 as acp_v2

from tests.support.toolkit_wire import text


def replay(*updates: dict[str, Any]) -> dict[str, Any]:
    state = acp_v2.SessionState()
    for update in updates:
        state.apply(acp_v2.decode(acp_v2.SessionUpdate, update))
    return state.snapshot()


def test_the_empty_snapshot_has_notices_and_compactions() -> None:
    snap = acp_v2.SessionState().snapshot()
    assert snap["notices"] == [] and snap["compactions"] == {} and snap["unknown"] == []


def test_compaction_updates_upsert_and_patch() -> None:
    start = {"sessionUpdate": "compaction_update", "compactionId": "c", "status": "in_progress"}
    snap = replay(
        start,
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c", "content": text("a")},
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c", "content": text("b")},
        {**start, "status": "failed", "error": "boom", "_meta": {"x": 1, "y": 2}},
        {**start, "status": "completed", "error": None, "_meta": {"x": None, "z": 3}},
    )
    assert snap["compactions"] == {
        "c": {
            "compactionId": "c",
            "status": "completed",
            "summary": [text("a"), text("b")],
            "meta": {"y": 2, "z": 3},
        }
    }


def test_compaction_summary_replaced_cleared_and_meta_cleared() -> None:
    start = {"sessionUpdate": "compaction_update", "compactionId": "c", "status": "in_progress"}
    snap = replay(
        {**start, "summary": [text("old")], "_meta": {"k": 1}},
        {**start, "summary": [text("new")]},
    )
    assert snap["compactions"]["c"]["summary"] == [text("new")]
    assert snap["compactions"]["c"]["meta"] == {"k": 1}
    snap = replay({**start, "summary": [text("old")], "_meta": {"k": 1}}, {**start, "summary": []})
    assert snap["compactions"]["c"]["summary"] == []
    snap = replay({**start, "summary": [text("old")]}, {**start, "summary": None, "_meta": None})
    assert snap["compactions"]["c"] == {"compactionId": "c", "status": "in_progress", "summary": []}


def test_a_first_seen_chunk_starts_an_in_progress_compaction_in_first_seen_order() -> None:
    snap = replay(
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "b", "content": text("x")},
        {"sessionUpdate": "compaction_update", "compactionId": "a", "status": "cancelled"},
    )
    assert list(snap["compactions"]) == ["b", "a"]
    assert snap["compactions"]["b"] == {
        "compactionId": "b",
        "status": "in_progress",
        "summary": [text("x")],
    }


def test_kinds_without_a_rule_stay_unknown() -> None:
    custom = {"sessionUpdate": "_vendor_event", "payload": [1]}
    snap = replay(custom)
    assert snap["unknown"] == [custom]
    assert snap["notices"] == [] and snap["compactions"] == {}
    every_kind = set(acp_v2.session_state.KNOWN_KINDS)
    ruled = set(acp_v2.session_state._RULES)
    unruled = sorted(
        kind
        for kind, cls in acp_v2.session_state.KNOWN_KINDS.items()
        if not set(typing.get_args(cls) or (cls,)) <= ruled  # state_update: each of its classes
    )
    assert "notice" in every_kind and unruled == []
