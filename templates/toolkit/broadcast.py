"""Subscriptions: every published item goes to each callback and each open stream, in order.

    unsubscribe = hub.subscribe(on_item)          # a plain or an async function
    async with hub.stream() as items:             # or: async for item in hub.stream()
        async for item in items: ...

`publish` awaits async callbacks and waits while a stream's buffer is full, so a slow consumer
slows the producer down (for a client: the connection stops reading) instead of losing items
or growing without bound. A stream nobody holds any more is dropped at once (it is only
weakly referenced), so leaving an `async for` early never blocks the producer. A consumer that
holds everything up past `stall_timeout` (a stream kept full, a callback that does not return)
is dropped with one warning, and the others carry on: a forgotten `async for` cannot stop a
connection for ever.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import weakref
from collections.abc import Awaitable, Callable
from typing import Final, Generic, TypeVar

T = TypeVar("T")
Callback = Callable[[T], Awaitable[None] | None]
STREAM_BUFFER: Final = 1024
"""Items a stream holds for its reader by default before `publish` waits."""
STALL_TIMEOUT: Final = 30.0
"""Seconds `publish` waits for one consumer (a full stream, an async callback) by default
before dropping it."""
_END: Final = object()
_log: Final = logging.getLogger(__name__)


class Broadcast(Generic[T]):
    """Fans items out to subscribers; `close()` ends every stream (and later ones at once)."""

    __slots__ = ("_callbacks", "_streams", "_closed", "_stall", "name")

    def __init__(self, *, stall_timeout: float = STALL_TIMEOUT, name: str = "") -> None:
        self._callbacks: list[Callback[T]] = []
        self._streams: weakref.WeakSet[Stream[T]] = weakref.WeakSet()
        self._closed = False
        self._stall = stall_timeout
        self.name = name
        """What the items are of (for the warning when a consumer is dropped)."""

    @property
    def closed(self) -> bool:
        return self._closed

    def subscribe(self, callback: Callback[T]) -> Callable[[], None]:
        """Call `callback(item)` for every item from now on (awaited when it returns an
        awaitable); returns a function that ends the subscription. An exception in a callback
        is logged and does not stop the others."""
        self._callbacks.append(callback)

        def unsubscribe() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return unsubscribe

    def stream(self, *, buffer: int = STREAM_BUFFER) -> Stream[T]:
        """An async iterator over the items published from now on, until `close()` (or the
        stream's own `aclose()`)."""
        stream = Stream[T](self, buffer)
        if self._closed:
            stream._end()
        else:
            self._streams.add(stream)
        return stream

    async def publish(self, item: T) -> None:
        for callback in list(self._callbacks):
            try:
                result = callback(item)
                if inspect.isawaitable(result):
                    async with asyncio.timeout(self._stall):
                        await result
            except TimeoutError:
                self._drop(callback, f"a subscriber of {self._what()} took over {self._stall:g} s")
            except Exception:
                _log.exception("a subscriber of %s failed", self._what())
        for stream in list(self._streams):
            if not await stream._put(item, self._stall):
                self._streams.discard(stream)
                stream._end()
                _log.warning(
                    "an updates() stream of %s was not read for %g s with %d items waiting:"
                    " dropped (read it, or leave its `async for`)",
                    self._what(), self._stall, stream.buffered,
                )  # fmt: skip

    def close(self) -> None:
        self._closed = True
        for stream in list(self._streams):
            stream._end()
        self._streams.clear()
        self._callbacks.clear()

    def _discard(self, stream: Stream[T]) -> None:
        self._streams.discard(stream)

    def _drop(self, callback: Callback[T], why: str) -> None:
        if callback in self._callbacks:
            self._callbacks.remove(callback)
        _log.warning("%s: unsubscribed it", why)

    def _what(self) -> str:
        return self.name or "a broadcast"


class Stream(Generic[T]):
    """The items of a Broadcast, in order; also an async context manager that closes it."""

    __slots__ = ("_hub", "_queue", "_done", "__weakref__")

    def __init__(self, hub: Broadcast[T], buffer: int) -> None:
        self._hub = hub
        self._queue: asyncio.Queue[object] = asyncio.Queue(max(1, buffer))
        self._done = False

    def __aiter__(self) -> Stream[T]:
        return self

    async def __anext__(self) -> T:
        if self._done and self._queue.empty():
            raise StopAsyncIteration
        item = await self._queue.get()
        if item is _END:
            self._done = True
            raise StopAsyncIteration
        return item  # type: ignore[return-value]  # everything but _END is a T

    async def aclose(self) -> None:
        """Stop receiving; items already buffered are dropped."""
        self._done = True
        self._hub._discard(self)
        while not self._queue.empty():
            self._queue.get_nowait()

    async def __aenter__(self) -> Stream[T]:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @property
    def buffered(self) -> int:
        """Items waiting for the reader."""
        return self._queue.qsize()

    async def _put(self, item: T, stall: float) -> bool:
        """Queue `item` (waiting while the buffer is full); False when it stayed full past
        `stall` seconds."""
        if self._done:
            return True
        try:
            self._queue.put_nowait(item)
        except asyncio.QueueFull:
            try:
                async with asyncio.timeout(stall):
                    await self._queue.put(item)
            except TimeoutError:
                return False
        return True

    def _end(self) -> None:
        """No more items: the reader stops once it has read the buffered ones."""
        if self._done:
            return
        self._done = True
        try:
            self._queue.put_nowait(_END)
        except asyncio.QueueFull:
            pass  # __anext__ stops when it finds the queue empty
