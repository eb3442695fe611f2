"""ACP over WebSocket, the client's side: a `Transport` over the `websockets` library (imported
when used). Each JSON-RPC message is one text message each way.

Cookies the upgrade's answer sets are sent on every later upgrade (the RFD's affinity cookies).
A socket that drops while the connection is in use is opened again (up to RETRIES times): the
client's `initialize` is sent again under an id of ours, each session the connection held is
re-attached with `session/resume` or `session/load` (reattach.py: a load's replay is not shown
to the client again), and our requests that were waiting fail at once, their answers lost with
the socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Mapping
from typing import Any, Final

from ._extras import require
from .protocol import CONNECTION_HEADER, peek
from .reattach import Sessions

_log: Final = logging.getLogger(__name__.rpartition(".")[0] + ".client")
RETRIES: Final = 5


class WebSocketError(ConnectionError):
    """The server refused the upgrade (`status`, its one-line `reason`) or cannot be reached."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class WebSocketTransport:
    """The client's side of one ACP connection over WebSocket (see the module docstring);
    `await transport.open()` before use. `headers` go on the upgrade (`token` adds
    `Authorization: Bearer`); `max_message_bytes` bounds each message read."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        token: str | None = None,
        max_message_bytes: int = 32 * 1024 * 1024,
        timeout: float = 30.0,
        ssl: Any = None,
        reconnect: bool = True,
    ) -> None:
        self._client = require("websockets.asyncio.client")
        self._errors = require("websockets.exceptions")
        self.url = url
        self._headers = dict(headers or {})
        if token is not None:
            self._headers["Authorization"] = f"Bearer {token}"
        self.max_message_bytes = max_message_bytes
        self.timeout = timeout
        self._ssl = ssl
        self._reconnect = reconnect
        self.sessions = Sessions()
        self.connection_id: str | None = None
        self.error: str | None = None
        self._socket: Any = None
        self._closing = False
        self._partial = b""
        self._backlog: list[bytes] = []  # answers made here (failed requests), read first
        self._lock = asyncio.Lock()
        self._cookies: dict[str, str] = {}

    async def open(self) -> None:
        """Connect; WebSocketError when the server refuses or cannot be reached."""
        errors = self._errors
        headers = dict(self._headers)
        if self._cookies:  # the RFD's affinity cookies, sent again on a new socket
            given = headers.pop("Cookie", "")
            kept = "; ".join(f"{name}={value}" for name, value in self._cookies.items())
            headers["Cookie"] = f"{kept}; {given}" if given else kept
        try:
            self._socket = await self._client.connect(
                self.url,
                additional_headers=headers,
                max_size=self.max_message_bytes,
                open_timeout=self.timeout,
                compression=None,
                ssl=self._ssl,
            )
        except errors.InvalidStatus as exc:
            status = exc.response.status_code
            reason = exc.response.body.decode("utf-8", "replace").strip()[:200]
            raise WebSocketError(
                f"HTTP {status}: {reason}" if reason else f"HTTP {status}", status
            ) from None
        except (OSError, errors.InvalidHandshake, TimeoutError) as exc:
            raise WebSocketError(f"cannot reach {self.url}: {exc}") from None
        answer = self._socket.response.headers
        self.connection_id = answer.get(CONNECTION_HEADER)
        for cookie in answer.get_all("Set-Cookie"):
            name, _, value = cookie.split(";", 1)[0].partition("=")
            if name.strip():
                self._cookies[name.strip()] = value.strip()

    # -- Transport ----------------------------------------------------------------------------
    async def receive(self) -> bytes:
        closed = self._errors.ConnectionClosed
        while True:
            if self._backlog:
                data = b"".join(self._backlog)
                self._backlog.clear()
                return data
            if self._closing or self._socket is None:
                return b""
            try:
                message = await self._socket.recv()
            except closed as exc:
                if self._closing or not await self._again(exc):
                    return b""
                continue
            if isinstance(message, str):
                if (
                    "\n" in message or "\r" in message
                ):  # JSON's whitespace; the runtime frames lines
                    message = message.replace("\r", " ").replace("\n", " ")
                line = message.encode("utf-8", "surrogatepass")
                if self.sessions.received(line):
                    return line + b"\n"

    async def send(self, data: bytes) -> None:
        closed = self._errors.ConnectionClosed
        if self._partial:
            data, self._partial = self._partial + data, b""
        lines = data.split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            if not line:
                continue
            self.sessions.sent(line)
            async with self._lock:
                try:
                    await self._socket.send(line.decode("utf-8", "surrogatepass"))
                except closed:
                    pass  # the reader opens it again, failing what waited (this included)

    async def close(self) -> None:
        self._closing = True
        if self._socket is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._socket.close(), 2.0)

    def abort(self) -> None:
        self._closing = True
        if self._socket is not None:
            with contextlib.suppress(Exception):
                self._socket.transport.abort()

    # -- reconnecting -------------------------------------------------------------------------
    async def _again(self, exc: Exception) -> bool:
        """The socket dropped: open another and put the connection back (see the module
        docstring); False when that is not possible."""
        code = getattr(getattr(exc, "rcvd", None), "code", None)
        if not self._reconnect or code in (1000, 1001, 1008, 1009):
            self.error = f"the server closed the WebSocket ({code})"
            return False
        for key in self.sessions.pending_in(None):
            if not key.startswith("s:acp-reattach-"):
                self._backlog.append(self.sessions.failed(key, "the WebSocket dropped") + b"\n")
        for attempt in range(RETRIES):
            await asyncio.sleep(0.1 * 2**attempt)
            try:
                await self.open()
            except WebSocketError as error:
                if error.status is not None:
                    break
                continue
            try:
                await asyncio.wait_for(self._initialize_again(), self.timeout)
            except Exception as error:  # the new socket failed too
                _log.debug("initializing a new WebSocket failed: %r", error)
                continue
            for session in list(self.sessions.setups):
                line = self.sessions.reattach_line(session)
                if line is not None:
                    await self._socket.send(line.decode())
            _log.info("WebSocket %s opened again", self.url)
            return True
        self.error = "the WebSocket dropped and could not be opened again"
        return False

    async def _initialize_again(self) -> None:
        """Send the client's `initialize` on the new socket and read up to its answer (the
        agent takes nothing else before it)."""
        line = self.sessions.initialize_line()
        if line is None:
            return
        await self._socket.send(line.decode())
        key = "s:" + str(json.loads(line)["id"])
        while True:
            message = await self._socket.recv()
            if not isinstance(message, str):
                continue
            data = message.encode()
            if peek(data).id == key:
                self.sessions.received(data)
                return
            if self.sessions.received(data):
                self._backlog.append(data + b"\n")
