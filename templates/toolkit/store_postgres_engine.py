"""The PostgreSQL engine behind `PostgresStore` (imported only once psycopg is known to be
installed). Its methods run on the store's worker thread, each driving psycopg's asyncio API
on that thread's own event loop.

The schema's version is the `schema_version` row of its `meta` table; `MIGRATIONS[n]` takes it
from n to n + 1, all in one transaction under an advisory lock. Appends and puts run as two
PL/pgSQL functions (position lookup, insert, size delta in one round trip each), sent with
`executemany`, so a group commit of many writes costs a few round trips.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Generator, Sequence
from datetime import datetime
from itertools import groupby
from typing import Any, Final, LiteralString, TypeVar

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

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
    decode_entry,
    decode_record,
)
from .store_types import (
    ANY_OWNER,
    HistoryEntry,
    SessionRecord,
    StoreError,
    StoreOpenError,
    rfc3339,
)

T = TypeVar("T")
Conn = psycopg.AsyncConnection[tuple[Any, ...]]
SCHEMA_VERSION: Final = 1

_V1: Final[tuple[LiteralString, ...]] = (
    """CREATE TABLE {s}.sessions (
        sid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id text NOT NULL UNIQUE,
        owner text,
        cwd text NOT NULL,
        cwd_key text NOT NULL,
        protocol_version integer NOT NULL,
        additional_directories text NOT NULL,
        mcp_servers text NOT NULL,
        config text NOT NULL,
        title text NOT NULL,
        state text NOT NULL,
        usage text NOT NULL,
        closed boolean NOT NULL DEFAULT false,
        created_at text NOT NULL,
        updated_at text NOT NULL,
        bytes bigint NOT NULL)""",
    "CREATE INDEX sessions_by_update ON {s}.sessions (updated_at, sid)",
    "CREATE INDEX sessions_by_cwd ON {s}.sessions (cwd_key, sid)",
    "CREATE INDEX sessions_by_owner ON {s}.sessions (owner, sid)",
    """CREATE TABLE {s}.entries (
        sid bigint NOT NULL REFERENCES {s}.sessions ON DELETE CASCADE,
        seq integer NOT NULL,
        kind text NOT NULL,
        key text NOT NULL,
        value text NOT NULL,
        PRIMARY KEY (sid, seq),
        UNIQUE (sid, kind, key))""",
    """CREATE TABLE {s}.items (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        sid bigint NOT NULL,
        seq integer NOT NULL,
        value text NOT NULL,
        FOREIGN KEY (sid, seq) REFERENCES {s}.entries ON DELETE CASCADE)""",
    "CREATE INDEX items_by_entry ON {s}.items (sid, seq, id)",
    # The entry's position, made (value null) when missing; `added` is the bytes that took.
    """CREATE FUNCTION {s}.entry_seq(p_sid bigint, p_kind text, p_key text, p_value text,
        OUT seq integer, OUT added bigint, OUT old bigint) LANGUAGE plpgsql AS $$
    BEGIN
        SELECT e.seq, length(e.value) INTO seq, old FROM {s}.entries e
            WHERE e.sid = p_sid AND e.kind = p_kind AND e.key = p_key;
        added := 0;
        IF seq IS NULL THEN
            SELECT coalesce(max(e.seq), 0) + 1 INTO seq FROM {s}.entries e WHERE e.sid = p_sid;
            INSERT INTO {s}.entries (sid, seq, kind, key, value)
                VALUES (p_sid, seq, p_kind, p_key, p_value);
            added := length(p_kind) + length(p_key) + length(p_value);
        END IF;
    END $$""",
    """CREATE FUNCTION {s}.append_item(p_sid bigint, p_kind text, p_key text, p_item text)
        RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE
        found record;
    BEGIN
        found := {s}.entry_seq(p_sid, p_kind, p_key, 'null');
        INSERT INTO {s}.items (sid, seq, value) VALUES (p_sid, found.seq, p_item);
        RETURN found.added + length(p_item);
    END $$""",
    """CREATE FUNCTION {s}.put_entry(p_sid bigint, p_kind text, p_key text, p_value text,
        p_items text[]) RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE
        found record;
        delta bigint;
    BEGIN
        found := {s}.entry_seq(p_sid, p_kind, p_key, p_value);
        delta := found.added;
        IF found.old IS NOT NULL THEN
            UPDATE {s}.entries e SET value = p_value WHERE e.sid = p_sid AND e.seq = found.seq;
            delta := length(p_value) - found.old;
        END IF;
        IF p_items IS NOT NULL THEN
            delta := delta - coalesce((SELECT sum(length(i.value)) FROM {s}.items i
                WHERE i.sid = p_sid AND i.seq = found.seq), 0);
            DELETE FROM {s}.items i WHERE i.sid = p_sid AND i.seq = found.seq;
            INSERT INTO {s}.items (sid, seq, value)
                SELECT p_sid, found.seq, t.value
                FROM unnest(p_items) WITH ORDINALITY AS t(value, n) ORDER BY t.n;
            delta := delta + coalesce((SELECT sum(length(t)) FROM unnest(p_items) AS t), 0);
        END IF;
        RETURN delta;
    END $$""",
)


async def _create_v1(conn: Conn, schema: sql.Identifier) -> None:
    for statement in _V1:
        await conn.execute(sql.SQL(statement).format(s=schema))


MIGRATIONS: dict[int, Callable[[Conn, sql.Identifier], Awaitable[None]]] = {0: _create_v1}
"""Schema version n → the step to version n + 1 (0: a schema without the store's tables)."""


def describe_dsn(dsn: str) -> str:
    """`postgresql://user@host:port/db`, never the password; ValueError for a bad string."""
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.Error as exc:
        raise ValueError(f"not a PostgreSQL connection string ({_first_line(exc)})") from None
    user = f"{parts['user']}@" if parts.get("user") else ""
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{parts.get('host', 'localhost')}{port}/{parts.get('dbname', '')}"


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _owner_clause(owner: OwnerKey) -> tuple[sql.Composable, tuple[object, ...]]:
    if owner is ANY_OWNER:
        return sql.SQL(""), ()
    if owner is None:
        return sql.SQL(" AND owner IS NULL"), ()
    return sql.SQL(" AND owner = %s"), (owner,)


class PostgresEngine(Engine):
    """A schema of a PostgreSQL database behind a `PostgresStore`."""

    def __init__(self, dsn: str, *, schema: str, connect_timeout: float) -> None:
        self.label = f"{describe_dsn(dsn)} (schema {schema})"
        self._dsn = dsn
        self._schema = sql.Identifier(schema)
        self._schema_name = schema
        self._connect_timeout = connect_timeout
        self._loop: asyncio.AbstractEventLoop | None = None
        self._conn: Conn | None = None
        self._columns = sql.SQL(", ").join(map(sql.Identifier, SESSION_COLUMNS))

    def _q(self, text: LiteralString, **parts: sql.Composable) -> sql.Composed:
        return sql.SQL(text).format(s=self._schema, columns=self._columns, **parts)

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        if self._loop is None:
            work.close()
            raise StoreError(f"{self.label}: the store is not open")
        return self._loop.run_until_complete(work)

    async def _connect(self) -> Conn:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = await psycopg.AsyncConnection.connect(
                self._dsn, autocommit=True, connect_timeout=max(1, round(self._connect_timeout))
            )
        return self._conn

    @contextlib.asynccontextmanager
    async def _transaction(self) -> AsyncIterator[Conn]:
        """A transaction on a live connection; errors become StoreError (TransientError when
        trying again may work: a dropped connection, a serialization failure, a deadlock)."""
        try:
            conn = await self._connect()
            async with conn.transaction():
                yield conn
        except psycopg.OperationalError as exc:
            raise TransientError(f"{self.label}: {_first_line(exc)}") from None
        except psycopg.Error as exc:
            raise StoreError(f"{self.label}: {_first_line(exc)}") from None

    # -- opening ---------------------------------------------------------------------------
    def open(self) -> bytes:
        self._loop = asyncio.new_event_loop()
        try:
            return self._run(self._open())
        except BaseException:
            self.close()
            raise

    async def _open(self) -> bytes:
        try:
            conn = await self._connect()
        except psycopg.Error as exc:
            raise StoreOpenError(f"{self.label}: cannot connect: {_first_line(exc)}") from None
        try:
            async with conn.transaction():
                return await self._migrate(conn)
        except psycopg.Error as exc:
            raise StoreOpenError(f"{self.label}: {_first_line(exc)}") from None

    async def _migrate(self, conn: Conn) -> bytes:
        lock = f"acp session store {self._schema_name}"
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (lock,))
        await conn.execute(self._q("CREATE SCHEMA IF NOT EXISTS {s}"))
        await conn.execute(
            self._q("CREATE TABLE IF NOT EXISTS {s}.meta (name text PRIMARY KEY, value text)")
        )
        found = await (
            await conn.execute(self._q("SELECT value FROM {s}.meta WHERE name = 'schema_version'"))
        ).fetchone()
        version = 0 if found is None else int(found[0])
        if version > SCHEMA_VERSION:
            raise StoreOpenError(
                f"{self.label}: written by a newer session store (schema version {version}; "
                f"this one reads up to {SCHEMA_VERSION})"
            )
        if version == 0:
            others = await (
                await conn.execute(
                    "SELECT count(*) FROM information_schema.tables"
                    " WHERE table_schema = %s AND table_name <> 'meta'",
                    (self._schema_name,),
                )
            ).fetchone()
            if others is not None and others[0]:
                raise StoreOpenError(
                    f"{self.label}: not a session store (the schema holds other tables)"
                )
        while version < SCHEMA_VERSION:
            await MIGRATIONS[version](conn, self._schema)
            version += 1
        await conn.execute(
            self._q(
                "INSERT INTO {s}.meta (name, value) VALUES ('schema_version', %s)"
                " ON CONFLICT (name) DO UPDATE SET value = excluded.value"
            ),
            (str(version),),
        )
        await conn.execute(
            self._q(
                "INSERT INTO {s}.meta (name, value) VALUES ('cursor_secret', %s)"
                " ON CONFLICT (name) DO NOTHING"
            ),
            (os.urandom(32).hex(),),
        )
        secret = await (
            await conn.execute(self._q("SELECT value FROM {s}.meta WHERE name = 'cursor_secret'"))
        ).fetchone()
        assert secret is not None
        return bytes.fromhex(secret[0])

    def close(self) -> None:
        loop, self._loop = self._loop, None
        if loop is None:
            return
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                loop.run_until_complete(conn.close())
        loop.close()

    # -- writes ----------------------------------------------------------------------------
    def write(self, ops: Sequence[WriteOp], now: datetime) -> None:
        self._run(self._write(ops, rfc3339(now)))

    async def _write(self, ops: Sequence[WriteOp], stamp: str) -> None:
        async with self._transaction() as conn:
            # Lock the sessions written (in one order, so two workers cannot deadlock), so
            # none is deleted under the writes.
            keys = sorted({op.session for op in ops})
            cursor = await conn.execute(
                self._q(
                    "SELECT id, sid FROM {s}.sessions WHERE id = ANY(%s) ORDER BY sid FOR UPDATE"
                ),
                (keys,),
            )
            sids: dict[str, int] = {str(key): int(sid) for key, sid in await cursor.fetchall()}
            deltas: dict[int, int] = {}
            live = [op for op in ops if op.session in sids]
            for kind, run in groupby(live, type):
                batch = list(run)
                if kind is PatchSession:
                    for patch in batch:
                        assert isinstance(patch, PatchSession)
                        sid = sids[patch.session]
                        deltas[sid] = deltas.get(sid, 0) + await self._patch(conn, sid, patch)
                    continue
                for sid, delta in await self._entries_write(conn, batch, sids):
                    deltas[sid] = deltas.get(sid, 0) + delta
            if deltas:
                await conn.cursor().executemany(
                    self._q(
                        "UPDATE {s}.sessions SET updated_at = %s, bytes = bytes + %s WHERE sid = %s"
                    ),
                    [(stamp, delta, sid) for sid, delta in deltas.items()],
                )

    async def _entries_write(
        self, conn: Conn, batch: list[WriteOp], sids: dict[str, int]
    ) -> list[tuple[int, int]]:
        """A run of appends or of puts in one `executemany`; (session, bytes added) each."""
        params: list[tuple[object, ...]] = []
        owners: list[int] = []  # the session of each row of params
        for op in batch:
            sid = sids[op.session]
            owners.append(sid)
            if isinstance(op, AppendItem):
                params.append((sid, op.kind, op.key, op.item))
            else:
                assert isinstance(op, PutEntry)
                items = None if op.items is None else list(op.items)
                params.append((sid, op.kind, op.key, op.value, items))
        query = (
            self._q("SELECT {s}.append_item(%s, %s, %s, %s)")
            if isinstance(batch[0], AppendItem)
            else self._q("SELECT {s}.put_entry(%s, %s, %s, %s, %s::text[])")
        )
        cursor = conn.cursor()
        await cursor.executemany(query, params, returning=True)
        results: list[tuple[int, int]] = []
        for sid in owners:  # one result set per row of params
            row = await cursor.fetchone()
            assert row is not None
            results.append((sid, int(row[0])))
            cursor.nextset()
        return results

    async def _patch(self, conn: Conn, sid: int, op: PatchSession) -> int:
        delta = 0
        if op.texts:
            columns = [column for column, _ in op.texts]
            assert all(column in PATCHABLE for column in columns)
            lengths = sql.SQL(", ").join(
                sql.SQL("length({})").format(sql.Identifier(c)) for c in columns
            )
            found = await (
                await conn.execute(
                    self._q("SELECT {lengths} FROM {s}.sessions WHERE sid = %s", lengths=lengths),
                    (sid,),
                )
            ).fetchone()
            assert found is not None
            assignments = sql.SQL(", ").join(
                sql.SQL("{} = %s").format(sql.Identifier(c)) for c in columns
            )
            await conn.execute(
                self._q(
                    "UPDATE {s}.sessions SET {assignments} WHERE sid = %s", assignments=assignments
                ),
                (*(text for _, text in op.texts), sid),
            )
            delta = sum(len(text) for _, text in op.texts) - sum(found)
        if op.closed is not None:
            await conn.execute(
                self._q("UPDATE {s}.sessions SET closed = %s WHERE sid = %s"), (op.closed, sid)
            )
        return delta

    def create(self, row: NewSession) -> bool:
        return self._run(self._create(row))

    async def _create(self, row: NewSession) -> bool:
        texts = dict(row.texts)
        names = ("id", "owner", "cwd", "cwd_key", "protocol_version", "created_at", *PATCHABLE)
        values = (
            *(row.session, row.owner, row.cwd, row.cwd_key, row.protocol_version, row.created_at),
            *(texts[column] for column in PATCHABLE),
            row.created_at,
            row.stored_bytes,
        )
        query = self._q(
            "INSERT INTO {s}.sessions ({names}, updated_at, bytes) VALUES ({marks})"
            " ON CONFLICT (id) DO NOTHING",
            names=sql.SQL(", ").join(map(sql.Identifier, names)),
            marks=sql.SQL(", ").join(sql.Placeholder() for _ in values),
        )
        async with self._transaction() as conn:
            return (await conn.execute(query, values)).rowcount == 1

    def delete(self, sessions: Sequence[str], owner: OwnerKey) -> int:
        return self._run(self._delete(sessions, owner))

    async def _delete(self, sessions: Sequence[str], owner: OwnerKey) -> int:
        clause, args = _owner_clause(owner)
        query = self._q("DELETE FROM {s}.sessions WHERE id = ANY(%s){owner}", owner=clause)
        async with self._transaction() as conn:
            return (await conn.execute(query, (list(sessions), *args))).rowcount

    # -- reads -----------------------------------------------------------------------------
    def _fetch(self, query: sql.Composed, args: Sequence[object]) -> list[tuple[Any, ...]]:
        async def fetch() -> list[tuple[Any, ...]]:
            async with self._transaction() as conn:
                return await (await conn.execute(query, args)).fetchall()

        return self._run(fetch())

    def get(self, session: str, owner: OwnerKey) -> SessionRecord | None:
        clause, args = _owner_clause(owner)
        query = self._q("SELECT {columns} FROM {s}.sessions WHERE id = %s{owner}", owner=clause)
        rows = self._fetch(query, (session, *args))
        return decode_record(rows[0]) if rows else None

    def page(
        self, owner: OwnerKey, cwd_key: str | None, before: int | None, limit: int
    ) -> list[tuple[int, SessionRecord]]:
        clause, args = _owner_clause(owner)
        if cwd_key is not None:
            clause, args = sql.SQL("{} AND cwd_key = %s").format(clause), (*args, cwd_key)
        if before is not None:
            clause, args = sql.SQL("{} AND sid < %s").format(clause), (*args, before)
        query = self._q(
            "SELECT sid, {columns} FROM {s}.sessions WHERE TRUE{where} ORDER BY sid DESC LIMIT %s",
            where=clause,
        )
        return [(int(row[0]), decode_record(row[1:])) for row in self._fetch(query, (*args, limit))]

    def entries(self, session: str, after: int, limit: int) -> list[tuple[int, HistoryEntry]]:
        query = self._q(
            "SELECT e.seq, e.kind, e.key, e.value, coalesce("
            "(SELECT array_agg(i.value ORDER BY i.id) FROM {s}.items i"
            " WHERE i.sid = e.sid AND i.seq = e.seq), ARRAY[]::text[])"
            " FROM {s}.entries e JOIN {s}.sessions s ON s.sid = e.sid"
            " WHERE s.id = %s AND e.seq > %s ORDER BY e.seq LIMIT %s"
        )
        return [
            (int(seq), decode_entry(kind, key, value, items))
            for seq, kind, key, value, items in self._fetch(query, (session, after, limit))
        ]

    def totals(self) -> tuple[int, int]:
        rows = self._fetch(
            self._q("SELECT count(*), coalesce(sum(bytes), 0) FROM {s}.sessions"), ()
        )
        return int(rows[0][0]), int(rows[0][1])

    def oldest(self) -> Generator[tuple[str, str, int], None, None]:
        query = self._q("SELECT id, updated_at, bytes FROM {s}.sessions ORDER BY updated_at, sid")
        for session, updated_at, size in self._fetch(query, ()):
            yield str(session), str(updated_at), int(size)
