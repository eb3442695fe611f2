"""The writing side of a `Connection`: whole lines queued in order, written in batches by one
task, with the senders held back while the transport has not taken `write_buffer_bytes`; the
message taps; closing the output.

Part of `Connection` (connection.py), which sets the state declared here.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

from .jsonrpc import (
    ByteWriter,
    ConnectionClosed,
    Direction,
    Message,
    Tap,
    reply_line,
)

WRITE_BUFFER_BYTES: Final = 1024 * 1024
WRITE_CHUNK: Final = 64 * 1024  # handed to the transport at a time; a sender yields this often
CLOSE_FLUSH_SECONDS: Final = 2.0

_log = logging.getLogger(f"{__package__}.connection")  # the connection's logger


class ConnectionOutput:
    """Lines not yet handed to the transport, the writer task, and the waits on its room."""

    _writer: ByteWriter
    _write_limit: int
    _taps: list[Tap]
    _out: list[bytes]
    _out_bytes: int  # queued plus handed over but not drained yet
    _queued_bytes: int  # queued, not handed over yet
    _out_wake: asyncio.Future[None] | None  # the writer task waits for lines
    _out_room: asyncio.Future[None] | None  # senders wait for the buffer
    _room: asyncio.Future[None] | None  # the reader waits on it when held calls or output are full
    _output_closed: bool
    _deferred: list[Message]  # the reader's own answers, sent once its turn ends
    _writer_task: asyncio.Task[None] | None

    def _enqueue(self, line: bytes) -> None:
        """Queue one whole line; lines go out in the order they were queued."""
        if self._output_closed:
            raise ConnectionClosed("the connection is closed")
        if self._taps:
            self._tap("out", line[:-1])
        self._out.append(line)
        self._out_bytes += len(line)
        self._queued_bytes += len(line)
        wake = self._out_wake
        if wake is not None and not wake.done():
            wake.set_result(None)

    def _tap(self, direction: Direction, line: bytes) -> None:
        for tap in list(self._taps):
            try:
                tap(direction, line)
            except Exception:
                _log.exception("a message tap failed; it is removed")
                self._taps.remove(tap)

    def _reply_soon(self, reply: Message) -> None:
        """Answer once the reader's turn ends, after the requests read before this one had
        their first step: answers that need no handler do not overtake those that are ready
        at once."""
        if not self._deferred:
            asyncio.get_running_loop().call_soon(self._send_deferred)
        self._deferred.append(reply)

    def _send_deferred(self) -> None:
        replies, self._deferred = self._deferred, []
        for reply in replies:
            self._send_reply(reply)

    def _send_reply(self, reply: Message) -> None:
        try:
            self._enqueue(reply_line(reply))
        except ConnectionClosed:
            _log.debug("could not send the answer to request id %r", reply.get("id"))

    def _out_over_limit(self) -> bool:
        return self._out_bytes > self._write_limit and not self._output_closed

    async def _let_output_flow(self) -> None:
        """Called by a sender once a chunk's worth is queued: over the limit, wait for room;
        else give the writer (and the event loop's I/O) a turn, so that the peer reads this
        while the sender produces the next."""
        if self._out_bytes > self._write_limit:
            await self._wait_for_output_room()
        else:
            await asyncio.sleep(0)

    async def _wait_for_output_room(self) -> None:
        while self._out_bytes > self._write_limit:
            if self._output_closed:
                raise ConnectionClosed("the connection is closed")
            if self._out_room is None or self._out_room.done():
                self._out_room = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._out_room)

    def _output_room_changed(self) -> None:
        for waiter in (self._out_room, self._room):
            if waiter is not None and not waiter.done():
                waiter.set_result(None)

    async def _run_writer(self) -> None:
        # One write (and one drain) for everything queued since the last one.
        writer = self._writer
        loop = asyncio.get_running_loop()
        try:
            while True:
                if not self._out:
                    self._out_wake = loop.create_future()
                    await self._out_wake
                    continue
                lines, self._out = self._out, []
                self._queued_bytes = 0
                data = lines[0] if len(lines) == 1 else b"".join(lines)
                # A chunk at a time: the room each one frees as it drains lets senders go on
                # while the peer reads, instead of taking turns with it.
                for start in range(0, len(data), WRITE_CHUNK):
                    chunk = data[start : start + WRITE_CHUNK] if len(data) > WRITE_CHUNK else data
                    writer.write(chunk)
                    await writer.drain()
                    self._out_bytes -= len(chunk)
                    self._output_room_changed()
        except (ConnectionError, OSError) as exc:
            _log.debug("cannot write to the peer: %s", exc)
            self._output_failed()
        except Exception:
            _log.exception("writing to the peer failed")
            self._output_failed()

    def _output_failed(self) -> None:
        self._output_closed = True
        self._out.clear()
        self._out_bytes = self._queued_bytes = 0
        self._output_room_changed()

    async def _close_output(self) -> None:
        """Hand what is queued to the transport, then close it (waiting a bounded time)."""
        task = self._writer_task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self._output_closed and not self._out:
            data = b""
        else:
            data = b"".join(self._out)
        self._output_closed = True
        self._out.clear()
        self._out_bytes = self._queued_bytes = 0
        self._output_room_changed()
        try:
            if data:
                self._writer.write(data)
                await asyncio.wait_for(self._writer.drain(), CLOSE_FLUSH_SECONDS)
        except Exception as exc:  # TimeoutError included
            _log.debug("could not flush the output: %r", exc)
        try:
            self._writer.close()
            wait_closed = getattr(self._writer, "wait_closed", None)
            if wait_closed is not None:
                await asyncio.wait_for(wait_closed(), CLOSE_FLUSH_SECONDS)
        except Exception as exc:  # the output is gone either way
            _log.debug("closing the output failed: %r", exc)

    def _after_close(self) -> None:
        """Release what the transports hold once the connection is closed (for subclasses)."""

    def _abort_transports(self) -> None:
        """Close the transports at once, without waiting (the event loop is going away)."""
        self._output_closed = True
        try:
            self._writer.close()
        except Exception as exc:
            _log.debug("closing the output failed: %r", exc)
        self._after_close()
