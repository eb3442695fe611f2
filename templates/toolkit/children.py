"""The child sessions of a session, as a client built on `Client` follows them (subagents:
npm-sdk-2.4.0's unstable v2 schema, `features.subagents`).

A `subagent_update` on a session the client has announces a child: from then on the child is
a `RemoteChild` in `session.children` (and in `client.sessions`), and its updates — the
`session/update`s that bear its own `sessionId`, which the agent sends with no subscription
asked — are applied to its state, which is the parent state's `child(id)` (so the parent's
snapshot holds its children's), and reach its subscribers. Announcements are handled in
arrival order, before the next update: a subscriber of the parent that sees the
`subagent_update` may subscribe to the child before its first update.

The schema lets the client mutate a child only as the child's `capabilities` say: `cancel()`
needs `capabilities.cancel` (else NotPermitted, and nothing is sent); `prompt()` and `close()`
are not the client's to send to a child at all (NotPermitted). A child ends with its parent:
when the client forgets the parent (closed, deleted, disconnected), its children go too.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from ..vocab import ContentBlock
from .lane import NotSupported
from .remote import RemoteSession, TurnResult

if TYPE_CHECKING:
    from .client import Client

__all__ = ["NotPermitted", "RemoteChild"]
_log: Final = logging.getLogger(__name__.rpartition(".")[0] + ".client")
MAX_CHILDREN: Final = 1024
"""Child sessions one client follows at most (of every parent together): an agent announcing
more is logged, and their updates dropped as for any session the client does not have."""


class NotPermitted(RuntimeError):
    """The agent did not give the client this on a child session (its `capabilities`)."""


class RemoteChild(RemoteSession):
    """A child session of `parent`, announced by the agent; see the module docstring."""

    def __init__(self, client: Client, parent: RemoteSession, session_id: str) -> None:
        super().__init__(client, session_id, parent.lane)
        self.parent = parent
        self.state = parent.state.child(session_id)
        self.roots = parent.roots

    @property
    def info(self) -> dict[str, Any]:
        """What the parent reports of it (`title`, `description`, `capabilities`, the mirrored
        `state`, `cwd`, ...), as plain JSON."""
        found = self.parent.state.child_info(self.id)
        return {} if found is None else dict(found)

    @property
    def title(self) -> str | None:
        title = self.info.get("title")
        return title if isinstance(title, str) else None

    @property
    def cancellable(self) -> bool:
        """Whether the agent lets the client cancel its work (`capabilities.cancel`)."""
        capabilities = self.info.get("capabilities")
        return isinstance(capabilities, dict) and isinstance(capabilities.get("cancel"), dict)

    async def cancel(self) -> None:
        """Cancel the child's work (`session/cancel` with its id): only when `cancellable`."""
        if not self.cancellable:
            raise NotPermitted(f"the agent does not let the client cancel subagent {self.id}")
        await super().cancel()

    async def prompt(self, content: str | ContentBlock | Sequence[ContentBlock]) -> TurnResult:
        raise NotPermitted(f"subagent {self.id} is its parent's: the client does not prompt it")

    async def close(self) -> None:
        raise NotPermitted(f"subagent {self.id} ends with its parent: close the parent")


def children_of(session: RemoteSession) -> dict[str, RemoteChild]:
    """`session.children`; NotSupported on a lane without subagents."""
    if not session.features.subagents:
        raise NotSupported("subagent sessions", session.lane)
    return {
        sid: child
        for sid, child in session.client.sessions.items()
        if isinstance(child, RemoteChild) and child.parent is session
    }


def follow(session: RemoteSession, update: Any) -> None:
    """After `update` was applied to `session`'s state: a `subagent_update` for an id the
    client does not follow yet makes it a child of `session`."""
    m = session.lane.models
    if not isinstance(update, m.SessionUpdateSubagentUpdate):
        return
    nested = session.state.child(update.session_id)
    if nested is None:  # refused by the state (nested too deep)
        return
    client = session.client
    known = client.sessions.get(update.session_id)
    if isinstance(known, RemoteChild) and known.parent is session:
        known.state = nested  # the parent's state was rebuilt (a replay): follow the new one
        return
    if known is not None:
        _log.warning(
            "session %s announced a child %r that is already a session of this client: ignored",
            session.id,
            update.session_id[:80],
        )
        return
    if sum(isinstance(s, RemoteChild) for s in client.sessions.values()) >= MAX_CHILDREN:
        _log.warning("more than %d child sessions: %r not followed", MAX_CHILDREN,
                     update.session_id[:80])  # fmt: skip
        return
    child = RemoteChild(client, session, update.session_id)
    child._hub._stall = session._hub._stall
    client.sessions[update.session_id] = child


def forget_children(session: RemoteSession) -> None:
    """`session` is gone for the client: so are its children (and theirs)."""
    client = session.client
    for child in list(client.sessions.values()):
        if isinstance(child, RemoteChild) and child.parent is session:
            client.forget(child)
