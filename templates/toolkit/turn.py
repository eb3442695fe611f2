"""One prompt turn, as an agent built on `Agent` (see `agent.py`) lives it, whatever protocol
version the connection speaks.

`Agent.prompt(turn)` receives a `Turn` once the prompt was accepted. What the turn does is
reported as it happens:

- `say(text)` / `think(text)`: chunks of one agent message / one thought (one `messageId`
  each, until `new_message()`);
- `plan(...)`: a `PlanHandle` whose entries' statuses it updates;
- `tool_call(title, ...)`: a `ToolCallHandle` that tracks its own status and content;
- `ask_permission(tool)`: a permission request; a `Permission`;
- `usage(used, size, cost=...)`.

Whatever ends the turn (its return value, an exception, a cancel, the session's close), it ends
exactly once, as the connection's protocol version says (see `dialect.py`): on v2, tool calls
still open are closed and `state_update` idle carries the stop reason (`error` with the error
after an exception); on v1 the prompt's answer carries it (an exception answers with an error).
What exists in one version only is in `turn.features`, and a helper that needs it raises
`NotSupported` on the others.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, Any, Final, NewType

from ..runtime._runtime import UNSET, UnsetType
from ..vocab import (
    ContentBlock,
    Cost,
    PermissionOption,
    PlanEntry,
    PlanEntryPriority,
    PlanEntryStatus,
    ToolCallLocation,
    ToolKind,
    TurnStopReason,
)
from .content import Content, ToolContent, content_list, merge_text, text_block, text_of
from .lane import Lane, NotSupported, ProtocolFeatures
from .lifecycle import Outcome
from .lifecycle import TurnCancelled as TurnCancelled
from .lifecycle import TurnEnded as TurnEnded
from .tool_call import ToolCallHandle

if TYPE_CHECKING:
    from .dialect import Dialect
    from .session import AgentSession
    from .subagents import Subagent

CustomStopReason = NewType("CustomStopReason", str)
"""A stop reason of one's own (`_`-prefixed), where the protocol has them
(`turn.features.custom_stop_reasons`)."""
__all__ = [
    "CustomStopReason",
    "Permission",
    "PlanHandle",
    "Turn",
    "TurnCancelled",
    "TurnEnded",
    "TurnStopReason",
]
DEFAULT_PERMISSION_OPTIONS: Final = (
    ("allow-once", "Allow once", "allow_once"),
    ("allow-always", "Always allow", "allow_always"),
    ("reject-once", "Reject", "reject_once"),
)
"""What `ask_permission` offers unless told otherwise: (option id, name, kind)."""
_REMEMBERED_TITLES: Final = 256  # per session: older `*_always` answers are forgotten


class Message:
    """An agent message, a thought or a user prompt, kept whole for a replay."""

    __slots__ = ("message_id", "role", "blocks")

    def __init__(self, message_id: str, role: str, blocks: list[Any]) -> None:
        self.message_id = message_id
        self.role = role  # "user", "agent" or "thought"
        self.blocks = blocks

    def replay(self, dialect: Dialect) -> list[Any]:
        return dialect.message_replay(
            self.role, self.message_id, merge_text(dialect.lane, self.blocks)
        )

    def size(self) -> int:
        """About how many bytes it holds (what the session's history bound counts)."""
        return 64 + sum(len(getattr(b, "text", "")) + 32 for b in self.blocks)


class Permission:
    """The answer to `ask_permission`: true when an `allow_*` option was picked."""

    __slots__ = ("option", "remembered")

    def __init__(self, option: Any, *, remembered: bool = False) -> None:
        self.option = option
        """The option picked (the connection's lane's `PermissionOption`); None when the request
        was dismissed or not understood."""
        self.remembered = remembered
        """Answered from an earlier `allow_always` / `reject_always` pick, without asking."""

    @property
    def allowed(self) -> bool:
        return self.option is not None and str(self.option.kind).startswith("allow")

    def __bool__(self) -> bool:
        return self.allowed

    def __repr__(self) -> str:
        picked = "dismissed" if self.option is None else repr(str(self.option.option_id))
        return f"Permission({picked}, allowed={self.allowed})"


class PlanHandle:
    """A plan reported by a turn; each change sends the whole plan again (same plan id; v1 has
    one plan per session, which the client replaces)."""

    __slots__ = ("_turn", "plan_id", "entries")

    def __init__(self, turn: Turn, plan_id: str, entries: list[Any]) -> None:
        self._turn = turn
        self.plan_id = plan_id
        self.entries = entries

    def replay(self, dialect: Dialect) -> list[Any]:
        return [dialect.plan(self.plan_id, self.entries)]

    async def mark(self, index: int, status: PlanEntryStatus) -> None:
        """Set entry `index`'s status (`pending`, `in_progress`, `completed`, and `cancelled`
        where the protocol has it)."""
        lane = self._turn.lane
        checked = lane.check("PlanEntryStatus", status, where=f"plan entry {index}: status")
        old = self.entries[index]
        self.entries[index] = lane.models.PlanEntry(
            content=old.content, priority=old.priority, status=checked, meta=old.meta
        )
        self._turn.session.changed(self, lane)
        await self._turn.send(self._turn.dialect.plan(self.plan_id, self.entries))

    async def start(self, index: int) -> None:
        await self.mark(index, "in_progress")

    async def complete(self, index: int) -> None:
        await self.mark(index, "completed")

    async def replace(self, *entries: str | PlanEntry) -> None:
        """Report a new list of entries for this plan."""
        self.entries = [self._turn.plan_entry(entry) for entry in entries]
        self._turn.session.changed(self, self._turn.lane)
        await self._turn.send(self._turn.dialect.plan(self.plan_id, self.entries))


class Turn:
    """One prompt's foreground work in a session; see the module docstring."""

    def __init__(self, session: AgentSession, prompt: list[Any], message_id: str) -> None:
        self._session = session
        self.dialect: Dialect = session.dialect
        self.lane: Lane = session.dialect.lane
        self.prompt: list[ContentBlock] = prompt
        """The prompt's content blocks (classes of the connection's lane)."""
        self.user_message_id = message_id
        """The `messageId` of the user message this turn inserted."""
        self.stop_reason: str | None = None
        """How the turn ended (None while it runs, and when it failed)."""
        self.error: Exception | None = None
        """What made the turn fail, if it did."""
        self._ended = False
        self._message: Message | None = None
        self._thought: Message | None = None
        self.tool_calls: list[ToolCallHandle] = []
        """The tool calls this turn reported, in order."""
        self.asking = 0  # permission requests pending
        self.after: Awaitable[None] | None = None
        """(v1) The previous prompt's answer: this turn reports nothing before it is written."""

    @property
    def session(self) -> AgentSession:
        return self._session

    @property
    def features(self) -> ProtocolFeatures:
        """What the connection's protocol version has (see `ProtocolFeatures`)."""
        return self.lane.features

    @property
    def text(self) -> str:
        """The prompt's text blocks, one per line."""
        return text_of(self.prompt)

    @property
    def cancelled(self) -> bool:
        """Whether the client asked to stop this turn (it will end `cancelled`)."""
        return self._session.foreground.cancel_requested

    @property
    def ended(self) -> bool:
        return self._ended

    # -- reporting -----------------------------------------------------------------------
    async def send(self, update: Any) -> None:
        """Send any `session/update` (of the connection's lane) as part of this turn."""
        if self._ended:
            raise TurnEnded("this turn has ended")
        await self._session.send(update)

    async def say(self, content: Content) -> None:
        """Append to the turn's agent message (an `agent_message_chunk`)."""
        message = self._message
        if message is None:
            message = self._message = self._new_message("agent")
        await self._chunk(message, text_block(self.lane, content, where="say()"))

    async def think(self, content: Content) -> None:
        """Append to the turn's thought (an `agent_thought_chunk`)."""
        thought = self._thought
        if thought is None:
            thought = self._thought = self._new_message("thought")
        await self._chunk(thought, text_block(self.lane, content, where="think()"))

    def new_message(self) -> None:
        """Make the next `say()` and `think()` begin new messages (new `messageId`s)."""
        self._message = self._thought = None

    async def plan(self, *entries: str | PlanEntry) -> PlanHandle:
        """Report a plan; text entries are `medium` priority and `pending`."""
        session = self._session
        plan = PlanHandle(self, session.next_id("plan"), [self.plan_entry(e) for e in entries])
        session.record(("plan", plan.plan_id), plan, 64 + 96 * len(plan.entries))
        await self.send(self.dialect.plan(plan.plan_id, plan.entries))
        return plan

    def plan_entry(
        self,
        entry: str | PlanEntry,
        *,
        priority: PlanEntryPriority = "medium",
        status: PlanEntryStatus = "pending",
    ) -> Any:
        """A plan entry of the connection's lane: text with a priority and a status, or an
        entry as is (of another lane: converted)."""
        lane = self.lane
        if not isinstance(entry, str):
            return lane.adopt(lane.models.PlanEntry, entry, where="plan entry")
        return lane.models.PlanEntry(
            content=entry,
            priority=lane.check("PlanEntryPriority", priority, where="plan entry: priority"),
            status=lane.check("PlanEntryStatus", status, where="plan entry: status"),
        )

    async def tool_call(
        self,
        title: str,
        *,
        kind: ToolKind = "other",
        raw_input: object = UNSET,
        locations: Sequence[ToolCallLocation] | UnsetType = UNSET,
        content: ToolContent | Sequence[ToolContent] | None = None,
        tool_call_id: str | None = None,
        cancellable: bool = False,
    ) -> ToolCallHandle:
        """Report a new tool call, `pending` (call `start()`, `stream()` or `run()` to run it).
        A `cancellable` one advertises `capabilities.cancel` until it is final (NotSupported
        where the protocol has no `tool_call/cancel`: see `features.cancellable_tool_calls`)."""
        if cancellable and not self.features.cancellable_tool_calls:
            raise NotSupported("a cancellable tool call", self.lane)
        session = self._session
        lane = self.lane
        call_id = session.next_id("call", width=3) if tool_call_id is None else tool_call_id
        tool = ToolCallHandle(self, call_id, title)
        tool.cancellable = cancellable
        tool.kind = lane.check("ToolKind", kind, where=f"tool call {call_id}: kind")
        tool.locations = locations if isinstance(locations, UnsetType) else [
            lane.adopt(lane.models.ToolCallLocation, p, where=f"tool call {call_id}: locations")
            for p in locations
        ]  # fmt: skip
        tool.raw_input = raw_input
        tool.content = content_list(lane, content, where=f"tool call {call_id}: content")
        await self.send(self.dialect.tool_call_new(tool))
        self.tool_calls.append(tool)
        session.tool_calls[call_id] = tool
        session.record(("tool_call", call_id), tool, 256)
        return tool

    async def ask_permission(
        self,
        tool: ToolCallHandle,
        *,
        title: str | None = None,
        description: str | UnsetType = UNSET,
        options: Sequence[PermissionOption] | None = None,
        remember: bool = True,
    ) -> Permission:
        """Ask the user whether `tool` may run (`session/request_permission`; on v2 bracketed
        by `requires_action` and `running`). Returns a `Permission` (true when allowed).

        A `cancelled` answer ends the turn `cancelled` (raises TurnCancelled), as does a cancel
        of the turn meanwhile (the turn stops waiting at once; on v2 the request is withdrawn
        with `$/cancel_request`, on v1 the client, which cancelled, answers it itself). An
        answer naming no offered option, or an outcome this agent does not know, is a refusal.
        With `remember`, an `*_always` pick answers later requests for a tool call of the same
        title in this session without asking. `title` and `description` are shown where the
        protocol has them (v2).
        """
        if self._ended:
            raise TurnEnded("this turn has ended")
        if self.cancelled:
            raise TurnCancelled
        key = str(tool.title)
        remembered = self._session.remembered_permissions.get(key) if remember else None
        if remembered is not None:
            return Permission(remembered, remembered=True)
        offered = self._options(options)
        shown = f'Allow "{tool.title}" to run?' if title is None else title
        await self._session.flush()  # the turn waits for a person: what it did so far is kept
        picked = await self.dialect.ask_permission(self, tool, shown, description, offered)
        if picked is not None and remember and str(picked.kind).endswith("_always"):
            kept = self._session.remembered_permissions
            kept[key] = picked
            while len(kept) > _REMEMBERED_TITLES:
                del kept[next(iter(kept))]
        return Permission(picked)

    async def usage(
        self, used: int, size: int, *, cost: float | Cost | None = None, currency: str = "USD"
    ) -> None:
        """Report the session's context use (tokens) and, optionally, its cost so far."""
        m = self.lane.models
        if isinstance(cost, int | float):
            total: Any = m.Cost(amount=float(cost), currency=currency)
        elif cost is None:
            total = UNSET
        else:
            total = self.lane.adopt(m.Cost, cost, where="usage(): cost")
        await self.send(m.SessionUpdateUsageUpdate(used=used, size=size, cost=total))

    async def subagent(
        self,
        title: str | None = None,
        *,
        description: str | None = None,
        task: Content | Sequence[Content] | None = None,
        cancellable: bool = True,
    ) -> Subagent:
        """Start a child session of this turn's session, told `task` when given (see
        `subagents.py`); NotSupported where the protocol has no subagents
        (`features.subagents`)."""
        from .subagents import start

        return await start(self, title, description=description, task=task, cancellable=cancellable)

    # -- the steps the lifecycle runs (see lifecycle.TurnSteps) --------------------------
    async def open(self) -> None:
        user = Message(self.user_message_id, "user", list(self.prompt))
        self._session.record(("message", self.user_message_id), user, user.size())
        await self.dialect.open_turn(self)

    async def run(self) -> TurnStopReason | CustomStopReason | None:
        return await self._session.agent.prompt(self)

    async def close(self, outcome: Outcome[TurnStopReason | CustomStopReason | None]) -> None:
        self._ended = True
        try:
            if self._session.children:  # what its subagents still run ends first
                from .subagents import stop_children

                await stop_children(self._session)
            await self.dialect.close_turn(self, outcome)
        finally:
            self._session.forget_turn(self)

    # -- helpers -------------------------------------------------------------------------
    def _options(self, options: Sequence[PermissionOption] | None) -> list[Any]:
        m = self.lane.models
        if options is None:
            return [
                m.PermissionOption(option_id=oid, name=name, kind=kind)
                for oid, name, kind in DEFAULT_PERMISSION_OPTIONS
            ]
        return [
            self.lane.adopt(m.PermissionOption, o, where=f"ask_permission(): options[{i}]")
            for i, o in enumerate(options)
        ]

    def _new_message(self, role: str) -> Message:
        session = self._session
        message = Message(
            session.next_id("msg_thought" if role == "thought" else "msg_agent"), role, []
        )
        session.record(("message", message.message_id), message, 64)
        return message

    async def _chunk(self, message: Message, block: Any) -> None:
        await self.send(self.dialect.chunk(message.role, message.message_id, block))
        self._session.add_block(message, block)
