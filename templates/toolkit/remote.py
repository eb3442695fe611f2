"""A session of the agent, as a client built on `Client` sees it: its state (the lane's
`SessionState`, every update applied as it arrives), subscriptions to its updates, and its
turns. `prompt()` returns a `TurnResult` once the turn ended, as the connection's protocol
version says: on v2 the first idle `state_update` after the user message the agent inserted
for the prompt; on v1 the prompt's answer, once every update before it was applied.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from ..runtime.jsonrpc import ConnectionClosed, RpcError
from ..vocab import ContentBlock, RequestPermissionRequest, SessionUpdate
from .broadcast import Broadcast, Callback, Stream
from .content import text_block
from .lane import Lane, ProtocolFeatures

if TYPE_CHECKING:
    from .children import RemoteChild
    from .client import Client

__all__ = ["RemoteSession", "TurnResult"]
State = tuple[str, str | None, Any]
_log: Final = logging.getLogger(__name__.rpartition(".")[0] + ".client")


class IncompatibleAgent(Exception):
    """The agent does not speak the protocol as this client does: no protocol version in
    common, an `initialize` answer that is not its version's, or a prompt answered with the id
    of a user message it did not report."""


class TurnResult:
    """How a turn ended, and what it reported."""

    __slots__ = ("message_id", "stop_reason", "error", "updates", "text")

    def __init__(
        self,
        message_id: str | None,
        stop_reason: str | None,
        error: Any,
        updates: list[SessionUpdate],
        text: str,
    ) -> None:
        self.message_id = message_id
        """The user message the prompt inserted (v2; None on v1)."""
        self.stop_reason = stop_reason
        """The stop reason (v2 reports `error` with `error`; v1 answers a failed turn with an
        error instead: RpcError)."""
        self.error = error
        self.updates = updates
        """The session's updates of the turn, in order."""
        self.text = text
        """The text of the agent messages this turn reported."""

    def __repr__(self) -> str:
        return f"TurnResult(stop_reason={self.stop_reason!r}, updates={len(self.updates)})"


class RemoteSession:
    """A session of the agent, as this client sees it."""

    def __init__(self, client: Client, session_id: str, lane: Lane) -> None:
        self.client = client
        self.id = session_id
        self.lane = lane
        self.state: Any = lane.session_state()
        """The session as its updates describe it (the lane's `SessionState`)."""
        self.cancelling = False
        """Whether `cancel()` was called since the last `prompt()`."""
        self.roots: list[str] = []
        """The session's directories (its `cwd` first): where a workspace serves it."""
        self._hub: Broadcast[Any] = Broadcast(name=f"session {session_id}")
        self._log: list[tuple[Any, State | None]] = []  # since the oldest running prompt() began
        self._logging = 0
        self._answered = 0  # (v1) where in the log the latest answered turn ended
        self._changed = asyncio.Event()
        self._permissions: set[asyncio.Task[Any]] = set()

    @property
    def features(self) -> ProtocolFeatures:
        return self.lane.features

    @property
    def children(self) -> dict[str, RemoteChild]:
        """The child sessions the agent announced on this one (subagents), by id, in that
        order; NotSupported where the protocol has none (see `children.py`)."""
        from .children import children_of

        return children_of(self)

    # -- watching ----------------------------------------------------------------------------
    def subscribe(self, callback: Callback[SessionUpdate]) -> Callable[[], None]:
        """Call `callback(update)` (a plain or an async function) for each update from now on,
        once it was applied to `state`; returns a function that unsubscribes. A callback that
        keeps the connection waiting past the client's `stall_timeout` is unsubscribed."""
        return self._hub.subscribe(callback)

    def updates(self) -> Stream[SessionUpdate]:
        """The updates from now on, as an async iterator (ends when the session closes; a stream
        left unread past the client's `stall_timeout` is dropped)."""
        return self._hub.stream()

    # -- acting ------------------------------------------------------------------------------
    async def prompt(self, content: str | ContentBlock | Sequence[ContentBlock]) -> TurnResult:
        """Send a prompt and wait for its turn to end. Raises RpcError when the prompt is
        refused (on v1 also when the turn failed), ConnectionClosed when the agent goes away
        first."""
        lane = self.lane
        items = (
            [content] if isinstance(content, str) or not isinstance(content, Sequence) else content
        )
        blocks = [text_block(lane, c, where=f"prompt[{i}]") for i, c in enumerate(items)]
        self.cancelling = False
        start = len(self._log) if self._logging else 0
        if not self._logging:
            self._log.clear()
            self._answered = 0
        self._logging += 1
        v1 = not lane.features.state_updates
        if v1:
            self.state.prompt_started()
        result: TurnResult | None = None
        try:
            result = await self._turn(blocks, start, v1)
            return result
        except ConnectionClosed:  # the same words on every version, with the exit status
            raise ConnectionClosed(await self.client.gone("before the turn ended")) from None
        finally:
            self._logging -= 1
            if v1:
                self.state.prompt_finished(None if result is None else result.stop_reason)

    async def _turn(self, blocks: list[Any], start: int, v1: bool) -> TurnResult:
        request = self.lane.models.PromptRequest(session_id=self.id, prompt=blocks)
        try:
            answer = await self.client.stub.session_prompt(request)
        except RpcError:
            if v1:  # what came before the error answer was that turn's
                await self.client.connection.notifications_handled()
                self._answered = len(self._log)
            raise
        if v1:
            # The turn's updates came after the previous prompt's answer (a held prompt's turn
            # begins once the turn ahead of it was answered) and before this one.
            await self.client.connection.notifications_handled()
            end = len(self._log)
            updates = [update for update, _ in self._log[max(start, self._answered) : end]]
            self._answered = end
            text = self._text_of(updates)
            return TurnResult(None, str(answer.stop_reason), None, updates, text)
        first, last, state = await self._turn_end(start, len(self._log), answer.message_id)
        updates = [update for update, _ in self._log[first : last + 1]]
        _, reason, error = state
        return TurnResult(answer.message_id, reason, error, updates, self._text_of(updates))

    async def cancel(self) -> None:
        """Cancel the running turn (`session/cancel`); permission requests still pending, and
        any that come for it, are answered `cancelled`."""
        self.cancelling = True
        for task in list(self._permissions):
            task.cancel()
        await self.client.stub.session_cancel(self.client.dialect.cancel_note(self.id))

    async def close(self) -> None:
        """Close the session (`session/close`; an agent that no longer knows it is fine)."""
        try:
            await self.client.stub.session_close(
                self.lane.models.CloseSessionRequest(session_id=self.id)
            )
        except RpcError as exc:
            if exc.code != -32002:
                raise
        self.client.forget(self)

    # -- what the Client feeds it ------------------------------------------------------------
    async def apply(self, update: Any) -> None:
        try:
            self.state.apply(update)
        except ValueError as exc:
            _log.warning("session %s: an update could not be applied: %s", self.id, exc)
        if self.features.subagents:  # a child announced: follow it from the next update on
            from .children import follow

            follow(self, update)
        if self._logging:
            self._log.append((update, self.client.dialect.state_of(update)))
        self._changed.set()
        await self._hub.publish(update)

    async def decide(self, request: RequestPermissionRequest) -> Any:
        m = self.lane.models
        option = None
        if not self.cancelling:
            task = asyncio.current_task()
            if task is not None:
                self._permissions.add(task)
            try:
                option = await self.client.permissions(request)
            except asyncio.CancelledError:  # withdrawn: $/cancel_request, or our cancel()
                option = None
            except Exception:
                _log.exception("the permission policy failed; the request is dismissed")
                option = None
            finally:
                if task is not None:
                    self._permissions.discard(task)
        offered = [o.option_id for o in request.options]
        if option is None or getattr(option, "option_id", None) not in offered:
            return m.RequestPermissionResponse(outcome=m.RequestPermissionOutcomeCancelled())
        selected = m.RequestPermissionOutcomeSelected(option_id=option.option_id)
        return m.RequestPermissionResponse(outcome=selected)

    def closed(self) -> None:
        self._hub.close()
        self._changed.set()
        if self.features.subagents:
            from .children import forget_children

            forget_children(self)

    async def _turn_end(self, start: int, answered: int, message_id: str) -> tuple[int, int, State]:
        """Where in the log the turn of `message_id` is: its user message, and the idle state
        that ended it (with that state). The log is read from `start` (the prompt was sent);
        `answered` is where it was when the answer came: an idle after that, with only other
        user messages after it, means the agent reported the prompt under another id."""
        m = self.lane.models
        user_messages = (m.SessionUpdateUserMessage, m.SessionUpdateUserMessageChunk)
        inserted: int | None = None
        others: list[str] = []
        checked = start
        while True:
            for index in range(checked, len(self._log)):
                update, state = self._log[index]
                if isinstance(update, user_messages) and inserted is None:
                    if update.message_id == message_id:
                        inserted = index
                    elif index >= answered:
                        others.append(update.message_id)
                elif state is None or state[0] != "idle":
                    continue
                elif inserted is not None:
                    return inserted, index, state
                elif index >= answered and others:
                    raise IncompatibleAgent(
                        f"the agent answered session/prompt with messageId {message_id!r} but"
                        f" reported the user message {others[0]!r} for it"
                    )
            checked = len(self._log)
            if self.client.connection.closed:
                raise ConnectionClosed("the connection closed")
            self._changed.clear()
            await self._changed.wait()

    def _text_of(self, updates: list[Any]) -> str:
        m = self.lane.models
        kinds = tuple(
            getattr(m, name)
            for name in ("SessionUpdateAgentMessage", "SessionUpdateAgentMessageChunk")
            if hasattr(m, name)
        )
        if not self.lane.features.state_updates:  # v1: chunks without ids may be joined
            return "".join(
                u.content.text
                for u in updates
                if isinstance(u, m.SessionUpdateAgentMessageChunk)
                and isinstance(u.content, m.ContentBlockText)
            )
        ids: dict[str, None] = {}
        for update in updates:
            if isinstance(update, kinds):
                ids[update.message_id] = None
        return "".join(self.state.message_text(message_id) for message_id in ids)
