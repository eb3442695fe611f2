"""ACP over WebSocket, the server's side: a GET upgrade of the endpoint makes one connection
(its id in the `Acp-Connection-Id` header of the 101 answer); every JSON-RPC message is one
text message each way, in order; binary messages are ignored (the RFD's rule); the socket's
end is the connection's end.

A refused upgrade is an HTTP error with its one-line reason (where the ASGI server supports
the denial-response extension, as uvicorn does; elsewhere a close before accepting, which
servers answer 403). Messages the server refuses before the agent sees them (a session of
another connection, an id too long) are answered under their id, -32002 for a session and
-32600 for the rest, with the reason in `data`; notifications among them are dropped. A message
over `max_message_bytes` closes the socket with 1009; output its client does not read for
`max_output_stall` seconds with 1008.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any, Final

from ._asgi import HttpError, Receive, Scope, Send
from .hosted import Hosted, Refused
from .protocol import CONNECTION_HEADER, REQUEST, classify

if TYPE_CHECKING:
    from .server import AgentApp

_log: Final = logging.getLogger(__name__.rpartition(".")[0] + ".server")
_DENIAL: Final = "websocket.http.response"


async def deny(scope: Scope, send: Send, error: HttpError) -> None:
    """Refuse an upgrade with `error`."""
    if _DENIAL in scope.get("extensions", {}):
        headers = [(b"content-type", b"text/plain; charset=utf-8"), *error.headers]
        await send(
            {"type": "websocket.http.response.start", "status": error.status, "headers": headers}
        )
        await send({"type": "websocket.http.response.body", "body": error.reason.encode()})
    else:
        await send({"type": "websocket.close", "code": 1008, "reason": error.reason[:120]})


async def serve_websocket(
    app: AgentApp, principal: str | None, scope: Scope, receive: Receive, send: Send
) -> None:
    if (await receive())["type"] != "websocket.connect":
        return
    limits = app.limits
    closing: list[tuple[int, str]] = []
    loop = asyncio.get_running_loop()
    # Sends under way and sends done, which the watchdog reads. No lock: the ASGI server writes
    # each message whole once its socket can take it, so two senders cannot mix their frames.
    progress = [0, 0]

    async def send_text(text: str) -> None:
        progress[0] += 1
        try:
            await send({"type": "websocket.send", "text": text})
        finally:
            progress[0] -= 1
            progress[1] += 1

    async def watchdog() -> None:
        """A send that waits `max_output_stall` for the client to read closes the socket
        (one timer for the connection, not one for every message)."""
        still = 0
        done = progress[1]
        while not hosted.closed:
            await asyncio.sleep(limits.max_output_stall / 4)
            still = still + 1 if progress[0] and progress[1] == done else 0
            done = progress[1]
            if still >= 4:
                closing.append((1008, "output stalled"))
                hosted.stalled("its client read none of its output")
                return

    async def send_line(line: bytes) -> None:
        await send_text(line.decode("utf-8", "replace"))

    hosted = app.open(principal, Hosted(principal, limits, app.owners, send_line))
    header = (CONNECTION_HEADER.lower().encode(), hosted.id.encode())
    await send({"type": "websocket.accept", "headers": [header]})
    guard = loop.create_task(watchdog())
    try:
        await _read(app, hosted, receive, send_text, closing)
    except OSError:
        pass  # the socket went away
    finally:
        guard.cancel()
        await app.end(hosted)
        code, reason = closing[0] if closing else (1000, "")
        try:
            await send({"type": "websocket.close", "code": code, "reason": reason})
        except Exception as exc:  # already closed by the client
            _log.debug("closing a WebSocket: %r", exc)


async def _read(
    app: AgentApp,
    hosted: Hosted,
    receive: Receive,
    send_text: Any,
    closing: list[tuple[int, str]],
) -> None:
    limit = app.limits.max_message_bytes
    binary = 0
    while not hosted.closed:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            return
        text = message.get("text")
        if text is None:
            binary += 1
            if binary == 1:
                _log.warning("connection %s: binary WebSocket messages are ignored", hosted.id)
            continue
        data = text.encode("utf-8", "surrogatepass")
        if len(data) > limit:
            closing.append((1009, f"message over {limit} bytes"))
            return
        try:
            value: Any = json.loads(data)
        except (ValueError, RecursionError):
            value = None  # the agent's runtime answers what does not parse
        if b"\n" in data or b"\r" in data:
            data = data.replace(b"\r", b" ").replace(b"\n", b" ")
        try:
            if type(value) is dict:
                hosted.admit(value, None)
            await hosted.feed(data)
        except Refused as refused:
            if refused.status == 503:
                closing.append((1013, refused.reason))
                return
            peeked = classify(value)
            if peeked.kind == REQUEST:
                code = -32002 if "session" in refused.reason.lower() else -32600
                error = {"code": code, "message": refused.reason}
                error["data"] = {"status": refused.status}
                answer = {"jsonrpc": "2.0", "id": value.get("id"), "error": error}
                await send_text(json.dumps(answer))
