"""`MemoryStore`: the session store in the process's memory, for agents that keep nothing
across restarts. Same contract as the SQLite and PostgreSQL stores (values are kept as JSON
text, so what is read back never aliases what was written), bounded by the same retention
rules: `MEMORY_RETENTION` by default, applied every `sweep_every` writes."""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Sequence
from datetime import datetime

from .store import SessionStore
from .store_engine import (
    SESSION_COLUMNS,
    AppendItem,
    Engine,
    NewSession,
    OwnerKey,
    PatchSession,
    PutEntry,
    WriteOp,
    decode_entry,
    decode_record,
)
from .store_runner import InlineRunner
from .store_types import (
    ANY_OWNER,
    MEMORY_RETENTION,
    HistoryEntry,
    Retention,
    SessionRecord,
    rfc3339,
    utc_now,
)

_NULL = "null"


class _Entry:
    __slots__ = ("kind", "key", "value", "items")

    def __init__(self, kind: str, key: str, value: str) -> None:
        self.kind, self.key, self.value = kind, key, value
        self.items: list[str] = []


class _Session:
    __slots__ = (
        "number",
        "row",
        "texts",
        "closed",
        "updated_at",
        "bytes",
        "entries",
        "order",
    )

    def __init__(self, number: int, row: NewSession) -> None:
        self.number = number
        self.row = row
        self.texts = dict(row.texts)  # PATCHABLE column → JSON text
        self.closed = False
        self.updated_at: datetime | str = row.created_at  # a write's moment, made text when read
        self.bytes = row.stored_bytes
        self.entries: dict[tuple[str, str], _Entry] = {}
        self.order: list[_Entry] = []  # an entry's position is its index + 1

    def stamp(self) -> str:
        if isinstance(self.updated_at, datetime):
            self.updated_at = rfc3339(self.updated_at)
        return self.updated_at

    def owned_by(self, owner: OwnerKey) -> bool:
        return owner is ANY_OWNER or self.row.owner == owner

    def record(self) -> SessionRecord:
        row = self.row
        fixed = {
            "id": row.session,
            "owner": row.owner,
            "cwd": row.cwd,
            "protocol_version": row.protocol_version,
            "closed": self.closed,
            "created_at": row.created_at,
            "updated_at": self.stamp(),
            "bytes": self.bytes,
        }
        return decode_record([self.texts.get(c, fixed.get(c)) for c in SESSION_COLUMNS])

    def entry(self, kind: str, key: str) -> tuple[_Entry, int]:
        """The entry, and the bytes it added when this made it."""
        found = self.entries.get((kind, key))
        if found is not None:
            return found, 0
        made = self.entries[kind, key] = _Entry(kind, key, _NULL)
        self.order.append(made)
        return made, len(kind) + len(key) + len(_NULL)


class MemoryEngine(Engine):
    """Sessions in dictionaries, by creation number."""

    def __init__(self) -> None:
        self.label = "memory session store"
        self._sessions: dict[str, _Session] = {}
        self._numbers = 0
        self._bytes = 0
        self._secret = os.urandom(32)

    def open(self) -> bytes:
        return self._secret

    def close(self) -> None:
        self._sessions.clear()
        self._bytes = 0

    def write(self, ops: Sequence[WriteOp], now: datetime) -> None:
        for op in ops:
            session = self._sessions.get(op.session)
            if session is None:
                continue
            delta = _apply(session, op)
            session.updated_at = now
            session.bytes += delta
            self._bytes += delta

    def create(self, row: NewSession) -> bool:
        if row.session in self._sessions:
            return False
        self._numbers += 1
        self._sessions[row.session] = _Session(self._numbers, row)
        self._bytes += row.stored_bytes
        return True

    def get(self, session: str, owner: OwnerKey) -> SessionRecord | None:
        found = self._sessions.get(session)
        return found.record() if found is not None and found.owned_by(owner) else None

    def page(
        self, owner: OwnerKey, cwd_key: str | None, before: int | None, limit: int
    ) -> list[tuple[int, SessionRecord]]:
        found: list[tuple[int, SessionRecord]] = []
        for session in reversed(self._sessions.values()):
            if len(found) == limit:
                break
            if before is not None and session.number >= before:
                continue
            if session.owned_by(owner) and (cwd_key is None or session.row.cwd_key == cwd_key):
                found.append((session.number, session.record()))
        return found

    def entries(self, session: str, after: int, limit: int) -> list[tuple[int, HistoryEntry]]:
        found = self._sessions.get(session)
        if found is None:
            return []
        chosen = found.order[after : after + limit]
        return [
            (after + i + 1, decode_entry(e.kind, e.key, e.value, e.items))
            for i, e in enumerate(chosen)
        ]

    def delete(self, sessions: Sequence[str], owner: OwnerKey) -> int:
        removed = 0
        for key in sessions:
            found = self._sessions.get(key)
            if found is not None and found.owned_by(owner):
                del self._sessions[key]
                self._bytes -= found.bytes
                removed += 1
        return removed

    def totals(self) -> tuple[int, int]:
        return len(self._sessions), self._bytes

    def oldest(self) -> Generator[tuple[str, str, int], None, None]:
        ordered = sorted(self._sessions.values(), key=lambda s: (s.stamp(), s.number))
        for session in ordered:
            yield session.row.session, session.stamp(), session.bytes


def _apply(session: _Session, op: WriteOp) -> int:
    """Apply one write; the change in stored bytes."""
    if isinstance(op, AppendItem):
        entry, delta = session.entry(op.kind, op.key)
        entry.items.append(op.item)
        return delta + len(op.item)
    if isinstance(op, PutEntry):
        entry, delta = session.entry(op.kind, op.key)
        delta += len(op.value) - len(entry.value)
        entry.value = op.value
        if op.items is not None:
            delta += sum(map(len, op.items)) - sum(map(len, entry.items))
            entry.items = list(op.items)
        return delta
    assert isinstance(op, PatchSession)
    delta = 0
    for column, text in op.texts:
        delta += len(text) - len(session.texts[column])
        session.texts[column] = text
    if op.closed is not None:
        session.closed = op.closed
    return delta


class MemoryStore(SessionStore):
    """The session store in memory; see the module docstring."""

    __slots__ = ()

    def __init__(
        self,
        *,
        retention: Retention = MEMORY_RETENTION,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        super().__init__(MemoryEngine(), InlineRunner(), retention=retention, clock=clock)
