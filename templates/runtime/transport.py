"""How a `Connection` reaches its peer: the `Transport` protocol (bytes in, bytes out, close),
and the transports every package has: `StreamTransport` over a byte reader and writer (asyncio
streams, pipes, sockets), and `memory_pair()`, two transports joined in memory. stdio.py adds
this process's standard streams, process.py a child process's.

A transport moves bytes only; the connection frames them into lines, so anything that carries
a byte stream (a socket, a WebSocket's frames, an HTTP body) can carry a connection.
"""

from __future__ import annotations

import asyncio
from typing import Final, Protocol

READ_CHUNK: Final = 64 * 1024
"""The most a transport here hands the connection at a time."""
MEMORY_BUFFER_BYTES: Final = 64 * 1024


class Transport(Protocol):
    """A byte stream to the peer. The connection calls `receive` from one task at a time,
    `send` from one task at a time, and `close` once (or `abort` when the event loop goes
    away)."""

    async def receive(self) -> bytes:
        """The next bytes from the peer (any amount, a bounded one); `b""` once the peer
        closed its side, and from then on. Raises OSError when reading fails."""
        ...

    async def send(self, data: bytes) -> None:
        """Hand `data` to the peer, waiting while the transport's buffer is full. Raises
        OSError (ConnectionError when the peer is gone) when it cannot."""
        ...

    async def close(self) -> None:
        """Stop sending (the peer reads EOF) and release what the transport holds. The
        connection bounds how long it waits for this."""
        ...

    def abort(self) -> None:
        """Close at once, without waiting: the event loop is going away."""
        ...


class ByteReader(Protocol):
    """What a StreamTransport reads from, e.g. `asyncio.StreamReader`."""

    async def read(self, n: int = -1) -> bytes: ...


class ByteWriter(Protocol):
    """What a StreamTransport writes to, e.g. `asyncio.StreamWriter`."""

    def write(self, data: bytes) -> object: ...

    async def drain(self) -> None: ...

    def close(self) -> object: ...


class StreamTransport:
    """A Transport over a byte reader and a byte writer: `Connection(handler, reader, writer)`
    makes one. `close()` closes the writer (waiting for its `wait_closed()` when it has one),
    then the reader when it has a `close()`."""

    def __init__(self, reader: ByteReader, writer: ByteWriter) -> None:
        self._read = reader.read
        self._reader = reader
        self._writer = writer

    async def receive(self) -> bytes:
        return await self._read(READ_CHUNK)

    async def send(self, data: bytes) -> None:
        self._writer.write(data)
        await self._writer.drain()

    async def close(self) -> None:
        try:
            self._writer.close()
            wait_closed = getattr(self._writer, "wait_closed", None)
            if wait_closed is not None:
                await wait_closed()
        finally:
            self._close_reader()

    def abort(self) -> None:
        try:
            self._writer.close()
        finally:
            self._close_reader()

    def _close_reader(self) -> None:
        close = getattr(self._reader, "close", None)
        if close is not None:
            close()


def memory_pair(buffer_bytes: int = MEMORY_BUFFER_BYTES) -> tuple[MemoryTransport, MemoryTransport]:
    """Two transports joined in memory: what one sends, the other receives, in order. Each
    direction holds at most about `buffer_bytes` unread (a sender waits above it, like a pipe);
    closing one end is EOF for the other once it has read what was sent."""
    a_to_b, b_to_a = _Pipe(buffer_bytes), _Pipe(buffer_bytes)
    return MemoryTransport(b_to_a, a_to_b), MemoryTransport(a_to_b, b_to_a)


class MemoryTransport:
    """One end of a `memory_pair()`."""

    def __init__(self, inbox: _Pipe, outbox: _Pipe) -> None:
        self._inbox = inbox
        self._outbox = outbox

    async def receive(self) -> bytes:
        return await self._inbox.take()

    async def send(self, data: bytes) -> None:
        await self._outbox.put(data)

    async def close(self) -> None:
        self.abort()

    def abort(self) -> None:
        self._outbox.close()
        self._inbox.discard()

    def feed(self, data: bytes) -> None:
        """Hand `data` to the peer at once, without waiting for room: for code that drives
        one end by hand, such as a test."""
        self._outbox.feed(data)

    def feed_eof(self) -> None:
        """Close the sending side only: the peer reads EOF once it has read what was sent."""
        self._outbox.close()


class _Pipe:
    """One direction of a memory pair: bytes sent and not yet received, bounded."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._chunks: list[bytes] = []
        self._size = 0
        self._closed = False  # the sender closed: EOF once drained
        self._discarded = False  # the receiver closed: sending fails
        self._readable: asyncio.Event | None = None
        self._writable: asyncio.Event | None = None

    async def put(self, data: bytes) -> None:
        self.feed(data)
        while self._size > self._limit and not self._discarded:
            self._writable = self._writable or asyncio.Event()
            self._writable.clear()
            await self._writable.wait()

    def feed(self, data: bytes) -> None:
        if self._closed or self._discarded:
            raise BrokenPipeError("the memory transport is closed")
        self._chunks.append(bytes(data))
        self._size += len(data)
        self._wake(self._readable)

    async def take(self) -> bytes:
        while not self._chunks:
            if self._closed or self._discarded:
                return b""
            self._readable = self._readable or asyncio.Event()
            self._readable.clear()
            await self._readable.wait()
        data = b"".join(self._chunks) if len(self._chunks) > 1 else self._chunks[0]
        if len(data) > READ_CHUNK:
            data, rest = data[:READ_CHUNK], data[READ_CHUNK:]
            self._chunks = [rest]
        else:
            self._chunks = []
        self._size -= len(data)
        self._wake(self._writable)
        return data

    def close(self) -> None:
        self._closed = True
        self._wake(self._readable)

    def discard(self) -> None:
        self._discarded = True
        self._chunks.clear()
        self._size = 0
        self._wake(self._readable)
        self._wake(self._writable)

    @staticmethod
    def _wake(event: asyncio.Event | None) -> None:
        if event is not None:
            event.set()
