"""The writing side of a `Connection`: `Output` queues whole lines in order and one task hands
them to the transport, everything queued since its last turn in one batch, WRITE_CHUNK bytes at
a time; `Taps` are the callables that see every raw message; `Wakeup` is how one waiter (the
line reader) is woken when room comes.

Bounds: a sender waits (`flow`, `wait_for_room`) while more than `write_buffer_bytes` are
queued or handed over but not yet taken by the transport; at close what is queued gets
CLOSE_FLUSH_SECONDS to go out, and the transport as long again to close.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Final

from .jsonrpc import ConnectionClosed, Direction, Tap
from .transport import Transport

WRITE_BUFFER_BYTES: Final = 1024 * 1024
WRITE_CHUNK: Final = 64 * 1024  # handed to the transport at a time; a sender yields this often
CLOSE_FLUSH_SECONDS: Final = 2.0

_log = logging.getLogger(f"{__package__}.connection")  # the connection's logger


class Wakeup:
    """Wakes one waiter, from any number of places (set before the wait: no wait at all)."""

    __slots__ = ("_future", "_set")

    def __init__(self) -> None:
        self._future: asyncio.Future[None] | None = None
        self._set = False

    def set(self) -> None:
        self._set = True
        future = self._future
        if future is not None and not future.done():
            future.set_result(None)

    async def wait(self) -> None:
        if not self._set:
            self._future = asyncio.get_running_loop().create_future()
            await self._future
        self._set = False


class Taps:
    """The taps of one connection. A tap that raises is reported in one line and removed; a
    tap with `tap_attached()` / `tap_detached()` methods is told when it joins and leaves (a
    TranscriptRecorder closes its file when it has left every connection it tapped)."""

    __slots__ = ("active",)

    def __init__(self) -> None:
        self.active: list[Tap] = []  # read by the reader and the output before each call

    def add(self, tap: Tap) -> Callable[[], None]:
        self.active.append(tap)
        attached = getattr(tap, "tap_attached", None)
        if callable(attached):
            attached()

        def remove() -> None:
            self._drop(tap)

        return remove

    def see(self, direction: Direction, line: bytes) -> None:
        for tap in list(self.active):
            try:
                tap(direction, line)
            except Exception as exc:  # noqa: BLE001 - a tap's bug must not stop the connection
                what = " ".join(f"{type(exc).__name__}: {exc}".split())
                _log.warning("removed the message tap %s: it raised %s", _name(tap), what)
                self._drop(tap)

    def close(self) -> None:
        for tap in list(self.active):
            self._drop(tap)

    def _drop(self, tap: Tap) -> None:
        if tap not in self.active:
            return
        self.active.remove(tap)
        detached = getattr(tap, "tap_detached", None)
        if callable(detached):
            try:
                detached()
            except Exception as exc:  # noqa: BLE001
                _log.warning("the message tap %s failed to detach: %s", _name(tap), exc)


def _name(tap: object) -> str:
    name = getattr(tap, "__qualname__", None) or type(tap).__qualname__
    return str(name)


class Output:
    """Lines not yet handed to the transport, the task that hands them over, and the waits on
    its room. `pending` counts the bytes queued or handed over but not yet taken."""

    def __init__(self, transport: Transport, limit: int, taps: Taps, room: Wakeup) -> None:
        self._transport = transport
        self.limit = limit
        self._taps = taps.active
        self._see = taps.see
        self._room = room  # the reader's: woken whenever output drains
        self._lines: list[bytes] = []
        self.pending = 0  # queued plus handed over, not taken yet
        self.queued = 0  # queued, not handed over yet
        self._wake: asyncio.Future[None] | None = None  # the writer task waits for lines
        self._drained: asyncio.Future[None] | None = None  # senders wait for room
        self.closed = False
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    def put(self, line: bytes) -> None:
        """Queue one whole line; lines go out in the order they were queued."""
        if self.closed:
            raise ConnectionClosed("the connection is closed")
        if self._taps:
            self._see("out", line[:-1])
        self._lines.append(line)
        self.pending += len(line)
        self.queued += len(line)
        wake = self._wake
        if wake is not None and not wake.done():
            wake.set_result(None)

    @property
    def over_limit(self) -> bool:
        return self.pending > self.limit and not self.closed

    async def flow(self) -> None:
        """Called by a sender once WRITE_CHUNK bytes are queued: over the limit, wait for room;
        else give the writer (and the event loop's I/O) a turn, so that the peer reads this
        while the sender produces the next."""
        if self.pending > self.limit:
            await self.wait_for_room()
        else:
            await asyncio.sleep(0)

    async def wait_for_room(self) -> None:
        """Wait while over the limit; raises ConnectionClosed once the output is closed."""
        while self.pending > self.limit:
            if self.closed:
                raise ConnectionClosed("the connection is closed")
            if self._drained is None or self._drained.done():
                self._drained = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._drained)

    def _room_changed(self) -> None:
        drained = self._drained
        if drained is not None and not drained.done():
            drained.set_result(None)
        self._room.set()

    async def _run(self) -> None:
        # One send for everything queued since the last one, a chunk at a time: the room each
        # chunk frees as the peer takes it lets senders go on while the peer reads, instead of
        # taking turns with it.
        send = self._transport.send
        loop = asyncio.get_running_loop()
        try:
            while True:
                if not self._lines:
                    self._wake = loop.create_future()
                    await self._wake
                    continue
                lines, self._lines = self._lines, []
                self.queued = 0
                data = lines[0] if len(lines) == 1 else b"".join(lines)
                for start in range(0, len(data), WRITE_CHUNK):
                    chunk = data[start : start + WRITE_CHUNK] if len(data) > WRITE_CHUNK else data
                    await send(chunk)
                    self.pending -= len(chunk)
                    self._room_changed()
        except (ConnectionError, OSError) as exc:
            _log.debug("cannot write to the peer: %s", exc)
            self._fail()
        except Exception:
            _log.exception("writing to the peer failed")
            self._fail()

    def _fail(self) -> None:
        self.closed = True
        self._lines.clear()
        self.pending = self.queued = 0
        self._room_changed()

    async def close(self) -> None:
        """Hand what is queued to the transport, then close it (each step bounded)."""
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        data = b"" if self.closed else b"".join(self._lines)
        self._fail()
        try:
            if data:
                await asyncio.wait_for(self._transport.send(data), CLOSE_FLUSH_SECONDS)
        except Exception as exc:  # TimeoutError included
            _log.debug("could not flush the output: %r", exc)
        try:
            await asyncio.wait_for(self._transport.close(), CLOSE_FLUSH_SECONDS)
        except Exception as exc:  # the output is gone either way
            _log.debug("closing the transport failed: %r", exc)

    def abort(self) -> None:
        """Close the transport at once, without waiting (the event loop is going away)."""
        self.closed = True
        try:
            self._transport.abort()
        except Exception as exc:
            _log.debug("closing the transport failed: %r", exc)
