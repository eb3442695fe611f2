"""`SQLiteStore`: sessions in one SQLite file (standard library `sqlite3`), written off the
event loop by a worker thread in group commits, in WAL mode with a busy timeout, so several
agent processes can share one file. The file is checked, created and migrated at `open()`
(`store_sqlite_schema`); a corrupted, read-only, foreign or newer file is one StoreOpenError.

    store = await SQLiteStore("~/.local/state/my-agent/sessions.db").open()

`synchronous="NORMAL"` (the default, SQLite's advice for WAL mode) makes each commit survive
a crash of the process (kill -9) and never leaves the file inconsistent; "FULL" also flushes
the disk on each commit, so commits survive a power cut too, for about a millisecond more a
commit (the turn's end waits for one). History lives in two tables: entries
(one row per (kind, key), updated in place) and items (one row per entry and commit: the
items appended to that entry in that commit, as a JSON array), so a streamed message is never
rewritten, and reading it back goes a page of entries at a time.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Generator, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Final

from .store import SessionStore
from .store_engine import (
    PATCHABLE,
    SESSION_COLUMNS,
    Engine,
    NewSession,
    OwnerKey,
    TransientError,
    WriteOp,
    decode,
    decode_record,
)
from .store_runner import COMMIT_INTERVAL, MAX_BACKLOG, ThreadRunner
from .store_sqlite_schema import Synchronous, describe, open_database
from .store_sqlite_write import SeqCache, SessionWrite
from .store_types import (
    ANY_OWNER,
    DEFAULT_RETENTION,
    HistoryEntry,
    Retention,
    SessionRecord,
    StoreClosed,
    StoreError,
    rfc3339,
    utc_now,
)

_COLUMNS: Final = ", ".join(SESSION_COLUMNS)


def _owner_clause(owner: OwnerKey) -> tuple[str, tuple[object, ...]]:
    if owner is ANY_OWNER:
        return "", ()
    if owner is None:
        return " AND owner IS NULL", ()
    return " AND owner = ?", (owner,)


class SQLiteEngine(Engine):
    """The SQLite file behind a `SQLiteStore`; used by its worker thread only."""

    def __init__(
        self, path: Path, *, busy_timeout: float, synchronous: Synchronous, verify: bool
    ) -> None:
        self.label = str(path)
        self._path = path
        self._busy_timeout = busy_timeout
        self._synchronous: Synchronous = synchronous
        self._verify = verify
        self._conn: sqlite3.Connection | None = None
        self._seqs: SeqCache = {}

    def open(self) -> bytes:
        conn, secret = open_database(
            self._path,
            busy_timeout=self._busy_timeout,
            synchronous=self._synchronous,
            verify=self._verify,
        )
        self._conn = conn
        return secret

    def close(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            conn.close()

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreClosed(f"{self.label}: the store is not open")
        return self._conn

    def _error(self, exc: sqlite3.Error) -> Exception:
        text = f"{self.label}: {describe(exc, self._busy_timeout)}"
        name = getattr(exc, "sqlite_errorname", "")
        if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
            return TransientError(text)
        return StoreError(text)

    @contextlib.contextmanager
    def _transaction(self, mode: str = "IMMEDIATE") -> Iterator[sqlite3.Connection]:
        conn = self._db()
        try:
            conn.execute(f"BEGIN {mode}")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                self._seqs.clear()  # it may name entries the rollback removes
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    # -- writes ----------------------------------------------------------------------------
    def write(self, ops: Sequence[WriteOp], now: datetime) -> None:
        stamp = rfc3339(now)
        runs: dict[str, list[WriteOp]] = {}
        for op in ops:
            runs.setdefault(op.session, []).append(op)
        with self._transaction() as conn:
            for session, run in runs.items():
                sid = self._sid(conn, session, ANY_OWNER)
                if sid is not None:  # (writes to a session deleted meanwhile are dropped)
                    SessionWrite(conn, sid, self._seqs).apply(run, stamp)

    @staticmethod
    def _sid(conn: sqlite3.Connection, session: str, owner: OwnerKey) -> int | None:
        clause, args = _owner_clause(owner)
        row = conn.execute(f"SELECT sid FROM sessions WHERE id = ?{clause}", (session, *args))
        found = row.fetchone()
        return None if found is None else int(found[0])

    def create(self, row: NewSession) -> bool:
        columns = ("id", "owner", "cwd", "cwd_key", "protocol_version", "created_at")
        texts = dict(row.texts)
        names = (*columns, *PATCHABLE, "updated_at", "bytes")
        values = (
            *(row.session, row.owner, row.cwd, row.cwd_key, row.protocol_version, row.created_at),
            *(texts[column] for column in PATCHABLE),
            *(row.created_at, row.stored_bytes),
        )
        marks = ", ".join("?" for _ in names)
        with self._transaction() as conn:
            inserted = conn.execute(
                f"INSERT INTO sessions ({', '.join(names)}) VALUES ({marks})"
                " ON CONFLICT (id) DO NOTHING",
                values,
            )
            return inserted.rowcount == 1

    def delete(self, sessions: Sequence[str], owner: OwnerKey) -> int:
        removed = 0
        with self._transaction() as conn:
            for session in sessions:
                sid = self._sid(conn, session, owner)
                if sid is None:
                    continue
                for table in ("items", "entries", "sessions"):
                    conn.execute(f"DELETE FROM {table} WHERE sid = ?", (sid,))
                removed += 1
        if removed:
            with contextlib.suppress(sqlite3.Error):  # returning free pages is only tidying
                self._db().executescript("PRAGMA incremental_vacuum")  # execute() frees one page
        return removed

    # -- reads -----------------------------------------------------------------------------
    def get(self, session: str, owner: OwnerKey) -> SessionRecord | None:
        clause, args = _owner_clause(owner)
        try:
            row = self._db().execute(
                f"SELECT {_COLUMNS} FROM sessions WHERE id = ?{clause}", (session, *args)
            )
            found = row.fetchone()
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        return None if found is None else decode_record(found)

    def page(
        self, owner: OwnerKey, cwd_key: str | None, before: int | None, limit: int
    ) -> list[tuple[int, SessionRecord]]:
        clause, args = _owner_clause(owner)
        if cwd_key is not None:
            clause, args = f"{clause} AND cwd_key = ?", (*args, cwd_key)
        if before is not None:
            clause, args = f"{clause} AND sid < ?", (*args, before)
        query = f"SELECT sid, {_COLUMNS} FROM sessions WHERE 1{clause} ORDER BY sid DESC LIMIT ?"
        try:
            rows = self._db().execute(query, (*args, limit)).fetchall()
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        return [(int(row[0]), decode_record(row[1:])) for row in rows]

    def entries(self, session: str, after: int, limit: int) -> list[tuple[int, HistoryEntry]]:
        with self._transaction("DEFERRED") as conn:  # one snapshot for both queries
            sid = self._sid(conn, session, ANY_OWNER)
            if sid is None:
                return []
            rows = conn.execute(
                "SELECT seq, kind, key, value FROM entries WHERE sid = ? AND seq > ?"
                " ORDER BY seq LIMIT ?",
                (sid, after, limit),
            ).fetchall()
            if not rows:
                return []
            items: dict[int, list[object]] = {}
            for seq, segment in conn.execute(
                "SELECT seq, value FROM items WHERE sid = ? AND seq BETWEEN ? AND ?"
                " ORDER BY seq, id",
                (sid, rows[0][0], rows[-1][0]),
            ):
                items.setdefault(seq, []).extend(decode(segment))
        return [
            (
                int(seq),
                HistoryEntry(decode(kind), decode(key), decode(value), tuple(items.get(seq, ()))),
            )
            for seq, kind, key, value in rows
        ]

    def totals(self) -> tuple[int, int]:
        row = self._db().execute("SELECT count(*), coalesce(sum(bytes), 0) FROM sessions")
        count, total = row.fetchone()
        return int(count), int(total)

    def oldest(self) -> Generator[tuple[str, str, int], None, None]:
        cursor = self._db().execute(
            "SELECT id, updated_at, bytes FROM sessions ORDER BY updated_at, sid"
        )
        try:
            while rows := cursor.fetchmany(256):
                for session, updated_at, size in rows:
                    yield str(session), str(updated_at), int(size)
        finally:
            cursor.close()


class SQLiteStore(SessionStore):
    """The session store in a SQLite file; see the module docstring. `busy_timeout` is how
    long (seconds) a write waits for another process's transaction; `verify` runs SQLite's
    quick check of the whole file at `open()`; `max_backlog` bounds queued writes (bytes);
    `commit_interval` is the shortest time (seconds) between two commits nobody waits for;
    `durable_turn_ends=False` lets a turn end without waiting for its commit (see
    `SessionStore`): about a millisecond sooner, for an agent that is the only process serving
    its sessions and may lose a turn's last few milliseconds of writes if it dies just after."""

    __slots__ = ()

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        retention: Retention = DEFAULT_RETENTION,
        synchronous: Synchronous = "NORMAL",
        busy_timeout: float = 5.0,
        verify: bool = True,
        max_backlog: int = MAX_BACKLOG,
        commit_interval: float = COMMIT_INTERVAL,
        durable_turn_ends: bool = True,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous must be 'FULL' or 'NORMAL', got {synchronous!r}")
        if not busy_timeout > 0:
            raise ValueError(f"busy_timeout must be positive, got {busy_timeout!r}")
        engine = SQLiteEngine(
            Path(os.path.abspath(os.path.expanduser(os.fspath(path)))),
            busy_timeout=busy_timeout,
            synchronous=synchronous,
            verify=verify,
        )
        runner = ThreadRunner(max_backlog=max_backlog, commit_interval=commit_interval)
        super().__init__(
            engine, runner, retention=retention, durable_turn_ends=durable_turn_ends, clock=clock
        )
