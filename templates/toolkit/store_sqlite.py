"""`SQLiteStore`: sessions in one SQLite file (standard library `sqlite3`), written off the
event loop by a worker thread in group commits, in WAL mode with a busy timeout, so several
agent processes can share one file. The file is checked, created and migrated at `open()`
(`store_sqlite_schema`); a corrupted, read-only, foreign or newer file is one StoreOpenError.

    store = await SQLiteStore("~/.local/state/my-agent/sessions.db").open()

`synchronous="FULL"` (the default) makes each commit survive a power cut; "NORMAL" only a
crash of the process (kill -9), for fewer disk flushes. History lives in two tables: entries
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
    AppendItem,
    Engine,
    NewSession,
    OwnerKey,
    PatchSession,
    PutEntry,
    TransientError,
    WriteOp,
    decode,
    decode_record,
)
from .store_runner import COMMIT_INTERVAL, MAX_BACKLOG, ThreadRunner
from .store_sqlite_schema import Synchronous, describe, open_database
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
_SEQ_CACHE: Final = 4096  # (session, kind, key) → position, for appends to a known entry


def _owner_clause(owner: OwnerKey) -> tuple[str, tuple[object, ...]]:
    if owner is ANY_OWNER:
        return "", ()
    if owner is None:
        return " AND owner IS NULL", ()
    return " AND owner = ?", (owner,)


Segments = dict[tuple[int, int], list[str]]  # (session, entry) → items appended, in order


def _insert_items(conn: sqlite3.Connection, segments: Segments) -> None:
    """Insert (and forget) the items appended so far: one row per entry, in one call."""
    conn.executemany(
        "INSERT INTO items (sid, seq, value, bytes) VALUES (?, ?, ?, ?)",
        [
            (sid, seq, f"[{','.join(items)}]", sum(map(len, items)))
            for (sid, seq), items in segments.items()
        ],
    )
    segments.clear()


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
        self._seqs: dict[tuple[int, str, str], int] = {}

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
        # A value put again later in the same commit is not written: only its place is.
        last_put = {
            (op.session, op.kind, op.key): i
            for i, op in enumerate(ops)
            if isinstance(op, PutEntry) and op.items is None
        }
        with self._transaction() as conn:
            sids: dict[str, int | None] = {}
            deltas: dict[int, int] = {}
            items: Segments = {}
            for i, op in enumerate(ops):
                if op.session not in sids:
                    sids[op.session] = self._sid(conn, op.session, ANY_OWNER)
                sid = sids[op.session]
                if sid is None:
                    continue
                if isinstance(op, AppendItem):
                    seq, delta = self._entry(conn, sid, op.kind, op.key)
                    items.setdefault((sid, seq), []).append(op.item)
                    delta += len(op.item)
                elif isinstance(op, PutEntry):
                    if op.items is None and last_put[op.session, op.kind, op.key] != i:
                        delta = self._entry(conn, sid, op.kind, op.key)[1]
                    else:
                        if op.items is not None and items:  # it reads and replaces items
                            _insert_items(conn, items)
                        delta = self._put(conn, sid, op)
                else:
                    delta = self._patch(conn, sid, op)
                deltas[sid] = deltas.get(sid, 0) + delta
            _insert_items(conn, items)
            conn.executemany(
                "UPDATE sessions SET updated_at = ?, bytes = bytes + ? WHERE sid = ?",
                [(stamp, delta, sid) for sid, delta in deltas.items()],
            )

    @staticmethod
    def _sid(conn: sqlite3.Connection, session: str, owner: OwnerKey) -> int | None:
        clause, args = _owner_clause(owner)
        row = conn.execute(f"SELECT sid FROM sessions WHERE id = ?{clause}", (session, *args))
        found = row.fetchone()
        return None if found is None else int(found[0])

    def _entry(self, conn: sqlite3.Connection, sid: int, kind: str, key: str) -> tuple[int, int]:
        """The entry's position, made (value null) if missing; and the bytes that added."""
        seq = self._seqs.get((sid, kind, key))
        if seq is not None:
            return seq, 0
        found = conn.execute(
            "SELECT seq FROM entries WHERE sid = ? AND kind = ? AND key = ?", (sid, kind, key)
        ).fetchone()
        added = 0
        if found is None:
            seq = self._insert_entry(conn, sid, kind, key, "null")
            added = len(kind) + len(key) + len("null")
        else:
            seq = int(found[0])
        self._remember(sid, kind, key, seq)
        return seq, added

    def _insert_entry(
        self, conn: sqlite3.Connection, sid: int, kind: str, key: str, value: str
    ) -> int:
        last = conn.execute("SELECT max(seq) FROM entries WHERE sid = ?", (sid,)).fetchone()[0]
        seq = 1 if last is None else int(last) + 1
        conn.execute(
            "INSERT INTO entries (sid, seq, kind, key, value) VALUES (?, ?, ?, ?, ?)",
            (sid, seq, kind, key, value),
        )
        return seq

    def _remember(self, sid: int, kind: str, key: str, seq: int) -> None:
        if len(self._seqs) >= _SEQ_CACHE:
            self._seqs.clear()
        self._seqs[sid, kind, key] = seq

    def _put(self, conn: sqlite3.Connection, sid: int, op: PutEntry) -> int:
        found = conn.execute(
            "SELECT seq, length(value) FROM entries WHERE sid = ? AND kind = ? AND key = ?",
            (sid, op.kind, op.key),
        ).fetchone()
        if found is None:
            seq = self._insert_entry(conn, sid, op.kind, op.key, op.value)
            self._remember(sid, op.kind, op.key, seq)
            delta = len(op.kind) + len(op.key) + len(op.value)
        else:
            seq, old = int(found[0]), int(found[1])
            conn.execute(
                "UPDATE entries SET value = ? WHERE sid = ? AND seq = ?", (op.value, sid, seq)
            )
            delta = len(op.value) - old
        if op.items is not None:
            old_items = conn.execute(
                "SELECT coalesce(sum(bytes), 0) FROM items WHERE sid = ? AND seq = ?",
                (sid, seq),
            ).fetchone()[0]
            conn.execute("DELETE FROM items WHERE sid = ? AND seq = ?", (sid, seq))
            if op.items:
                _insert_items(conn, {(sid, seq): list(op.items)})
            delta += sum(map(len, op.items)) - int(old_items)
        return delta

    @staticmethod
    def _patch(conn: sqlite3.Connection, sid: int, op: PatchSession) -> int:
        delta = 0
        if op.texts:
            columns = [column for column, _ in op.texts]
            assert all(column in PATCHABLE for column in columns)
            lengths = ", ".join(f"length({column})" for column in columns)
            old = conn.execute(f"SELECT {lengths} FROM sessions WHERE sid = ?", (sid,)).fetchone()
            assignments = ", ".join(f"{column} = ?" for column in columns)
            conn.execute(
                f"UPDATE sessions SET {assignments} WHERE sid = ?",
                (*(text for _, text in op.texts), sid),
            )
            delta = sum(len(text) for _, text in op.texts) - sum(old)
        if op.closed is not None:
            conn.execute("UPDATE sessions SET closed = ? WHERE sid = ?", (int(op.closed), sid))
        return delta

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
    `commit_interval` is the shortest time (seconds) between two commits nobody waits for."""

    __slots__ = ()

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        retention: Retention = DEFAULT_RETENTION,
        synchronous: Synchronous = "FULL",
        busy_timeout: float = 5.0,
        verify: bool = True,
        max_backlog: int = MAX_BACKLOG,
        commit_interval: float = COMMIT_INTERVAL,
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
        super().__init__(engine, runner, retention=retention, clock=clock)
