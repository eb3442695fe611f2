"""Subscriptions: every published item goes to each callback and each open stream, in order.

    unsubscribe = hub.subscribe(on_item)          # a plain or an async function
    async with hub.stream() as items:             # or: async for item in hub.stream()
        async for item in items: ...

`publish` awaits async callbacks and waits while a stream's buffer is full, so a slow consumer
slows the producer down (for a client: the connection stops reading) instead of losing items
or growing without bound. A stream nobody holds any more is dropped at once (it is only
weakly referenced), so leaving an `async for` early never blocks the producer.
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
_END: Final = object()
_log: Final = logging.getLogger(__name__)


class Broadcast(Generic[T]):
    """Fans items out to subscribers; `close()` ends every stream (and later ones at once)."""

    __slots__ = ("_callbacks", "_streams", "_closed")

    def __init__(self) -> None:
        self._callbacks: list[Callback[T]] = []
        self._streams: weakref.WeakSet[Stream[T]] = weakref.WeakSet()
        self._closed = False

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
                    await result
            except Exception:
                _log.exception("a subscriber failed")
        for stream in list(self._streams):
            await stream._put(item)

    def close(self) -> None:
        self._closed = True
        for stream in list(self._streams):
            stream._end()
        self._streams.clear()
        self._callbacks.clear()

    def _discard(self, stream: Stream[T]) -> None:
        self._streams.discard(stream)


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

    async def _put(self, item: T) -> None:
        if not self._done:
            await self._queue.put(item)

    def _end(self) -> None:
        """No more items: the reader stops once it has read the buffered ones."""
        if self._done:
            return
        self._done = True
        try:
            self._queue.put_nowait(_END)
        except asyncio.QueueFull:
            pass  # __anext__ stops when it finds the queue empty
