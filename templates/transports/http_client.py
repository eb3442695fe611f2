"""ACP over Streamable HTTP, the client's side: a `Transport` over httpx (imported when used).

Every message the client writes is one POST, in order (`initialize` first: its answer names
the connection); what the agent writes comes on SSE streams — the connection's, opened once
`initialize` is answered, and one per session, opened before the first message that names the
session is posted. Cookies the server sets are kept and sent back (session affinity behind a
load balancer).

When a stream drops, it is opened again with `Last-Event-ID`, so a server that numbers its
events (ours does) sends what followed and nothing is lost or repeated. When that cannot be
done (409: the events are gone, or the session is attached to another connection) the session
is re-attached with `session/resume` or `session/load` (reattach.py). A POST answered 401, 403,
404 or 410 ends the connection (and `receive` then reads EOF); any other error fails only that
request: a JSON-RPC error whose `data` is `{"status", "body"}` (the body cut at 8 KiB).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Mapping
from typing import Any, Final

from ._extras import require
from .protocol import CONNECTION_HEADER, EVENT_STREAM, JSON_TYPE, REQUEST, RESPONSE, peek
from .reattach import Sessions
from .sse import SseError, SseParser

_log: Final = logging.getLogger(__name__.rpartition(".")[0] + ".client")
MAX_ERROR_BODY: Final = 8 * 1024
GONE: Final = frozenset({401, 403, 404, 410})
RETRIES: Final = 5  # attempts to open a dropped stream again, 0.1 s apart and doubling


class HttpTransport:
    """The client's side of one ACP connection over Streamable HTTP (see the module
    docstring). `headers` go on every request (`token` adds `Authorization: Bearer`);
    `max_message_bytes` bounds each event read; `timeout` each request but the streams."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        token: str | None = None,
        max_message_bytes: int = 32 * 1024 * 1024,
        timeout: float = 30.0,
        verify: Any = True,
    ) -> None:
        httpx = require("httpx")
        self._httpx = httpx
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        self._http = httpx.AsyncClient(
            headers=sent,
            timeout=httpx.Timeout(timeout, read=None),
            verify=verify,
            follow_redirects=False,
        )
        self.url = url
        self.max_message_bytes = max_message_bytes
        self.sessions = Sessions()
        self.connection_id: str | None = None
        self.error: str | None = None
        """Why the connection ended, when it ended on its own."""
        self._inbox: deque[bytes] = deque()
        self._readable = asyncio.Event()
        self._eof = False
        self._partial = b""
        self._streams: dict[str | None, asyncio.Task[None]] = {}
        self._ready: dict[str | None, asyncio.Future[None]] = {}
        self._agent_requests: dict[str, str | None] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._unnumbered = False

    # -- Transport ----------------------------------------------------------------------------
    async def receive(self) -> bytes:
        while not self._inbox:
            if self._eof:
                return b""
            self._readable.clear()
            await self._readable.wait()
        data = b"".join(self._inbox)
        self._inbox.clear()
        return data

    async def send(self, data: bytes) -> None:
        if self._eof:
            raise ConnectionResetError(self.error or "the remote connection is closed")
        if self._partial:
            data, self._partial = self._partial + data, b""
        lines = data.split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            if line:
                await self._post(line)

    async def close(self) -> None:
        connection_id = self.connection_id
        self._end(None)
        if connection_id is not None:
            with contextlib.suppress(Exception):
                await self._http.delete(self.url, headers={CONNECTION_HEADER: connection_id})
        await self._http.aclose()

    def abort(self) -> None:
        self._end(None)

    # -- posting ------------------------------------------------------------------------------
    async def _post(self, line: bytes, *, retried: bool = False) -> None:
        peeked = peek(line)
        self.sessions.sent(line)
        if self.connection_id is None:
            await self._initialize(line, peeked.id)
            return
        session = peeked.session_id
        if peeked.kind == RESPONSE:
            session = self._agent_requests.pop(peeked.id or "", None)
        headers = {CONNECTION_HEADER: self.connection_id, "Content-Type": JSON_TYPE}
        if session is not None:
            headers["Acp-Session-Id"] = session
            await self._open(session)
        try:
            response = await self._http.post(self.url, content=line, headers=headers)
        except self._httpx.HTTPError as exc:
            self._end(f"POST failed: {exc}")
            return
        status = response.status_code
        if status in (200, 202):
            return
        body = response.text[:MAX_ERROR_BODY]
        if status == 409 and session is not None and not retried:
            if await self._reattach(session):
                await self._post(line, retried=True)
                return
        if status in GONE:
            self._end(f"the server answered {status}: {body.strip()[:200]}")
        elif peeked.kind == REQUEST and peeked.id is not None:
            reason = f"HTTP {status}: {body.strip()[:200]}"
            self._inject(self.sessions.failed(peeked.id, reason, {"status": status, "body": body}))

    async def _initialize(self, line: bytes, key: str | None) -> None:
        try:
            response = await self._http.post(
                self.url, content=line, headers={"Content-Type": JSON_TYPE}
            )
        except self._httpx.HTTPError as exc:
            reason = f"cannot reach {self.url}: {exc}"
            if key is not None:
                self._inject(self.sessions.failed(key, reason, {"url": self.url}))
            self._end(reason)
            return
        connection_id = response.headers.get(CONNECTION_HEADER)
        if response.status_code != 200 or not connection_id:
            body = response.text[:MAX_ERROR_BODY]
            reason = f"HTTP {response.status_code}: {body.strip()[:200]}"
            if key is not None:
                data = {"status": response.status_code, "body": body}
                self._inject(self.sessions.failed(key, reason, data))
            self._end(reason)
            return
        self.connection_id = connection_id
        self._start(None)
        self._deliver(response.content.replace(b"\n", b" "))

    # -- streams ------------------------------------------------------------------------------
    async def _open(self, session: str | None) -> None:
        """The stream of `session` (None: the connection's) is open, or failed."""
        if session not in self._streams:
            self._start(session)
        with contextlib.suppress(Exception):
            await asyncio.shield(self._ready[session])

    def _start(self, session: str | None) -> None:
        self._ready[session] = asyncio.get_running_loop().create_future()
        task = asyncio.get_running_loop().create_task(self._stream(session))
        self._streams[session] = task

    async def _stream(self, session: str | None) -> None:
        last_id: str | None = None
        self._unnumbered = False  # events came without ids: some may be lost when it drops
        failures = 0
        lost = False  # events may have been lost: the session is re-attached once it is open
        while not self._eof:
            headers = {CONNECTION_HEADER: self.connection_id or "", "Accept": EVENT_STREAM}
            if session is not None:
                headers["Acp-Session-Id"] = session
            if last_id is not None:
                headers["Last-Event-ID"] = last_id
            try:
                async with self._http.stream("GET", self.url, headers=headers) as response:
                    status = response.status_code
                    if status == 200:
                        self._opened(session)
                        failures = 0
                        if lost and session is not None:
                            lost = False
                            self._later(self._reattach(session, lost=True))
                        last_id = await self._read(response, last_id)
                    elif status == 409 and last_id is not None:
                        last_id, lost = None, True  # cannot resume: open it afresh
                        continue
                    elif status in GONE:
                        self._end(f"the server answered {status} to the event stream")
                        return
            except SseError as exc:  # an event over the limit: the TS SDK's client ends too
                self._end(f"the event stream broke a limit: {exc}")
                return
            except self._httpx.HTTPError as exc:
                _log.debug("event stream %s dropped: %r", session, exc)
            if self._eof:
                return
            if last_id is None and self._unnumbered:  # answers may have been lost with it
                self._fail_pending(session, "the event stream was lost")
            failures += 1
            if failures > RETRIES:
                what = "connection" if session is None else f"session {session}"
                self._end(f"the {what}'s event stream could not be opened again")
                return
            await asyncio.sleep(0.1 * 2 ** (failures - 1))

    async def _read(self, response: Any, last_id: str | None) -> str | None:
        parser = SseParser(self.max_message_bytes)
        async for chunk in response.aiter_raw():
            for event in parser.feed(chunk):
                data = event.data.replace(b"\n", b" ")
                if data.startswith(b"{") and data.endswith(b"}"):
                    self._unnumbered = self._unnumbered or event.id is None
                    self._deliver(data)
                else:
                    _log.warning("skipped an event that is not a JSON-RPC message")
            last_id = parser.last_id
            if parser.error is not None:
                raise parser.error
        return last_id

    def _opened(self, session: str | None) -> None:
        ready = self._ready.get(session)
        if ready is not None and not ready.done():
            ready.set_result(None)

    # -- re-attaching -------------------------------------------------------------------------
    async def _reattach(self, session: str, *, lost: bool = False) -> bool:
        """Put `session` back on this connection (see reattach.py); False when the agent
        offers no way to. `lost`: events of its stream were lost, and with them the answers
        its requests waited for (they fail now)."""
        line = self.sessions.reattach_line(session)
        if lost:
            self._fail_pending(session, "the session's stream lost events; it was re-attached")
        if line is None:
            return False
        await self._post(line, retried=True)
        return True

    def _fail_pending(self, session: str | None, reason: str) -> None:
        for key in self.sessions.pending_in(session):
            if not key.startswith("s:acp-reattach-"):
                self._inject(self.sessions.failed(key, reason))

    # -- delivering ---------------------------------------------------------------------------
    def _deliver(self, line: bytes) -> None:
        if not self.sessions.received(line):
            return
        peeked = peek(line)
        if peeked.kind == REQUEST and peeked.id is not None:
            self._agent_requests[peeked.id] = peeked.session_id
        self._inject(line)

    def _inject(self, line: bytes) -> None:
        self._inbox.append(line + b"\n")
        self._readable.set()

    def _end(self, error: str | None) -> None:
        if self._eof:
            return
        if error is not None:
            self.error = error
            _log.info("remote connection %s ended: %s", self.url, error)
            self._fail_pending(None, error)
        self._eof = True
        self._readable.set()
        current = asyncio.current_task()
        for task in self._streams.values():
            if task is not current:
                task.cancel()
        for ready in self._ready.values():
            if not ready.done():
                ready.set_exception(ConnectionResetError(error or "closed"))
                ready.exception()  # retrieved: nobody need wait for it

    def _later(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
