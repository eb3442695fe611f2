"""A session's history in a `SessionStore` (an agent made with `store=`), written as the turn
goes and read back when it is replayed, so memory holds only the running turn.

Each history entry of `session.py` is one store entry, in order of first appearance:

- `("message", id)`: value `{"lane", "role"}`; items: its content blocks as they were streamed;
- `("tool_call", id)`: value `{"lane", "title", "kind", "status", "locations", "rawInput",
  "rawOutput"}` (a field never reported is absent); items: its content;
- `("plan", id)`: value `{"lane", "entries"}`.

Values are the JSON of the lane the turn spoke (`lane`). A replay decodes them with that lane's
classes, rebuilding the very objects a live history holds, and lets them render themselves in
the replaying connection's dialect — the code a live replay runs — so a session replays the
same updates whether it was made in this process or an earlier one, over either version.
Entries of other kinds (none the toolkit makes today) are not stored.

What one step of a turn streams into a message (the chunks `say()` sends without the event
loop running anything else) is written as one item, its plain text joined — the replay joins
it anyway (`content.merge_text`) — and each tool call and plan it changed, and the session's
own fields, once, as they are when the step ends (a new entry is written at once, to take its
place): the store's cost is per step, not per chunk or status change, and what a step wrote
reaches the store's worker when the step ends.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final, cast

from ..runtime._runtime import UNSET, DecodeError, UnsetType, decode, encode
from .content import _plain
from .lane import Lane, lane
from .store import HistoryEntry, SessionStore, StoreError
from .tool_call import FINAL_STATUSES, ToolCallHandle
from .turn import Message, PlanHandle

if TYPE_CHECKING:
    from .dialect import Dialect
    from .session import AgentSession, Replayable

_log: Final = logging.getLogger(__name__.rpartition(".")[0] + ".agent")
# Tool call fields as stored: (attribute, JSON key), besides the content.
_TOOL_FIELDS: Final = (
    ("title", "title"),
    ("kind", "kind"),
    ("locations", "locations"),
    ("raw_input", "rawInput"),
    ("raw_output", "rawOutput"),
)


class StoredToolCall:
    """A tool call read back from the store: the fields a replay reports, nothing to run."""

    __slots__ = (
        "tool_call_id", "title", "kind", "status", "content", "locations", "raw_input",
        "raw_output", "cancellable",
    )  # fmt: skip

    def __init__(self, tool_call_id: str, status: str) -> None:
        self.tool_call_id = tool_call_id
        self.status = status
        self.title: object = UNSET
        self.kind: object = UNSET
        self.content: list[Any] = []
        self.locations: object = UNSET
        self.raw_input: object = UNSET
        self.raw_output: object = UNSET
        self.cancellable = False  # nothing runs it here: a client cannot cancel it

    @property
    def done(self) -> bool:
        return self.status in FINAL_STATUSES

    def replay(self, dialect: Dialect) -> list[Any]:
        # It has every field a snapshot reads (see ToolCallHandle).
        return [dialect.tool_call_snapshot(cast(ToolCallHandle, self))]


class StoredPlan:
    """A plan read back from the store."""

    __slots__ = ("plan_id", "entries")

    def __init__(self, plan_id: str, entries: list[Any]) -> None:
        self.plan_id = plan_id
        self.entries = entries

    def replay(self, dialect: Dialect) -> list[Any]:
        return [dialect.plan(self.plan_id, self.entries)]


class _Streamed:
    """The blocks one step streamed into one message, each run of plain text blocks (no
    annotations, `_meta` or extra keys) kept as its pieces and joined once, when written."""

    __slots__ = ("message_id", "_blocks", "_run")

    def __init__(self, message_id: str) -> None:
        self.message_id = message_id
        self._blocks: list[Any] = []
        self._run: list[Any] = []  # the plain text blocks streamed last, of one class

    def add(self, block: Any) -> None:
        kind = type(block)
        if kind.__name__ == "ContentBlockText" and _plain(block, kind):
            if self._run and type(self._run[0]) is not kind:
                self._end_run()
            self._run.append(block)
            return
        self._end_run()
        self._blocks.append(block)

    def _end_run(self) -> None:
        run, self._run = self._run, []
        if len(run) == 1:
            self._blocks.append(run[0])
        elif run:
            self._blocks.append(type(run[0])(text="".join(block.text for block in run)))

    def blocks(self) -> list[Any]:
        self._end_run()
        return self._blocks


class StoredHistory:
    """One session's history in a store: the writes its turns make, and its replay."""

    __slots__ = ("store", "session_id", "_streamed", "_changed", "_session", "_spilling", "_saved")

    def __init__(self, store: SessionStore, session_id: str) -> None:
        self.store = store
        self.session_id = session_id
        self._streamed: _Streamed | None = None  # what this step streamed into a message
        # The tool calls and plans this step changed: (entry, its lane, whether its content).
        self._changed: dict[tuple[str, str], tuple[Replayable, Lane, bool]] = {}
        self._session: AgentSession | None = None  # whose fields this step changed
        self._spilling = False  # a spill is scheduled at the end of this step
        self._saved: dict[str, Any] | None = None  # the session's fields as last written

    def spill(self) -> None:
        """Write what this step streamed into a message, the tool calls and plans it changed,
        and the session's fields."""
        self._spilling = False
        streamed, self._streamed = self._streamed, None
        if streamed is not None:
            for block in streamed.blocks():
                self.store.append(self.session_id, "message", streamed.message_id, encode(block))
        changed, self._changed = self._changed, {}
        for entry, on, content in changed.values():
            self._write(entry, on, content=content)
        session, self._session = self._session, None
        if session is not None:
            state = session_state(session)
            if state != self._saved:  # (a turn's end saves what its settling saved)
                self._saved = state
                self.store.update(self.session_id, state=state)

    def _later(self) -> None:
        if not self._spilling:
            self._spilling = True
            asyncio.get_running_loop().call_soon(self._spill_now)

    def _spill_now(self) -> None:
        if not self._spilling:
            return  # spilled already
        try:
            self.spill()
        except StoreError as exc:  # the next write or flush of the turn raises it too
            _log.error("session %s: %s", self.session_id, exc)

    # -- writes (queued: they return at once) ------------------------------------------------
    def record(self, entry: Replayable, on: Lane) -> None:
        """A new entry, made by a turn speaking lane `on`."""
        if isinstance(entry, Message):
            value = {"lane": on.name, "role": entry.role}
            items = [encode(block) for block in entry.blocks]
            self.store.put(self.session_id, "message", entry.message_id, value, items=items)
        elif isinstance(entry, ToolCallHandle | PlanHandle):
            self._write(entry, on, content=True)  # now: its place comes before what follows

    def add_block(self, message: Message, block: Any) -> None:
        """A block streamed into a message (written when this step ends, plain text joined)."""
        streamed = self._streamed
        if streamed is None or streamed.message_id != message.message_id:
            self.spill()
            streamed = self._streamed = _Streamed(message.message_id)
            self._later()
        streamed.add(block)

    def changed(self, entry: Replayable, on: Lane, *, content: bool = False) -> None:
        """A tool call's fields (and, with `content`, its content) or a plan's entries changed:
        written when this step ends, once however often they changed in it."""
        name = ("plan", entry.plan_id) if isinstance(entry, PlanHandle) else None
        if isinstance(entry, ToolCallHandle):
            name = ("tool_call", entry.tool_call_id)
        if name is None:
            return
        pending = self._changed.get(name)
        self._changed[name] = (entry, on, content or (pending is not None and pending[2]))
        self._later()

    def _write(self, entry: Replayable, on: Lane, *, content: bool) -> None:
        """Put a tool call or a plan as it is now (with its content, with `content`)."""
        if isinstance(entry, PlanHandle):
            value = {"lane": on.name, "entries": encode(entry.entries)}
            self.store.put(self.session_id, "plan", entry.plan_id, value)
        elif isinstance(entry, ToolCallHandle):
            fields: dict[str, Any] = {"lane": on.name, "status": entry.status}
            for attribute, key in _TOOL_FIELDS:
                found = getattr(entry, attribute)
                if not isinstance(found, UnsetType):
                    fields[key] = encode(found)
            items = [encode(item) for item in entry.content] if content else None
            self.store.put(self.session_id, "tool_call", entry.tool_call_id, fields, items=items)

    def add_content(self, tool: ToolCallHandle, item: Any) -> None:
        """An item streamed into a tool call's content."""
        self.store.append(self.session_id, "tool_call", tool.tool_call_id, encode(item))

    def save(self, session: AgentSession) -> None:
        """The session's own fields changed (see `session_state`): written when this step
        ends, with what else it changed."""
        self._session = session
        self._later()

    # -- the replay ----------------------------------------------------------------------------
    async def entries(
        self, replaying: Lane, live: dict[str, ToolCallHandle]
    ) -> AsyncIterator[Replayable]:
        """The history as replayable objects, read a page at a time; a tool call of the running
        turn (in `live`) is the live one. An entry that cannot be read back is skipped, logged."""
        self.spill()
        async for stored in self.store.history(self.session_id):
            try:
                entry = _restore(stored, replaying, live)
            except (DecodeError, TypeError, KeyError, ValueError) as exc:
                _log.warning(
                    "session %s: skipped a stored %s entry %r that does not read back: %s",
                    self.session_id,
                    stored.kind,
                    stored.key,
                    exc,
                )
                continue
            if entry is not None:
                yield entry


def _origin(value: dict[str, Any], replaying: Lane) -> Lane:
    """The lane an entry was made on (the replaying one when this package lacks it)."""
    try:
        return lane(str(value["lane"]))
    except KeyError:
        return replaying


def _restore(stored: HistoryEntry, replaying: Lane, live: dict[str, ToolCallHandle]) -> Any:
    value = stored.value
    if not isinstance(value, dict):
        raise ValueError(f"its value is not an object: {value!r:.80}")
    m = _origin(value, replaying).models
    if stored.kind == "message":
        blocks = [decode(m.ContentBlock, item) for item in stored.items]
        return Message(stored.key, str(value["role"]), blocks)
    if stored.kind == "plan":
        return StoredPlan(stored.key, [decode(m.PlanEntry, e) for e in value["entries"]])
    if stored.kind == "tool_call":
        running = live.get(stored.key)
        if running is not None:
            return running
        tool = StoredToolCall(stored.key, str(value["status"]))
        tool.content = [decode(m.ToolCallContent, item) for item in stored.items]
        for attribute, key in _TOOL_FIELDS:
            if key in value:
                setattr(tool, attribute, value[key])
        if isinstance(tool.locations, list):
            tool.locations = [decode(m.ToolCallLocation, place) for place in tool.locations]
        return tool
    return None


# -- the session's own fields (`SessionRecord.state`) ----------------------------------------
def session_state(session: AgentSession) -> dict[str, Any]:
    """What a session needs beside its history to go on in another process: its turn count,
    the counters its ids come from (so new ids never reuse stored ones), its last state."""
    state, reason, error = session.state
    return {
        "turns": session.turns,
        "ids": dict(session._counters),  # noqa: SLF001 (the session's own bookkeeping)
        "state": state,
        "stopReason": reason,
        "error": None if error is None else encode(error),
    }


def restore_state(session: AgentSession, value: object, on: Lane) -> None:
    """Apply what `session_state` saved (nothing for a value it did not write). A turn that was
    running when its process died is over: the session is idle, with no stop reason."""
    if not isinstance(value, dict):
        return
    turns, ids = value.get("turns"), value.get("ids")
    if type(turns) is int and turns >= 0:
        session.turns = turns
    if isinstance(ids, dict):
        counters = {k: v for k, v in ids.items() if isinstance(k, str) and type(v) is int}
        session._counters.update(counters)  # noqa: SLF001
    state, reason = value.get("state"), value.get("stopReason")
    if state != "idle" or not (reason is None or isinstance(reason, str)):
        return
    error: Any = None
    if value.get("error") is not None and hasattr(on.models, "Error"):
        try:
            error = decode(on.models.Error, value["error"])
        except DecodeError:
            error = None
    session.state = ("idle", reason, error)
