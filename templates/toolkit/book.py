"""An agent's sessions, for `session/list`: kept in creation order, filtered by working
directory, served a page at a time behind an opaque cursor. No protocol types: the agent
(`agent.py`) stores its session objects here and turns pages into answers."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Final, Generic, Protocol, TypeVar

PAGE_SIZE: Final = 50
"""Sessions per `session/list` page by default."""
_CURSOR_PREFIX: Final = "after:"


class Listed(Protocol):
    """What the book needs of a session."""

    @property
    def id(self) -> str: ...

    @property
    def cwd(self) -> str: ...


S = TypeVar("S", bound=Listed)


class InvalidCursor(ValueError):
    """A `session/list` cursor this agent did not hand out."""


def same_directory(a: str, b: str) -> bool:
    """Whether two absolute paths name the same directory once normalized (`/a/./b/` is
    `/a/b`); symbolic links are not resolved."""
    return os.path.normpath(a) == os.path.normpath(b)


def now_rfc3339() -> str:
    """The current time as an RFC 3339 UTC timestamp with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class SessionBook(Generic[S]):
    """Sessions by id, in creation order."""

    __slots__ = ("_sessions", "_serial", "_next_serial")

    def __init__(self) -> None:
        self._sessions: dict[str, S] = {}
        self._serial: dict[str, int] = {}  # the creation number a cursor points past
        self._next_serial = 0

    def add(self, session: S) -> None:
        if session.id in self._sessions:
            raise ValueError(f"session {session.id!r} is already open")
        self._sessions[session.id] = session
        self._serial[session.id] = self._next_serial
        self._next_serial += 1

    def get(self, session_id: str) -> S | None:
        return self._sessions.get(session_id)

    def remove(self, session_id: str) -> S | None:
        self._serial.pop(session_id, None)
        return self._sessions.pop(session_id, None)

    def __iter__(self) -> Iterator[S]:
        return iter(list(self._sessions.values()))

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._sessions

    def page(
        self,
        *,
        cwd: str | None = None,
        cursor: str | None = None,
        size: int = PAGE_SIZE,
        keep: Callable[[S], bool] | None = None,
    ) -> tuple[list[S], str | None]:
        """One page of sessions whose working directory is `cwd` (all when None) and that `keep`
        keeps (all when None), starting
        after the one `cursor` points past; returns them and the next page's cursor (None on
        the last page). Sessions closed between pages do not shift the pages.

        Raises InvalidCursor for a cursor `page` did not return.
        """
        start = 0 if cursor is None else _parse_cursor(cursor)
        found: list[S] = []
        for session_id, session in self._sessions.items():
            serial = self._serial[session_id]
            if serial < start or (cwd is not None and not same_directory(session.cwd, cwd)):
                continue
            if keep is not None and not keep(session):
                continue
            if len(found) == size:
                return found, f"{_CURSOR_PREFIX}{self._serial[found[-1].id] + 1}"
            found.append(session)
        return found, None


def _parse_cursor(cursor: str) -> int:
    digits = cursor.removeprefix(_CURSOR_PREFIX)
    if (
        digits == cursor
        or not digits.isascii()
        or not digits.isdigit()
        or len(digits) > _MAX_CURSOR_DIGITS
    ):
        raise InvalidCursor(f"not a cursor this agent handed out: {cursor[:40]!r}")
    return int(digits)


_MAX_CURSOR_DIGITS: Final = 18  # a serial of this book; longer ones were never handed out
