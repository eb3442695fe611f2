"""The dispatch step of a `Connection`: `Dispatcher` serves what the peer sends. Requests run as
tasks, notifications reach the handler one at a time in arrival order (one worker task),
answers go to our pending calls, batches are answered as one array, and a line that could not
be read is answered (under its request's id when the id could still be read).

Bounds: at most `max_running_requests` requests run at once (one counts until its answer is in
the output), at most `max_queued_notifications` notifications wait for the handler, and calls
beyond those wait in `held`, in arrival order; the line reader stops reading while more than
`max_held_messages` are held. `rebind()` switches the handler for what is read from then on.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import deque
from collections.abc import Mapping
from typing import Any, Protocol

from ._notifications import Note, NoteServer, NotificationQueue
from ._outgoing import OutgoingCalls
from ._output import Output, Wakeup
from ._requests import ABSENT, Batch, InFlight, InvalidParams, Sink, serve_call
from ._runtime import DECODERS, JsonValue, decode, encode
from ._salvage import Salvaged
from .jsonrpc import (
    ConnectionClosed,
    Message,
    Route,
    RouteKey,
    RpcError,
    error_reply,
    reply_line,
    valid_id,
)

_log = logging.getLogger(f"{__package__}.connection")  # the connection's logger


class Handler(Protocol):
    """What the dispatcher needs of a handler (`RoleBase` in connection.py is one)."""

    @property
    def ROUTES(self) -> Mapping[RouteKey, Route]: ...  # noqa: N802 - the class attribute's name

    @property
    def CANCEL_METHOD(self) -> str | None: ...  # noqa: N802

    @property
    def BATCHES(self) -> bool: ...  # noqa: N802

    async def ext_method(self, method: str, params: JsonValue) -> JsonValue: ...

    async def ext_notification(self, method: str, params: JsonValue) -> None: ...


class Dispatcher:
    """Incoming calls, notifications and answers. `dispatch` takes a parsed line,
    `notification` a notification's method and params, `unreadable` a line that did not
    parse; each is the one dispatch step of what it takes."""

    def __init__(
        self,
        handler: Handler,
        output: Output,
        calls: OutgoingCalls,
        room: Wakeup,
        *,
        max_running: int,
        max_notes: int,
    ) -> None:
        self.handler = handler
        self._output = output
        self._calls = calls
        self._room = room  # the reader's: woken when held calls start
        self._max_running = max_running
        self._incoming: dict[Any, InFlight] = {}  # by id, from arrival until answered
        self._running = 0
        self.held: deque[InFlight | Note] = deque()  # read, waiting for room, in order
        self._notes = NotificationQueue(max_notes, self.held, self._make_room)
        self._offer = self._notes.offer
        self._note_servers: dict[str, NoteServer] = {}  # per routed method, made on first use
        self._deferred: list[Message] = []  # answers sent once the reader's turn ends
        self.closing = False

    def start(self) -> None:
        self._notes.start()

    def rebind(self, handler: Handler) -> None:
        """Serve `handler` from now on: what was read before keeps the handler it was routed
        to; the notification servers made for the old one are dropped."""
        self.handler = handler
        self._note_servers.clear()
        self._calls.cancel_method = handler.CANCEL_METHOD

    # -- the dispatch step ---------------------------------------------------------------------
    def dispatch(self, message: Any) -> None:
        """Serve one parsed line: a message, or a batch when the handler's lane has them."""
        if type(message) is dict:
            self._one(message, None)
        elif type(message) is list:
            self._batch(message)
        else:
            self._reject(self.answer_soon, None, "a message must be a JSON object")

    def notification(self, method: str, params: Any) -> None:
        """Queue a notification for the handler (or act on a cancellation at once)."""
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
        if not self.closing:
            self._admit_note((server[0], server[1], method, params))

    def unreadable(self, reason: str, found: Salvaged | None) -> None:
        """A line that did not parse: a request whose envelope could be read is answered
        -32602 under its id, `data` saying where (`path` in its params, or in the `member` of
        the message named) and why; anything else gets -32700 with id null, and an answer to
        one of our calls also fails that call."""
        if found is not None and found.is_request and valid_id(found.rid):
            if self.closing:
                return
            error = RpcError.invalid_params(found.error)
            if found.member != "params":
                error.data = {"member": found.member, **error.to_json()["data"]}
            self.answer_soon(error_reply(found.rid, error))
            return
        if found is not None and not found.is_request:
            self._calls.unreadable_answer(found)
        self.answer_soon(error_reply(None, RpcError.parse_error(reason)))

    def answer_soon(self, reply: Message) -> None:
        """Answer once the reader's turn ends, after the requests read before this one had
        their first step: answers that need no handler do not overtake those that are ready
        at once."""
        if not self._deferred:
            asyncio.get_running_loop().call_soon(self._send_deferred)
        self._deferred.append(reply)

    @property
    def answers_waiting(self) -> bool:
        return bool(self._deferred)

    def _one(self, message: Any, batch: Batch | None) -> bool:
        """Route one message (alone, or an item of `batch`). Returns True when an answer will
        be sent."""
        sink = self.answer_soon if batch is None else batch.add
        if type(message) is not dict:
            return self._reject(sink, None, "a message must be a JSON object")
        if "method" in message:
            return self._on_call(message, sink, batch)
        if "id" in message:
            self._calls.answer(message)
            return False
        return self._reject(sink, None, "a message needs a method or an id")

    def _reject(self, sink: Sink, rid: Any, reason: str) -> bool:
        sink(error_reply(rid, RpcError.invalid_request(reason)))
        return True

    def _on_call(self, message: Message, sink: Sink, batch: Batch | None) -> bool:
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
            self.notification(method, params)
            return False
        if self.closing:
            return False
        # Valid ids are None, str or int (never bool), so 1 and "1" stay apart as keys.
        if rid in self._incoming:
            return self._reject(sink, rid, "a request with this id is still running")
        route = self.handler.ROUTES.get((method, "request"))
        if route is None and not method.startswith("_"):
            sink(error_reply(rid, RpcError.method_not_found(method)))
            return True
        answer = self._send_reply if batch is None else batch.add
        flight = InFlight(self.handler, rid, method, route, params, answer, batch is not None)
        if batch is not None:
            batch.flights.append(flight)
        self._incoming[rid] = flight
        if not self.held and self._running < self._max_running:
            self._start_request(flight)
        else:
            self.held.append(flight)
        return True

    def _batch(self, items: list[Any]) -> None:
        if not self.handler.BATCHES:
            reason = "this protocol version has no batches: send one message per line"
            self.answer_soon(error_reply(None, RpcError.invalid_request(reason)))
            return
        if not items:
            self.answer_soon(error_reply(None, RpcError.invalid_request("empty batch")))
            return
        batch = Batch(self._output, self._incoming)
        for item in items:
            if self._one(item, batch):
                batch.expected += 1
        batch.sealed = True
        batch.flush_if_complete()

    # -- requests ------------------------------------------------------------------------------
    def _start_request(self, flight: InFlight) -> None:
        self._running += 1
        flight.task = asyncio.create_task(self._serve(flight))

    async def _serve(self, flight: InFlight) -> None:
        rid = flight.rid
        flight.started = True
        try:
            if flight.cancelled:  # cancelled before this task had its first turn
                raise asyncio.CancelledError
            result = encode(await serve_call(flight))
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
        output = self._output
        try:
            flight.sink(reply)  # the id stays taken until this answer is in the output
            if output.pending > output.limit and not self.closing:
                await output.wait_for_room()  # this request counts until then
        except (ConnectionClosed, asyncio.CancelledError):
            pass
        finally:
            if self._incoming.get(rid) is flight and not flight.batched:
                del self._incoming[rid]
            self._running -= 1
            self._make_room()

    def _send_deferred(self) -> None:
        replies, self._deferred = self._deferred, []
        for reply in replies:
            self._send_reply(reply)

    def _send_reply(self, reply: Message) -> None:
        try:
            self._output.put(reply_line(reply))
        except ConnectionClosed:
            _log.debug("could not send the answer to request id %r", reply.get("id"))

    def _cancel_incoming(self, params: Any) -> None:
        rid = params.get("requestId", ABSENT) if type(params) is dict else ABSENT
        flight = self._incoming.get(rid) if valid_id(rid) else None
        if flight is not None:
            flight.cancel()

    def _make_room(self) -> None:
        """Start held calls while there is room for them, in order; wake the reader."""
        held = self.held
        while held:
            call = held[0]
            if isinstance(call, InFlight):
                if self._running >= self._max_running:
                    break
                held.popleft()
                self._start_request(call)
            elif self._notes.offer(call):
                held.popleft()
            else:
                break
        self._room.set()

    # -- notifications -------------------------------------------------------------------------
    def _admit_note(self, note: Note) -> None:
        if self.held or not self._offer(note):
            self.held.append(note)  # behind what waits already, in arrival order

    def _note_server(self, method: str) -> NoteServer | None:
        """The handler's method and the params decoder for a notification (None: ignored)."""
        handler = self.handler
        route = handler.ROUTES.get((method, "notification"))
        if route is None:
            if not method.startswith("_"):
                return None
            return functools.partial(handler.ext_notification, method), None
        tp = route.params
        decoder = None if tp is None else DECODERS.get(tp, functools.partial(decode, tp))
        server = (getattr(handler, route.attr), decoder)
        self._note_servers[method] = server
        return server

    async def notifications_handled(self) -> None:
        """See `Connection.notifications_handled`."""
        wait = None if self.closing else self._notes.handled(self._admit_note)
        if wait is not None:
            await wait

    # -- the end -------------------------------------------------------------------------------
    async def finish(self) -> None:
        """After EOF: let held calls start, queued notifications and running handlers finish
        (their answers may still go out)."""
        while self.held:
            await self._room.wait()
        self._notes.end()
        tasks = [t for t in (self._notes.task, *(f.task for f in self._incoming.values())) if t]
        await asyncio.gather(*tasks, return_exceptions=True)

    def close(self) -> list[asyncio.Task[Any]]:
        """Stop now: held calls and running handlers are cancelled (answered -32800 while the
        output is open), queued notifications dropped. Returns the tasks to wait for (not the
        caller's own: close() may be called from a handler)."""
        self.closing = True
        me = asyncio.current_task()
        for call in self.held:
            if type(call) is InFlight:
                call.cancelled = True
                self._start_request(call)  # answered -32800 at once
        self.held.clear()
        self._notes.clear()
        self._notes.end()
        for flight in list(self._incoming.values()):
            if flight.task is not me:
                flight.cancel()
        worker = self._notes.task
        if worker is not None and worker is not me:
            worker.cancel()
        tasks = [worker, *(f.task for f in self._incoming.values())]
        return [t for t in tasks if t is not None and t is not me]
