"""`AgentApp`: an agent served over ACP's Streamable HTTP and WebSocket transports, as an ASGI
application (no library needed: run it under uvicorn or hypercorn, or mount it in a Starlette
or FastAPI app; `serve_remote` runs it under uvicorn).

    app = AgentApp(MyAgent(), token=os.environ["ACP_TOKEN"])

One endpoint (`/acp` unless `path=` says otherwise) speaks both: POST/GET/DELETE with
`Acp-Connection-Id` and `Acp-Session-Id` (http_server.py), and a WebSocket upgrade of the same
URL (ws_server.py). Each client gets its own connection, and its own handler: an `Agent`'s
sessions are shared by its connections and belong to the principal that made them; any
`AgentBase` or `AgentRouter` of your own comes from `agent=` as a function of the principal.

Before anything reaches the agent: the path; the `Host` (a server reached on a loopback
address answers only loopback host names: DNS rebinding); a browser's `Origin` (only the
server's own and `allowed_origins`); then the authentication hook (`token=` makes a bearer
one). Without a hook only loopback clients are served. Every refusal is an HTTP error with a
one-line reason; no request puts a traceback in the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any, Final, Unpack

from ..runtime.connection import Connection, ConnectionOptions, RoleBase
from ..toolkit.agent import Agent
from ..toolkit.router import AgentRouter
from ._asgi import HttpError, Receive, Scope, Send, headers_of, respond_error
from .hosted import Hosted
from .limits import ServerLimits
from .registry import SessionOwners
from .security import Authenticate, Request, bearer_token, host_name, is_loopback, origin_allowed

__all__ = ["AgentApp"]
_log: Final = logging.getLogger(__name__)
Factory = Callable[[str | None], RoleBase]


class AgentApp:
    """The ASGI application (see the module docstring).

    `agent`: an `Agent`, or a function of the principal making each connection's handler.
    `token`: admit `Authorization: Bearer <token>` only; `authenticate`: your own hook
    (security.py), instead. `allowed_origins`: browser origins besides the server's own
    (`"*"`: any). `allowed_hosts`: the `Host` names served (default: any, except that a server
    reached on loopback serves loopback names only). `http`/`websocket`: which transports.
    `limits`: the server's caps (`ServerLimits`); `options`: each `Connection`'s.
    """

    def __init__(
        self,
        agent: Agent | Factory,
        *,
        path: str = "/acp",
        token: str | None = None,
        authenticate: Authenticate | None = None,
        allowed_origins: Iterable[str] = (),
        allowed_hosts: Iterable[str] | None = None,
        limits: ServerLimits | None = None,
        http: bool = True,
        websocket: bool = True,
        **options: Unpack[ConnectionOptions],
    ) -> None:
        if token is not None and authenticate is not None:
            raise ValueError("pass token= or authenticate=, not both")
        if not (http or websocket):
            raise ValueError("serve at least one of http and websocket")
        self.agent = agent
        self.path = path
        self.authenticate = bearer_token(token) if token is not None else authenticate
        self.allowed_origins = tuple(allowed_origins)
        self.allowed_hosts = None if allowed_hosts is None else {h.lower() for h in allowed_hosts}
        self.limits = limits or ServerLimits()
        self.http = http
        self.websocket = websocket
        options.setdefault("max_message_bytes", self.limits.max_message_bytes)
        self.options = options
        self.connections: dict[str, Hosted] = {}
        self.owners = SessionOwners(self.limits.max_sessions)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reaper: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        from .http_server import serve_http
        from .ws_server import serve_websocket

        try:
            principal = await self.admit(scope)
            if kind == "websocket":
                if not self.websocket:
                    raise HttpError(404, "Not Found")
                await serve_websocket(self, principal, scope, receive, send)
            elif kind == "http":
                if not self.http:
                    raise HttpError(404, "Not Found")
                await serve_http(self, principal, scope, receive, send)
        except HttpError as error:
            if kind == "websocket":
                from .ws_server import deny

                await deny(scope, send, error)
            else:
                await respond_error(send, error)
        except Exception as exc:  # one line, never a traceback (see the module docstring)
            _log.error("acp server: %s %s failed: %r", kind, scope.get("path"), exc)
            with contextlib.suppress(Exception):
                if kind == "http":
                    await respond_error(send, HttpError(500, "Internal Server Error"))

    async def admit(self, scope: Scope) -> str | None:
        """The request's principal, after the path, Host, Origin and authentication checks;
        HttpError when one fails."""
        root = scope.get("root_path", "")
        if scope.get("path") not in (self.path, root + self.path):
            raise HttpError(404, "Not Found")
        headers = headers_of(scope)
        host = headers.get("host", "")
        server = scope.get("server") or (None, None)
        if self.allowed_hosts is not None:
            if host_name(host) not in self.allowed_hosts:
                raise HttpError(403, "Host not allowed")
        elif is_loopback(server[0]) and not is_loopback(host_name(host)):
            raise HttpError(403, "Host not allowed")
        origin = headers.get("origin")
        if origin is not None and not origin_allowed(origin, self.allowed_origins, host):
            raise HttpError(403, "Origin not allowed")
        client = scope.get("client") or (None, None)
        if self.authenticate is None:
            if not is_loopback(client[0]):
                raise HttpError(403, "This server serves loopback clients only")
            return None
        scheme = scope.get("scheme", "http")
        request = Request(scope.get("method", "GET"), scope["path"], headers, client[0], scheme)
        try:
            principal = self.authenticate(request)
            if inspect.isawaitable(principal):
                principal = await principal
        except Exception as exc:
            _log.warning("acp server: the authentication hook failed: %r", exc)
            raise HttpError(500, "Authentication failed") from None
        if principal is None:
            raise HttpError(
                401, "Missing or invalid credentials", [(b"www-authenticate", b"Bearer")]
            )
        return principal

    def open(self, principal: str | None, hosted: Hosted) -> Hosted:
        """Start serving a new connection (503 when `max_connections` are open)."""
        if len(self.connections) >= self.limits.max_connections:
            raise HttpError(503, f"Over {self.limits.max_connections} connections")
        if isinstance(self.agent, Agent):
            handler: RoleBase = AgentRouter(self.agent, principal=principal)
        else:
            handler = self.agent(principal)
        connection = Connection(handler, hosted, **self.options)
        self.connections[hosted.id] = hosted
        hosted.start(connection, handler)
        self._spawn(self._watch(hosted))
        if self._reaper is None:
            self._reaper = asyncio.get_running_loop().create_task(self._reap())
        return hosted

    def find(self, connection_id: str | None, principal: str | None) -> Hosted:
        """The open connection of that id and principal (400, or 404 as for an unknown one)."""
        if not connection_id:
            raise HttpError(400, "Missing Acp-Connection-Id")
        hosted = self.connections.get(connection_id)
        if hosted is None or hosted.closed or hosted.principal != principal:
            raise HttpError(404, "Unknown Acp-Connection-Id")
        return hosted

    async def end(self, hosted: Hosted) -> None:
        """Close one connection (its sessions stay with the agent)."""
        hosted.abort()
        if hosted.connection is not None:
            await hosted.connection.close()

    async def aclose(self) -> None:
        """Close every connection (what the ASGI server's shutdown does)."""
        for hosted in list(self.connections.values()):
            await self.end(hosted)
        if self._reaper is not None:
            self._reaper.cancel()
            self._reaper = None

    async def _watch(self, hosted: Hosted) -> None:
        connection = hosted.connection
        assert connection is not None
        await connection.wait_closed()
        hosted.abort()
        if self.connections.get(hosted.id) is hosted:
            del self.connections[hosted.id]
        disconnected = getattr(hosted.handler, "disconnected", None)
        if disconnected is not None:
            try:
                await disconnected()
            except Exception as exc:
                _log.warning("acp server: closing connection %s: %r", hosted.id, exc)

    async def _reap(self) -> None:
        """Close HTTP connections idle past `idle_timeout` (no request, no stream read)."""
        timeout = self.limits.idle_timeout
        while True:
            await asyncio.sleep(min(timeout, 30.0))
            now = time.monotonic()
            for hosted in list(self.connections.values()):
                if hosted.idle and now - hosted.touched > timeout:
                    _log.info("acp server: connection %s idle, closed", hosted.id)
                    await self.end(hosted)

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return
