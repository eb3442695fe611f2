"""`NotificationQueue`: the notifications waiting for the handler, and the one task that hands
them over, one at a time, in arrival order (`session/update`s must be applied in order).

Bounds: it holds at most `limit` notifications (the dispatcher holds further ones back with
its other calls); once it is down to half of that, the dispatcher is asked to move held ones
in, in bulk rather than one by one.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from ._runtime import DecodeError

# How a notification is served: the handler's method and the params decoder (None: raw JSON).
NoteServer = tuple[Callable[[Any], Awaitable[None]], Callable[[Any], Any] | None]
# A notification waiting for the handler: its server's two parts, the method and the params.
Note = tuple[Callable[[Any], Awaitable[None]], Callable[[Any], Any] | None, str, Any]
_log = logging.getLogger(f"{__package__}.connection")  # the connection's logger


class NotificationQueue:
    """Notifications in arrival order and their worker task. `held` is the dispatcher's
    queue of calls waiting for room (read only here); `make_room` moves some of them in."""

    def __init__(self, limit: int, held: deque[Any], make_room: Callable[[], None]) -> None:
        self.limit = limit
        self._notes: deque[Note] = deque()
        self._held = held
        self._make_room = make_room
        self._ready: asyncio.Future[None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._ended = False  # nothing more will be put: the task returns once it is empty

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    @property
    def task(self) -> asyncio.Task[None] | None:
        return self._task

    def offer(self, note: Note) -> bool:
        """Queue `note` if there is room; False (and nothing queued) if not."""
        notes = self._notes
        if len(notes) >= self.limit:
            return False
        notes.append(note)
        ready = self._ready
        if ready is not None and not ready.done():
            ready.set_result(None)
        return True

    def end(self) -> None:
        """Nothing more will be put: the task hands over what is queued, then returns."""
        self._ended = True
        ready = self._ready
        if ready is not None and not ready.done():
            ready.set_result(None)

    def clear(self) -> None:
        self._notes.clear()

    async def _run(self) -> None:
        notes = self._notes
        low_water = self.limit // 2
        while True:
            if not notes:
                if self._ended:
                    return
                self._ready = asyncio.get_running_loop().create_future()
                await self._ready
                continue
            serve, decoder, method, params = notes.popleft()
            if self._held and len(notes) <= low_water:
                self._make_room()
            try:
                await serve(params if decoder is None else decoder(params))
            except DecodeError as exc:
                _log.warning("ignored the notification %s with invalid params: %s", method, exc)
            except RecursionError:
                _log.warning("ignored the notification %s: params nested too deeply", method)
            except Exception:
                _log.exception("the handler of the notification %s failed", method)

    def handled(self, admit: Callable[[Note], None]) -> Awaitable[object] | None:
        """A wait for every notification admitted so far to be handled (`admit` queues or
        holds a marker behind them), or None when none can come: the task is done, or the
        caller is the task itself (it would wait for its own turn)."""
        task = self._task
        if task is None or task.done() or asyncio.current_task() is task:
            return None
        reached: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def mark(_: Any) -> None:
            if not reached.done():
                reached.set_result(None)

        admit((mark, None, "", None))
        return asyncio.wait({reached, task}, return_when=asyncio.FIRST_COMPLETED)
