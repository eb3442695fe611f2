"""The session store: what the toolkit keeps of each session, where it outlives the process.

    store = SQLiteStore("sessions.db")          # or MemoryStore(), PostgresStore(dsn)
    await store.open()                          # checks, migrates, sweeps; StoreOpenError
    await store.create(SessionSetup(session_id, cwd, protocol_version=2))
    store.put(session_id, "tool_call", call_id, call_json)      # queued, returns at once
    store.append(session_id, "message", message_id, block_json)
    await store.flush()                         # everything so far is durable
    async for entry in store.history(session_id): ...           # read back a page at a time
    await store.close()

The store holds plain JSON values only and knows no protocol types: what a session is made of
(its setup, title and timestamps for `session/list`, its history, its last state and usage)
is chosen by the toolkit, so a session made over one protocol version loads over another.

History is a list of entries, each named by (kind, key), in order of first appearance. `put`
replaces an entry's value but keeps its place (a tool call or a plan "as it last was");
`append` adds one item (a message chunk) without rewriting what came before. Replay reads
each entry back with its value and its items.

Writes (`put`, `append`, `update`) return at once: the file or server is written by a worker
off the event loop, in group commits, so a crash loses at most what was queued while the last
commit ran. Reads come after every write queued before them (a session sees its own writes).
A store never holds a session's history in memory beyond what is being written or read, except
`MemoryStore`, which is bounded by its retention rules instead.

Retention (`Retention`: age, session count, stored bytes) is applied by `sweep()`, at `open()`
and every `Retention.sweep_every` writes; oldest-updated sessions go first. An automatic sweep
spares the sessions written since the previous one (`sweep(keep=...)` those named): they are
never removed for their age, and for the count and byte caps only when the caps cannot be met
without them (a cap is a cap).

Owners: a session may belong to a principal (remote transports). Every lookup takes `owner`:
None (the default) matches only sessions without an owner, a string only that owner's, and
`ANY_OWNER` all of them, so a forgotten argument never shows one principal's sessions to another.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import AsyncIterator, Callable, Collection, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, cast

from .store_engine import (
    AppendItem,
    NewSession,
    OwnerKey,
    PatchSession,
    PutEntry,
    WriteOp,
    check_str,
    encode,
    encode_text,
    owner_key,
)
from .store_types import (
    ANY_OWNER,
    DEFAULT_RETENTION,
    KEEP,
    MAX_PAGE_SIZE,
    MEMORY_RETENTION,
    PAGE_SIZE,
    AnyOwner,
    DriverMissing,
    DuplicateSession,
    HistoryEntry,
    InvalidCursor,
    JsonValue,
    Keep,
    Owner,
    Retention,
    SessionPage,
    SessionRecord,
    SessionSetup,
    StoreClosed,
    StoreError,
    StoreOpenError,
    cwd_key,
    rfc3339,
    utc_now,
)

if TYPE_CHECKING:
    from typing import Self

    from .store_engine import Engine
    from .store_runner import Runner

__all__ = [
    "ANY_OWNER",
    "DEFAULT_RETENTION",
    "KEEP",
    "MAX_PAGE_SIZE",
    "MEMORY_RETENTION",
    "PAGE_SIZE",
    "AnyOwner",
    "DriverMissing",
    "DuplicateSession",
    "HistoryEntry",
    "InvalidCursor",
    "JsonValue",
    "Keep",
    "Owner",
    "Retention",
    "SessionPage",
    "SessionRecord",
    "SessionSetup",
    "SessionStore",
    "StoreClosed",
    "StoreError",
    "StoreOpenError",
    "cwd_key",
    "rfc3339",
]


class CursorCodec:
    """Cursors for `list_sessions`: the position (a creation number) and a MAC over it and
    the filters, keyed by a secret the database keeps (so every process sharing it accepts
    the others' cursors). Anything else is InvalidCursor, checked before any number is read."""

    __slots__ = ("_secret",)
    _MAX: Final = 64

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def _mac(self, position: int, scope: str) -> str:
        message = f"{position}\n{scope}".encode("ascii", "backslashreplace")
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()[:24]

    def encode(self, position: int, scope: str) -> str:
        return f"{position}.{self._mac(position, scope)}"

    def decode(self, cursor: object, scope: str) -> int:
        if not isinstance(cursor, str) or len(cursor) > self._MAX or not cursor.isascii():
            raise self._invalid(cursor)
        digits, dot, mac = cursor.partition(".")
        if not dot or not 0 < len(digits) <= 19 or not digits.isdigit():
            raise self._invalid(cursor)
        position = int(digits)
        if not hmac.compare_digest(mac, self._mac(position, scope)):
            raise self._invalid(cursor)
        return position

    @staticmethod
    def _invalid(cursor: object) -> InvalidCursor:
        shown = cursor[:40] if isinstance(cursor, str) else type(cursor).__name__
        return InvalidCursor(f"not a cursor this store handed out: {shown!r}")


def _scope(owner: OwnerKey, cwd: str | None) -> str:
    who = "*" if owner is ANY_OWNER else "-" if owner is None else owner
    return f"{who}\n{'' if cwd is None else cwd}"


def _texts(values: Sequence[tuple[str, object]]) -> tuple[tuple[str, str], ...]:
    return tuple((column, encode(value)) for column, value in values)


def _check_setup(setup: SessionSetup) -> list[tuple[str, object]]:
    if not isinstance(setup, SessionSetup):
        raise TypeError(f"expected a SessionSetup, got {type(setup).__name__}")
    encode_text(setup.cwd, "cwd")
    if type(setup.protocol_version) is not int:
        raise TypeError(f"protocol_version must be an int, got {setup.protocol_version!r}")
    if setup.title is not None:
        encode_text(setup.title, "title")
    return [
        ("title", setup.title),
        ("additional_directories", _paths(setup.additional_directories)),
        ("mcp_servers", _list(setup.mcp_servers, "mcp_servers")),
        ("config", _object(setup.config)),
        ("state", setup.state),
        ("usage", setup.usage),
    ]


def _paths(value: object) -> list[str]:
    items = _list(value, "additional_directories")
    for item in items:
        encode_text(item, "an additional directory")
    return items


def _list(value: object, what: str) -> list[Any]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise TypeError(f"{what} must be a list, got {type(value).__name__}")
    return list(value)


def _object(value: object) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"config must be a JSON object, got {type(value).__name__}")
    return dict(value)


_HISTORY_PAGE: Final = 200  # entries read per trip to the worker
_TEXTS: Final = 1024  # JSON texts of ids, kinds and keys a store remembers


class SessionStore:
    """The interface the toolkit uses; `MemoryStore`, `SQLiteStore` and `PostgresStore` are
    it with their engines. Use it from one event loop; see the module docstring."""

    __slots__ = (
        "_engine",
        "_runner",
        "_retention",
        "_clock",
        "_codec",
        "_state",
        "_written",
        "_writes",
        "_texts",
        "_durable_turn_ends",
    )

    def __init__(
        self,
        engine: Engine,
        runner: Runner,
        *,
        retention: Retention,
        durable_turn_ends: bool = True,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        if not isinstance(retention, Retention):
            raise TypeError(f"retention must be a Retention, got {type(retention).__name__}")
        if type(durable_turn_ends) is not bool:
            raise TypeError(f"durable_turn_ends must be a bool, got {durable_turn_ends!r:.40}")
        self._durable_turn_ends = durable_turn_ends
        self._engine = engine
        self._runner = runner
        self._retention = retention
        self._clock = clock
        self._codec: CursorCodec | None = None
        self._state = "new"  # "open", "closed"
        self._written: dict[str, None] = {}  # sessions written since the last sweep
        self._writes = 0
        self._texts: dict[str, str] = {}  # ids, kinds and keys → their JSON text

    @property
    def retention(self) -> Retention:
        return self._retention

    @property
    def durable_turn_ends(self) -> bool:
        """Whether an agent's turn ends (v2's idle update, v1's answer) wait until everything
        the turn wrote is durable, so that another worker sharing the store and serving the
        session's next request sees all of it; if not, the turn's last writes are committed
        within `commit_interval` after the client was told."""
        return self._durable_turn_ends

    @property
    def name(self) -> str:
        """What error messages call this store: its file, or its server and schema."""
        return self._engine.label

    @property
    def backlog(self) -> int:
        """Bytes of writes queued and not yet committed."""
        return self._runner.backlog

    async def open(self) -> Self:
        """Open (creating or migrating what needs it) and sweep. Raises StoreOpenError."""
        if self._state == "closed":
            raise StoreClosed(f"{self.name}: the store was closed")
        if self._state == "new":
            self._codec = CursorCodec(await self._runner.start(self._engine, self._clock))
            self._state = "open"
            await self.sweep()
        return self

    async def close(self) -> None:
        """Commit what is queued and release the file or connection; idempotent."""
        if self._state == "open":
            self._state = "closed"
            await self._runner.stop()
        self._state = "closed"

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- sessions --------------------------------------------------------------------------
    async def create(self, setup: SessionSetup) -> SessionRecord:
        """Store a new session; it is durable when this returns. Raises DuplicateSession."""
        values = _check_setup(setup)
        row = NewSession(
            session=self._key(setup.session_id),
            owner=None if setup.owner is None else encode_text(setup.owner, "owner"),
            cwd=encode(setup.cwd),
            cwd_key=encode(cwd_key(setup.cwd)),
            protocol_version=setup.protocol_version,
            texts=_texts(values),
            created_at=rfc3339(self._clock()),
        )
        self._check_open()
        if not await self._runner.call(lambda engine: engine.create(row)):
            raise DuplicateSession(f"{self.name}: a session {setup.session_id!r} exists already")
        self._count_write(row.session)
        record = await self._runner.call(lambda engine: engine.get(row.session, ANY_OWNER))
        if record is None:  # swept or deleted by another process in between
            raise StoreError(f"{self.name}: session {setup.session_id!r} vanished on creation")
        return record

    async def get(self, session_id: str, *, owner: Owner = None) -> SessionRecord | None:
        """The session, or None when there is none of that id for `owner`."""
        key, who = self._key(session_id), owner_key(owner)
        self._check_open()
        return await self._runner.call(lambda engine: engine.get(key, who))

    async def list_sessions(
        self,
        *,
        owner: Owner = None,
        cwd: str | None = None,
        cursor: str | None = None,
        limit: int = PAGE_SIZE,
    ) -> SessionPage:
        """One page of `owner`'s sessions, newest-created first (a stable order: sessions made
        or deleted between pages do not shift them), those whose working directory is `cwd`
        when given. Raises InvalidCursor for a cursor this store did not return for the same
        filters."""
        if type(limit) is not int or not 0 < limit <= MAX_PAGE_SIZE:
            raise ValueError(f"limit must be an int from 1 to {MAX_PAGE_SIZE}, got {limit!r}")
        who = owner_key(owner)
        where = None if cwd is None else encode(cwd_key(check_str(cwd, "cwd")))
        self._check_open()
        assert self._codec is not None
        scope = _scope(who, where)
        before = None if cursor is None else self._codec.decode(cursor, scope)
        rows = await self._runner.call(lambda engine: engine.page(who, where, before, limit + 1))
        if len(rows) <= limit:
            return SessionPage(tuple(record for _, record in rows), None)
        rows = rows[:limit]
        return SessionPage(
            tuple(record for _, record in rows), self._codec.encode(rows[-1][0], scope)
        )

    async def history(self, session_id: str) -> AsyncIterator[HistoryEntry]:
        """The session's history in order, read a page at a time (empty for an unknown id)."""
        key = self._key(session_id)
        self._check_open()
        after = 0
        while True:
            page = await self._runner.call(
                functools.partial(_entries, key=key, after=after, limit=_HISTORY_PAGE)
            )
            for _, entry in page:
                yield entry
            if len(page) < _HISTORY_PAGE:
                return
            after = page[-1][0]

    async def delete(self, session_id: str, *, owner: Owner = None) -> bool:
        """Remove the session and its history; False when there was none for `owner`."""
        key, who = self._key(session_id), owner_key(owner)
        self._check_open()
        return await self._runner.call(lambda engine: engine.delete([key], who)) > 0

    # -- writes (queued) -------------------------------------------------------------------
    def put(
        self,
        session_id: str,
        kind: str,
        key: str,
        value: JsonValue,
        *,
        items: Sequence[JsonValue] | None = None,
    ) -> None:
        """Set the value of entry (kind, key), adding it at the end the first time. `items`,
        when given, replaces the entry's items (`[]` clears them); None keeps them. A value
        that is not JSON raises TypeError or ValueError here; writes to a session the store
        does not hold (deleted, swept) are dropped."""
        texts = None if items is None else tuple(encode(i) for i in _list(items, "items"))
        op = PutEntry(
            self._key(session_id),
            self._text(kind, "kind"),
            self._text(key, "key"),
            encode(value),
            texts,
        )
        self._submit(op)

    def append(self, session_id: str, kind: str, key: str, item: JsonValue) -> None:
        """Add `item` to entry (kind, key), creating it (value None) the first time."""
        op = AppendItem(
            self._key(session_id), self._text(kind, "kind"), self._text(key, "key"), encode(item)
        )
        self._submit(op)

    def update(
        self,
        session_id: str,
        *,
        title: str | None | Keep = KEEP,
        additional_directories: Sequence[str] | Keep = KEEP,
        mcp_servers: Sequence[JsonValue] | Keep = KEEP,
        config: Mapping[str, JsonValue] | Keep = KEEP,
        state: JsonValue = KEEP,
        usage: JsonValue = KEEP,
        closed: bool | Keep = KEEP,
    ) -> None:
        """Change the given fields of the session's record (the others are kept)."""
        changes: list[tuple[str, object]] = []
        if title is not KEEP:
            if title is not None:
                encode_text(title, "title")
            changes.append(("title", title))
        if additional_directories is not KEEP:
            changes.append(("additional_directories", _paths(additional_directories)))
        if mcp_servers is not KEEP:
            changes.append(("mcp_servers", _list(mcp_servers, "mcp_servers")))
        if config is not KEEP:
            changes.append(("config", _object(config)))
        if state is not KEEP:
            changes.append(("state", state))
        if usage is not KEEP:
            changes.append(("usage", usage))
        if closed is not KEEP and type(closed) is not bool:
            raise TypeError(f"closed must be a bool, got {type(closed).__name__}")
        flag = None if closed is KEEP else closed
        self._submit(PatchSession(self._key(session_id), _texts(changes), flag))

    async def flush(self) -> None:
        """Return when every write queued so far is durable; raises StoreError when one could
        not be written (the store then refuses further writes)."""
        self._check_open()
        await self._runner.flush()

    async def drain(self) -> None:
        """Return at once while the backlog is under half of its cap, else `flush()`: a
        producer that awaits this after its writes never makes a write block."""
        self._check_open()
        await self._runner.drain()

    async def sweep(self, *, keep: Collection[str] = ()) -> int:
        """Apply the retention rules now, oldest-updated first, the sessions in `keep` (an
        agent's open sessions) last (see the module docstring); how many were removed."""
        spared = frozenset(self._key(session_id) for session_id in keep)
        self._check_open()
        rules, now = self._retention, self._clock()
        return await self._runner.call(lambda engine: engine.sweep(rules, now, spared))

    # -- helpers ---------------------------------------------------------------------------
    def _key(self, session_id: object) -> str:
        if isinstance(session_id, str) and session_id:
            return self._text(session_id, "a session id")
        raise TypeError(f"a session id must be a non-empty str, got {session_id!r:.60}")

    def _text(self, value: object, what: str) -> str:
        """A str argument's JSON text, remembered: a turn writes to a few ids many times."""
        found = self._texts.get(value) if type(value) is str else None
        if found is None:
            found = encode_text(value, what)
            if len(self._texts) >= _TEXTS:
                self._texts.clear()
            self._texts[cast(str, value)] = found
        return found

    def _check_open(self) -> None:
        if self._state != "open":
            raise StoreClosed(f"{self.name}: the store is not open")

    def _submit(self, op: WriteOp) -> None:
        self._check_open()
        self._runner.submit(op)
        self._count_write(op.session)

    def _count_write(self, session: str) -> None:
        """Count a write (creations too) towards the next automatic sweep, which spares the
        sessions written since the previous one."""
        every = self._retention.sweep_every
        if not every:
            return
        self._written[session] = None
        self._writes += 1
        if self._writes >= every:
            spared, self._written, self._writes = frozenset(self._written), {}, 0
            rules, now = self._retention, self._clock()
            self._runner.post(lambda engine: engine.sweep(rules, now, spared))


def _entries(engine: Engine, *, key: str, after: int, limit: int) -> list[tuple[int, HistoryEntry]]:
    return engine.entries(key, after, limit)
