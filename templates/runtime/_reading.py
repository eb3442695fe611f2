"""The reading side of a `Connection`: lines framed on `\\n` (a line over the limit is
skipped and answered), parsed and handed on (a notification in the compact form of the method
seen last from its params on: `_took_compact`); the transport is not read while too many calls
wait or the answers it produced overfill the output (backpressure); at EOF, what was read is
finished and the output closed.

Part of `Connection` (connection.py), which sets the state declared here.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Final

from ._dispatch import ABSENT, ConnectionDispatch, NoteServer
from .jsonrpc import (
    ByteReader,
    RpcError,
    UnreadableMessage,
    _scan,
    dump_text,
    error_reply,
    load_line,
)

READ_CHUNK: Final = 64 * 1024
COMPACT_MAX_BYTES: Final = 1024 * 1024  # longer lines are parsed the general way only
_log = logging.getLogger(f"{__package__}.connection")  # the connection's logger


class ConnectionReading(ConnectionDispatch):
    """The read loop and what it does with each line."""

    _reader: ByteReader
    _max_message_bytes: int
    _max_held: int
    _bad_lines: RateLimitedLog
    _input_done: bool  # EOF, read error or close(): no answer can come any more
    _closed: asyncio.Event
    # The compact envelope of the notification method seen last, with its method and server.
    _compact_note: tuple[bytes, str, NoteServer] | None

    async def _run_reader(self) -> None:
        try:
            await self._read_until_eof()
        except asyncio.CancelledError:
            if not self._closing:  # the event loop is shutting down: let nothing dangle
                self._abort_transports()
            raise

    async def _read_until_eof(self) -> None:
        try:
            await self._read_lines()
        except (ConnectionError, OSError) as exc:
            _log.debug("read failed: %s", exc)
        except Exception:
            _log.exception("reading from the peer failed")
        finally:
            self._input_done = True
            self._fail_pending("the peer closed the connection")
        # The peer is gone or done: let held calls start, queued notifications and running
        # handlers finish (their answers may still be read), then close our side.
        while self._held:
            self._room = asyncio.get_running_loop().create_future()
            await self._room
        self._reading_done = True
        self._wake_worker()
        await asyncio.gather(
            *[t for t in (self._worker_task, *(f.task for f in self._incoming.values())) if t],
            return_exceptions=True,
        )
        if not self._closing:
            self._closing = True
            try:
                await self._close_output()
            finally:
                self._after_close()
                self._closed.set()

    async def _read_lines(self) -> None:
        limit = self._max_message_bytes
        partial = b""  # the start of a line whose end has not come yet
        skipped = 0  # > 0 while skipping the rest of a line over the limit
        read = self._reader.read
        while chunk := await read(READ_CHUNK):
            queued = self._out_bytes
            if skipped:
                end = chunk.find(b"\n")
                if end < 0:
                    skipped += len(chunk)
                    continue
                self._on_too_long(skipped + end)
                skipped = 0
                chunk = chunk[end + 1 :]
            lines = chunk.split(b"\n")
            if partial:
                lines[0] = partial + lines[0]
            partial = lines.pop()
            for line in lines:
                if len(line) > limit:
                    self._on_too_long(len(line))
                else:
                    self._on_line(line)
            if len(partial) > limit:
                skipped, partial = len(partial), b""
            # Stop reading while too many calls wait, or while answers this chunk produced
            # itself (errors) overfill the output: a peer that does not read gets no more.
            if self._deferred:
                await asyncio.sleep(0)  # let them be queued
            produced = self._out_bytes > queued
            if len(self._held) > self._max_held or (produced and self._out_over_limit()):
                await self._wait_for_room()
        if skipped:
            self._on_too_long(skipped)
        elif partial.strip():
            # EOF in the middle of a message: handle it as if it had been ended (an
            # unfinished one is a parse error), like the TypeScript SDK does.
            _log.warning("the peer closed the connection in the middle of a message")
            self._on_line(partial)

    async def _wait_for_room(self) -> None:
        """Wait until held calls fit and the output has room again (backpressure)."""
        while len(self._held) > self._max_held or self._out_over_limit():
            self._room = asyncio.get_running_loop().create_future()
            await self._room

    def _on_too_long(self, size: int) -> None:
        self._bad_lines.log(f"{size} bytes, over the limit of {self._max_message_bytes}")
        self._reply_soon(error_reply(None, RpcError.too_long(size, self._max_message_bytes)))

    def _on_line(self, line: bytes) -> None:
        if self._taps:
            self._tap("in", line)
        note = self._compact_note
        if note is not None and line.startswith(note[0]) and self._took_compact(line, note):
            return
        try:
            message = load_line(line)
        except UnreadableMessage as exc:
            if not line.strip():
                return  # blank lines between messages are allowed
            self._bad_lines.log(f"{len(line)} bytes: {exc.reason}")
            self._reply_soon(error_reply(None, RpcError.parse_error(exc.reason)))
            return
        if type(message) is dict:
            # The common case first: a well-formed notification.
            method = message.get("method")
            if (
                type(method) is str
                and "id" not in message
                and message.get("jsonrpc") == "2.0"
                and method != self._cancel_method
            ):
                server = self._note_servers.get(method)
                if server is None or self._held or len(self._notes) >= self._max_notes:
                    self._on_notification(method, message.get("params", ABSENT))
                elif not self._closing:  # _on_notification and _admit_note, for the usual case
                    params = message.get("params", ABSENT)
                    if params is ABSENT:
                        params = None if server[1] is None else {}
                    self._notes.append((server[0], server[1], method, params))
                    compact = self._compact_note
                    if (compact is None or compact[1] != method) and method.isascii():
                        self._compact_note = (compact_start(method), method, server)
                    ready = self._note_ready
                    if ready is not None and not ready.done():
                        ready.set_result(None)
            else:
                self._dispatch(message, None)
        elif type(message) is list:
            self._on_batch(message)
        else:
            self._reject(self._reply_soon, None, "a message must be a JSON object")

    def _took_compact(self, line: bytes, compact: tuple[bytes, str, NoteServer]) -> bool:
        """Queue a notification that starts with the compact envelope of the method seen last
        (`_compact_note`, see compact_start), parsing only its params: the outcome of the
        general way, which gets the line when this returns False (no room, a line over
        COMPACT_MAX_BYTES, the params not one JSON value followed by the closing brace)."""
        start, method, server = compact
        if self._held or len(self._notes) >= self._max_notes or self._closing:
            return False
        if len(line) > COMPACT_MAX_BYTES:  # a broken one would be parsed twice
            return False
        try:
            text = line.decode()
            params, end = _scan(text, len(start))
        except Exception:  # noqa: BLE001 - the general way parses it again and says why
            return False
        if end != len(text) - 1 or text[end] != "}":
            return False
        self._admit_note((server[0], server[1], method, params))  # room was checked above
        return True


def compact_start(method: str) -> bytes:
    """What comes before the params in a notification written compactly, keys in the usual
    order, as our writer and the TypeScript SDK write it (`method` is ASCII):
    `{"jsonrpc":"2.0","method":"session/update","params":`. A line that starts with it and
    whose params value ends one character before the end, on `}`, is exactly that message."""
    return b'{"jsonrpc":"2.0","method":' + dump_text(method).encode() + b',"params":'


class RateLimitedLog:
    """Logs a warning at most once every `every` seconds, counting what it left out."""

    def __init__(self, what: str, every: float = 5.0) -> None:
        self.what = what
        self.every = every
        self.last = -float("inf")
        self.suppressed = 0

    def log(self, detail: str) -> None:
        now = time.monotonic()
        if now - self.last < self.every:
            self.suppressed += 1
            return
        more = f" (and {self.suppressed} more since the last report)" if self.suppressed else ""
        _log.warning("%s (%s)%s", self.what, detail, more)
        self.last = now
        self.suppressed = 0
