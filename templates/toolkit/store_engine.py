"""What the store's engines implement and receive. An engine is the storage of one kind
(memory, SQLite, PostgreSQL) behind a small synchronous interface; the `SessionStore` in front
validates and encodes arguments, and a runner calls the engine (inline, or on a worker thread
that owns it). Every string an engine stores is JSON text: `encode` (ensure_ascii) makes ASCII
of anything (lone surrogates, NUL, any path), so any column takes it, and its length in
characters is its size in bytes, the measure of `Retention.max_bytes`."""

from __future__ import annotations

import abc
import contextlib
import json
from collections.abc import Callable, Collection, Generator, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, TypeAlias

from .store_types import (
    ANY_OWNER,
    AnyOwner,
    HistoryEntry,
    Owner,
    Retention,
    SessionRecord,
    StoreError,
    rfc3339,
)

_ENCODER: Final = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def _not_json(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _c_encoder() -> Callable[[object, int], Any] | None:
    """The C encoder made once (json.dumps makes one a call): the writes' cost on the event
    loop. None where the interpreter has no `_json` module."""
    try:
        from _json import make_encoder
    except ImportError:
        return None
    ascii_text = json.encoder.encode_basestring_ascii
    return make_encoder(None, _not_json, ascii_text, None, ":", ",", False, False, False)


_C_ENCODER: Final = _c_encoder()
_ascii_text: Final = json.encoder.encode_basestring_ascii


def encode(value: object) -> str:
    """Compact, ASCII JSON text; TypeError or ValueError (NaN, infinities, a circular or too
    deeply nested value) for what is not JSON."""
    if type(value) is str:
        return _ascii_text(value)
    if _C_ENCODER is None:
        return _ENCODER.encode(value)
    try:
        return "".join(_C_ENCODER(value, 0))
    except RecursionError:
        raise ValueError("a circular or too deeply nested JSON value") from None


decode: Final = json.loads
PATCHABLE: Final = ("title", "additional_directories", "mcp_servers", "config", "state", "usage")
"""The record's JSON columns that `update` may change (besides `closed`)."""


def check_str(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}")
    return value


def encode_text(value: object, what: str) -> str:
    """A str argument's JSON text; TypeError for anything else."""
    return encode(check_str(value, what))


@dataclass(frozen=True, slots=True)
class NewSession:
    """A session to create, as JSON texts (`owner` None: no owner)."""

    session: str
    owner: str | None
    cwd: str
    cwd_key: str
    protocol_version: int
    texts: tuple[tuple[str, str], ...]  # (column of PATCHABLE, JSON text), every one
    created_at: str

    @property
    def stored_bytes(self) -> int:
        owned = 0 if self.owner is None else len(self.owner)
        return len(self.session) + owned + len(self.cwd) + sum(len(t) for _, t in self.texts)


# Writes travel as small mutable slotted objects: a frozen dataclass costs a few times more to
# make, and one is made per update on the event loop.
@dataclass(slots=True)
class PutEntry:
    session: str
    kind: str
    key: str
    value: str
    items: tuple[str, ...] | None  # None: keep the entry's items

    def size(self) -> int:
        items = 0 if self.items is None else sum(len(item) for item in self.items)
        return len(self.kind) + len(self.key) + len(self.value) + items


@dataclass(slots=True)
class AppendItem:
    session: str
    kind: str
    key: str
    item: str

    def size(self) -> int:
        return len(self.kind) + len(self.key) + len(self.item)


@dataclass(slots=True)
class PatchSession:
    session: str
    texts: tuple[tuple[str, str], ...]  # (column of PATCHABLE, JSON text)
    closed: bool | None  # None: keep

    def size(self) -> int:
        return sum(len(text) for _, text in self.texts)


WriteOp: TypeAlias = PutEntry | AppendItem | PatchSession

OwnerKey: TypeAlias = str | None | AnyOwner
"""An owner filter as engines take it: the owner's JSON text, None or ANY_OWNER."""


def owner_key(owner: Owner) -> OwnerKey:
    if owner is None or owner is ANY_OWNER:
        return owner
    return encode_text(owner, "owner")


SESSION_COLUMNS: Final = (
    "id",
    "owner",
    "cwd",
    "protocol_version",
    "additional_directories",
    "mcp_servers",
    "config",
    "title",
    "state",
    "usage",
    "closed",
    "created_at",
    "updated_at",
    "bytes",
)
"""The columns `decode_record` takes, in this order (`id`, `owner`, `cwd` and the PATCHABLE
ones as JSON text)."""


def decode_record(row: Sequence[Any]) -> SessionRecord:
    session, owner, cwd, version, dirs, servers, config, title, state, usage = row[:10]
    closed, created_at, updated_at, size = row[10:]
    return SessionRecord(
        session_id=decode(session),
        cwd=decode(cwd),
        protocol_version=int(version),
        additional_directories=tuple(decode(dirs)),
        mcp_servers=decode(servers),
        config=decode(config),
        owner=None if owner is None else decode(owner),
        title=decode(title),
        state=decode(state),
        usage=decode(usage),
        closed=bool(closed),
        created_at=created_at,
        updated_at=updated_at,
        stored_bytes=int(size),
    )


def decode_entry(kind: str, key: str, value: str, items: Iterable[str]) -> HistoryEntry:
    return HistoryEntry(decode(kind), decode(key), decode(value), tuple(map(decode, items)))


class TransientError(StoreError):
    """A write that may succeed when tried again: the database was busy past its timeout, or
    the connection dropped (the engine reconnects on its next call)."""


class Engine(abc.ABC):
    """Storage behind a `SessionStore`. Its methods are called from one thread at a time
    (the runner's); `session` arguments are the session id's JSON text."""

    label: str
    """What error messages call it: the file, or the server and schema."""

    @abc.abstractmethod
    def open(self) -> bytes:
        """Check, create or migrate the storage; returns the secret cursors are signed with.
        Raises StoreOpenError, having changed nothing, when the storage cannot be used."""

    @abc.abstractmethod
    def close(self) -> None: ...

    @abc.abstractmethod
    def write(self, ops: Sequence[WriteOp], now: datetime) -> None:
        """Apply `ops` in order in one transaction (all or nothing), dropping those of
        sessions it does not hold; `now` becomes their sessions' `updated_at`. Raises
        TransientError when trying again may work, StoreError when it will not."""

    @abc.abstractmethod
    def create(self, row: NewSession) -> bool:
        """Insert the session, durably; False if one of its id exists."""

    @abc.abstractmethod
    def get(self, session: str, owner: OwnerKey) -> SessionRecord | None: ...

    @abc.abstractmethod
    def page(
        self, owner: OwnerKey, cwd_key: str | None, before: int | None, limit: int
    ) -> list[tuple[int, SessionRecord]]:
        """Up to `limit` sessions with their creation numbers, highest first, below `before`."""

    @abc.abstractmethod
    def entries(self, session: str, after: int, limit: int) -> list[tuple[int, HistoryEntry]]:
        """Up to `limit` history entries with their positions, in order, after `after`."""

    @abc.abstractmethod
    def delete(self, sessions: Sequence[str], owner: OwnerKey) -> int:
        """Remove these sessions (those of `owner`) and their history; how many there were."""

    @abc.abstractmethod
    def totals(self) -> tuple[int, int]:
        """The number of sessions and their stored bytes."""

    @abc.abstractmethod
    def oldest(self) -> Generator[tuple[str, str, int], None, None]:
        """(session, updated_at, stored bytes) of every session, oldest-updated first."""

    def sweep(self, rules: Retention, now: datetime, keep: Collection[str]) -> int:
        """Remove sessions, oldest-updated first, while one is older than `rules.max_age` or
        there are more sessions or bytes than allowed; how many went. Those in `keep` go
        last: never for their age, and only when the caps cannot be met without them."""
        count, total = self.totals()
        cutoff = None if rules.max_age is None else rfc3339(now - rules.max_age)

        def over() -> bool:
            crowded = rules.max_sessions is not None and count > rules.max_sessions
            return crowded or (rules.max_bytes is not None and total > rules.max_bytes)

        doomed: list[str] = []
        spared: list[tuple[str, int]] = []
        with contextlib.closing(self.oldest()) as sessions:
            for session, updated_at, size in sessions:
                if not (over() or (cutoff is not None and updated_at < cutoff)):
                    break  # the rest are younger, and the caps are met
                if session in keep:
                    spared.append((session, size))
                else:
                    doomed.append(session)
                    count, total = count - 1, total - size
        for session, size in spared:  # every session was seen if the caps are still not met
            if not over():
                break
            doomed.append(session)
            count, total = count - 1, total - size
        removed = 0
        for start in range(0, len(doomed), _DELETE_CHUNK):
            removed += self.delete(doomed[start : start + _DELETE_CHUNK], ANY_OWNER)
        return removed


_DELETE_CHUNK: Final = 100  # sessions removed per transaction by a sweep
