"""Server-sent events, as ACP's Streamable HTTP uses them: each event is one JSON-RPC message in
`data:` (its JSON text has no line breaks), with an `id:` the server numbers per stream so a
client that lost the stream can ask for what followed (`Last-Event-ID`); `:` comment lines keep
an idle stream alive. `SseParser` reads a stream of them incrementally, bounded.
"""

from __future__ import annotations

from typing import Final, NamedTuple

KEEPALIVE: Final = b":\n\n"


def event(data: bytes, event_id: int | None = None) -> bytes:
    """One event carrying `data` (a message's JSON text, which has no line break)."""
    if event_id is None:
        return b"data: " + data + b"\n\n"
    return b"id: %d\ndata: %s\n\n" % (event_id, data)


class Event(NamedTuple):
    data: bytes
    id: str | None  # the last `id:` field seen on the stream so far (the SSE rule)


class SseError(Exception):
    """The stream broke the limits: a line or an event over `max_event_bytes`."""


class SseParser:
    """Feed it the bytes of a `text/event-stream` body, get the events whole. Lines may end in
    CRLF, LF or CR; a leading BOM is dropped; fields other than `data` and `id` (and comments)
    are ignored; an event with no `data` is not one. No line or event may be longer than
    `max_event_bytes`: `error` (SseError) is set, and raised by any later `feed`."""

    def __init__(self, max_event_bytes: int) -> None:
        self._max = max_event_bytes
        self._buffer = bytearray()
        self._data: list[bytes] = []
        self._size = 0
        self._started = False
        self._pending_cr = False
        self.last_id: str | None = None
        self.error: SseError | None = None

    def feed(self, chunk: bytes) -> list[Event]:
        """The events `chunk` completes. Past a limit, the events before it are returned and
        `error` is set (SseError): the stream is over."""
        if self.error is not None:
            raise self.error
        events: list[Event] = []
        try:
            self._feed(chunk, events)
        except SseError as error:
            self.error = error
        return events

    def _feed(self, chunk: bytes, events: list[Event]) -> None:
        if not self._started and chunk:
            self._started = True
            if chunk.startswith(b"\xef\xbb\xbf"):
                chunk = chunk[3:]
        if self._pending_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]  # the LF of a CRLF split between two chunks
        self._pending_cr = False
        buffer = self._buffer
        buffer += chunk
        start = self._simple(buffer, events)
        while True:
            lf = buffer.find(b"\n", start)
            cr = buffer.find(b"\r", start, lf if lf >= 0 else len(buffer))
            if cr >= 0:
                end, after = cr, cr + 1
                if after < len(buffer) and buffer[after] == 0x0A:
                    after += 1
                elif after == len(buffer):
                    self._pending_cr = True
            elif lf >= 0:
                end, after = lf, lf + 1
            else:
                break
            self._line(bytes(buffer[start:end]), events)
            start = after
        del buffer[:start]
        if len(buffer) > self._max:
            raise SseError(f"an event stream line is over {self._max} bytes")

    def _simple(self, buffer: bytearray, events: list[Event]) -> int:
        """Read the leading events of the usual shape, `id: N` then one `data:` line, each
        whole in `buffer`, as the general reading would; return where that reading goes on."""
        if self._data or b"\r" in buffer:
            return 0
        start = 0
        while buffer.startswith(b"id: ", start):
            end = buffer.find(b"\n\n", start)
            if end < 0:
                break
            head = buffer.find(b"\ndata: ", start, end)
            if head < 0 or buffer.find(b"\n", head + 1, end) >= 0:
                break  # another shape: the general reading
            event_id = bytes(buffer[start + 4 : head])
            if b"\x00" in event_id or len(event_id) > self._max or end - head > self._max:
                break
            self.last_id = event_id.decode("utf-8", "replace")
            events.append(Event(bytes(buffer[head + 7 : end]), self.last_id))
            start = end + 2
        return start

    def _line(self, line: bytes, events: list[Event]) -> None:
        if not line:
            if self._data:
                events.append(Event(b"\n".join(self._data), self.last_id))
            self._data, self._size = [], 0
            return
        if line.startswith(b":"):
            return
        name, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            self._size += len(value) + 1
            if self._size > self._max:
                raise SseError(f"an event is over {self._max} bytes")
            self._data.append(value)
        elif name == b"id" and b"\x00" not in value:
            self.last_id = value.decode("utf-8", "replace")
