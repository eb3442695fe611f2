"""The JSON-RPC runtime, on asyncio and the standard library only.

A `Connection` joins a handler (an `AgentBase` or `ClientBase` subclass, on `RoleBase`) to a
`Transport` (transport.py; stdio.py and process.py add standard streams and child processes).
It is wired from objects that each own their state:

- `LineReader` (_reading.py) reads the transport and gives every line one reading step (a
  line the parser refuses is read again for its id by _salvage.py);
- `Dispatcher` (_dispatch.py) gives every message one dispatch step: requests run as tasks
  (_requests.py), notifications reach the handler one at a time in arrival order
  (_notifications.py), answers go to our calls; `rebind()` hands it another handler;
- `OutgoingCalls` (_outgoing.py) makes our requests' and notifications' lines and waits for
  the answers;
- `Output` (_output.py) writes whole lines in order, batched, with the `Taps` that see every
  raw message.

Everything it holds is bounded. At most `max_running_requests` incoming requests run at once
(a request counts until its answer is written), at most `max_queued_notifications` wait for
the handler, and at most `max_held_messages` more calls wait behind them in arrival order
while answers to our own calls are still read. Past that it stops reading the transport until
there is room, so a peer that floods it is slowed down, never dropped or reordered. Outgoing
lines are batched into one write per turn of the event loop; a sender waits while more than
`write_buffer_bytes` are not yet taken by the transport.

FAST_PATHS (from the environment: `ACP_RUNTIME_FAST_PATHS=0` turns them off) decides whether
new connections take their fast paths: the compact notification branch of the reading step,
the scanner-only parse, the per-class writers and the envelopes made once per method. Each
gives the general way's outcome; the runtime's tests run once more with them off to show it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final, TypedDict, TypeVar, cast, overload

from ._dispatch import Dispatcher
from ._outgoing import MAX_ABANDONED_IDS as MAX_ABANDONED_IDS
from ._outgoing import OutgoingCalls
from ._output import CLOSE_FLUSH_SECONDS as CLOSE_FLUSH_SECONDS
from ._output import WRITE_BUFFER_BYTES, WRITE_CHUNK, Output, Taps, Wakeup
from ._reading import LineReader
from ._runtime import JsonValue, decode
from .jsonrpc import MAX_MESSAGE_BYTES, Route, RouteKey, RpcError, Tap
from .transport import READ_CHUNK as READ_CHUNK
from .transport import ByteReader, ByteWriter, StreamTransport, Transport

# The limits' defaults (those of the writing side are defined there).
MAX_RUNNING_REQUESTS: Final = 64
MAX_QUEUED_NOTIFICATIONS: Final = 256
MAX_HELD_MESSAGES: Final = 256
FAST_PATHS: Final = os.environ.get("ACP_RUNTIME_FAST_PATHS", "1") != "0"

T = TypeVar("T")


class ConnectionOptions(TypedDict, total=False):
    """The keyword options of `Connection`, accepted by `connect_stdio` and `connect_process`."""

    max_message_bytes: int
    max_running_requests: int
    max_queued_notifications: int
    max_held_messages: int
    write_buffer_bytes: int
    request_timeout: float | None
    tap: Tap | None


class RoleBase:
    """Base of `AgentBase` and `ClientBase`: the route table, the connection it serves, and the
    hooks for `_`-prefixed extension methods."""

    ROUTES: ClassVar[Mapping[RouteKey, Route]] = {}
    """(method, kind) → how it is served: a message is routed by its method and by whether it
    has an `id` (a request) or not (a notification)."""
    CANCEL_METHOD: ClassVar[str | None] = None
    """The protocol-level notification that cancels an in-flight request, if the schema has one."""
    BATCHES: ClassVar[bool] = True
    """Whether the schema defines JSON-RPC batches: when not, an incoming array is answered
    with one -32600 error."""
    _connection: Connection | None = None

    @property
    def connection(self) -> Connection:
        """The connection this handler serves (set when the Connection is created, or when the
        connection is rebound to it)."""
        if self._connection is None:
            raise RuntimeError(f"{type(self).__name__} is not attached to a Connection")
        return self._connection

    async def ext_method(self, method: str, params: JsonValue) -> JsonValue:
        """An extension request (`_vendor/...`): override to serve it; by default -32601."""
        raise RpcError.method_not_found(method)

    async def ext_notification(self, method: str, params: JsonValue) -> None:
        """An extension notification: ignored unless overridden."""


class Connection:
    """One JSON-RPC peer over a transport: `Connection(handler, transport, **options)`, or
    `Connection(handler, reader, writer, **options)` over a byte reader and writer (asyncio
    streams: a `StreamTransport`). `start()` (or `async with`) begins reading;
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
        transport: Transport | ByteReader,
        writer: ByteWriter | None = None,
        *,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        max_running_requests: int = MAX_RUNNING_REQUESTS,
        max_queued_notifications: int = MAX_QUEUED_NOTIFICATIONS,
        max_held_messages: int = MAX_HELD_MESSAGES,
        write_buffer_bytes: int = WRITE_BUFFER_BYTES,
        request_timeout: float | None = None,
        tap: Tap | None = None,
    ) -> None:
        for name, value in (
            ("max_message_bytes", max_message_bytes),
            ("max_running_requests", max_running_requests),
            ("max_queued_notifications", max_queued_notifications),
            ("write_buffer_bytes", write_buffer_bytes),
        ):
            if value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        _claim(handler, self)
        if writer is not None:
            transport = StreamTransport(cast(ByteReader, transport), writer)
        self.transport = cast(Transport, transport)
        self.request_timeout = request_timeout
        self._taps = Taps()
        room = Wakeup()  # the reader waits on it for held calls to start and output to drain
        self._output = Output(self.transport, write_buffer_bytes, self._taps, room)
        self._calls = OutgoingCalls(self._output, handler.CANCEL_METHOD, FAST_PATHS)
        self._dispatcher = Dispatcher(
            handler,
            self._output,
            self._calls,
            room,
            max_running=max_running_requests,
            max_notes=max_queued_notifications,
        )
        self._reader = LineReader(
            self.transport,
            self._dispatcher,
            self._output,
            self._taps,
            room,
            max_message_bytes=max_message_bytes,
            max_held=max(0, max_held_messages),
            fast=FAST_PATHS,
        )
        self._put = self._output.put  # what notify() calls for every notification
        self._notification_line = self._calls.notification_line
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._closed = asyncio.Event()
        if tap is not None:
            self.add_tap(tap)

    @property
    def handler(self) -> RoleBase:
        """The handler serving this connection's incoming messages."""
        return cast(RoleBase, self._dispatcher.handler)

    def rebind(self, handler: RoleBase) -> None:
        """Serve `handler` from now on: meant for a version router, which answers `initialize`
        and hands the connection the handler of the lane it picked (its own ROUTES,
        CANCEL_METHOD and BATCHES). Every message read after this call goes to `handler`;
        those read before (queued or held) stay with the handler they were routed to. The old
        handler keeps its `connection`. Raises ValueError when `handler` serves another
        connection."""
        if handler is self.handler:
            return
        _claim(handler, self)
        self._dispatcher.rebind(handler)

    def start(self) -> None:
        """Start reading (idempotent; needs a running event loop)."""
        if self._task is None:
            self._output.start()
            self._dispatcher.start()
            self._task = asyncio.create_task(self._run())

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
        self._calls.finish("the connection was closed")
        tasks = self._dispatcher.close()
        task = self._task
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            tasks.append(task)
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._shut_down()

    async def __aenter__(self) -> Connection:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def add_tap(self, tap: Tap) -> Callable[[], None]:
        """Call `tap(direction, line)` with every raw message read (`"in"`, before it is parsed)
        and written (`"out"`, when it is queued), in order; returns a function that removes it.
        A tap runs inside the connection's reading and writing: keep it quick. One that raises
        is reported in one line (the tap and the exception) and removed. A tap with
        `tap_attached()` and `tap_detached()` methods is told when it joins and when it leaves
        (removed, or the connection closed): a TranscriptRecorder closes then."""
        return self._taps.add(tap)

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
        limit = self.request_timeout if timeout is None else timeout
        raw = await self._calls.call(method, params, limit)
        return raw if result is None else decode(result, raw)

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (no answer comes). Raises ConnectionClosed once closed, and
        UnencodableMessage when `params` has no JSON form."""
        if self._task is None:
            self.start()
        self._put(self._notification_line(method, params))
        if self._output.queued >= WRITE_CHUNK:
            await self._output.flow()

    async def notifications_handled(self) -> None:
        """Wait until every notification read so far has been handled, in order: what a reply
        can rely on (a v1 turn's updates all come before its prompt's answer). Returns at once
        when no more can be handled (the connection is closing, or done reading and
        handling), and when a notification handler awaits it itself (it would wait for its own
        turn; a task the handler starts and waits for would too: do not)."""
        await self._dispatcher.notifications_handled()

    async def _run(self) -> None:
        try:
            try:
                await self._reader.run()
            finally:
                self._calls.finish("the peer closed the connection")
            # The peer is gone or done: let held calls start, queued notifications and running
            # handlers finish (their answers may still be read), then close our side.
            await self._dispatcher.finish()
        except asyncio.CancelledError:
            if not self._closing:  # the event loop is shutting down: let nothing dangle
                self._output.abort()
                self._taps.close()
            raise
        if not self._closing:
            self._closing = True
            await self._shut_down()

    async def _shut_down(self) -> None:
        try:
            await self._output.close()
        finally:
            self._taps.close()
            self._closed.set()


def _claim(handler: RoleBase, connection: Connection) -> None:
    if handler._connection is not None and handler._connection is not connection:
        raise ValueError("this handler already serves another Connection")
    handler._connection = connection
