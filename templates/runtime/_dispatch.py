"""Serving what the peer sends a `Connection`: requests run as tasks (at most
`max_running_requests` at once), notifications handed to the handler one at a time in arrival
order, answers matched to our pending calls, batches answered as one array; calls wait in
arrival order while there is no room for them.

Part of `Connection` (connection.py), which sets the state declared here.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Final

from ._output import ConnectionOutput
from ._runtime import DECODERS, DecodeError, decode, encode
from .jsonrpc import (
    INVALID_REQUEST,
    ConnectionClosed,
    Message,
    RoleBase,
    Route,
    RpcError,
    error_reply,
    reply_line,
    valid_id,
)

Sink = Callable[[Message], None]
# How a notification is served: the handler's method and the params decoder (None: raw JSON).
NoteServer = tuple[Callable[[Any], Awaitable[None]], Callable[[Any], Any] | None]
# A notification waiting for the handler: its server's two parts, the method and the params.
Note = tuple[Callable[[Any], Awaitable[None]], Callable[[Any], Any] | None, str, Any]
ABSENT: Final = object()  # a message without params
_log = logging.getLogger(f"{__package__}.connection")  # the connection's logger


class ConnectionDispatch(ConnectionOutput):
    """Incoming calls and notifications, and the answers to our own calls."""

    handler: RoleBase
    _cancel_method: str | None
    _max_running: int
    _max_notes: int
    _pending: dict[int, asyncio.Future[Any]]
    _abandoned: dict[int, None]  # calls we stopped waiting for, oldest first
    _incoming: dict[Any, InFlight]  # requests by id from arrival until their answer is written
    _running: int
    _notes: deque[Note]
    _held: deque[InFlight | Note]  # read, waiting for room, in order
    _note_servers: dict[str, NoteServer]  # per routed method, made on first use
    _note_ready: asyncio.Future[None] | None
    _worker_task: asyncio.Task[None] | None
    _reading_done: bool  # every message read has been admitted
    _closing: bool

    def _on_batch(self, items: list[Any]) -> None:
        if not self.handler.BATCHES:
            reason = "this protocol version has no batches: send one message per line"
            self._reply_soon(error_reply(None, RpcError.invalid_request(reason)))
            return
        if not items:
            self._reply_soon(error_reply(None, RpcError.invalid_request("empty batch")))
            return
        batch = Batch(self)
        for item in items:
            if self._dispatch(item, batch) is not None:
                batch.expected += 1
        batch.sealed = True
        batch.flush_if_complete()

    def _dispatch(self, message: Any, batch: Batch | None) -> bool | None:
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

    def _on_call(self, message: Message, sink: Sink, batch: Batch | None) -> bool | None:
        method = message["method"]
        is_request = "id" in message
        rid = message.get("id")
        if is_request and not valid_id(rid):
            return self._reject(sink, None, "the id must be a string, an integer or null")
        if message.get("jsonrpc") != "2.0":
            return self._reject(sink, rid, 'the message needs "jsonrpc": "2.0"')
        if type(method) is not str:
            return self._reject(sink, rid, "the method must be a string")
        params = message.get("params", ABSENT)
        if not is_request:
            self._on_notification(method, params)
            return None
        if self._closing:
            return None
        # Valid ids are None, str or int (never bool), so 1 and "1" stay apart as keys.
        if rid in self._incoming:
            return self._reject(sink, rid, "a request with this id is still running")
        route = self.handler.ROUTES.get((method, "request"))
        if route is None and not method.startswith("_"):
            sink(error_reply(rid, RpcError.method_not_found(method)))
            return True
        answer = self._send_reply if batch is None else batch.add
        flight = InFlight(rid, method, route, params, answer, batch is not None)
        if batch is not None:
            batch.flights.append(flight)
        self._incoming[rid] = flight
        if not self._held and self._running < self._max_running:
            self._start_request(flight)
        else:
            self._held.append(flight)
        return True

    def _start_request(self, flight: InFlight) -> None:
        self._running += 1
        flight.task = asyncio.create_task(self._serve(flight))

    def _make_room(self) -> None:
        """Start held calls while there is room for them, in order; wake the reader."""
        held = self._held
        while held:
            call = held[0]
            if type(call) is InFlight:
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
            return await self.handler.ext_method(method, None if params is ABSENT else params)
        try:
            value = decode_params(route, params)
        except DecodeError as exc:
            raise InvalidParams(exc) from None
        return await getattr(self.handler, route.attr)(value)

    async def _serve(self, flight: InFlight) -> None:
        rid = flight.rid
        flight.started = True
        try:
            if flight.cancelled:  # cancelled before this task had its first turn
                raise asyncio.CancelledError
            result = encode(await self._call(flight.method, flight.route, flight.params))
            reply: Message = {"jsonrpc": "2.0", "id": rid, "result": result}
        except asyncio.CancelledError:
            reply = error_reply(rid, RpcError.request_cancelled())
        except InvalidParams as exc:
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
        if params is ABSENT:
            params = None if server[1] is None else {}
        if not self._closing:
            self._admit_note((server[0], server[1], method, params))

    def _admit_note(self, note: Note) -> None:
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

    def _note_server(self, method: str) -> NoteServer | None:
        """The handler's method and the params decoder for a notification (None: ignored)."""
        route = self.handler.ROUTES.get((method, "notification"))
        if route is None:
            if not method.startswith("_"):
                return None
            return functools.partial(self.handler.ext_notification, method), None
        tp = route.params
        decoder = None if tp is None else DECODERS.get(tp, functools.partial(decode, tp))
        server = (getattr(self.handler, route.attr), decoder)
        self._note_servers[method] = server
        return server

    def _cancel_incoming(self, params: Any) -> None:
        rid = params.get("requestId", ABSENT) if type(params) is dict else ABSENT
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


class Batch:
    """Collects the answers to one incoming batch and sends them as one array."""

    def __init__(self, connection: ConnectionDispatch) -> None:
        self.connection = connection
        self.expected = 0
        self.sealed = False  # every item was dispatched
        self.replies: list[bytes] = []
        self.flights: list[InFlight] = []

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


class InFlight:
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


class InvalidParams(Exception):
    def __init__(self, error: DecodeError) -> None:
        self.error = error


def decode_params(route: Route, params: Any) -> Any:
    if route.params is None:
        return None if params is ABSENT else params
    return decode(route.params, {} if params is ABSENT else params)
