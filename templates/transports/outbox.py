"""One SSE stream of a hosted connection (the connection's own, or one session's): the events
the agent wrote for it, numbered, waiting for the client's GET; and those already handed to a
GET, kept a while for a client that comes back with `Last-Event-ID`.

At most one GET reads a stream at a time: a newer GET of the same connection takes the stream
over (the older one ends), so a client that lost its stream without the server noticing can
still come back at once.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Final, Protocol

from .sse import event

BATCH_BYTES: Final = 64 * 1024  # events handed to a GET at a time


class Account(Protocol):
    """What an outbox reports to its connection: bytes waiting, bytes kept, progress."""

    buffered: int
    kept: int
    replay_bytes: int

    def progressed(self) -> None: ...


class Conflict(Exception):
    """A GET the stream cannot serve (its reason is the 409's body)."""


class Replaced(Exception):
    """The GET reading this stream was replaced by a newer one, or the stream closed."""


class Outbox:
    """The events of one stream."""

    __slots__ = ("_account", "_queue", "_kept", "_kept_bytes", "next_id", "_reader", "_wake")

    def __init__(self, account: Account) -> None:
        self._account = account
        self._queue: deque[tuple[int, bytes]] = deque()
        self._kept: deque[tuple[int, bytes]] = deque()
        self._kept_bytes = 0
        self.next_id = 1
        self._reader = 0  # the number of the GET reading it (0: none, -1: closed)
        self._wake = asyncio.Event()

    @property
    def idle(self) -> bool:
        """No GET reads it and nothing waits in it."""
        return self._reader == 0 and not self._queue

    @property
    def reading(self) -> bool:
        return self._reader > 0

    def push(self, data: bytes) -> None:
        """Queue one message (its JSON text) as the stream's next event."""
        if self._reader < 0:
            return
        item = (self.next_id, event(data, self.next_id))
        self.next_id += 1
        self._queue.append(item)
        self._account.buffered += len(item[1])
        self._wake.set()

    def attach(self, reader: int, last_id: str | None) -> None:
        """Let GET number `reader` read from now on, after event `last_id` when given (the
        kept events after it are sent again). Conflict when the stream closed, when `last_id`
        is not a number it handed out, or when events after it are no longer kept."""
        if self._reader < 0:
            raise Conflict("The stream is closed")
        if last_id is not None:
            self._rewind(last_id)
        self._reader = reader
        self._wake.set()  # a GET that reads it now ends

    def detach(self, reader: int) -> None:
        if self._reader == reader:
            self._reader = 0

    async def take(self, reader: int, wait: float) -> list[tuple[int, bytes]]:
        """The next events for GET `reader` (at most about BATCH_BYTES), waiting up to `wait`
        seconds for one (then []). Replaced when another GET took the stream over."""
        while True:
            if self._reader != reader:
                raise Replaced
            if self._queue:
                break
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), wait)
            except TimeoutError:
                if self._reader != reader:
                    raise Replaced from None
                return []
        batch: list[tuple[int, bytes]] = []
        size = 0
        while self._queue and size < BATCH_BYTES:
            item = self._queue.popleft()
            batch.append(item)
            size += len(item[1])
        self._account.buffered -= size
        self._account.progressed()
        return batch

    def sent(self, batch: list[tuple[int, bytes]]) -> None:
        """Events a GET wrote out: kept for a reconnect, the oldest dropped past the budget."""
        account = self._account
        for item in batch:
            self._kept.append(item)
            self._kept_bytes += len(item[1])
            account.kept += len(item[1])
        while len(self._kept) > 1 and account.kept > account.replay_bytes:
            _, dropped = self._kept.popleft()
            self._kept_bytes -= len(dropped)
            account.kept -= len(dropped)

    def close(self) -> None:
        """No more events; the reading GET ends; what waited is dropped."""
        account = self._account
        account.buffered -= sum(len(data) for _, data in self._queue)
        account.kept -= self._kept_bytes
        self._queue.clear()
        self._kept.clear()
        self._kept_bytes = 0
        self._reader = -1
        self._wake.set()

    def _rewind(self, last_id: str) -> None:
        if not last_id.isdigit() or len(last_id) > 18 or int(last_id) >= self.next_id:
            raise Conflict(f"Unknown Last-Event-ID {last_id[:40]!r}")
        after = int(last_id)
        first = self._kept[0][0] if self._kept else (self._queue[0][0] if self._queue else None)
        if (self.next_id if first is None else first) > after + 1:
            raise Conflict(f"Cannot resume after event {after}: later events are gone")
        again = [item for item in self._kept if item[0] > after]
        size = sum(len(data) for _, data in again)
        for item in reversed(again):
            self._queue.appendleft(item)
        while self._kept and self._kept[-1][0] > after:
            self._kept.pop()
        self._kept_bytes -= size
        self._account.kept -= size
        self._account.buffered += size
