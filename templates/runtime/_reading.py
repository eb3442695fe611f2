"""The reading side of a `Connection`: `LineReader` takes bytes from the transport, frames them
into lines on `\\n`, and gives each line its one reading step (`take`): the taps see it, it is
parsed, and the dispatcher gets the message (or the reason it could not be read).

Bounds: a line over `max_message_bytes` is skipped up to its newline without being kept, and
answered; an unfinished line at EOF is read as if it had ended. The transport is not read
while more than `max_held_messages` calls wait for room, or while the answers the reader's own
lines produced (errors) keep the output over its limit: a peer that floods or does not read
gets no more read from it.

The one fast path is the reading step's first branch: a notification that starts with the
compact envelope of the notification method read last is handed on after parsing only its
params (see `compact_start`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Final

from ._dispatch import Dispatcher
from ._output import Output, Taps, Wakeup
from ._salvage import salvage
from .jsonrpc import RpcError, UnreadableMessage, _scan, dump_text, error_reply, load_line
from .transport import Transport

COMPACT_MAX_BYTES: Final = 1024 * 1024  # longer lines are parsed the general way only
_NOT_COMPACT: Final = object()
_log = logging.getLogger(f"{__package__}.connection")  # the connection's logger


class LineReader:
    """Reads the transport until EOF, one line at a time into the dispatcher."""

    def __init__(
        self,
        transport: Transport,
        dispatcher: Dispatcher,
        output: Output,
        taps: Taps,
        room: Wakeup,
        *,
        max_message_bytes: int,
        max_held: int,
        fast: bool,
    ) -> None:
        self._transport = transport
        self._dispatcher = dispatcher
        self._dispatch = dispatcher.dispatch
        self._notification = dispatcher.notification
        self._output = output
        self._taps = taps.active
        self._see = taps.see
        self._room = room
        self._limit = max_message_bytes
        self._max_held = max_held
        self._fast = fast
        self._compact: bytes | None = None  # the envelope of the notification method read last
        self._compact_method = ""
        self._bad_lines = RateLimitedLog("ignored an unreadable message from the peer")

    async def run(self) -> None:
        """Read until EOF (or a read error, logged); returns once every line was taken."""
        try:
            await self._read_lines()
        except (ConnectionError, OSError) as exc:
            _log.debug("read failed: %s", exc)
        except Exception:
            _log.exception("reading from the peer failed")

    async def _read_lines(self) -> None:
        limit = self._limit
        partial = b""  # the start of a line whose end has not come yet
        skipped = 0  # > 0 while skipping the rest of a line over the limit
        receive = self._transport.receive
        take = self.take
        output, dispatcher = self._output, self._dispatcher
        while chunk := await receive():
            queued = output.pending
            if skipped:
                end = chunk.find(b"\n")
                if end < 0:
                    skipped += len(chunk)
                    continue
                self._too_long(skipped + end)
                skipped = 0
                chunk = chunk[end + 1 :]
            lines = chunk.split(b"\n")
            if partial:
                lines[0] = partial + lines[0]
            partial = lines.pop()
            for line in lines:
                if len(line) > limit:
                    self._too_long(len(line))
                else:
                    take(line)
            if len(partial) > limit:
                skipped, partial = len(partial), b""
            # Stop reading while too many calls wait, or while answers this chunk produced
            # itself (errors) overfill the output: a peer that does not read gets no more.
            if dispatcher.answers_waiting:
                await asyncio.sleep(0)  # let them be queued
            produced = output.pending > queued
            if len(dispatcher.held) > self._max_held or (produced and output.over_limit):
                while len(dispatcher.held) > self._max_held or output.over_limit:
                    await self._room.wait()
        if skipped:
            self._too_long(skipped)
        elif partial.strip():
            # EOF in the middle of a message: handle it as if it had been ended (an
            # unfinished one is a parse error), like the TypeScript SDK does.
            _log.warning("the peer closed the connection in the middle of a message")
            take(partial)

    def take(self, line: bytes) -> None:
        """The reading step of one line. Its first branch, a notification in the compact
        envelope of the method read last, reaches the dispatcher's notification step with what
        the general branch would give it: such a line is exactly the message
        `{"jsonrpc": "2.0", "method": M, "params": P}` (no room for an id or another key), which
        the general branch parses and dispatches to that same step."""
        if self._taps:
            self._see("in", line)
        compact = self._compact
        if compact is not None and line.startswith(compact):
            params = _compact_params(line, len(compact))
            if params is not _NOT_COMPACT:
                self._notification(self._compact_method, params)
                return
        try:
            message = load_line(line, self._fast)
        except UnreadableMessage as exc:
            if line.strip():  # blank lines between messages are allowed
                self._unreadable(line, exc.reason)
            return
        self._dispatch(message)
        if self._fast and type(message) is dict and "id" not in message:
            method = message.get("method")
            if type(method) is str and method != self._compact_method and method.isascii():
                self._compact, self._compact_method = compact_start(method), method

    def _unreadable(self, line: bytes, reason: str) -> None:
        self._bad_lines.log(f"{len(line)} bytes: {reason}")
        self._dispatcher.unreadable(reason, salvage(line, reason))

    def _too_long(self, size: int) -> None:
        self._bad_lines.log(f"{size} bytes, over the limit of {self._limit}")
        self._dispatcher.answer_soon(error_reply(None, RpcError.too_long(size, self._limit)))


def compact_start(method: str) -> bytes:
    """What comes before the params in a notification written compactly, keys in the usual
    order, as our writer and the TypeScript SDK write it (`method` is ASCII):
    `{"jsonrpc":"2.0","method":"session/update","params":`. A line that starts with it and
    whose params value ends one character before the end, on `}`, is exactly that message."""
    return b'{"jsonrpc":"2.0","method":' + dump_text(method).encode() + b',"params":'


def _compact_params(line: bytes, start: int) -> Any:
    """The params of a compact notification line, or _NOT_COMPACT when the line is not exactly
    one (a broken one, or one over COMPACT_MAX_BYTES, which would be parsed twice)."""
    if len(line) > COMPACT_MAX_BYTES:
        return _NOT_COMPACT
    try:
        text = line.decode()
        params, end = _scan(text, start)
    except Exception:  # noqa: BLE001 - the general branch parses it again and says why
        return _NOT_COMPACT
    if end != len(text) - 1 or text[end] != "}":
        return _NOT_COMPACT
    return params


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
