"""Which sessions belong to whom, server-wide: a session belongs to the principal whose
connection made it (`session/new`, `session/fork`), and is attached to one connection at a
time — the one that made it or last loaded or resumed it. The server refuses a connection's
session-scoped messages for a session attached elsewhere (409: load or resume it here first)
or owned by another principal (404, as for one that does not exist), before the agent sees
them; the toolkit's `Agent` checks the same itself.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

from .protocol import CLAIMS

UNKNOWN_SESSION: Final = "Unknown Acp-Session-Id"
ATTACHED_ELSEWHERE: Final = (
    "The session is not attached to this connection: session/load or session/resume it first"
)


class _Owner:
    __slots__ = ("principal", "connection")

    def __init__(self, principal: str | None, connection: object | None) -> None:
        self.principal = principal
        self.connection = connection


class SessionOwners:
    """The owner of every session made or attached through this server (at most `limit`;
    past it the least recently attached detached ones are forgotten)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._owners: OrderedDict[str, _Owner] = OrderedDict()

    def refusal(
        self, connection: object, principal: str | None, method: str | None, session_id: str
    ) -> tuple[int, str] | None:
        """Why `connection` (of `principal`) may not send `method` for `session_id`: an HTTP
        status and its one-line reason, or None when it may. `method` None: an answer to the
        agent's request, or a GET of the session's stream (allowed for a session not attached
        yet: a client opens it before loading the session)."""
        owner = self._owners.get(session_id)
        if owner is not None and owner.principal != principal:
            return 404, UNKNOWN_SESSION
        if method is None or method in CLAIMS:
            return None
        if owner is None:
            return 404, UNKNOWN_SESSION
        if owner.connection is not connection:
            return 409, ATTACHED_ELSEWHERE
        return None

    def attached(self, session_id: str, connection: object) -> bool:
        owner = self._owners.get(session_id)
        return owner is not None and owner.connection is connection

    def attach(self, session_id: str, connection: object, principal: str | None) -> None:
        owner = self._owners.pop(session_id, None)
        if owner is None:
            owner = _Owner(principal, connection)
        elif owner.principal == principal:
            owner.connection = connection
        else:  # refused before it reached the agent; never hand it over
            self._owners[session_id] = owner
            return
        self._owners[session_id] = owner
        self._trim()

    def forget(self, session_id: str, principal: str | None) -> None:
        owner = self._owners.get(session_id)
        if owner is not None and owner.principal == principal:
            del self._owners[session_id]

    def detach_all(self, connection: object) -> None:
        for owner in self._owners.values():
            if owner.connection is connection:
                owner.connection = None

    def _trim(self) -> None:
        excess = len(self._owners) - self._limit
        if excess <= 0:
            return
        for session_id in [sid for sid, o in self._owners.items() if o.connection is None]:
            del self._owners[session_id]
            excess -= 1
            if excess == 0:
                return

    def __len__(self) -> int:
        return len(self._owners)
