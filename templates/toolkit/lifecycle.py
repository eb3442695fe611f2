"""The foreground work of one session, for agents: one turn at a time, prompts that arrive
meanwhile held in arrival order, cancellation that reaches a turn which has not started yet,
and a closing step that runs exactly once per turn, whatever ended it.

It knows nothing of the protocol's types: a turn is three steps (`TurnSteps`) that `Turn`
(`turn.py`) supplies, and `close` receives how the turn ended as an `Outcome`.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import dataclass
from typing import Final, Generic, Protocol, TypeVar

from ..runtime._runtime import DecodeError
from ..runtime.jsonrpc import ConnectionClosed, RpcError

T = TypeVar("T")
_log: Final = logging.getLogger(__name__)


class TurnCancelled(Exception):
    """Ends the turn with the stop reason `cancelled`. The toolkit raises it when the client
    answers a permission request `cancelled`; a turn may raise it too."""


class TurnEnded(RuntimeError):
    """Something was reported for a turn that has already ended."""


class HeldPromptCancelled(Exception):
    """A held prompt was cancelled (session/cancel or session/close) before its turn began."""


@dataclass(frozen=True, slots=True)
class Ended(Generic[T]):
    """The turn's body returned `value`."""

    value: T


@dataclass(frozen=True, slots=True)
class Cancelled:
    """The turn was cancelled: session/cancel or session/close, `TurnCancelled`, or any error
    raised while a cancellation was under way (aborting work often fails noisily)."""


@dataclass(frozen=True, slots=True)
class Failed:
    """The turn's body raised `error`, with no cancellation under way."""

    error: Exception


@dataclass(frozen=True, slots=True)
class Disconnected:
    """The connection closed under the turn: nothing more can be sent."""


Outcome = Ended[T] | Cancelled | Failed | Disconnected


class TurnSteps(Protocol[T]):
    """What a turn does: `open` (always run, even for a turn cancelled before it began), `run`
    (skipped when the turn is cancelled by then), and `close`, awaited exactly once."""

    async def open(self) -> None: ...

    async def run(self) -> T: ...

    async def close(self, outcome: Outcome[T]) -> None: ...


class Foreground(Generic[T]):
    """One session's foreground work.

    A prompt handler calls `admit()` (which waits while another turn runs: the prompt is held)
    and then, with no await in between, `start(steps)`. `cancel()` cancels the running turn and
    every held prompt; `stop()` does that and waits until the turn's `close` step finished.
    """

    __slots__ = ("_busy", "_held", "_task", "_started", "_closing", "_cancel_requested")

    def __init__(self) -> None:
        self._busy = False  # a turn runs, or the slot was handed to an admitted prompt
        self._held: deque[asyncio.Future[None]] = deque()
        self._task: asyncio.Task[None] | None = None
        self._started = False  # the turn's task had its first step
        self._closing = False  # the turn is in its close step: cancel() leaves it alone
        self._cancel_requested = False

    @property
    def active(self) -> bool:
        """Whether a turn runs (from `start` until its `close` step returned)."""
        return self._task is not None

    @property
    def cancel_requested(self) -> bool:
        """Whether the running turn was asked to stop."""
        return self._cancel_requested

    @property
    def held(self) -> int:
        """Prompts waiting for the running turn to end."""
        return len(self._held)

    async def admit(self) -> None:
        """Wait until no turn runs (in arrival order), then hold the slot for `start`.

        Raises HeldPromptCancelled when `cancel()` came first. A handler cancelled while it
        waits (the client withdrew its prompt) gives up its place.
        """
        if not self._busy and not self._held:
            self._busy = True
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._held.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                self._release()  # the slot was handed over just now: pass it on
            elif waiter in self._held:
                self._held.remove(waiter)
            raise

    def start(self, steps: TurnSteps[T]) -> asyncio.Task[None]:
        """Run a turn in a task of its own; needs the slot `admit()` gave."""
        if not self._busy or self._task is not None:
            raise RuntimeError("Foreground.start() needs the slot admit() gives")
        self._started = self._closing = self._cancel_requested = False
        task = asyncio.get_running_loop().create_task(self._run(steps))
        self._task = task
        return task

    def cancel(self) -> bool:
        """Cancel the running turn and every held prompt; True when there was any. A turn that
        has not had its first step yet is only flagged (a task cancelled that early would not
        run at all): it then opens, skips its body and closes as cancelled."""
        had_work = bool(self._held)
        while self._held:
            waiter = self._held.popleft()
            if not waiter.done():
                waiter.set_exception(HeldPromptCancelled())
        task = self._task
        if task is None:
            return had_work
        if not self._cancel_requested:
            self._cancel_requested = True
            if self._started and not self._closing:
                task.cancel()
        return True

    async def stop(self) -> None:
        """`cancel()`, then wait until the running turn's close step is done."""
        self.cancel()
        await self.wait()

    async def wait(self) -> None:
        """Wait until the running turn (if any) has closed; cancelling the waiter does not
        cancel the turn."""
        task = self._task
        if task is not None:
            await asyncio.wait({task})

    async def wait_or_cancel(self) -> None:
        """`wait()`, and when the waiter itself is cancelled (the client withdrew the request
        waiting here, or the connection is closing), cancel the turn as `cancel()` does and
        wait for its close step all the same: the answer then follows the turn's last update."""
        try:
            await self.wait()
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            self.cancel()
            await self.wait()

    async def _run(self, steps: TurnSteps[T]) -> None:
        self._started = True
        outcome: Outcome[T]
        external = False  # cancelled by someone else than cancel(): re-raised at the end
        try:
            try:
                await steps.open()
                if self._cancel_requested:
                    raise TurnCancelled
                value = await steps.run()
                outcome = Cancelled() if self._cancel_requested else Ended(value)
            except asyncio.CancelledError:
                external = not self._cancel_requested
                outcome = Cancelled()
            except TurnCancelled:
                outcome = Cancelled()
            except ConnectionClosed:
                outcome = Disconnected()
            except Exception as exc:
                outcome = Cancelled() if self._cancel_requested else Failed(exc)
            self._closing = True
            task = asyncio.current_task()
            if not external and task is not None and task.cancelling():
                task.uncancel()  # our own cancel() was handled: the close step may await
            try:
                await steps.close(outcome)
            except ConnectionClosed:
                pass
            except Exception:
                _log.exception("closing a turn failed")
            if external:
                raise asyncio.CancelledError
        finally:
            self._task = None
            self._release()

    def _release(self) -> None:
        """Hand the slot to the oldest held prompt, or free it."""
        while self._held:
            waiter = self._held.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot stays taken: it is theirs now
                return
        self._busy = False


def describe_failure(error: BaseException) -> tuple[str, bool]:
    """How to log a turn's error: a one-line description, and whether a traceback helps (it
    does for a bug in the agent; not for the peer's error answer or invalid message)."""
    if isinstance(error, RpcError):
        return f"error {error}", False
    if isinstance(error, DecodeError):
        return f"the client sent an invalid answer: {error}", False
    return f"{type(error).__name__}: {error}", True
