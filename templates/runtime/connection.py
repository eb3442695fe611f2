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
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar, overload

from ._runtime import DECODERS, DecodeError, decode, encode
from ._wire import to_text
from .jsonrpc import (
    INVALID_REQUEST,
    MAX_MESSAGE_BYTES,
    ByteReader,
    ByteWriter,
    ConnectionClosed,
    Direction,
    Message,
    RoleBase,
    Route,
    RpcError,
    Tap,
    UnencodableMessage,
    UnreadableMessage,
    dump_line,
    dump_text,
    error_reply,
    load_line,
    reply_line,
    valid_id,
)

READ_CHUNK: Final = 64 * 1024
MAX_RUNNING_REQUESTS: Final = 64
MAX_QUEUED_NOTIFICATIONS: Final = 256
MAX_HELD_MESSAGES: Final = 256
WRITE_BUFFER_BYTES: Final = 1024 * 1024
WRITE_CHUNK: Final = 64 * 1024  # handed to the transport at a time; a sender yields this often
MAX_ABANDONED_IDS: Final = 4096
MAX_NOTE_HEADS: Final = 64
CLOSE_FLUSH_SECONDS: Final = 2.0

T = TypeVar("T")
Sink = Callable[[Message], None]
# How a notification is served: the handler's method and the params decoder (None: raw JSON).
_NoteServer = tuple[Callable[[Any], Awaitable[None]], Callable[[Any], Any] | None]
# A notification waiting for the handler: its server's two parts, the method and the params.
_Note = tuple[Callable[[Any], Awaitable[None]], Callable[[Any], Any] | None, str, Any]
_ABSENT: Final = object()
_log = logging.getLogger(__name__)


class Connection:
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
        self._incoming: dict[Any, _InFlight] = {}
        self._running = 0
        self._notes: deque[_Note] = deque()
        self._held: deque[_InFlight | _Note] = deque()  # read, waiting for room, in order
        self._note_servers: dict[str, _NoteServer] = {}  # per routed method, made on first use
        self._note_heads: dict[str, str] = {}  # the text before an outgoing notification's params
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
        self._bad_lines = _RateLimitedLog("ignored an unreadable message from the peer")
        self._background: set[asyncio.Task[Any]] = set()
        self._reader_task: asyncio.Task[None] | None = None
        self._worker_task: asyncio.Task[None] | None = None
        self._writer_task: asyncio.Task[None] | None = None
        self._input_done = False  # EOF, read error or close(): no answer can come any more
        self._reading_done = False  # every message read has been admitted
        self._closing = False
        self._closed = asyncio.Event()

    # -- lifecycle ---------------------------------------------------------------------------
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
            if isinstance(call, _InFlight):
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

    # -- calling the peer --------------------------------------------------------------------
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
        message: Message = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = encode(params)
        line = _encode_call(method, message)
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
        try:
            if params is None or type(method) is not str:
                message: Message = {"jsonrpc": "2.0", "method": method}
                if params is not None:
                    message["params"] = encode(params)
                line = dump_line(message)
            else:
                # The same bytes as dump_line of the whole message: the envelope's text is
                # made once per method, and only the params are encoded each time.
                head = self._note_heads.get(method) or self._note_head(method)
                line = (head + to_text(params) + "}\n").encode()
        except UnencodableMessage as exc:
            raise UnencodableMessage(f"cannot send {method}: the params are {exc}") from None
        self._enqueue(line)
        if self._queued_bytes >= WRITE_CHUNK:
            await self._let_output_flow()

    def _note_head(self, method: str) -> str:
        """`{"jsonrpc":"2.0","method":METHOD,"params":`, remembered for a few dozen methods."""
        head = f'{{"jsonrpc":"2.0","method":{dump_text(method)},"params":'
        if len(self._note_heads) < MAX_NOTE_HEADS:
            self._note_heads[method] = head
        return head

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

    # -- reading -----------------------------------------------------------------------------
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

    def _out_over_limit(self) -> bool:
        return self._out_bytes > self._write_limit and not self._output_closed

    def _on_too_long(self, size: int) -> None:
        self._bad_lines.log(f"{size} bytes, over the limit of {self._max_message_bytes}")
        self._reply_soon(error_reply(None, RpcError.too_long(size, self._max_message_bytes)))

    def _on_line(self, line: bytes) -> None:
        if self._taps:
            self._tap("in", line)
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
                    self._on_notification(method, message.get("params", _ABSENT))
                elif not self._closing:  # _on_notification and _admit_note, for the usual case
                    params = message.get("params", _ABSENT)
                    if params is _ABSENT:
                        params = None if server[1] is None else {}
                    self._notes.append((server[0], server[1], method, params))
                    ready = self._note_ready
                    if ready is not None and not ready.done():
                        ready.set_result(None)
            else:
                self._dispatch(message, None)
        elif type(message) is list:
            self._on_batch(message)
        else:
            self._reject(self._reply_soon, None, "a message must be a JSON object")

    def _on_batch(self, items: list[Any]) -> None:
        if not self.handler.BATCHES:
            reason = "this protocol version has no batches: send one message per line"
            self._reply_soon(error_reply(None, RpcError.invalid_request(reason)))
            return
        if not items:
            self._reply_soon(error_reply(None, RpcError.invalid_request("empty batch")))
            return
        batch = _Batch(self)
        for item in items:
            if self._dispatch(item, batch) is not None:
                batch.expected += 1
        batch.sealed = True
        batch.flush_if_complete()

    # -- dispatching -------------------------------------------------------------------------
    def _dispatch(self, message: Any, batch: _Batch | None) -> bool | None:
        """Route one message (alone, or an item of `batch`). Returns True when an answer will
        be sent, else None."""
        sink = self._reply_soon if batch is None else batch.add
        if type(message) is not dict:
            return self._reject(sink, None, "a message must be a JSON object")
        if "method" in message:
            return self._on_call(message, sink, batch)
        if "id" in message:
            self._on_response(message)
            return None
        return self._reject(sink, None, "a message needs a method or an id")

    def _reject(self, sink: Sink, rid: Any, reason: str) -> bool:
        sink(error_reply(rid, RpcError.invalid_request(reason)))
        return True

    def _on_call(self, message: Message, sink: Sink, batch: _Batch | None) -> bool | None:
        method = message["method"]
        is_request = "id" in message
        rid = message.get("id")
        if is_request and not valid_id(rid):
            return self._reject(sink, None, "the id must be a string, an integer or null")
        if message.get("jsonrpc") != "2.0":
            return self._reject(sink, rid, 'the message needs "jsonrpc": "2.0"')
        if type(method) is not str:
            return self._reject(sink, rid, "the method must be a string")
        params = message.get("params", _ABSENT)
        if not is_request:
            self._on_notification(method, params)
            return None
        if self._closing:
            return None
        # Valid ids are None, str or int (never bool), so 1 and "1" stay apart as keys.
        if rid in self._incoming:
            return self._reject(sink, rid, "a request with this id is still running")
        route = self.handler.ROUTES.get(method)
        if (route is None and not method.startswith("_")) or (
            route is not None and route.kind != "request"
        ):
            sink(error_reply(rid, RpcError.method_not_found(method)))
            return True
        answer = self._send_reply if batch is None else batch.add
        flight = _InFlight(rid, method, route, params, answer, batch is not None)
        if batch is not None:
            batch.flights.append(flight)
        self._incoming[rid] = flight
        if not self._held and self._running < self._max_running:
            self._start_request(flight)
        else:
            self._held.append(flight)
        return True

    def _start_request(self, flight: _InFlight) -> None:
        self._running += 1
        flight.task = asyncio.create_task(self._serve(flight))

    def _make_room(self) -> None:
        """Start held calls while there is room for them, in order; wake the reader."""
        held = self._held
        while held:
            call = held[0]
            if type(call) is _InFlight:
                if self._running >= self._max_running:
                    break
                held.popleft()
                self._start_request(call)
            else:
                if len(self._notes) >= self._max_notes:
                    break
                held.popleft()
                self._notes.append(call)  # type: ignore[arg-type]
                self._wake_worker()
        room = self._room
        if room is not None and not room.done():
            room.set_result(None)

    async def _call(self, method: str, route: Route | None, params: Any) -> Any:
        if route is None:
            return await self.handler.ext_method(method, None if params is _ABSENT else params)
        try:
            value = _decode_params(route, params)
        except DecodeError as exc:
            raise _InvalidParams(exc) from None
        return await getattr(self.handler, route.attr)(value)

    async def _serve(self, flight: _InFlight) -> None:
        rid = flight.rid
        flight.started = True
        try:
            if flight.cancelled:  # cancelled before this task had its first turn
                raise asyncio.CancelledError
            result = encode(await self._call(flight.method, flight.route, flight.params))
            reply: Message = {"jsonrpc": "2.0", "id": rid, "result": result}
        except asyncio.CancelledError:
            reply = error_reply(rid, RpcError.request_cancelled())
        except _InvalidParams as exc:
            reply = error_reply(rid, RpcError.invalid_params(exc.error))
        except RpcError as exc:
            reply = error_reply(rid, exc)
        except Exception as exc:
            _log.exception("the handler of %s failed", flight.method)
            reply = error_reply(rid, RpcError.internal_error(f"{type(exc).__name__}: {exc}"))
        try:
            flight.sink(reply)  # the id stays taken until this answer is in the output
            if self._out_bytes > self._write_limit and not self._closing:
                await self._wait_for_output_room()  # this request counts until then
        except (ConnectionClosed, asyncio.CancelledError):
            pass
        finally:
            if self._incoming.get(rid) is flight and not flight.batched:
                del self._incoming[rid]
            self._running -= 1
            self._make_room()

    def _on_notification(self, method: str, params: Any) -> None:
        server = self._note_servers.get(method)
        if server is None:
            if method == self.handler.CANCEL_METHOD:
                self._cancel_incoming(params)  # at once, even for a call still held
                return
            server = self._note_server(method)
            if server is None:
                _log.debug("ignored the notification %s", method)
                return
        if params is _ABSENT:
            params = None if server[1] is None else {}
        if not self._closing:
            self._admit_note((server[0], server[1], method, params))

    def _admit_note(self, note: _Note) -> None:
        if not self._held and len(self._notes) < self._max_notes:
            self._notes.append(note)
            ready = self._note_ready
            if ready is not None and not ready.done():
                ready.set_result(None)
        else:
            self._held.append(note)

    async def notifications_handled(self) -> None:
        """Wait until every notification read so far has been handled, in order: what a reply
        can rely on (a v1 turn's updates all come before its prompt's answer). Returns at once
        when no more can be handled (the connection is closing, or done reading and
        handling), and when a notification handler awaits it itself (it would wait for its own
        turn; a task the handler starts and waits for would too: do not)."""
        worker = self._worker_task
        if self._closing or worker is None or worker.done() or asyncio.current_task() is worker:
            return
        reached: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def mark(_: Any) -> None:
            if not reached.done():
                reached.set_result(None)

        self._admit_note((mark, None, "", None))
        await asyncio.wait({reached, worker}, return_when=asyncio.FIRST_COMPLETED)

    def _note_server(self, method: str) -> _NoteServer | None:
        """The handler's method and the params decoder for a notification (None: ignored)."""
        route = self.handler.ROUTES.get(method)
        if route is None:
            if not method.startswith("_"):
                return None
            return functools.partial(self.handler.ext_notification, method), None
        if route.kind != "notification":
            return None
        tp = route.params
        decoder = None if tp is None else DECODERS.get(tp, functools.partial(decode, tp))
        server = (getattr(self.handler, route.attr), decoder)
        self._note_servers[method] = server
        return server

    def _cancel_incoming(self, params: Any) -> None:
        rid = params.get("requestId", _ABSENT) if type(params) is dict else _ABSENT
        flight = self._incoming.get(rid) if valid_id(rid) else None
        if flight is not None:
            flight.cancel()

    def _wake_worker(self) -> None:
        ready = self._note_ready
        if ready is not None and not ready.done():
            ready.set_result(None)

    async def _run_notifications(self) -> None:
        # One at a time, in arrival order: `session/update`s must be applied in order.
        notes = self._notes
        low_water = self._max_notes // 2
        while True:
            if not notes:
                if self._reading_done and not self._held:
                    return
                self._note_ready = asyncio.get_running_loop().create_future()
                await self._note_ready
                continue
            serve, decoder, method, params = notes.popleft()
            if self._held and len(notes) <= low_water:
                self._make_room()  # in bulk, not one by one
            try:
                await serve(params if decoder is None else decoder(params))
            except DecodeError as exc:
                _log.warning("ignored the notification %s with invalid params: %s", method, exc)
            except RecursionError:
                _log.warning("ignored the notification %s: params nested too deeply", method)
            except Exception:
                _log.exception("the handler of the notification %s failed", method)

    def _on_response(self, message: Message) -> None:
        rid = message["id"]
        future = self._pending.pop(rid, None) if type(rid) is int else None
        if future is None:
            if type(rid) is int and rid in self._abandoned:
                del self._abandoned[rid]
            elif "error" in message:
                _log.warning("the peer reported an error: %s", RpcError.from_json(message["error"]))
            else:
                _log.warning("dropped a response to the unknown request id %r", rid)
            return
        if future.done():
            return
        if message.get("jsonrpc") != "2.0" or ("result" in message) == ("error" in message):
            future.set_exception(
                RpcError(INVALID_REQUEST, "Invalid response", {"response": message})
            )
        elif "error" in message:
            future.set_exception(RpcError.from_json(message["error"]))
        else:
            future.set_result(message["result"])

    def _fail_pending(self, why: str) -> None:
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(ConnectionClosed(why))

    # -- writing -----------------------------------------------------------------------------
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

    def _tap(self, direction: Direction, line: bytes) -> None:
        for tap in list(self._taps):
            try:
                tap(direction, line)
            except Exception:
                _log.exception("a message tap failed; it is removed")
                self._taps.remove(tap)


def _encode_call(method: str, message: Message) -> bytes:
    try:
        return dump_line(message)
    except UnencodableMessage as exc:
        raise UnencodableMessage(f"cannot send {method}: the params are {exc}") from None


class _Batch:
    """Collects the answers to one incoming batch and sends them as one array."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.expected = 0
        self.sealed = False  # every item was dispatched
        self.replies: list[bytes] = []
        self.flights: list[_InFlight] = []

    def add(self, reply: Message) -> None:
        self.replies.append(reply_line(reply)[:-1])
        self.flush_if_complete()

    def flush_if_complete(self) -> None:
        if not self.sealed or len(self.replies) != self.expected or not self.expected:
            return
        connection = self.connection
        try:
            connection._enqueue(b"[" + b",".join(self.replies) + b"]\n")
        except ConnectionClosed:
            pass
        self.replies = []
        self.expected = 0
        for flight in self.flights:  # their ids are free once the array is in the output
            if connection._incoming.get(flight.rid) is flight:
                del connection._incoming[flight.rid]


class _InFlight:
    """An incoming request, from arrival until its answer is written. A task cancelled before
    its first turn never runs its code, so a cancellation that comes that early (or while the
    request is held) is a flag the task checks when it starts."""

    __slots__ = (
        "rid", "method", "route", "params", "sink", "batched", "task", "started", "cancelled",
    )  # fmt: skip

    def __init__(
        self, rid: Any, method: str, route: Route | None, params: Any, sink: Sink, batched: bool
    ) -> None:
        self.rid = rid
        self.method = method
        self.route = route
        self.params = params
        self.sink = sink
        self.batched = batched  # its id is freed when the batch's array is sent
        self.task: asyncio.Task[None] | None = None
        self.started = False
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True
        if self.started and self.task is not None:
            self.task.cancel()


class _RateLimitedLog:
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


class _InvalidParams(Exception):
    def __init__(self, error: DecodeError) -> None:
        self.error = error


def _decode_params(route: Route, params: Any) -> Any:
    if route.params is None:
        return None if params is _ABSENT else params
    return decode(route.params, {} if params is _ABSENT else params)
