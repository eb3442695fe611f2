"""The session store's contract: every case runs on the memory, SQLite and PostgreSQL stores.

Records and history (this module); listing, cursors and retention (test_store_listing.py).
`stored_bytes` is checked against its documented measure: the JSON text of what is stored.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from dataclasses import replace
from typing import Any

import pytest

from templates.toolkit.store import (
    ANY_OWNER,
    DuplicateSession,
    HistoryEntry,
    SessionRecord,
    SessionSetup,
    SessionStore,
    StoreClosed,
)
from tests.support.store_backends import Backend, Clock, backend_fixture, postgres_fixture  # noqa: F401

SETUP = SessionSetup(
    "sess-1",
    "/home/u/project",
    protocol_version=1,
    additional_directories=["/home/u/lib"],
    mcp_servers=[{"name": "fs", "command": "mcp-fs", "args": ["--ro"], "env": []}],
    config={"mode": "code", "options": {"model": "small"}},
    title="Fix the build",
    state={"state": "idle"},
    usage={"used": 10, "size": 100},
)
SETUP_RECORD = SessionRecord(
    session_id="sess-1",
    cwd="/home/u/project",
    protocol_version=1,
    additional_directories=("/home/u/lib",),
    mcp_servers=[{"name": "fs", "command": "mcp-fs", "args": ["--ro"], "env": []}],
    config={"mode": "code", "options": {"model": "small"}},
    owner=None,
    title="Fix the build",
    state={"state": "idle"},
    usage={"used": 10, "size": 100},
    closed=False,
    created_at="2025-10-29T14:22:15.042Z",
    updated_at="2025-10-29T14:22:15.042Z",
    stored_bytes=195,  # its JSON text, as `measure` counts it
)


def run(work: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(work)


def text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def measure(record: SessionRecord, entries: list[HistoryEntry]) -> int:
    """The documented measure of `stored_bytes`, from what reads back."""
    fields = [
        record.session_id,
        record.cwd,
        list(record.additional_directories),
        record.mcp_servers,
        record.config,
        record.title,
        record.state,
        record.usage,
    ]
    size = sum(len(text(value)) for value in fields)
    size += 0 if record.owner is None else len(text(record.owner))
    for entry in entries:
        size += len(text(entry.kind)) + len(text(entry.key)) + len(text(entry.value))
        size += sum(len(text(item)) for item in entry.items)
    return size


async def history(store: SessionStore, session_id: str) -> list[HistoryEntry]:
    return [entry async for entry in store.history(session_id)]


def test_create_then_get_returns_every_field(backend: Backend) -> None:
    async def body() -> tuple[SessionRecord, SessionRecord | None]:
        async with backend.make(clock=Clock()) as store:
            return await store.create(SETUP), await store.get("sess-1")

    made, got = run(body())
    assert made == got == SETUP_RECORD
    assert SETUP_RECORD.stored_bytes == measure(SETUP_RECORD, []) == 195


def test_a_second_session_of_one_id_is_refused(backend: Backend) -> None:
    async def body() -> None:
        async with backend.make() as store:
            await store.create(SETUP)
            with pytest.raises(DuplicateSession) as caught:
                await store.create(replace(SETUP, cwd="/elsewhere"))
            assert str(caught.value) == f"{store.name}: a session 'sess-1' exists already"
            assert (await store.get("sess-1")) == (await store.get("sess-1"))
            record = await store.get("sess-1")
            assert record is not None and record.cwd == "/home/u/project"

    run(body())


def test_history_keeps_first_places_latest_values_and_appended_items(backend: Backend) -> None:
    async def body() -> tuple[list[HistoryEntry], SessionRecord | None]:
        async with backend.make() as store:
            await store.create(SETUP)
            s = "sess-1"
            store.put(s, "message", "u1", {"role": "user", "content": [{"text": "hi"}]})
            store.put(s, "message", "a1", {"role": "agent"})
            for i in range(3):
                store.append(s, "message", "a1", {"type": "text", "text": f"part {i}"})
            store.put(s, "tool_call", "t1", {"status": "pending"})
            store.put(s, "plan", "p", {"entries": [1]})
            store.put(s, "tool_call", "t1", {"status": "in_progress"})
            store.append(s, "tool_call", "t1", {"type": "content", "n": 1})
            store.put(s, "tool_call", "t1", {"status": "completed"})  # items kept
            store.put(s, "plan", "p", {"entries": [1, 2]})
            store.append(s, "thought", "th1", {"type": "text", "text": "hmm"})  # made by append
            store.put(s, "message", "t1", "another kind, same key")
            store.put(s, "usage", "", {"used": 5})
            # Read without flushing: a session sees its own writes.
            return await history(store, s), await store.get(s)

    entries, record = run(body())
    assert entries == [
        HistoryEntry("message", "u1", {"role": "user", "content": [{"text": "hi"}]}, ()),
        HistoryEntry(
            "message",
            "a1",
            {"role": "agent"},
            tuple({"type": "text", "text": f"part {i}"} for i in range(3)),
        ),
        HistoryEntry("tool_call", "t1", {"status": "completed"}, ({"type": "content", "n": 1},)),
        HistoryEntry("plan", "p", {"entries": [1, 2]}, ()),
        HistoryEntry("thought", "th1", None, ({"type": "text", "text": "hmm"},)),
        HistoryEntry("message", "t1", "another kind, same key", ()),
        HistoryEntry("usage", "", {"used": 5}, ()),
    ]
    assert record is not None and record.stored_bytes == measure(record, entries)


def test_put_with_items_replaces_them_and_an_empty_list_clears_them(backend: Backend) -> None:
    async def body() -> list[list[HistoryEntry]]:
        async with backend.make() as store:
            await store.create(SETUP)
            store.put("sess-1", "message", "a", {"v": 1})
            store.append("sess-1", "message", "a", "chunk 1")
            store.append("sess-1", "message", "a", "chunk 2")
            store.put("sess-1", "message", "b", {"v": 2})
            seen = [await history(store, "sess-1")]
            store.put("sess-1", "message", "a", {"v": 3}, items=["whole", {"n": 2}])
            seen.append(await history(store, "sess-1"))
            store.put("sess-1", "message", "a", {"v": 4}, items=[])
            store.append("sess-1", "message", "a", "after")
            seen.append(await history(store, "sess-1"))
            record = await store.get("sess-1")
            assert record is not None and record.stored_bytes == measure(record, seen[-1])
            return seen

    first, replaced, cleared = run(body())
    assert first[0] == HistoryEntry("message", "a", {"v": 1}, ("chunk 1", "chunk 2"))
    assert replaced[0] == HistoryEntry("message", "a", {"v": 3}, ("whole", {"n": 2}))
    assert cleared == [
        HistoryEntry("message", "a", {"v": 4}, ("after",)),
        HistoryEntry("message", "b", {"v": 2}, ()),
    ]


def test_what_reads_back_never_aliases_what_was_written(backend: Backend) -> None:
    async def body() -> tuple[list[HistoryEntry], list[HistoryEntry]]:
        async with backend.make() as store:
            await store.create(SETUP)
            value, item = {"list": [1]}, {"n": [1]}
            store.put("sess-1", "k", "x", value)
            store.append("sess-1", "k", "x", item)
            value["list"].append(2)
            item["n"].append(2)
            first = await history(store, "sess-1")
            first[0].value["list"].append(3)
            return first, await history(store, "sess-1")

    first, second = run(body())
    assert first[0].value == {"list": [1, 3]}
    assert second == [HistoryEntry("k", "x", {"list": [1]}, ({"n": [1]},))]


ODD = {
    "text": "naïve ☃ \U0001f600",
    "nul": "a\x00b",
    "lone": "\ud800",
    "big": 2**70,
    "float": -0.5,
    "nested": [[], {}, [None, True, False]],
    "": "empty key",
}


def test_any_json_and_any_string_round_trips(backend: Backend) -> None:
    odd_id, odd_cwd = "sess/ü\x00\ud800", "/home/\udcff/x"

    async def body() -> tuple[SessionRecord | None, list[HistoryEntry], list[str]]:
        async with backend.make() as store:
            setup = SessionSetup(
                odd_id, odd_cwd, protocol_version=2, title="☃\x00", owner="ü\ud800", config=ODD
            )
            await store.create(setup)
            store.put(odd_id, "k\x00ind", "ké\ud800y", ODD)
            store.append(odd_id, "k\x00ind", "ké\ud800y", "\ud83d")
            page = await store.list_sessions(owner="ü\ud800", cwd=odd_cwd)
            ids = [record.session_id for record in page.sessions]
            return await store.get(odd_id, owner="ü\ud800"), await history(store, odd_id), ids

    record, entries, ids = run(body())
    assert record is not None
    assert (record.session_id, record.cwd, record.title, record.config) == (
        odd_id,
        odd_cwd,
        "☃\x00",
        ODD,
    )
    assert entries == [HistoryEntry("k\x00ind", "ké\ud800y", ODD, ("\ud83d",))]
    assert ids == [odd_id]


def test_bad_arguments_raise_at_the_call_site_and_write_nothing(backend: Backend) -> None:
    async def body() -> list[HistoryEntry]:
        async with backend.make() as store:
            await store.create(SETUP)
            s = "sess-1"
            with pytest.raises(ValueError, match="Out of range float values"):
                store.put(s, "k", "x", {"n": float("nan")})
            with pytest.raises(TypeError, match="not JSON serializable"):
                store.append(s, "k", "x", object())
            with pytest.raises(TypeError, match="^kind must be a str, got int$"):
                store.put(s, 1, "x", {})  # type: ignore[arg-type]
            with pytest.raises(TypeError, match="^key must be a str, got NoneType$"):
                store.append(s, "k", None, {})  # type: ignore[arg-type]
            with pytest.raises(TypeError, match="^a session id must be a non-empty str, got ''$"):
                store.put("", "k", "x", {})
            with pytest.raises(TypeError, match="^items must be a list, got str$"):
                store.put(s, "k", "x", {}, items="abc")
            with pytest.raises(TypeError, match="^closed must be a bool, got str$"):
                store.update(s, closed="yes")  # type: ignore[arg-type]
            with pytest.raises(TypeError, match="^additional_directories must be a list"):
                store.update(s, additional_directories="/x")
            with pytest.raises(TypeError, match="^an additional directory must be a str"):
                store.update(s, additional_directories=[b"/x"])  # type: ignore[list-item]
            with pytest.raises(TypeError, match="^config must be a JSON object, got list$"):
                store.update(s, config=[])  # type: ignore[arg-type]
            with pytest.raises(TypeError, match="^title must be a str, got int$"):
                store.update(s, title=5)  # type: ignore[arg-type]
            with pytest.raises(TypeError, match="^expected a SessionSetup, got dict$"):
                await store.create({"session_id": "x"})  # type: ignore[arg-type]
            await store.flush()
            record = await store.get(s)
            assert record is not None and record.updated_at == record.created_at
            return await history(store, s)

    assert run(body()) == []


def test_update_changes_the_fields_given_and_keeps_the_others(backend: Backend) -> None:
    async def body() -> list[SessionRecord | None]:
        clock = Clock()
        async with backend.make(clock=clock) as store:
            await store.create(SETUP)
            seen = []
            clock.advance(seconds=5)
            store.update("sess-1", title="New title")
            seen.append(await store.get("sess-1"))
            clock.advance(seconds=1)
            store.update(
                "sess-1",
                title=None,
                additional_directories=("/x", "/y"),
                mcp_servers=[],
                config={"mode": "ask"},
                state={"state": "running"},
                usage={"used": 1, "size": 2},
                closed=True,
            )
            seen.append(await store.get("sess-1"))
            store.update("sess-1", state=None, closed=False)
            seen.append(await store.get("sess-1"))
            return seen

    titled, changed, cleared = run(body())
    assert titled == replace(
        SETUP_RECORD,
        title="New title",
        updated_at="2025-10-29T14:22:20.042Z",
        stored_bytes=SETUP_RECORD.stored_bytes - 4,  # "New title" is 4 shorter
    )
    assert changed is not None and changed == replace(
        SETUP_RECORD,
        title=None,
        additional_directories=("/x", "/y"),
        mcp_servers=[],
        config={"mode": "ask"},
        state={"state": "running"},
        usage={"used": 1, "size": 2},
        closed=True,
        updated_at="2025-10-29T14:22:21.042Z",
        stored_bytes=measure(changed, []),
    )
    assert cleared is not None and (cleared.state, cleared.closed) == (None, False)
    assert cleared.stored_bytes == measure(cleared, [])


def test_every_write_moves_updated_at(backend: Backend) -> None:
    async def body() -> list[str]:
        clock = Clock()
        stamps = []
        async with backend.make(clock=clock) as store:
            await store.create(SETUP)
            for write in (
                lambda: store.put("sess-1", "k", "a", 1),
                lambda: store.append("sess-1", "k", "a", 2),
                lambda: store.update("sess-1", usage={"used": 3}),
            ):
                clock.advance(milliseconds=1500)
                write()
                record = await store.get("sess-1")
                assert record is not None and record.created_at == "2025-10-29T14:22:15.042Z"
                stamps.append(record.updated_at)
        return stamps

    assert run(body()) == [
        "2025-10-29T14:22:16.542Z",
        "2025-10-29T14:22:18.042Z",
        "2025-10-29T14:22:19.542Z",
    ]


def test_writes_to_a_session_it_does_not_hold_are_dropped(backend: Backend) -> None:
    async def body() -> tuple[list[HistoryEntry], list[HistoryEntry], SessionRecord | None]:
        async with backend.make() as store:
            await store.create(SETUP)
            store.put("ghost", "k", "x", 1)
            store.put("sess-1", "k", "x", 2)
            store.append("ghost", "k", "x", 3)
            store.update("ghost", title="boo")
            store.append("sess-1", "k", "x", 4)
            await store.flush()
            return (
                await history(store, "ghost"),
                await history(store, "sess-1"),
                (await store.get("ghost")),
            )

    ghost, real, record = run(body())
    assert (ghost, record) == ([], None)
    assert real == [HistoryEntry("k", "x", 2, (4,))]


def test_delete_removes_the_session_and_its_history(backend: Backend) -> None:
    async def body() -> None:
        async with backend.make() as store:
            await store.create(SETUP)
            await store.create(replace(SETUP, session_id="other"))
            store.put("sess-1", "k", "x", 1)
            store.append("sess-1", "k", "x", 2)
            store.put("other", "k", "y", 3)
            assert await store.delete("sess-1") is True
            assert await store.delete("sess-1") is False
            assert await store.get("sess-1") is None
            assert await history(store, "sess-1") == []
            store.put("sess-1", "k", "late", 4)  # a turn still running: dropped
            await store.flush()
            assert await history(store, "sess-1") == []
            again = await store.create(SETUP)
            assert again.stored_bytes == measure(again, [])
            assert await history(store, "sess-1") == []
            assert await history(store, "other") == [HistoryEntry("k", "y", 3, ())]
            page = await store.list_sessions()
            assert [r.session_id for r in page.sessions] == ["sess-1", "other"]

    run(body())


def test_sessions_belong_to_their_owner(backend: Backend) -> None:
    async def body() -> None:
        async with backend.make() as store:
            await store.create(replace(SETUP, session_id="hers", owner="alice"))
            await store.create(replace(SETUP, session_id="local"))
            assert await store.get("hers") is None
            hers = await store.get("hers", owner="alice")
            assert hers is not None and hers.owner == "alice"
            assert hers.stored_bytes == measure(hers, [])
            assert await store.get("hers", owner="bob") is None
            assert await store.get("local", owner="alice") is None
            anyone = await store.get("hers", owner=ANY_OWNER)
            assert anyone == hers
            assert await store.delete("hers") is False
            assert await store.delete("hers", owner="bob") is False
            assert await store.get("hers", owner="alice") is not None
            assert await store.delete("hers", owner="alice") is True

    run(body())


def test_history_is_read_a_page_at_a_time_in_order(backend: Backend) -> None:
    async def body() -> tuple[int, list[HistoryEntry], list[HistoryEntry]]:
        async with backend.make() as store:
            await store.create(SETUP)
            for turn in range(450):
                store.put("sess-1", "message", f"m{turn}", {"turn": turn})
                store.append("sess-1", "message", f"m{turn}", f"chunk {turn}a")
                store.append("sess-1", "message", f"m{turn}", f"chunk {turn}b")
            await store.flush()
            early = []
            async for entry in store.history("sess-1"):
                early.append(entry)
                if len(early) == 3:
                    break  # leaving early holds nothing up
            store.put("sess-1", "message", "m0", {"turn": "again"})
            return len(early), await history(store, "sess-1"), early

    count, entries, early = run(body())
    assert count == 3 and early[0] == HistoryEntry(
        "message", "m0", {"turn": 0}, ("chunk 0a", "chunk 0b")
    )
    assert len(entries) == 450
    assert entries[0] == HistoryEntry("message", "m0", {"turn": "again"}, ("chunk 0a", "chunk 0b"))
    assert entries[1:] == [
        HistoryEntry("message", f"m{t}", {"turn": t}, (f"chunk {t}a", f"chunk {t}b"))
        for t in range(1, 450)
    ]


def test_a_store_not_open_refuses_every_call(backend: Backend) -> None:
    async def body() -> None:
        store = backend.make()
        with pytest.raises(StoreClosed, match=r": the store is not open$"):
            store.put("sess-1", "k", "x", 1)
        with pytest.raises(StoreClosed):
            await store.get("sess-1")
        await store.open()
        await store.create(SETUP)
        await store.close()
        await store.close()  # idempotent
        with pytest.raises(StoreClosed, match=r": the store is not open$"):
            await store.create(replace(SETUP, session_id="two"))
        with pytest.raises(StoreClosed, match=r": the store is not open$"):
            store.append("sess-1", "k", "x", 1)
        with pytest.raises(StoreClosed, match=r": the store was closed$"):
            await store.open()

    run(body())


def test_flush_and_drain_leave_nothing_queued(backend: Backend) -> None:
    async def body() -> tuple[int, int]:
        async with backend.make() as store:
            await store.create(SETUP)
            for i in range(200):
                store.append("sess-1", "m", "a", {"i": i})
            await store.drain()
            await store.flush()
            return store.backlog, len((await history(store, "sess-1"))[0].items)

    assert run(body()) == (0, 200)
