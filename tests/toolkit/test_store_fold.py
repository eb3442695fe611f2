"""Folding a commit's writes (`store_fold`) and SQLite's one-statement-per-kind writing
(`store_sqlite_write`) leave exactly the state the writes applied one by one leave: the same
entries in the same order, the same items, the same session fields and size."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from templates.toolkit.store_engine import (
    ANY_OWNER,
    PATCHABLE,
    AppendItem,
    Engine,
    NewSession,
    PatchSession,
    PutEntry,
    WriteOp,
    encode,
)
from templates.toolkit.store_fold import fold
from templates.toolkit.store_memory import MemoryEngine
from templates.toolkit.store_sqlite import SQLiteEngine

NOW = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)
SESSIONS = ('"a"', '"b"')
NAMES = [('"message"', '"m1"'), ('"message"', '"m2"'), ('"tool_call"', '"t1"'), ('"plan"', '"p"')]


def new_session(session: str) -> NewSession:
    texts = tuple(
        (column, "[]" if column == "additional_directories" else "null") for column in PATCHABLE
    )
    return NewSession(session, None, '"/w"', '"/w"', 2, texts, '"2026-12-02T08:00:00Z"')


texts = st.integers(0, 30).map(lambda n: encode({"n": n, "pad": "x" * n}))
names = st.sampled_from(NAMES)
sessions = st.sampled_from(SESSIONS)
puts = st.builds(
    lambda s, name, value, items: PutEntry(s, *name, value, items),
    sessions,
    names,
    texts,
    st.none() | st.lists(texts, max_size=3).map(tuple),
)
appends = st.builds(lambda s, name, item: AppendItem(s, *name, item), sessions, names, texts)
patches = st.builds(
    lambda s, fields, closed: PatchSession(s, tuple(fields.items()), closed),
    sessions,
    st.dictionaries(st.sampled_from(("state", "usage", "title")), texts, max_size=2),
    st.none() | st.booleans(),
)
op_lists = st.lists(st.one_of(puts, appends, patches), max_size=25)


def state(engine: Engine) -> list[object]:
    """Everything a reader sees of both sessions (bar the clock)."""
    seen: list[object] = []
    for session in SESSIONS:
        record = engine.get(session, ANY_OWNER)
        assert record is not None
        seen.append((record.title, record.state, record.usage, record.closed))
        seen.append(record.stored_bytes)
        seen.append(engine.entries(session, 0, 1000))
    return seen


def engines(tmp: Path, existing: list[WriteOp]) -> list[Engine]:
    """A memory engine and a SQLite one, holding both sessions and `existing` (committed
    before the writes under test, so they meet entries of earlier commits)."""
    made: list[Engine] = [
        MemoryEngine(),
        SQLiteEngine(tmp / "s.db", busy_timeout=5, synchronous="NORMAL", verify=False),
    ]
    for engine in made:
        engine.open()
        for session in SESSIONS:
            engine.create(new_session(session))
        engine.write(existing, NOW)
    return made


@settings(max_examples=150, deadline=None)
@given(existing=op_lists, ops=op_lists)
def test_folded_and_one_commit_writes_leave_the_state_of_writes_one_by_one(
    existing: list[WriteOp], ops: list[WriteOp]
) -> None:
    with tempfile.TemporaryDirectory() as folder:  # (hypothesis: no function-scoped fixture)
        base = Path(folder)
        one_by_one = MemoryEngine()
        one_by_one.open()
        for session in SESSIONS:
            one_by_one.create(new_session(session))
        for op in [*existing, *ops]:
            one_by_one.write([op], NOW)
        expected = state(one_by_one)
        for how in ("folded", "whole"):
            (base / how).mkdir()
            for engine in engines(base / how, existing):
                engine.write(fold(ops) if how == "folded" else ops, NOW)
                assert state(engine) == expected, (how, type(engine).__name__)
                engine.close()


def test_fold_keeps_one_write_per_place_in_order_of_first_appearance() -> None:
    ops: list[WriteOp] = [
        PatchSession('"a"', (("state", '"running"'),), None),
        PutEntry('"a"', '"tool_call"', '"t"', '{"s":1}', ()),
        AppendItem('"a"', '"message"', '"m"', '"x"'),
        PutEntry('"a"', '"tool_call"', '"t"', '{"s":2}', None),
        AppendItem('"a"', '"tool_call"', '"t"', '"c1"'),
        AppendItem('"a"', '"message"', '"m"', '"y"'),
        PutEntry('"a"', '"tool_call"', '"t"', '{"s":3}', ('"whole"',)),
        AppendItem('"a"', '"tool_call"', '"t"', '"c2"'),
        PatchSession('"a"', (("state", '"idle"'), ("usage", "1")), True),
        PatchSession('"a"', (("usage", "2"),), None),
    ]
    assert fold(ops) == [
        PatchSession('"a"', (("state", '"idle"'), ("usage", "2")), True),
        PutEntry('"a"', '"tool_call"', '"t"', '{"s":3}', ('"whole"', '"c2"')),
        AppendItem('"a"', '"message"', '"m"', '"x"'),
        AppendItem('"a"', '"message"', '"m"', '"y"'),
    ]


def test_fold_gives_back_writes_that_do_not_repeat() -> None:
    ops: list[WriteOp] = [
        PutEntry('"a"', '"message"', '"m"', "{}", ()),
        AppendItem('"a"', '"message"', '"n"', '"x"'),
        PatchSession('"b"', (("title", '"t"'),), None),
    ]
    assert fold(ops) is ops
