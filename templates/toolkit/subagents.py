"""Child sessions an agent starts inside a turn: subagents (npm-sdk-2.4.0's unstable v2 schema:
`turn.features.subagents`; elsewhere `turn.subagent()` raises NotSupported).

    async def prompt(self, turn: Turn) -> TurnStopReason:
        researcher = await turn.subagent("Researcher", task=f"Find sources for: {turn.text}")
        reason = await researcher.run(self.research)   # the child's own foreground work
        await turn.say(f"The researcher is done ({reason}): {researcher.reported}")
        return "end_turn"

    async def research(self, child: SubagentTurn) -> TurnStopReason:
        await child.say("Looking...")                  # streamed into the child session
        await child.report("Three sources found.")     # a message to the parent session
        return "end_turn"

What goes on the wire follows the schema's `SubagentUpdate` and `SessionMessage`:

- `turn.subagent(...)` announces the child on the parent session with a `subagent_update`
  (its own new `sessionId`, `title`, `description`, and `capabilities.cancel` when
  `cancellable`) before anything bears the child's id; `update(...)` patches it later.
- A `SubagentTurn` is a `Turn` on the child session: everything it reports (`say`, `think`,
  `plan`, `tool_call`, `ask_permission`, `usage`) is a `session/update` (or request) with the
  child's `sessionId`. Its states (`running`, `requires_action`, the idle stop reason) are
  reported on the child and mirrored onto the parent's association (`subagent_update.state`).
- `tell(content)` (parent → child) and `report(content)` (child → parent) are inter-session
  messages: a `session_message` in each session's transcript, the outgoing view naming the
  incoming one (`recipientMessageId`) and the other way round (`senderMessageId`).
- A child's work runs inside its parent's turn: `run()` outside one raises TurnEnded, a cancel
  of the parent (`session/cancel`, `session/close`, a cancelled permission answer) cancels it,
  and when the parent's turn ends whatever a child still runs is cancelled first (its idle
  `cancelled` precedes the parent's idle). Ending a child's work does not end the child: a
  later turn may `run()` it again.
- The client may cancel a child's work with `session/cancel` naming the child only when it was
  started `cancellable` (the schema: a child permits no client-initiated mutation unless its
  capabilities say so); then `run()` returns `"cancelled"` and the parent goes on.
- A replay of the parent (`session/resume` from the start, v1's `session/load` excepted: v1 has
  no children) sends each child's announcement as it now is, then the child's own history.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from ..runtime._runtime import UNSET, UnsetType, decode, encode
from ..vocab import TurnStopReason
from .content import Content, text_block
from .lane import NotSupported
from .lifecycle import TurnEnded
from .session import AgentSession
from .turn import CustomStopReason, Turn

if TYPE_CHECKING:
    from .agent import AgentSide
    from .dialect import Dialect
    from .dialect_v2 import V2Dialect

__all__ = ["Subagent", "SubagentTurn", "SubagentWork"]
_log: Final = logging.getLogger(__name__.rpartition(".")[0] + ".agent")

SubagentWork = Callable[["SubagentTurn"], Awaitable["TurnStopReason | CustomStopReason | None"]]
"""What `Subagent.run` runs: given the child's turn, it returns the stop reason (None:
`end_turn`)."""


class ChildSession(AgentSession):
    """A child session as the agent keeps it: served where its parent is, its history its own,
    and every state it reports mirrored onto the parent's association."""

    def __init__(self, subagent: Subagent, parent: AgentSession, session_id: str) -> None:
        self.subagent = subagent
        self.parent = parent
        side = parent.side
        assert side is not None  # a turn of the parent runs: it is served
        super().__init__(
            parent.agent,
            side,
            session_id,
            parent.cwd,
            list(parent.additional_directories),
            list(parent.mcp_servers),
        )

    @property
    def side(self) -> AgentSide | None:
        """Where the parent is served (a resume elsewhere takes its children along)."""
        return self.parent.side

    @side.setter
    def side(self, value: AgentSide | None) -> None:
        pass  # the parent's

    @property
    def active(self) -> bool:
        return self.parent.active

    @active.setter
    def active(self, value: bool) -> None:
        pass  # the parent's

    async def send(self, update: Any) -> None:
        await super().send(update)
        if self.side is None or not self.active:
            return
        m = self.parent.dialect.lane.models
        if isinstance(update, m.SessionUpdateStateUpdate):  # mirrored on the association
            body = {k: v for k, v in encode(update).items() if k != "sessionUpdate"}
            self.subagent.mirrored = decode(m.StateUpdate, body)
            await self.parent.send(
                m.SessionUpdateSubagentUpdate(session_id=self.id, state=self.subagent.mirrored)
            )


class SessionMessage:
    """An inter-session message as one transcript has it (kept for a replay)."""

    __slots__ = ("message_id", "sender", "recipient", "other_id", "outgoing", "blocks")

    def __init__(
        self,
        message_id: str,
        sender: str,
        recipient: str,
        other_id: str,
        outgoing: bool,
        blocks: list[Any],
    ) -> None:
        self.message_id = message_id
        self.sender = sender
        self.recipient = recipient
        self.other_id = other_id  # the same message's id in the other session's transcript
        self.outgoing = outgoing
        self.blocks = blocks

    def update(self, dialect: Dialect) -> Any:
        m = dialect.lane.models
        return m.SessionUpdateSessionMessage(
            message_id=self.message_id,
            sender_session_id=self.sender,
            recipient_session_id=self.recipient,
            recipient_message_id=self.other_id if self.outgoing else UNSET,
            sender_message_id=UNSET if self.outgoing else self.other_id,
            content=[dialect.lane.adopt(m.ContentBlock, b, where="message") for b in self.blocks],
        )

    def replay(self, dialect: Dialect) -> list[Any]:
        return [self.update(dialect)] if dialect.lane.features.subagents else []


class Subagent:
    """A child session started by `turn.subagent(...)`; see the module docstring."""

    def __init__(
        self,
        parent: AgentSession,
        title: str | None,
        description: str | None,
        cancellable: bool,
    ) -> None:
        self.parent = parent
        self.session = ChildSession(self, parent, f"sess_{uuid.uuid4().hex}")
        self.title = title
        self.description = description
        self.cancellable = cancellable
        """Whether the client may cancel its work (`capabilities.cancel`)."""
        self.mirrored: Any = None
        """The child's last state, as mirrored onto the parent (the lane's `StateUpdate`)."""
        self.told: list[Any] = []
        """The content of the last message the parent sent it (`tell`)."""
        self.reported: str = ""
        """The text of the last message it sent its parent (`report`)."""
        self.turn: SubagentTurn | None = None
        """Its work running now (or last run)."""

    @property
    def id(self) -> str:
        """The child's session id."""
        return self.session.id

    @property
    def state(self) -> str:
        """The child's foreground state last reported (`idle` until it runs)."""
        return self.session.state[0]

    def announcement(self, dialect: Dialect) -> Any:
        """The `subagent_update` that reports the association as it is now."""
        m = dialect.lane.models
        capabilities = (
            m.SubagentSessionCapabilities(cancel=m.SessionCancelCapabilities())
            if self.cancellable
            else UNSET
        )
        return m.SessionUpdateSubagentUpdate(
            session_id=self.id,
            title=UNSET if self.title is None else self.title,
            description=UNSET if self.description is None else self.description,
            capabilities=capabilities,
            state=UNSET if self.mirrored is None else dialect.lane.adopt(
                m.StateUpdate, self.mirrored, where="state"
            ),
        )  # fmt: skip

    # -- the parent's history: the announcement, then the child's own -----------------------
    def replay(self, dialect: Dialect) -> list[Any]:
        return [self.announcement(dialect)] if dialect.lane.features.subagents else []

    async def replay_after(self, dialect: Dialect) -> None:
        if dialect.lane.features.subagents:
            await self.session.replay()
            await dialect.report_state(self.session)

    # -- what the parent does with it -------------------------------------------------------
    async def update(
        self,
        *,
        title: str | None | UnsetType = UNSET,
        description: str | None | UnsetType = UNSET,
    ) -> None:
        """Patch what the parent shows of the child (None clears a field)."""
        m = self.parent.dialect.lane.models
        await self.parent.send(
            m.SessionUpdateSubagentUpdate(session_id=self.id, title=title, description=description)
        )
        if not isinstance(title, UnsetType):
            self.title = title
        if not isinstance(description, UnsetType):
            self.description = description

    async def tell(self, content: Content | Sequence[Content]) -> None:
        """Send the child a message from its parent (a `session_message` in both transcripts)."""
        self.told = await _message(self.parent, self.session, content)

    async def report(self, content: Content | Sequence[Content]) -> None:
        """Send the parent a message from the child (its findings, say)."""
        blocks = await _message(self.session, self.parent, content)
        self.reported = "".join(str(getattr(b, "text", "")) for b in blocks)

    async def run(self, work: SubagentWork) -> str:
        """Run `work(child_turn)` as the child's foreground work and wait for it to end; return
        how it ended: its stop reason, `error` when it raised (logged; `turn.error` has it), or
        `cancelled`. Only inside a turn of the parent; one run at a time per child (a second
        waits). A cancel of the parent's turn cancels the child's work and then propagates."""
        parent_turn = self.parent.turn
        if parent_turn is None or parent_turn.ended:
            raise TurnEnded(f"subagent {self.id} runs inside a turn of its parent")
        foreground = self.session.foreground
        await foreground.admit()
        turn = SubagentTurn(self, work)
        self.turn = self.session.turn = turn
        foreground.start(turn)
        try:
            await foreground.wait()
        except asyncio.CancelledError:  # the parent's turn is cancelled: its children first
            foreground.cancel()
            await foreground.wait()
            raise
        if turn.error is not None:
            return "error"
        return "cancelled" if turn.stop_reason is None else turn.stop_reason

    def request_cancel(self) -> bool:
        """The client's `session/cancel` for this child: its work is cancelled when the child
        was started `cancellable`, else nothing happens. Whether it was."""
        if not self.cancellable:
            _log.info("session/cancel for subagent %s, which is not cancellable: ignored", self.id)
            return False
        self.session.foreground.cancel()
        return True


class SubagentTurn(Turn):
    """The foreground work of a child session: a `Turn` whose reports go to the child (see the
    module docstring); `report(content)` sends its parent a message."""

    def __init__(self, subagent: Subagent, work: SubagentWork) -> None:
        super().__init__(subagent.session, list(subagent.told), "")
        self.handle = subagent
        """The `Subagent` whose work this is (`turn.subagent(...)` starts a child of it)."""
        self._work = work

    async def report(self, content: Content | Sequence[Content]) -> None:
        """Send the parent session a message (see `Subagent.report`)."""
        if self.ended:
            raise TurnEnded("this turn has ended")
        await self.handle.report(content)

    async def open(self) -> None:
        dialect: V2Dialect = self.dialect  # type: ignore[assignment]
        if not self.cancelled:
            await dialect.set_state(self, "running")

    async def run(self) -> TurnStopReason | CustomStopReason | None:
        return await self._work(self)


async def start(
    turn: Turn,
    title: str | None,
    *,
    description: str | None,
    task: Content | Sequence[Content] | None,
    cancellable: bool,
) -> Subagent:
    """`turn.subagent(...)`: announce a new child of the turn's session."""
    lane = turn.lane
    if not lane.features.subagents:
        raise NotSupported("subagent sessions", lane)
    if turn.ended:
        raise TurnEnded("this turn has ended")
    parent = turn.session
    subagent = Subagent(parent, title, description, cancellable)
    await turn.send(subagent.announcement(turn.dialect))  # before anything bears its id
    parent.children[subagent.id] = subagent
    parent.record(("subagent", subagent.id), subagent, 256)
    if task is not None:
        await subagent.tell(task)
    return subagent


async def stop_children(session: AgentSession) -> None:
    """Cancel whatever the children of `session` still run, and wait for each to close."""
    for subagent in list(session.children.values()):
        if subagent.session.foreground.active:
            await subagent.session.foreground.stop()


def find_child(side: AgentSide, session_id: str) -> Subagent | None:
    """The child (or a child's child ...) with this id of a session served on `side`."""
    pending = [s for s in side.agent.sessions if s.side is side and s.children]
    while pending:
        session = pending.pop()
        found = session.children.get(session_id)
        if found is not None:
            return found
        pending.extend(c.session for c in session.children.values() if c.session.children)
    return None


async def _message(
    sender: AgentSession, recipient: AgentSession, content: Content | Sequence[Content]
) -> list[Any]:
    """An inter-session message: the outgoing view in the sender's transcript, the incoming one
    in the recipient's, each naming the other's id; both kept for replays. Its blocks."""
    dialect = sender.dialect
    lane = dialect.lane
    items = [content] if isinstance(content, str) or not isinstance(content, Sequence) else content
    blocks = [text_block(lane, c, where=f"message[{i}]") for i, c in enumerate(items)]
    out_id, in_id = sender.next_id("msg_out"), recipient.next_id("msg_in")
    outgoing = SessionMessage(out_id, sender.id, recipient.id, in_id, True, blocks)
    incoming = SessionMessage(in_id, sender.id, recipient.id, out_id, False, blocks)
    await sender.send(outgoing.update(dialect))
    sender.record(("message", out_id), outgoing, 64 + 96 * len(blocks))
    await recipient.send(incoming.update(dialect))
    recipient.record(("message", in_id), incoming, 64 + 96 * len(blocks))
    return blocks
