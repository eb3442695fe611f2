"""The SQLite store beyond the shared contract: its file (WAL, schema version, migrations),
start-up refusals that change nothing, crashes, several processes on one file, a locked file."""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

from templates.toolkit import store_runner, store_sqlite_schema
from templates.toolkit.store import (
    HistoryEntry,
    SessionSetup,
    StoreError,
    StoreOpenError,
)
from templates.toolkit.store_sqlite import SQLiteStore
from tests.support.store_child import OPS_PER_TURN, turn_ops

REPO = Path(__file__).resolve().parents[2]
SETUP = SessionSetup("s", "/work", protocol_version=2)


def run(work: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(work)


def child(*args: str, prefix: tuple[str, ...] = ()) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [*prefix, sys.executable, "-m", "tests.support.store_child", *args]
    return subprocess.Popen(command, env=env, cwd=REPO, stdout=subprocess.PIPE, text=True)


def expected_history(ops: int) -> list[HistoryEntry]:
    """What the history is after the first `ops` writes of `store_child`'s turns."""
    entries: dict[tuple[str, str], HistoryEntry] = {}
    done = 0
    turn = 0
    while done < ops:
        for verb, kind, key, value in turn_ops(turn):
            if done == ops:
                break
            old = entries.get((kind, key), HistoryEntry(kind, key, None, ()))
            if verb == "put":
                entries[kind, key] = HistoryEntry(kind, key, value, old.items)
            else:
                entries[kind, key] = HistoryEntry(kind, key, old.value, (*old.items, value))
            done += 1
        turn += 1
    return list(entries.values())


async def read_history(path: Path, session: str) -> list[HistoryEntry]:
    async with SQLiteStore(path) as store:
        return [entry async for entry in store.history(session)]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def filled(path: Path, turns: int = 200) -> None:
    """A store at `path` whose session "s" holds `turns` of `store_child`'s turns."""
    async with SQLiteStore(path) as store:
        await store.create(SETUP)
        for turn in range(turns):
            for verb, kind, key, value in turn_ops(turn):
                getattr(store, verb)("s", kind, key, value)


def test_the_file_is_in_wal_mode_with_its_version_and_mark(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    run(filled(path, 2))
    with sqlite3.connect(path) as conn:
        facts = [
            conn.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("journal_mode", "user_version", "application_id", "auto_vacuum")
        ]
    assert facts == ["wal", store_sqlite_schema.SCHEMA_VERSION, 0x41435053, 2]


@pytest.mark.parametrize(("option", "level"), [("FULL", 2), ("NORMAL", 1)])
def test_synchronous_follows_the_option(tmp_path: Path, option: str, level: int) -> None:
    async def body() -> int:
        async with SQLiteStore(tmp_path / "s.db", synchronous=option) as store:  # type: ignore[arg-type]
            return await store._runner.call(  # the worker's own connection
                lambda engine: engine._db().execute("PRAGMA synchronous").fetchone()[0]  # type: ignore[attr-defined]
            )

    assert run(body()) == level


def _garbage(path: Path) -> None:
    path.write_bytes(b"not a database, just text\n" * 100)


def _foreign(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")


def _newer(path: Path) -> None:
    run(filled(path, 1))
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 2")


def _damaged_middle(path: Path) -> None:
    run(filled(path))
    data = path.read_bytes()
    middle = len(data) // 2 // 4096 * 4096
    path.write_bytes(data[:middle] + b"\xff" * 4096 + data[middle + 4096 :])


def _truncated(path: Path) -> None:
    run(filled(path))
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


REFUSED = {
    "garbage": (_garbage, "not a SQLite database (no SQLite header)"),
    "foreign": (_foreign, "not a session store (a database of another program)"),
    "newer": (
        _newer,
        "written by a newer session store (schema version 2; this one reads up to 1)",
    ),
    "damaged": (_damaged_middle, "corrupted ("),
    "truncated": (_truncated, "corrupted (database disk image is malformed)"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_an_unusable_file_is_one_clear_error_and_stays_untouched(tmp_path: Path, case: str) -> None:
    path = tmp_path / "sessions.db"
    make, reason = REFUSED[case]
    make(path)
    before, names = digest(path), sorted(os.listdir(tmp_path))
    with pytest.raises(StoreOpenError) as caught:
        run(SQLiteStore(path).open())
    message = str(caught.value)
    assert message.startswith(f"{path}: {reason}") and "\n" not in message
    if case != "damaged":
        assert message == f"{path}: {reason}"
    assert (digest(path), sorted(os.listdir(tmp_path))) == (before, names)


def test_a_folder_or_a_missing_folder_is_refused(tmp_path: Path) -> None:
    for path, reason in (
        (tmp_path, "a folder, not a database file"),
        (tmp_path / "missing" / "s.db", "its folder does not exist"),
    ):
        with pytest.raises(StoreOpenError) as caught:
            run(SQLiteStore(path).open())
        assert str(caught.value) == f"{path}: {reason}"
    assert not (tmp_path / "missing").exists()


def _without_root_powers() -> tuple[str, ...]:
    """A command prefix under which file permissions apply (root overrides them)."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: file permissions cannot be made to apply")
    return (setpriv, "--bounding-set", "-dac_override,-dac_read_search,-fowner")


def test_a_read_only_file_or_folder_is_refused_at_start_up(tmp_path: Path) -> None:
    prefix = _without_root_powers()
    path = tmp_path / "sessions.db"
    run(filled(path, 3))
    path.chmod(0o444)
    before = digest(path)
    found = child("open", str(path), prefix=prefix).communicate(timeout=60)[0]
    assert found == f"error: {path}: read-only: the session store needs to write it\n"
    path.chmod(0o644)
    tmp_path.chmod(0o555)
    try:
        found = child("open", str(path), prefix=prefix).communicate(timeout=60)[0]
    finally:
        tmp_path.chmod(0o755)
    assert found == (
        f"error: {path}: its folder is read-only (SQLite keeps -wal and -shm files beside"
        " the database)\n"
    )
    assert digest(path) == before
    assert run(read_history(path, "s")) == expected_history(3 * OPS_PER_TURN)


def test_a_migration_step_runs_once_and_moves_the_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "sessions.db"
    run(filled(path, 1))
    ran: list[int] = []

    def add_tags(conn: sqlite3.Connection) -> None:
        ran.append(1)
        conn.execute("CREATE TABLE tags (sid INTEGER, tag TEXT)")

    monkeypatch.setattr(store_sqlite_schema, "SCHEMA_VERSION", 2)
    monkeypatch.setitem(store_sqlite_schema.MIGRATIONS, 1, add_tags)
    assert run(read_history(path, "s")) == expected_history(OPS_PER_TURN)
    assert run(read_history(path, "s")) == expected_history(OPS_PER_TURN)  # not run again
    with sqlite3.connect(path) as conn:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert (ran, version, "tags" in tables) == ([1], 2, True)


def test_a_failed_migration_leaves_the_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "sessions.db"
    run(filled(path, 1))

    def half_done(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE tags (sid INTEGER, tag TEXT)")
        conn.execute("INSERT INTO no_such_table VALUES (1)")

    monkeypatch.setattr(store_sqlite_schema, "SCHEMA_VERSION", 2)
    monkeypatch.setitem(store_sqlite_schema.MIGRATIONS, 1, half_done)
    with pytest.raises(StoreOpenError) as caught:
        run(SQLiteStore(path).open())
    assert str(caught.value) == f"{path}: no such table: no_such_table"
    with sqlite3.connect(path) as conn:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert (version, "tags" in tables) == (1, False)


def test_what_was_queued_is_committed_when_the_process_exits(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    out = child("unflushed", str(path), "s", "30").communicate(timeout=60)[0]
    assert out == f"queued {30 * OPS_PER_TURN}\n"
    assert run(read_history(path, "s")) == expected_history(30 * OPS_PER_TURN)


def test_kill_9_mid_turn_loses_at_most_what_was_in_flight(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    writer = child("forever", str(path), "s")
    assert writer.stdout is not None
    flushed = 0
    while flushed < 50 * 7 * OPS_PER_TURN:
        line = writer.stdout.readline()
        assert line.startswith("flushed "), line
        flushed = int(line.split()[1])
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(30)
    writer.stdout.close()
    recovered = run(read_history(path, "s"))
    # Every write is one row or one item, so the history tells how many writes it holds.
    puts = sum(1 for e in recovered if e.value is not None)
    ops = puts + sum(len(e.items) for e in recovered)
    assert ops >= flushed
    assert recovered == expected_history(ops)  # a prefix of what was written, nothing torn


def test_two_processes_write_one_file_while_a_third_lists_it(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    # No file yet: the three race to make it, and the migration runs once.
    writers = [child("turns", str(path), name, "120") for name in ("one", "two")]
    lister = child("list", str(path), "60")
    outputs = [process.communicate(timeout=240)[0] for process in (*writers, lister)]
    assert [process.returncode for process in (*writers, lister)] == [0, 0, 0]
    for out in outputs[:2]:
        assert out.splitlines()[-1] == f"flushed {120 * OPS_PER_TURN}"
    assert outputs[2].startswith("listed ")
    for name in ("one", "two"):
        assert run(read_history(path, name)) == expected_history(120 * OPS_PER_TURN)


def _hold_write_lock(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("BEGIN IMMEDIATE")
    return conn


def test_writes_return_at_once_while_another_connection_holds_the_file(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"

    async def body() -> tuple[bool, list[HistoryEntry]]:
        async with SQLiteStore(path) as store:
            await store.create(SETUP)
            holder = _hold_write_lock(path)
            for n in range(500):
                store.append("s", "message", "m", n)  # queued: none waits for the lock
            flushing = asyncio.ensure_future(store.flush())
            await asyncio.sleep(0.3)
            waited = not flushing.done()
            holder.execute("COMMIT")
            holder.close()
            await flushing
            return waited, [e async for e in store.history("s")]

    waited, entries = run(body())
    assert waited
    assert entries == [HistoryEntry("message", "m", None, tuple(range(500)))]


def test_a_write_that_cannot_be_committed_stops_writes_with_one_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_runner, "_RETRY_DELAYS", (0.01, 0.01))
    path = tmp_path / "sessions.db"

    async def body() -> tuple[str, str, int]:
        async with SQLiteStore(path, busy_timeout=0.05) as store:
            await store.create(SETUP)
            holder = _hold_write_lock(path)
            try:
                store.put("s", "k", "x", 1)
                with pytest.raises(StoreError) as flushed:
                    await store.flush()
                with pytest.raises(StoreError) as later:
                    store.put("s", "k", "y", 2)
                record = await store.get("s")  # reads still work
            finally:
                holder.execute("ROLLBACK")
                holder.close()
            assert record is not None
            return str(flushed.value), str(later.value), len([e async for e in store.history("s")])

    flushed, later, entries = run(body())
    expected = (
        f"{path}: locked by another connection for more than 0.05 s; the store takes no more writes"
    )
    assert flushed == later == expected
    assert entries == 0


def test_queued_writes_are_capped_at_max_backlog(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"

    async def body() -> tuple[int, list[HistoryEntry]]:
        async with SQLiteStore(path, max_backlog=2000) as store:
            await store.create(SETUP)
            holder = _hold_write_lock(path)
            release = threading.Timer(0.3, lambda: (holder.execute("COMMIT"), holder.close()))
            release.start()
            highest = 0
            for n in range(300):
                store.append("s", "message", "m", {"n": n, "pad": "y" * 40})
                highest = max(highest, store.backlog)
            await store.flush()
            release.join()
            return highest, [e async for e in store.history("s")]

    highest, entries = run(body())
    one = len('"message""m"{"n":299,"pad":""}') + 40 + 1
    assert 0 < highest <= 2000 + one
    assert entries == [
        HistoryEntry("message", "m", None, tuple({"n": n, "pad": "y" * 40} for n in range(300)))
    ]


def test_deleting_a_session_gives_its_pages_back_to_the_file(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"

    async def body() -> None:
        async with SQLiteStore(path) as store:
            await store.create(SETUP)
            for _ in range(400):
                store.append("s", "message", "m", "z" * 1000)
            await store.flush()
            assert await store.delete("s")

    run(body())
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA freelist_count").fetchone()[0] == 0
        assert conn.execute("PRAGMA page_count").fetchone()[0] < 40


def test_options_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="^synchronous must be 'FULL' or 'NORMAL', got 'OFF'$"):
        SQLiteStore(tmp_path / "s.db", synchronous="OFF")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="^busy_timeout must be positive, got 0$"):
        SQLiteStore(tmp_path / "s.db", busy_timeout=0)
    with pytest.raises(ValueError, match="^max_backlog must be a positive int, got 0$"):
        SQLiteStore(tmp_path / "s.db", max_backlog=0)
    assert not (tmp_path / "s.db").exists()


def test_one_commit_of_many_writes_keeps_first_places_and_last_values(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"

    async def body() -> tuple[list[HistoryEntry], int, int]:
        async with SQLiteStore(path) as store:
            await store.create(SETUP)
            holder = _hold_write_lock(path)  # everything below waits for one commit
            store.put("s", "tool_call", "t", {"status": "pending"})
            store.append("s", "message", "m", "a")
            store.put("s", "tool_call", "t", {"status": "in_progress"})
            store.append("s", "tool_call", "t", "content 1")
            store.put("s", "plan", "p", [1])
            store.put("s", "tool_call", "t", {"status": "completed"}, items=["whole"])
            store.append("s", "message", "m", "b")
            store.put("s", "plan", "p", [1, 2])
            store.put("s", "tool_call", "t", {"status": "completed", "final": True})
            flushing = asyncio.ensure_future(store.flush())
            await asyncio.sleep(0.1)
            holder.execute("COMMIT")
            holder.close()
            await flushing
            record = await store.get("s")
            assert record is not None
            entries = [e async for e in store.history("s")]
        with sqlite3.connect(path) as conn:
            rows = conn.execute("SELECT count(*) FROM items").fetchone()[0]
        return entries, record.stored_bytes, rows

    entries, stored, rows = run(body())
    assert entries == [
        HistoryEntry("tool_call", "t", {"status": "completed", "final": True}, ("whole",)),
        HistoryEntry("message", "m", None, ("a", "b")),
        HistoryEntry("plan", "p", [1, 2], ()),
    ]
    setup_bytes = len('"s""/work"[][]{}nullnullnull')
    entry_bytes = len('"tool_call""t"{"status":"completed","final":true}"whole"')
    entry_bytes += len('"message""m"null"a""b"') + len('"plan""p"[1,2]')
    assert stored == setup_bytes + entry_bytes
    # A row holds the items one commit appended to one entry: m's "a" and "b", t's "whole"
    # ("content 1" went with the put that replaced t's items).
    assert rows == 2
