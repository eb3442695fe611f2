"""The session store's values: records, retention rules, errors and sentinels. Import them
from `store` (the interface), which re-exports every name here."""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final, TypeAlias

JsonValue: TypeAlias = Any
"""A plain JSON value: dict (str keys), list, str, int, float, bool or None."""


class Keep(enum.Enum):
    """`update`'s default for a field it leaves as it is."""

    KEEP = "keep"


KEEP: Final = Keep.KEEP


class AnyOwner(enum.Enum):
    """The owner filter that matches every session, whoever made it."""

    ANY = "any"


ANY_OWNER: Final = AnyOwner.ANY
Owner: TypeAlias = str | None | AnyOwner

PAGE_SIZE: Final = 50
"""Sessions per `list_sessions` page by default."""
MAX_PAGE_SIZE: Final = 1000


class StoreError(Exception):
    """The store cannot do what was asked; the message is one line that names the store (the
    file, or the server and schema) and what is wrong."""


class StoreOpenError(StoreError):
    """The store cannot be used at all (raised by `open()`): a corrupted, read-only or foreign
    file, one written by a newer version, a server that does not answer. Nothing was changed."""


class StoreClosed(StoreError):
    """The store is not open (before `open()` or after `close()`)."""


class DuplicateSession(StoreError):
    """`create` with the id of a session the store already holds."""


class DriverMissing(StoreError, ImportError):
    """An optional database driver is not installed; the message says what to install."""


class InvalidCursor(ValueError):
    """A `list_sessions` cursor this store did not hand out (or one for other filters)."""


@dataclass(frozen=True, slots=True)
class Retention:
    """How much the store keeps: sessions not updated for `max_age`, and past `max_sessions`
    sessions or `max_bytes` of stored JSON the oldest-updated ones, are removed by sweeps. A
    bound of None is no bound. `sweep_every` is the number of writes (creations included)
    between automatic sweeps (0: only at `open()` and when `sweep()` is called). The defaults
    are `DEFAULT_RETENTION`'s (SQLite, PostgreSQL); MemoryStore uses `MEMORY_RETENTION`."""

    max_age: timedelta | None = timedelta(days=30)
    max_sessions: int | None = 10_000
    max_bytes: int | None = 1 << 30
    sweep_every: int = 1000

    def __post_init__(self) -> None:
        if self.max_age is not None and self.max_age <= timedelta(0):
            raise ValueError(f"Retention.max_age must be positive, got {self.max_age}")
        for name in ("max_sessions", "max_bytes"):
            value = getattr(self, name)
            if value is not None and (type(value) is not int or value < 1):
                raise ValueError(f"Retention.{name} must be a positive int or None, got {value!r}")
        if type(self.sweep_every) is not int or self.sweep_every < 0:
            raise ValueError(f"Retention.sweep_every must be an int >= 0, got {self.sweep_every!r}")


DEFAULT_RETENTION: Final = Retention()
"""SQLite and PostgreSQL: 30 days, 10,000 sessions, 1 GiB of stored JSON, a sweep every 1,000
writes."""
MEMORY_RETENTION: Final = Retention(max_sessions=1000, max_bytes=64 << 20)
"""MemoryStore: 30 days, 1,000 sessions, 64 MiB of stored JSON, a sweep every 1,000 writes."""


@dataclass(frozen=True, slots=True)
class SessionSetup:
    """What `create` stores of a new session. `mcp_servers` and `config` (modes, config
    options ...) are opaque JSON; `owner` is the principal the session belongs to (None for a
    local agent)."""

    session_id: str
    cwd: str
    protocol_version: int
    additional_directories: Sequence[str] = ()
    mcp_servers: Sequence[JsonValue] = ()
    config: Mapping[str, JsonValue] = field(default_factory=dict)
    owner: str | None = None
    title: str | None = None
    state: JsonValue = None
    usage: JsonValue = None


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A stored session without its history. `created_at` and `updated_at` are RFC 3339 UTC
    with milliseconds (`updated_at`: the last write of any kind); `stored_bytes` counts the
    JSON text the session takes (what `Retention.max_bytes` bounds)."""

    session_id: str
    cwd: str
    protocol_version: int
    additional_directories: tuple[str, ...]
    mcp_servers: list[JsonValue]
    config: dict[str, JsonValue]
    owner: str | None
    title: str | None
    state: JsonValue
    usage: JsonValue
    closed: bool
    created_at: str
    updated_at: str
    stored_bytes: int


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One entry of a session's history: its latest value and the items appended to it."""

    kind: str
    key: str
    value: JsonValue
    items: tuple[JsonValue, ...]


@dataclass(frozen=True, slots=True)
class SessionPage:
    """One page of `list_sessions`: newest-created first; `next_cursor` is None on the last."""

    sessions: tuple[SessionRecord, ...]
    next_cursor: str | None


def utc_now() -> datetime:
    return datetime.now(UTC)


def rfc3339(moment: datetime) -> str:
    """`moment` as an RFC 3339 UTC timestamp with milliseconds (`2025-10-29T14:22:15.042Z`):
    fixed width, so these strings sort as the moments do."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def cwd_key(cwd: str) -> str:
    """The form `list_sessions` compares working directories in: normalized (`/a/./b/` is
    `/a/b`), symbolic links not resolved."""
    return os.path.normpath(cwd)
