"""The JSON-RPC runtime, on asyncio and the standard library only.

A `Connection` joins a handler (an `AgentBase` or `ClientBase` subclass) to a byte reader and
writer: it frames messages on `\\n`, runs incoming requests concurrently, feeds notifications
to the handler one at a time in arrival order, matches responses to pending calls by id, and
writes every message whole and in order.

Everything it holds is bounded. At most `max_running_requests` incoming requests run at once
(a request counts until its answer is written), at most `max_queued_notifications` wait for
the handler, and at most `max_held_messages` more calls wait behind them in arrival order
while answers to our own calls are still read. Past that it stops reading the transport until
there is room, so a peer that floods it is slowed down, never dropped or reordered. Outgoing
lines are batched into one write per turn of the event loop; a sender waits while more than
`write_buffer_bytes` are not yet taken by the transport.

`Connection` is built in layers, each a module: `_output.py` (the writing side and the taps),
`_dispatch.py` (serving requests, notifications and answers), `_reading.py` (the read loop),
and this one (options, lifecycle, calling the peer).
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Callable
from typing import Any, Final, TypeVar, overload

from ._dispatch import InFlight, Note, NoteServer
from ._output import CLOSE_FLUSH_SECONDS as CLOSE_FLUSH_SECONDS
from ._output import WRITE_BUFFER_BYTES, WRITE_CHUNK
from ._reading import READ_CHUNK as READ_CHUNK
from ._reading import ConnectionReading, RateLimitedLog
from ._runtime import decode, encode
from .jsonrpc import (
    MAX_MESSAGE_BYTES,
    TEXT_WRITERS,
    ByteReader,
    ByteWriter,
    ConnectionClosed,
    Message,
    RoleBase,
    Tap,
    UnencodableMessage,
    dump_line,
    dump_text,
)

# The limits' defaults (those of the reading and writing sides are defined there).
MAX_RUNNING_REQUESTS: Final = 64
MAX_QUEUED_NOTIFICATIONS: Final = 256
MAX_HELD_MESSAGES: Final = 256
MAX_ABANDONED_IDS: Final = 4096
MAX_METHOD_TEXTS: Final = 64

T = TypeVar("T")


class Connection(ConnectionReading):
    """One JSON-RPC peer over a byte stream. `start()` (or `async with`) begins reading;
    `wait_closed()` returns once the peer closed its side and running handlers finished;
    `close()` stops at once, cancelling running handlers and failing pending calls.

    Options (all keyword-only): `max_message_bytes` (longest incoming line; a longer one is
    skipped and answered -32600), `max_running_requests`, `max_queued_notifications`,
    `max_held_messages`, `write_buffer_bytes` (the flow-control bounds described in this
    module's docstring), `request_timeout` (default seconds for `request()`, None: wait
    forever), `tap` (sees every raw message, see `add_tap`).
    """

    def __init__(
        self,
        handler: RoleBase,
        reader: ByteReader,
        writer: ByteWriter,
        *,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        max_running_requests: int = MAX_RUNNING_REQUESTS,
        max_queued_notifications: int = MAX_QUEUED_NOTIFICATIONS,
        max_held_messages: int = MAX_HELD_MESSAGES,
        write_buffer_bytes: int = WRITE_BUFFER_BYTES,
        request_timeout: float | None = None,
        tap: Tap | None = None,
    ) -> None:
        if handler._connection is not None:
            raise ValueError("this handler already serves another Connection")
        for name, value in (
            ("max_message_bytes", max_message_bytes),
            ("max_running_requests", max_running_requests),
            ("max_queued_notifications", max_queued_notifications),
            ("write_buffer_bytes", write_buffer_bytes),
        ):
            if value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        handler._connection = self
        self.handler = handler
        self._cancel_method = handler.CANCEL_METHOD
        self._reader = reader
        self._writer = writer
        self._max_message_bytes = max_message_bytes
        self._max_running = max_running_requests
        self._max_notes = max_queued_notifications
        self._max_held = max(0, max_held_messages)
        self._write_limit = write_buffer_bytes
        self.request_timeout = request_timeout
        self._taps: list[Tap] = [] if tap is None else [tap]
        self._ids = itertools.count()
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._abandoned: dict[int, None] = {}  # calls we stopped waiting for, oldest first
        # Incoming calls: requests by id from arrival until their answer is written.
        self._incoming: dict[Any, InFlight] = {}
        self._running = 0
        self._notes: deque[Note] = deque()
        self._held: deque[InFlight | Note] = deque()  # read, waiting for room, in order
        self._note_servers: dict[str, NoteServer] = {}  # per routed method, made on first use
        self._compact_note: tuple[bytes, str, NoteServer] | None = None
        self._method_texts: dict[str, str] = {}  # a call's JSON text from its method to its params
        self._room: asyncio.Future[None] | None = None  # the reader waits on it when held is full
        self._note_ready: asyncio.Future[None] | None = None
        # Output: lines not yet handed to the transport, and the writer task's state.
        self._out: list[bytes] = []
        self._out_bytes = 0  # queued plus handed over but not drained yet
        self._queued_bytes = 0  # queued, not handed over yet
        self._out_wake: asyncio.Future[None] | None = None  # the writer task waits for lines
        self._out_room: asyncio.Future[None] | None = None  # senders wait for the buffer
        self._output_closed = False
        self._deferred: list[Message] = []  # the reader's own answers, sent once its turn ends
        self._bad_lines = RateLimitedLog("ignored an unreadable message from the peer")
        self._background: set[asyncio.Task[Any]] = set()
        self._reader_task: asyncio.Task[None] | None = None
        self._worker_task: asyncio.Task[None] | None = None
        self._writer_task: asyncio.Task[None] | None = None
        self._input_done = False  # EOF, read error or close(): no answer can come any more
        self._reading_done = False  # every message read has been admitted
        self._closing = False
        self._closed = asyncio.Event()

    def rebind(self, handler: RoleBase) -> None:
        """Serve `handler` from now on instead of the present one (the version router hands a
        connection to the lane chosen at `initialize`): its routes, cancel method and batch
        rule apply to every message read after this call."""
        if handler._connection is not None and handler._connection is not self:
            raise ValueError("this handler already serves another Connection")
        handler._connection = self
        self.handler = handler
        self._cancel_method = handler.CANCEL_METHOD
        self._note_servers.clear()
        self._compact_note = None

    def start(self) -> None:
        """Start reading (idempotent; needs a running event loop)."""
        if self._reader_task is None:
            self._writer_task = asyncio.create_task(self._run_writer())
            self._worker_task = asyncio.create_task(self._run_notifications())
            self._reader_task = asyncio.create_task(self._run_reader())

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    async def wait_closed(self) -> None:
        await self._closed.wait()

    async def close(self) -> None:
        """Close now: pending calls fail with ConnectionClosed, running handlers are cancelled
        (their requests are answered -32800 while the output is still open)."""
        if self._closing:
            await self._closed.wait()
            return
        self._closing = True
        self._input_done = True
        self._reading_done = True
        self._fail_pending("the connection was closed")
        me = asyncio.current_task()  # close() may be called from a handler: spare it
        for call in self._held:
            if isinstance(call, InFlight):
                call.cancelled = True
                self._start_request(call)  # answered -32800 at once
        self._held.clear()
        self._notes.clear()
        for flight in list(self._incoming.values()):
            if flight.task is not me:
                flight.cancel()
        for task in (self._reader_task, self._worker_task):
            if task is not None and task is not me:
                task.cancel()
        tasks = [self._reader_task, self._worker_task, *(f.task for f in self._incoming.values())]
        await asyncio.gather(*[t for t in tasks if t and t is not me], return_exceptions=True)
        for task in list(self._background):
            task.cancel()
        try:
            await self._close_output()
        finally:
            self._after_close()
            self._closed.set()

    async def __aenter__(self) -> Connection:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def add_tap(self, tap: Tap) -> Callable[[], None]:
        """Call `tap(direction, line)` with every raw message read (`"in"`, before it is parsed)
        and written (`"out"`), in order; returns a function that removes it. A tap runs inside
        the connection's reading and writing: keep it quick. Its exceptions are logged."""
        self._taps.append(tap)

        def remove() -> None:
            if tap in self._taps:
                self._taps.remove(tap)

        return remove

    @overload
    async def request(
        self, method: str, params: Any, result: type[T], *, timeout: float | None = None
    ) -> T: ...
    @overload
    async def request(  # a tagged union's alias, not a class
        self, method: str, params: Any, result: object, *, timeout: float | None = None
    ) -> Any: ...
    @overload
    async def request(
        self,
        method: str,
        params: Any = None,
        result: None = None,
        *,
        timeout: float | None = None,
    ) -> Any: ...
    async def request(
        self, method: str, params: Any = None, result: Any = None, *, timeout: float | None = None
    ) -> Any:
        """Call `method` and wait for its answer, decoded as `result` (raw JSON when None).

        Raises RpcError when the peer answers with an error, DecodeError when the answer does
        not fit `result`, ConnectionClosed when no answer can come, UnencodableMessage when
        `params` has no JSON form, TimeoutError when no answer came within `timeout` seconds
        (default: the connection's `request_timeout`). A timeout, or cancelling the awaiting
        task, sends the peer `$/cancel_request` and stops waiting.
        """
        self.start()
        if self._input_done:
            raise ConnectionClosed("the connection is closed")
        rid = next(self._ids)
        line = self._call_line(method, rid, params)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[rid] = future
        try:
            self._enqueue(line)
        except ConnectionClosed:
            del self._pending[rid]
            raise
        limit = self.request_timeout if timeout is None else timeout
        try:
            if self._queued_bytes >= WRITE_CHUNK:
                await self._let_output_flow()
            if limit is None:
                raw = await future
            else:
                try:
                    raw = await asyncio.wait_for(future, limit)
                except TimeoutError:
                    if future.done() and not future.cancelled():  # the answer won the race
                        raw = future.result()
                    else:
                        self._abandon(rid)
                        raise TimeoutError(
                            f"{method}: no answer within {limit:g} s (request id {rid}); "
                            "the peer was asked to cancel it"
                        ) from None
        except asyncio.CancelledError:
            self._abandon(rid)
            raise
        finally:
            self._pending.pop(rid, None)
        return raw if result is None else decode(result, raw)

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (no answer comes). Raises ConnectionClosed once closed, and
        UnencodableMessage when `params` has no JSON form."""
        if self._reader_task is None:
            self.start()
        named = self._method_texts.get(method)
        if named is None or params is None or self._taps or self._output_closed:
            self._enqueue(self._call_line(method, None, params))
        else:  # the usual case of _call_line and _enqueue, inline: a stream of updates
            try:
                params_text = _text_of(params)
            except UnencodableMessage as exc:
                raise UnencodableMessage(f"cannot send {method}: the params are {exc}") from None
            line = f'{{"jsonrpc":"2.0",{named}{params_text}}}\n'.encode()
            self._out.append(line)
            self._out_bytes += len(line)
            self._queued_bytes += len(line)
            wake = self._out_wake
            if wake is not None and not wake.done():
                wake.set_result(None)
        if self._queued_bytes >= WRITE_CHUNK:
            await self._let_output_flow()

    def _call_line(self, method: str, rid: int | None, params: Any) -> bytes:
        """The line of a request (`rid`) or a notification (None): the bytes dump_line makes
        of the message, made as text from the params' (`_text_of`) and the envelope's, which is
        made once per method."""
        try:
            if params is None or type(method) is not str:
                message: Message = {"jsonrpc": "2.0"}
                if rid is not None:
                    message["id"] = rid
                message["method"] = method
                if params is not None:
                    message["params"] = encode(params)
                return dump_line(message)
            named = self._method_texts.get(method) or self._method_text(method)
            params_text = _text_of(params)
        except UnencodableMessage as exc:
            raise UnencodableMessage(f"cannot send {method}: the params are {exc}") from None
        if rid is None:
            return f'{{"jsonrpc":"2.0",{named}{params_text}}}\n'.encode()
        return f'{{"jsonrpc":"2.0","id":{rid},{named}{params_text}}}\n'.encode()

    def _method_text(self, method: str) -> str:
        """`"method":METHOD,"params":`, remembered for a few dozen methods."""
        text = f'"method":{dump_text(method)},"params":'
        if len(self._method_texts) < MAX_METHOD_TEXTS:
            self._method_texts[method] = text
        return text

    def _abandon(self, rid: int) -> None:
        """Stop waiting for `rid`: its late answer is dropped quietly, and the peer is asked to
        cancel it. Only the newest MAX_ABANDONED_IDS are remembered."""
        if self._pending.pop(rid, None) is None:
            return
        self._abandoned[rid] = None
        if len(self._abandoned) > MAX_ABANDONED_IDS:
            del self._abandoned[next(iter(self._abandoned))]
        cancel = self.handler.CANCEL_METHOD
        if cancel is not None and not self._input_done and not self._output_closed:
            notice: Message = {"jsonrpc": "2.0", "method": cancel, "params": {"requestId": rid}}
            self._enqueue(dump_line(notice))


def _text_of(value: Any) -> str:
    """A model's JSON text, by its lane's writer when it has one."""
    writer = TEXT_WRITERS.get(type(value))
    return writer(value) if writer is not None else dump_text(encode(value))
