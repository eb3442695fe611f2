"""The session store's contract, continued: `list_sessions` (order, pages, filters, cursors)
and retention. Every case runs on the memory, SQLite and PostgreSQL stores."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from templates.toolkit.store import (
    ANY_OWNER,
    DEFAULT_RETENTION,
    MEMORY_RETENTION,
    InvalidCursor,
    Retention,
    SessionPage,
    SessionSetup,
    SessionStore,
)
from tests.support.store_backends import (  # noqa: F401
    Backend,
    Clock,
    backend_fixture,
    durable_backend_fixture,
    postgres_fixture,
)

LOOSE = Retention(max_age=None, max_sessions=None, max_bytes=None, sweep_every=0)


def run(work: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(work)


def setup(session_id: str, cwd: str = "/p", owner: str | None = None) -> SessionSetup:
    return SessionSetup(session_id, cwd, protocol_version=2, owner=owner)


def ids(page: SessionPage) -> list[str]:
    return [record.session_id for record in page.sessions]


async def all_ids(store: SessionStore) -> list[str]:
    return ids(await store.list_sessions(owner=ANY_OWNER, limit=1000))


def test_sessions_are_listed_newest_created_first_in_pages(backend: Backend) -> None:
    async def body() -> list[tuple[list[str], str | None]]:
        async with backend.make(retention=LOOSE) as store:
            for n in range(7):
                await store.create(setup(f"s{n}"))
            store.put("s0", "k", "x", 1)  # a write does not move it in the list
            pages, cursor = [], None
            while True:
                page = await store.list_sessions(limit=3, cursor=cursor)
                pages.append((ids(page), page.next_cursor))
                if page.next_cursor is None:
                    return pages
                cursor = page.next_cursor

    pages = run(body())
    assert [found for found, _ in pages] == [["s6", "s5", "s4"], ["s3", "s2", "s1"], ["s0"]]
    assert all(isinstance(c, str) for _, c in pages[:2]) and pages[2][1] is None


def test_a_full_last_page_has_no_next_cursor(backend: Backend) -> None:
    async def body() -> SessionPage:
        async with backend.make() as store:
            for n in range(3):
                await store.create(setup(f"s{n}"))
            return await store.list_sessions(limit=3)

    page = run(body())
    assert (ids(page), page.next_cursor) == (["s2", "s1", "s0"], None)


def test_pages_stay_put_when_sessions_come_and_go_between_them(backend: Backend) -> None:
    async def body() -> tuple[list[str], list[str], str | None, list[str]]:
        async with backend.make() as store:
            for n in range(7):
                await store.create(setup(f"s{n}"))
            first = await store.list_sessions(limit=3)
            await store.create(setup("s7"))
            await store.delete("s3")
            await store.delete("s5")  # already shown
            second = await store.list_sessions(limit=3, cursor=first.next_cursor)
            fresh = await store.list_sessions(limit=3)
            return ids(first), ids(second), second.next_cursor, ids(fresh)

    assert run(body()) == (["s6", "s5", "s4"], ["s2", "s1", "s0"], None, ["s7", "s6", "s4"])


def test_the_cwd_filter_compares_normalized_directories(backend: Backend) -> None:
    async def body() -> tuple[list[str], list[str], list[str], list[str]]:
        async with backend.make() as store:
            await store.create(setup("plain", "/p/a"))
            await store.create(setup("slash", "/p/a/"))
            await store.create(setup("dot", "/p/./a"))
            await store.create(setup("sub", "/p/a/sub"))
            await store.create(setup("other", "/p/b"))
            found = ids(await store.list_sessions(cwd="/p/a"))
            up_and_back = ids(await store.list_sessions(cwd="/p/b/../a/"))
            sub = ids(await store.list_sessions(cwd="/p/a/sub"))
            with pytest.raises(TypeError, match="^cwd must be a str, got int$"):
                await store.list_sessions(cwd=5)  # type: ignore[arg-type]
            return found, up_and_back, sub, ids(await store.list_sessions())

    found, up_and_back, sub, everyone = run(body())
    assert found == up_and_back == ["dot", "slash", "plain"]
    assert sub == ["sub"]
    assert everyone == ["other", "sub", "dot", "slash", "plain"]


def test_the_owner_filter_shows_only_that_owners_sessions(backend: Backend) -> None:
    async def body() -> list[list[str]]:
        async with backend.make() as store:
            await store.create(setup("a1", owner="alice"))
            await store.create(setup("local"))
            await store.create(setup("b1", owner="bob"))
            await store.create(setup("a2", "/q", owner="alice"))
            return [
                ids(await store.list_sessions()),
                ids(await store.list_sessions(owner="alice")),
                ids(await store.list_sessions(owner="alice", cwd="/p")),
                ids(await store.list_sessions(owner="carol")),
                ids(await store.list_sessions(owner=ANY_OWNER)),
            ]

    assert run(body()) == [["local"], ["a2", "a1"], ["a1"], [], ["a2", "b1", "local", "a1"]]


BAD_CURSORS = [
    "",
    "abc",
    "1",
    "1.",
    ".0123456789abcdef01234567",
    "x.0123456789abcdef01234567",
    "9" * 5000,
    "9" * 5000 + ".0123456789abcdef01234567",
    "1" * 20 + ".0123456789abcdef01234567",
    "\u0661.0123456789abcdef01234567",  # an Arabic-Indic digit: isdigit(), not ASCII
    "1.0123456789abcdef0123456\u00e9",
    "-1.0123456789abcdef01234567",
]


def test_a_cursor_it_did_not_hand_out_is_invalid_cursor(backend: Backend) -> None:
    async def body() -> list[str]:
        async with backend.make() as store:
            for n in range(4):
                await store.create(setup(f"s{n}", owner="alice"))
            good = (await store.list_sessions(owner="alice", limit=2)).next_cursor
            assert good is not None
            position, _, mac = good.partition(".")
            tampered = [
                f"{int(position) - 1}.{mac}",  # another position under the same MAC
                f"{position}.{mac[:-1]}{'0' if mac[-1] != '0' else '1'}",
                good + "0",
                good.upper() if good != good.upper() else good.lower(),
            ]
            messages = []
            for cursor in [*BAD_CURSORS, *tampered, 5]:
                with pytest.raises(InvalidCursor) as caught:
                    await store.list_sessions(owner="alice", cursor=cursor)  # type: ignore[arg-type]
                messages.append(str(caught.value))
            # A cursor is for the filters it was made with.
            for owner, cwd in (("bob", None), (None, None), ("alice", "/p"), (ANY_OWNER, None)):
                with pytest.raises(InvalidCursor):
                    await store.list_sessions(owner=owner, cwd=cwd, cursor=good)
            assert ids(await store.list_sessions(owner="alice", cursor=good)) == ["s1", "s0"]
            return messages

    messages = run(body())
    assert issubclass(InvalidCursor, ValueError)
    assert messages[0] == "not a cursor this store handed out: ''"
    assert messages[6] == f"not a cursor this store handed out: {'9' * 40!r}"
    assert messages[-1] == "not a cursor this store handed out: 'int'"
    assert all(m.startswith("not a cursor this store handed out: ") for m in messages)


def test_page_sizes_outside_1_to_1000_are_refused(backend: Backend) -> None:
    async def body() -> list[str]:
        async with backend.make() as store:
            messages = []
            for limit in (0, 1001, -1, True, "5", 2.0):
                with pytest.raises(ValueError) as caught:
                    await store.list_sessions(limit=limit)  # type: ignore[arg-type]
                messages.append(str(caught.value))
            assert (await store.list_sessions(limit=1000)).sessions == ()
            return messages

    messages = run(body())
    assert messages[0] == "limit must be an int from 1 to 1000, got 0"
    assert messages[3] == "limit must be an int from 1 to 1000, got True"


def test_cursors_stay_valid_across_a_restart_of_a_durable_store(
    durable_backend: Backend,
) -> None:
    async def body() -> list[str]:
        async with durable_backend.make() as store:
            for n in range(4):
                await store.create(setup(f"s{n}"))
            cursor = (await store.list_sessions(limit=2)).next_cursor
        async with durable_backend.make() as store:
            return ids(await store.list_sessions(limit=2, cursor=cursor))

    assert run(body()) == ["s1", "s0"]


def test_cursors_of_another_memory_store_are_invalid() -> None:
    from templates.toolkit.store_memory import MemoryStore

    async def body() -> None:
        async with MemoryStore() as first, MemoryStore() as second:
            for store in (first, second):
                for n in range(3):
                    await store.create(setup(f"s{n}"))
            cursor = (await first.list_sessions(limit=1)).next_cursor
            with pytest.raises(InvalidCursor):
                await second.list_sessions(limit=1, cursor=cursor)

    run(body())


# -- retention ----------------------------------------------------------------------------
async def sessions_over_time(store: SessionStore, clock: Clock, count: int) -> None:
    for n in range(count):
        await store.create(setup(f"s{n}"))
        store.put(f"s{n}", "message", "m", {"n": n})
        clock.advance(minutes=1)
    await store.flush()


def test_the_session_cap_removes_the_oldest_updated_first(backend: Backend) -> None:
    async def body() -> tuple[int, list[str], int, list[str]]:
        clock = Clock()
        rules = replace(LOOSE, max_sessions=3)
        async with backend.make(clock=clock, retention=rules) as store:
            await sessions_over_time(store, clock, 6)
            store.put("s0", "message", "m", {"n": "touched"})  # s0 is now the newest-updated
            clock.advance(minutes=1)
            removed = await store.sweep(keep=["s2"])
            kept = await all_ids(store)
            again = await store.sweep()
            return removed, kept, again, await all_ids(store)

    removed, kept, again, after = run(body())
    # s2 is spared but still counts: s1, s3 and s4 go to bring six down to three.
    assert (removed, kept) == (3, ["s5", "s2", "s0"])
    assert (again, after) == (0, ["s5", "s2", "s0"])


def test_the_age_limit_removes_sessions_not_updated_for_that_long(backend: Backend) -> None:
    async def body() -> tuple[int, list[str], list[Any]]:
        clock = Clock()
        rules = replace(LOOSE, max_age=timedelta(days=1))
        async with backend.make(clock=clock, retention=rules) as store:
            await store.create(setup("old"))
            await store.create(setup("edge"))
            clock.advance(hours=1)
            await store.create(setup("young"))
            clock.advance(hours=1)
            store.put("old", "k", "x", 1)  # updated: as young as that
            await store.flush()
            clock.advance(hours=23)  # "edge" is 25 hours old, "young" exactly 24
            removed = await store.sweep()
            histories = [[e async for e in store.history(s)] for s in ("old", "edge")]
            return removed, await all_ids(store), histories

    removed, kept, histories = run(body())
    assert (removed, kept) == (1, ["young", "old"])
    assert [len(h) for h in histories] == [1, 0]


def test_the_byte_cap_removes_oldest_updated_sessions_until_under_it(backend: Backend) -> None:
    async def body() -> tuple[list[int], int, list[str]]:
        clock = Clock()
        # Each session takes 45 bytes: "s0" "/p" [] [] {} null null null, and "message" "m" {"n":0}.
        async with backend.make(clock=clock, retention=replace(LOOSE, max_bytes=100)) as store:
            await sessions_over_time(store, clock, 5)
            sizes = [r.stored_bytes for r in (await store.list_sessions()).sessions]
            return sizes, await store.sweep(), await all_ids(store)

    sizes, removed, kept = run(body())
    assert sizes == [45] * 5
    assert (removed, kept) == (3, ["s4", "s3"])


def test_automatic_sweeps_spare_the_sessions_written_since_the_last(backend: Backend) -> None:
    async def body() -> list[list[str]]:
        clock = Clock()
        rules = replace(LOOSE, max_sessions=2, sweep_every=3)
        seen = []
        async with backend.make(clock=clock, retention=rules) as store:
            await store.create(setup("s0"))  # write 1
            clock.advance(seconds=1)
            await store.create(setup("s1"))  # 2
            clock.advance(seconds=1)
            store.put("s1", "k", "x", 1)  # 3: a sweep, with nothing over the cap
            clock.advance(seconds=1)
            await store.create(setup("s2"))  # 1
            clock.advance(seconds=1)
            await store.create(setup("s3"))  # 2
            seen.append(await all_ids(store))
            clock.advance(seconds=1)
            store.put("s3", "k", "x", 1)  # 3: sweeps s0 and s1, sparing s2 and s3
            await store.flush()
            seen.append(await all_ids(store))
        return seen

    assert run(body()) == [["s3", "s2", "s1", "s0"], ["s3", "s2"]]


def test_open_sweeps_a_durable_store(durable_backend: Backend) -> None:
    async def body() -> list[str]:
        clock = Clock()
        async with durable_backend.make(clock=clock, retention=LOOSE) as store:
            await sessions_over_time(store, clock, 4)
        rules = replace(LOOSE, max_sessions=1)
        async with durable_backend.make(clock=clock, retention=rules) as store:
            return await all_ids(store)

    assert run(body()) == ["s3"]


def test_retention_rules_are_checked() -> None:
    cases = {
        "Retention.max_age must be positive, got 0:00:00": {"max_age": timedelta(0)},
        "Retention.max_sessions must be a positive int or None, got 0": {"max_sessions": 0},
        "Retention.max_bytes must be a positive int or None, got True": {"max_bytes": True},
        "Retention.sweep_every must be an int >= 0, got -1": {"sweep_every": -1},
    }
    for message, options in cases.items():
        with pytest.raises(ValueError) as caught:
            Retention(**options)  # type: ignore[arg-type]
        assert str(caught.value) == message
    assert DEFAULT_RETENTION == Retention(timedelta(days=30), 10_000, 1 << 30, 1000)
    assert MEMORY_RETENTION == Retention(timedelta(days=30), 1000, 64 << 20, 1000)


def test_spared_sessions_go_last_never_for_age_and_a_cap_is_still_a_cap(backend: Backend) -> None:
    async def body() -> list[tuple[int, list[str]]]:
        clock = Clock()
        rules = replace(LOOSE, max_age=timedelta(days=1), max_bytes=250)
        seen = []
        async with backend.make(clock=clock, retention=rules) as store:
            await store.create(setup("s0"))  # 26 bytes
            clock.advance(days=2)
            await store.create(setup("s1"))
            seen.append((await store.sweep(keep=["s0", "s1"]), await all_ids(store)))
            store.put("s1", "k", "x", "y" * 200)  # s1: 26 + 208 bytes; both: 260 > 250
            await store.flush()
            seen.append((await store.sweep(keep=["s0", "s1"]), await all_ids(store)))
            store.put("s1", "k", "x", "y" * 300)  # s1 alone: 334 > 250
            seen.append((await store.sweep(keep=["s1"]), await all_ids(store)))
        return seen

    assert run(body()) == [(0, ["s1", "s0"]), (1, ["s1"]), (1, [])]
