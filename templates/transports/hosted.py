"""One ACP connection a remote client holds on the server: the `Transport` its `Connection`
reads and writes. What the client POSTs (or sends as WebSocket messages) is checked here —
session headers, session ownership, id lengths — and queued for the connection to read; what
the agent writes is routed, line by line, to the stream it belongs to:

- over HTTP, a message that names a session (`params.sessionId`), and the answer to a request
  the client sent for one, go to that session's SSE stream; everything else — `session/new`'s
  and `session/load`'s answers included — to the connection's own stream (the RFD's routing);
- over WebSocket, everything goes to the socket, in order.

Bounds: the client's input waits for the agent to read it (at most `max_message_bytes`
queued; a POST waits, and fails 503 after `max_output_stall` seconds); the agent's output
waits for the client to read it (at most `max_buffered_bytes` queued per connection; its sends
wait, and the connection is closed after `max_output_stall` seconds without progress).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Final

from ..runtime.connection import Connection
from .limits import ServerLimits
from .outbox import Outbox
from .protocol import (
    NOTIFICATION,
    OPENS,
    REATTACH,
    REQUEST,
    RESPONSE,
    SESSION_SCOPED,
    classify,
    is_error,
    peek,
    result_session,
)
from .registry import SessionOwners

_log: Final = logging.getLogger(__name__.rpartition(".")[0] + ".server")
MAX_ROUTES: Final = 65_536  # requests of one connection awaiting their answer
_NOTE: Final = b'{"jsonrpc":"2.0","method":"'  # how our runtime's requests and notifications begin
_MISSING: Final = object()


class Refused(Exception):
    """A message the server will not hand the agent: `status` and a one-line `reason`."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class Hosted:
    """The server's side of one ACP connection (see the module docstring). `send_line` is
    None over HTTP (lines go to the SSE outboxes), else the WebSocket's sender."""

    def __init__(
        self,
        principal: str | None,
        limits: ServerLimits,
        owners: SessionOwners,
        send_line: Callable[[bytes], Awaitable[None]] | None = None,
    ) -> None:
        self.id = str(uuid.uuid4())
        self.principal = principal
        self.limits = limits
        self.owners = owners
        self.connection: Connection | None = None
        self.handler: Any = None  # what serves it (an AgentRouter, ...)
        self.closed = False
        self.touched = time.monotonic()
        # what the outboxes account to (see outbox.Account)
        self.buffered = 0
        self.kept = 0
        self.replay_bytes = limits.replay_bytes
        self._send_line = send_line
        self.outbox = Outbox(self)  # the connection's own stream
        self.sessions: dict[str, Outbox] = {}
        self.readers = 0  # GETs that ever read a stream of it (their numbers)
        self._inbound: deque[bytes] = deque()
        self._inbound_bytes = 0
        self._readable = asyncio.Event()
        self._progress = asyncio.Event()
        self._partial = b""
        self._routes: dict[str, tuple[str | None, str, str | None]] = {}
        self._agent_requests: dict[str, str | None] = {}  # the agent's requests → their session
        self._initialize: tuple[str, asyncio.Future[bytes]] | None = None
        self._closing: asyncio.Task[None] | None = None

    # -- the Transport the Connection uses ------------------------------------------------------
    async def receive(self) -> bytes:
        while not self._inbound:
            if self.closed:
                return b""
            self._readable.clear()
            await self._readable.wait()
        data = b"".join(self._inbound)
        self._inbound.clear()
        self._inbound_bytes = 0
        self._progress.set()
        return data

    async def send(self, data: bytes) -> None:
        if self.closed:
            raise ConnectionResetError("the remote connection is closed")
        if self._partial:
            data, self._partial = self._partial + data, b""
        lines = data.split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            if line:
                await self._route(line)
        if self._send_line is None:
            while self.buffered > self.limits.max_buffered_bytes and not self.closed:
                if not await self._wait_progress():
                    self.stalled("its client read none of its output")
                    raise ConnectionResetError("the client stopped reading")

    async def close(self) -> None:
        self.abort()

    def abort(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._readable.set()
        self._progress.set()
        self.outbox.close()
        for outbox in self.sessions.values():
            outbox.close()
        self.owners.detach_all(self)
        if self._initialize is not None and not self._initialize[1].done():
            self._initialize[1].set_exception(ConnectionResetError("closed"))

    # -- what the server calls ----------------------------------------------------------------
    def start(self, connection: Connection, handler: Any) -> None:
        self.connection = connection
        self.handler = handler
        connection.start()

    async def initialize(self, value: dict[str, Any], line: bytes) -> bytes:
        """Hand the agent the `initialize` request and return its answer (the line)."""
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        key = classify(value).id
        assert key is not None
        self._initialize = (key, future)
        await self.feed(line)
        return await asyncio.wait_for(future, self.limits.initialize_timeout)

    def admit(self, value: object, header_session: str | None) -> None:
        """Check one message from the client and note where its answer goes; Refused when the
        server will not pass it on. `header_session` is the POST's `Acp-Session-Id` (over
        WebSocket: None, and the message's own `sessionId` is used)."""
        over_http = self._send_line is None
        peeked = classify(value)
        limit = self.limits.max_id_length
        if peeked.kind == RESPONSE:
            expected = self._agent_requests.get(peeked.id or "", _MISSING)
            if over_http and isinstance(expected, str) and header_session != expected:
                what = "Missing" if header_session is None else "Mismatched"
                raise Refused(400, f"{what} Acp-Session-Id")
            self._agent_requests.pop(peeked.id or "", None)
            return
        if peeked.kind not in (REQUEST, NOTIFICATION):
            return  # the agent's runtime answers what is not a message
        session_id = peeked.session_id
        if over_http:
            scoped = peeked.method in SESSION_SCOPED or session_id is not None
            if scoped and header_session is None:
                raise Refused(400, "Missing Acp-Session-Id")
            if header_session is not None and session_id not in (None, header_session):
                raise Refused(400, "Mismatched Acp-Session-Id")
            session_id = session_id or header_session
        if session_id is not None:
            if len(session_id) > limit:
                raise Refused(400, f"The session id is over {limit} characters")
            refusal = self.owners.refusal(self, self.principal, peeked.method, session_id)
            if refusal is not None:
                raise Refused(*refusal)
        if peeked.kind == REQUEST and peeked.id is not None and peeked.method is not None:
            if len(peeked.id) > limit + 2:
                raise Refused(400, f"The request id is over {limit} characters")
            if len(self._routes) >= MAX_ROUTES:
                raise Refused(503, f"Over {MAX_ROUTES} requests of this connection in flight")
            stream = None if peeked.method == "session/load" else session_id
            self._routes.setdefault(peeked.id, (stream, peeked.method, session_id))

    async def feed(self, line: bytes) -> None:
        """Queue one line for the agent to read, waiting while it has not read earlier ones
        (Refused 503 after `max_output_stall` seconds)."""
        self.touched = time.monotonic()
        while self._inbound_bytes > self.limits.max_message_bytes and not self.closed:
            if not await self._wait_progress():
                raise Refused(503, "The agent is not reading its input")
        if self.closed:
            raise Refused(404, "Unknown Acp-Connection-Id")
        self._inbound.append(line + b"\n")
        self._inbound_bytes += len(line) + 1
        self._readable.set()

    async def output_room(self) -> None:
        """Wait until the agent may write more (its client read enough); a client that reads
        nothing for `max_output_stall` seconds has its connection closed (Refused 503)."""
        while self.buffered > self.limits.max_buffered_bytes and not self.closed:
            if not await self._wait_progress():
                self.stalled("its client read none of its output")
                raise Refused(503, "The connection's output stalled; it is closed")

    def session_outbox(self, session_id: str, *, reader: bool) -> Outbox:
        """A session's stream, made when needed (Refused 429 past `max_session_streams` for
        one a client asks for)."""
        outbox = self.sessions.get(session_id)
        if outbox is None:
            cap = self.limits.max_session_streams
            if reader and len(self.sessions) >= cap:
                self._drop_idle()
                if len(self.sessions) >= cap:
                    raise Refused(429, f"Over {cap} session streams on this connection")
            outbox = self.sessions[session_id] = Outbox(self)
        return outbox

    def progressed(self) -> None:
        self._progress.set()

    def stalled(self, why: str) -> None:
        _log.warning(
            "closing connection %s: %s for %g s",
            self.id,
            why,
            self.limits.max_output_stall,
        )
        self.abort()
        if self.connection is not None:  # kept: a task nobody holds may be collected
            self._closing = asyncio.get_running_loop().create_task(self.connection.close())

    @property
    def idle(self) -> bool:
        """An HTTP connection none of whose streams is read (for the idle timeout)."""
        if self._send_line is not None:
            return False  # a WebSocket connection lives as long as its socket
        return not self.outbox.reading and not any(o.reading for o in self.sessions.values())

    # -- routing the agent's output -----------------------------------------------------------
    async def _route(self, line: bytes) -> None:
        if self._send_line is not None and line.startswith(_NOTE) and line.find(b'"id":') < 0:
            await self._send_line(line)  # a notification: nothing to note, one socket
            return
        peeked = peek(line)
        session_id: str | None = None
        if peeked.kind == RESPONSE:
            pending = self._initialize
            if pending is not None and peeked.id == pending[0] and not pending[1].done():
                self._initialize = None
                pending[1].set_result(line)
                return
            route = self._routes.pop(peeked.id or "", None)
            if route is not None:
                session_id = route[0]
                self._answered(route[1], route[2], line)
        elif peeked.kind in (REQUEST, NOTIFICATION):
            session_id = peeked.session_id
            if peeked.kind == REQUEST and peeked.id is not None:
                self._agent_requests[peeked.id] = session_id
        if self._send_line is not None:
            await self._send_line(line)
        elif session_id is None:
            self.outbox.push(line)
        else:
            self.session_outbox(session_id, reader=False).push(line)

    def _answered(self, method: str, session_id: str | None, line: bytes) -> None:
        """Ownership follows the agent's answers: a session made, loaded or resumed is this
        connection's; one deleted is forgotten."""
        if method in OPENS:
            made = result_session(line)
            if made is not None and len(made) <= self.limits.max_id_length:
                self.owners.attach(made, self, self.principal)
        elif session_id is not None and method in REATTACH and not is_error(line):
            self.owners.attach(session_id, self, self.principal)
        elif session_id is not None and method == "session/delete" and not is_error(line):
            self.owners.forget(session_id, self.principal)

    async def _wait_progress(self) -> bool:
        self._progress.clear()
        try:
            await asyncio.wait_for(self._progress.wait(), self.limits.max_output_stall)
        except TimeoutError:
            return False
        return True

    def _drop_idle(self) -> None:
        for session_id, outbox in list(self.sessions.items()):
            if outbox.idle and not self.owners.attached(session_id, self):
                outbox.close()
                del self.sessions[session_id]
