"""The JSON-RPC runtime, on asyncio and the standard library only.

A `Connection` joins a handler (an `AgentBase` or `ClientBase` subclass) to a byte reader and
writer: it frames messages on `\\n`, runs each incoming request in its own task (so many can be
in flight both ways), feeds notifications to the handler one at a time in arrival order,
matches responses to pending calls by id, and writes every message whole and in order.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Final, TypeVar, overload

from ._runtime import DecodeError, decode, encode
from .jsonrpc import (
    INVALID_REQUEST,
    MAX_MESSAGE_BYTES,
    ByteReader,
    ByteWriter,
    ConnectionClosed,
    Message,
    RoleBase,
    Route,
    RpcError,
    dump_line,
    error_reply,
    load_line,
    reply_line,
    valid_id,
)

READ_CHUNK: Final = 64 * 1024
T = TypeVar("T")
Sink = Callable[[Message], Awaitable[None]]
_ABSENT: Final = object()
_log = logging.getLogger(__name__)


class Connection:
    """One JSON-RPC peer over a byte stream. `start()` (or `async with`) begins reading;
    `wait_closed()` returns once the peer closed its side and running handlers finished;
    `close()` stops at once, cancelling running handlers and failing pending calls."""

    def __init__(
        self,
        handler: RoleBase,
        reader: ByteReader,
        writer: ByteWriter,
        *,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
    ) -> None:
        if handler._connection is not None:
            raise ValueError("this handler already serves another Connection")
        handler._connection = self
        self.handler = handler
        self._reader = reader
        self._writer = writer
        self._max_message_bytes = max_message_bytes
        self._ids = itertools.count()
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._abandoned: set[int] = set()  # calls we stopped waiting for: late answers are quiet
        self._incoming: dict[Any, _InFlight] = {}  # by request id
        self._notes: asyncio.Queue[tuple[Route | None, str, Any] | None] = asyncio.Queue()
        self._write_lock = asyncio.Lock()
        self._background: set[asyncio.Task[Any]] = set()
        self._reader_task: asyncio.Task[None] | None = None
        self._worker_task: asyncio.Task[None] | None = None
        self._input_done = False  # EOF, read error or close(): no answer can come any more
        self._closing = False
        self._writer_closed = False
        self._closed = asyncio.Event()

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        """Start reading (idempotent; needs a running event loop)."""
        if self._reader_task is None:
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
        self._fail_pending("the connection was closed")
        me = asyncio.current_task()  # close() may be called from a handler: spare it
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
            await self._close_writer()
        finally:
            self._closed.set()

    async def __aenter__(self) -> Connection:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- calling the peer --------------------------------------------------------------------
    @overload
    async def request(self, method: str, params: Any, result: type[T]) -> T: ...
    @overload
    async def request(self, method: str, params: Any = None, result: None = None) -> Any: ...
    async def request(self, method: str, params: Any = None, result: Any = None) -> Any:
        """Call `method` and wait for its answer, decoded as `result` (raw JSON when None).

        Raises RpcError when the peer answers with an error, DecodeError when the answer does
        not fit `result`, ConnectionClosed when no answer can come. Cancelling the awaiting
        task sends the peer `$/cancel_request` and stops waiting.
        """
        self.start()
        if self._input_done:
            raise ConnectionClosed("the connection is closed")
        rid = next(self._ids)
        message: Message = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = encode(params)
        line = dump_line(message)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[rid] = future
        sent = False

        def mark_sent() -> None:
            nonlocal sent
            sent = True

        try:
            await self._write(line, mark_sent)
            raw = await future
        except asyncio.CancelledError:
            cancel = self.handler.CANCEL_METHOD
            if self._pending.pop(rid, None) is not None and sent:
                self._abandoned.add(rid)
                if cancel is not None and not self._input_done:
                    self._spawn(self._notify_quietly(cancel, {"requestId": rid}))
            raise
        finally:
            self._pending.pop(rid, None)
        return raw if result is None else decode(result, raw)

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (no answer comes). Raises ConnectionClosed once closed."""
        message: Message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = encode(params)
        await self._write(dump_line(message))

    async def _notify_quietly(self, method: str, params: Any) -> None:
        try:
            await self.notify(method, params)
        except ConnectionClosed:
            pass

    # -- reading -----------------------------------------------------------------------------
    async def _run_reader(self) -> None:
        try:
            await self._read_lines()
        except (ConnectionError, OSError) as exc:
            _log.debug("read failed: %s", exc)
        except Exception:
            _log.exception("reading from the peer failed")
        finally:
            self._input_done = True
            self._fail_pending("the peer closed the connection")
        # The peer is gone or done: let queued notifications and running handlers finish
        # (their answers may still be read), then close our side.
        self._notes.put_nowait(None)
        await asyncio.gather(
            *[t for t in (self._worker_task, *(f.task for f in self._incoming.values())) if t],
            return_exceptions=True,
        )
        if not self._closing:
            self._closing = True
            try:
                await self._close_writer()
            finally:
                self._closed.set()

    async def _read_lines(self) -> None:
        buffer = bytearray()
        while chunk := await self._reader.read(READ_CHUNK):
            search = len(buffer)  # what is already buffered holds no newline
            buffer += chunk
            start = 0
            # Frames end at b"\n" only: JSON text may hold U+2028 and friends unescaped.
            while (end := buffer.find(b"\n", search)) >= 0:
                self._on_line(bytes(buffer[start:end]))
                start = search = end + 1
            del buffer[:start]
            if len(buffer) > self._max_message_bytes:
                _log.error("a message exceeds %d bytes; closing", self._max_message_bytes)
                return
        if buffer.strip():
            # EOF in the middle of a message: handle it as if it had been ended (an
            # unfinished one is a parse error), like the TypeScript SDK does.
            _log.warning("the peer closed the connection in the middle of a message")
            self._on_line(bytes(buffer))

    def _on_line(self, line: bytes) -> None:
        line = line.strip(b" \t\r")
        if not line:
            return
        try:
            message = load_line(line)
        except ValueError:  # UnicodeDecodeError is a ValueError too
            self._spawn(self._send_reply(error_reply(None, RpcError.parse_error())))
            return
        if type(message) is list:
            self._on_batch(message)
        else:
            self._dispatch(message, self._send_reply)

    def _on_batch(self, items: list[Any]) -> None:
        if not items:
            self._spawn(
                self._send_reply(error_reply(None, RpcError.invalid_request("empty batch")))
            )
            return
        batch = _Batch(self)
        for item in items:
            if self._dispatch(item, batch.add) is not None:
                batch.expected += 1

    # -- dispatching -------------------------------------------------------------------------
    def _dispatch(self, message: Any, sink: Sink) -> bool | None:
        """Route one message. Returns True when an answer will go to `sink`, else None."""
        if type(message) is not dict:
            return self._reject(sink, None, "a message must be a JSON object")
        if "method" in message:
            return self._on_call(message, sink)
        if "id" in message:
            self._on_response(message)
            return None
        return self._reject(sink, None, "a message needs a method or an id")

    def _reject(self, sink: Sink, rid: Any, reason: str) -> bool:
        self._spawn(sink(error_reply(rid, RpcError.invalid_request(reason))))
        return True

    def _on_call(self, message: Message, sink: Sink) -> bool | None:
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
        if route is None and not method.startswith("_"):
            self._spawn(sink(error_reply(rid, RpcError.method_not_found(method))))
            return True
        if route is not None and route.kind != "request":
            self._spawn(sink(error_reply(rid, RpcError.method_not_found(method))))
            return True
        flight = _InFlight()
        self._incoming[rid] = flight
        flight.task = asyncio.create_task(self._serve(rid, flight, method, route, params, sink))
        return True

    async def _call(self, method: str, route: Route | None, params: Any) -> Any:
        if route is None:
            return await self.handler.ext_method(method, None if params is _ABSENT else params)
        try:
            value = _decode_params(route, params)
        except DecodeError as exc:
            raise _InvalidParams(exc) from None
        return await getattr(self.handler, route.attr)(value)

    async def _serve(
        self, rid: Any, flight: _InFlight, method: str, route: Route | None, params: Any, sink: Sink
    ) -> None:
        flight.started = True
        try:
            if flight.cancelled:  # cancelled before this task had its first turn
                raise asyncio.CancelledError
            result = encode(await self._call(method, route, params))
            reply: Message = {"jsonrpc": "2.0", "id": rid, "result": result}
        except asyncio.CancelledError:
            reply = error_reply(rid, RpcError.request_cancelled())
        except _InvalidParams as exc:
            reply = error_reply(rid, RpcError.invalid_params(exc.error))
        except RpcError as exc:
            reply = error_reply(rid, exc)
        except Exception as exc:
            _log.exception("the handler of %s failed", method)
            reply = error_reply(rid, RpcError.internal_error(f"{type(exc).__name__}: {exc}"))
        finally:
            if self._incoming.get(rid) is flight:
                del self._incoming[rid]
        await sink(reply)

    def _on_notification(self, method: str, params: Any) -> None:
        if method == self.handler.CANCEL_METHOD:
            self._cancel_incoming(params)
            return
        route = self.handler.ROUTES.get(method)
        if route is not None and route.kind == "notification":
            self._notes.put_nowait((route, method, params))
        elif route is None and method.startswith("_"):
            self._notes.put_nowait((None, method, None if params is _ABSENT else params))
        else:
            _log.debug("ignored the notification %s", method)

    def _cancel_incoming(self, params: Any) -> None:
        rid = params.get("requestId", _ABSENT) if type(params) is dict else _ABSENT
        flight = self._incoming.get(rid) if valid_id(rid) else None
        if flight is not None:
            flight.cancel()

    async def _run_notifications(self) -> None:
        # One at a time, in arrival order: `session/update`s must be applied in order.
        while (item := await self._notes.get()) is not None:
            route, method, params = item
            try:
                if route is None:
                    await self.handler.ext_notification(method, params)
                else:
                    await getattr(self.handler, route.attr)(_decode_params(route, params))
            except DecodeError as exc:
                _log.warning("ignored the notification %s with invalid params: %s", method, exc)
            except Exception:
                _log.exception("the handler of the notification %s failed", method)

    def _on_response(self, message: Message) -> None:
        rid = message["id"]
        future = self._pending.pop(rid, None) if type(rid) is int else None
        if future is None:
            if type(rid) is int and rid in self._abandoned:
                self._abandoned.discard(rid)
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
    async def _write(self, line: bytes, on_written: Callable[[], None] | None = None) -> None:
        # One lock: each message is written whole, in the order the writers asked.
        async with self._write_lock:
            if self._writer_closed:
                raise ConnectionClosed("the connection is closed")
            try:
                self._writer.write(line)
                if on_written is not None:
                    on_written()
                await self._writer.drain()
            except (ConnectionError, OSError) as exc:
                raise ConnectionClosed(f"cannot write to the peer: {exc}") from exc

    async def _send_reply(self, reply: Message) -> None:
        try:
            await self._write(reply_line(reply))
        except ConnectionClosed:
            _log.debug("could not send the answer to request id %r", reply.get("id"))

    async def _close_writer(self) -> None:
        if self._writer_closed:
            return
        self._writer_closed = True
        try:
            self._writer.close()
            wait_closed = getattr(self._writer, "wait_closed", None)
            if wait_closed is not None:
                await wait_closed()
        except Exception as exc:  # the output is gone either way
            _log.debug("closing the output failed: %r", exc)

    def _spawn(self, work: Coroutine[Any, Any, Any] | Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)


class _Batch:
    """Collects the answers to one incoming batch and sends them as one array."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.expected = 0
        self.replies: list[bytes] = []

    async def add(self, reply: Message) -> None:
        self.replies.append(reply_line(reply)[:-1])
        if len(self.replies) == self.expected:
            try:
                await self.connection._write(b"[" + b",".join(self.replies) + b"]\n")
            except ConnectionClosed:
                pass


class _InFlight:
    """An incoming request being served. A task cancelled before its first turn never runs its
    code, so a cancellation that comes that early is a flag the task checks when it starts."""

    __slots__ = ("task", "started", "cancelled")

    def __init__(self) -> None:
        self.task: asyncio.Task[None] | None = None
        self.started = False
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True
        if self.started and self.task is not None:
            self.task.cancel()


class _InvalidParams(Exception):
    def __init__(self, error: DecodeError) -> None:
        self.error = error


def _decode_params(route: Route, params: Any) -> Any:
    if route.params is None:
        return None if params is _ABSENT else params
    return decode(route.params, {} if params is _ABSENT else params)
