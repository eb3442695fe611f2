"""An agent's sessions in a `SessionStore`: what `Agent(store=...)` changes.

Without a store an agent keeps its sessions in memory only (`agent.py`, "Bounds"). With one,
every session is created in the store at `session/new`, its history is written as its turns go
(`stored_history.py`), and the store answers what memory cannot once the process is gone or the
session left memory: `session/list` pages through the store (this principal's sessions, by
`cwd`, newest first), and `session/load` / `session/resume` of a session that is not served on
a live connection here read it back from the store — one an earlier process made, another
worker made (PostgreSQL), or this process dropped from memory. Memory holds the sessions served
on live connections (at most `max_sessions`), and of each only its running turn.

`session/close` frees what the session holds in memory and leaves it stored, listed and
loadable (on every version); `session/delete` removes it from the store.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from ..runtime._runtime import UNSET, encode
from ..runtime.jsonrpc import INTERNAL_ERROR, RpcError
from .store import SessionPage, SessionSetup, SessionStore, StoreError
from .stored_history import StoredHistory, restore_state, session_state

if TYPE_CHECKING:
    from .agent import AgentSide
    from .lane import Lane
    from .session import AgentSession

StoreSpec: TypeAlias = SessionStore | str | os.PathLike[str]
"""What `Agent(store=...)` takes: a store, a SQLite file's path, or a PostgreSQL URL."""
_POSTGRES_SCHEMES: Final = ("postgresql://", "postgres://")
_log: Final = logging.getLogger(__name__.rpartition(".")[0] + ".agent")


def make_store(spec: StoreSpec) -> SessionStore:
    """The store `spec` names: itself, a `PostgresStore` for a `postgresql://` URL, else a
    `SQLiteStore` of that path (made at `open()` when missing). Nothing is opened here."""
    if isinstance(spec, SessionStore):
        return spec
    if isinstance(spec, str) and spec.startswith(_POSTGRES_SCHEMES):
        from .store_postgres import PostgresStore

        return PostgresStore(spec)
    if isinstance(spec, str | os.PathLike):
        if not os.fspath(spec):
            raise ValueError("store: an empty path")
        from .store_sqlite import SQLiteStore

        return SQLiteStore(spec)
    raise TypeError(
        f"store must be a SessionStore, a path or a postgresql:// URL, got {type(spec).__name__}"
    )


def store_failed(error: StoreError) -> RpcError:
    """What a client is answered when the store fails under a request: -32603, the cause in
    the agent's log (it names files and servers the client has no business knowing)."""
    _log.error("the session store failed: %s", error)
    return RpcError(INTERNAL_ERROR, "Internal error", {"reason": "the session store failed"})


class StoredSessions:
    """An `Agent`'s side of its store; see the module docstring."""

    __slots__ = ("store", "_opened")

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self._opened: asyncio.Task[SessionStore] | None = None

    async def open(self) -> None:
        """Open the store once (callers that come meanwhile wait for the same opening);
        StoreOpenError when it cannot be used. A failed opening is tried again next time."""
        if self._opened is None:
            self._opened = asyncio.ensure_future(self.store.open())
        try:
            await asyncio.shield(self._opened)
        except BaseException:
            if self._opened.done():
                self._opened = None
            raise

    async def close(self) -> None:
        """Commit what is queued and close the store."""
        await self.store.close()

    def history(self, session_id: str) -> StoredHistory:
        return StoredHistory(self.store, session_id)

    # -- what the requests do ------------------------------------------------------------------
    async def created(self, session: AgentSession, on: Lane) -> None:
        """Store a new session (durably: when `session/new` is answered, it is there)."""
        setup = SessionSetup(
            session_id=session.id,
            cwd=session.cwd,
            protocol_version=on.version,
            additional_directories=list(session.additional_directories),
            mcp_servers=encode(list(session.mcp_servers)),
            owner=session.principal,
            state=session_state(session),
        )
        try:
            await self.open()
            await self.store.create(setup)
        except StoreError as exc:
            raise store_failed(exc) from None

    async def restore(self, side: AgentSide, session_id: str) -> AgentSession | None:
        """The stored session `session_id` of `side`'s principal, made a session served on
        `side`; None when the store has none."""
        from .session import AgentSession

        try:
            await self.open()
            record = await self.store.get(session_id, owner=side.principal)
        except StoreError as exc:
            raise store_failed(exc) from None
        if record is None:
            return None
        session = AgentSession(
            side.agent, side, record.session_id, record.cwd, list(record.additional_directories), []
        )
        session.title = record.title
        session.created_at, session.updated_at = record.created_at, record.updated_at
        restore_state(session, record.state, side.lane)
        return session

    def reopened(self, session: AgentSession) -> None:
        """A load or a resume set the session up again: its directories and servers are the
        request's, and it is open."""
        self.store.update(
            session.id,
            additional_directories=list(session.additional_directories),
            mcp_servers=encode(list(session.mcp_servers)),
            closed=False,
        )

    def closed(self, session_id: str) -> None:
        self.store.update(session_id, closed=True)

    async def page(
        self, principal: str | None, cwd: str | None, cursor: str | None, size: int
    ) -> SessionPage:
        """One page of `principal`'s stored sessions (InvalidCursor for a foreign cursor)."""
        try:
            await self.open()
            return await self.store.list_sessions(
                owner=principal, cwd=cwd, cursor=cursor, limit=size
            )
        except StoreError as exc:
            raise store_failed(exc) from None

    async def delete(self, session_id: str, principal: str | None) -> None:
        try:
            await self.open()
            await self.store.delete(session_id, owner=principal)
        except StoreError as exc:
            raise store_failed(exc) from None

    async def flush(self) -> None:
        """Return once every write so far is durable."""
        try:
            await self.store.flush()
        except StoreError as exc:
            raise store_failed(exc) from None


def session_info(record: Any, on: Lane) -> Any:
    """A stored session as `session/list` reports it, in `on`'s `SessionInfo`."""
    return on.models.SessionInfo(
        session_id=record.session_id,
        cwd=record.cwd,
        additional_directories=list(record.additional_directories) or UNSET,
        title=UNSET if record.title is None else record.title,
        updated_at=record.updated_at,
    )
