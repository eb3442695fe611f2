"""Tool calls a turn reports: `Turn.tool_call(...)` returns a `ToolCallHandle`, which keeps
every field it has reported (its `status` is the one last sent) and reports the rest of the
call's life: `start()`, `stream(content)`, `update(...)`, `complete(...)`, `fail(...)`, and
`run(work)`, which a client's `tool_call/cancel` may cancel when the call is `cancellable`
(on protocol versions that have it: `turn.features.cancellable_tool_calls`).

Statuses and kinds are checked against the connection's protocol version where they are
given (a misspelling is a mypy error, and a ValueError naming the allowed values at run time).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

from ..runtime._runtime import UNSET, UnsetType
from ..vocab import ToolCallLocation, ToolCallStatus, ToolKind
from .content import ToolContent, content_list, tool_content
from .lifecycle import TurnCancelled, TurnEnded

if TYPE_CHECKING:
    from .dialect import Dialect
    from .turn import Turn

T = TypeVar("T")
FINAL_STATUSES: Final = frozenset(("completed", "failed", "cancelled"))


class ToolCallCancelled(TurnCancelled):
    """The client cancelled the tool call (`tool_call/cancel`); raised by `ToolCallHandle.run`
    once the call is reported `cancelled`. Catch it to go on with the turn; left alone, it ends
    the turn `cancelled`."""


class ToolCallHandle:
    """A tool call reported by a turn. It keeps every field it has reported, so it can
    describe itself in a permission request or a replay; `status` is the one last sent."""

    __slots__ = (
        "_turn", "tool_call_id", "title", "kind", "status", "content", "locations",
        "raw_input", "raw_output", "cancellable", "cancel_requested", "_work",
    )  # fmt: skip

    def __init__(self, turn: Turn, tool_call_id: str, title: str) -> None:
        self._turn = turn
        self.tool_call_id = tool_call_id
        self.cancellable = False
        """Whether it advertises `capabilities.cancel` (the client may `tool_call/cancel` it)."""
        self.cancel_requested = False
        """Whether the client asked to cancel it."""
        self._work: asyncio.Task[Any] | None = None  # what run() runs
        self.title: str | None | UnsetType = title
        self.kind: str | None | UnsetType = UNSET
        self.status: str = "pending"
        self.content: list[Any] = []
        self.locations: list[Any] | None | UnsetType = UNSET
        self.raw_input: object = UNSET
        self.raw_output: object = UNSET

    @property
    def done(self) -> bool:
        """Whether it reached a final status (completed, failed or cancelled)."""
        return self.status in FINAL_STATUSES

    def replay(self, dialect: Dialect) -> list[Any]:
        """Everything reported so far, as the updates a replay sends."""
        return [dialect.tool_call_snapshot(self)]

    async def update(
        self,
        *,
        title: str | None | UnsetType = UNSET,
        kind: ToolKind | None | UnsetType = UNSET,
        status: ToolCallStatus | UnsetType = UNSET,
        content: ToolContent | Sequence[ToolContent] | None | UnsetType = UNSET,
        locations: Sequence[ToolCallLocation] | None | UnsetType = UNSET,
        raw_input: object = UNSET,
        raw_output: object = UNSET,
    ) -> None:
        """Report the fields given (a patch: the others stay as they are; `content` replaces
        the content so far, `None` clears it)."""
        await self._report(
            title=title,
            kind=kind,
            status=status,
            content=content,
            locations=locations,
            raw_input=raw_input,
            raw_output=raw_output,
        )

    async def _report(
        self,
        *,
        title: str | None | UnsetType = UNSET,
        kind: object = UNSET,
        status: object = UNSET,
        content: ToolContent | Sequence[ToolContent] | None | UnsetType = UNSET,
        locations: Sequence[ToolCallLocation] | None | UnsetType = UNSET,
        raw_input: object = UNSET,
        raw_output: object = UNSET,
    ) -> None:
        """`update()` for any value: each is checked against the connection's lane here (the
        toolkit reports statuses only some lanes have, such as `cancelled`, through this)."""
        if self.done:
            raise TurnEnded(f"tool call {self.tool_call_id} is already {self.status}")
        lane = self._turn.lane
        where = f"tool call {self.tool_call_id}"
        new_kind = kind if kind is None or isinstance(kind, UnsetType) else (
            lane.check("ToolKind", kind, where=f"{where}: kind")
        )  # fmt: skip
        new_status: str | UnsetType = UNSET
        if not isinstance(status, UnsetType):
            new_status = lane.check("ToolCallStatus", status, where=f"{where}: status")
        items = UNSET if isinstance(content, UnsetType) else content_list(lane, content)
        places = locations if locations is None or isinstance(locations, UnsetType) else [
            lane.adopt(lane.models.ToolCallLocation, p, where=f"{where}: locations")
            for p in locations
        ]  # fmt: skip
        await self._turn.send(
            self._turn.dialect.tool_call_patch(
                self,
                title=title,
                kind=new_kind,
                status=new_status,
                content=items,
                locations=places,
                raw_input=raw_input,
                raw_output=raw_output,
            )
        )
        if not isinstance(title, UnsetType):
            self.title = title
        if not isinstance(new_kind, UnsetType):
            self.kind = new_kind
        if not isinstance(new_status, UnsetType):
            self.status = str(new_status)
        if not isinstance(items, UnsetType):
            self.content = items
        if not isinstance(places, UnsetType):
            self.locations = places
        if raw_input is not UNSET:
            self.raw_input = raw_input
        if raw_output is not UNSET:
            self.raw_output = raw_output
        self._turn.session.changed(self, lane, content=not isinstance(items, UnsetType))

    async def start(self) -> None:
        """Report it `in_progress` (once permission, if any, was granted)."""
        if self.status != "in_progress":
            await self.update(status="in_progress")

    async def stream(self, content: ToolContent) -> None:
        """Append one content item (a content chunk where the protocol has them, else an update
        with the whole content so far); a pending call is started first."""
        if self.done:
            raise TurnEnded(f"tool call {self.tool_call_id} is already {self.status}")
        item = tool_content(self._turn.lane, content)
        await self._turn.dialect.stream_tool_content(self, item)

    async def complete(
        self,
        content: ToolContent | Sequence[ToolContent] | None = None,
        *,
        raw_output: object = UNSET,
    ) -> None:
        """Report it `completed`, with its final content when given (which replaces what was
        streamed)."""
        await self.update(
            status="completed",
            content=UNSET if content is None else content,
            raw_output=raw_output,
        )

    async def fail(
        self,
        content: ToolContent | Sequence[ToolContent] | None = None,
        *,
        raw_output: object = UNSET,
    ) -> None:
        """Report it `failed`, with content saying why when given."""
        await self.update(
            status="failed", content=UNSET if content is None else content, raw_output=raw_output
        )

    async def run(self, work: Awaitable[T]) -> T:
        """Run `work` as this tool call (started first if pending) and return its result. For a
        call made `cancellable`, the client's `tool_call/cancel` cancels `work` (an error it
        raises while aborting counts as cancelled): the call is then reported `cancelled` and
        ToolCallCancelled raised. Cancelling the turn cancels `work` too."""
        await self.start()
        task = asyncio.ensure_future(work)
        self._work = task
        try:
            return await asyncio.shield(task)  # cancelling the turn reaches this await only
        except asyncio.CancelledError:
            me = asyncio.current_task()
            if me is not None and me.cancelling():  # the turn is cancelled: so is its work
                task.cancel()
                await asyncio.wait({task})
                raise
            if not self.cancel_requested:
                raise
        except Exception:
            if not self.cancel_requested:
                raise
        finally:
            self._work = None
        await self._report(status="cancelled")  # only lanes with `tool_call/cancel` get here
        raise ToolCallCancelled(f"the client cancelled tool call {self.tool_call_id}")

    def request_cancel(self) -> bool:
        """The client's `tool_call/cancel`: flag it, cancel what `run` runs. False when the call
        is not cancellable (any more)."""
        if not self.cancellable or self.done:
            return False
        self.cancel_requested = True
        if self._work is not None:
            self._work.cancel()
        return True

    async def close(self, status: str) -> None:
        """Report a final status the turn's end decided (the connection's dialect says
        which statuses it has)."""
        if not self.done:
            await self._turn.session.send(self._turn.dialect.tool_call_close(self, status))
            self.status = status
            self._turn.session.changed(self, self._turn.lane)
