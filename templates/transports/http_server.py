"""ACP over Streamable HTTP, the server's side (the RFD's routing):

- `POST` one JSON-RPC message (`Content-Type: application/json`). `initialize` without
  `Acp-Connection-Id` makes a connection: 200 with the agent's answer and the
  `Acp-Connection-Id` header. Anything else needs that header, and `Acp-Session-Id` when it is
  session-scoped: 202 with no body, its answer comes on a stream;
- `GET` with `Accept: text/event-stream` and `Acp-Connection-Id` opens the connection's stream,
  with `Acp-Session-Id` too a session's; `Last-Event-ID` resumes it after that event;
- `DELETE` with `Acp-Connection-Id` closes the connection (202).

Refusals, each with a one-line body: 400 (a missing or mismatched header, a body that is not
one JSON-RPC object, an id too long), 401, 403, 404 (an unknown connection or session), 405,
406, 408, 409 (a session attached to another connection; a stream that cannot resume), 413,
415, 429 (too many session streams), 501 (a batch), 503 (the server or the agent is full), 504
(no answer to `initialize` in time).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import TYPE_CHECKING, Any

from ._asgi import HttpError, Receive, Scope, Send, headers_of, read_body, respond
from .hosted import Hosted, Refused
from .outbox import Conflict, Outbox, Replaced
from .protocol import CONNECTION_HEADER, EVENT_STREAM, JSON_TYPE, REQUEST, classify
from .sse import KEEPALIVE

if TYPE_CHECKING:
    from .server import AgentApp

_CONNECTION = CONNECTION_HEADER.lower()
_SESSION = "acp-session-id"


async def serve_http(
    app: AgentApp, principal: str | None, scope: Scope, receive: Receive, send: Send
) -> None:
    method = scope.get("method", "GET")
    headers = headers_of(scope)
    if method == "POST":
        await _post(app, principal, headers, receive, send)
    elif method == "GET":
        await _get(app, principal, headers, receive, send)
    elif method == "DELETE":
        hosted = app.find(headers.get(_CONNECTION), principal)
        await app.end(hosted)
        await respond(send, 202, b"", [])
    else:
        raise HttpError(405, "Method Not Allowed", [(b"allow", b"GET, POST, DELETE")])


async def _post(
    app: AgentApp, principal: str | None, headers: dict[str, str], receive: Receive, send: Send
) -> None:
    if headers.get("content-type", "").split(";", 1)[0].strip().lower() != JSON_TYPE:
        raise HttpError(415, "Unsupported Media Type: send application/json")
    limits = app.limits
    body = await read_body(
        receive, limits.max_message_bytes, headers.get("content-length"), limits.max_output_stall
    )
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        raise HttpError(400, "Invalid JSON") from None
    if type(value) is list:
        raise HttpError(501, "JSON-RPC batches are not supported")
    if type(value) is not dict:
        raise HttpError(400, "Invalid JSON-RPC message")
    line = body if b"\n" not in body and b"\r" not in body else json.dumps(value).encode()
    connection_id = headers.get(_CONNECTION)
    if value.get("method") == "initialize" and "id" in value:
        if connection_id is not None:
            raise HttpError(400, "Initialize not allowed on existing connection")
        await _initialize(app, principal, value, line, send)
        return
    hosted = app.find(connection_id, principal)
    session = headers.get(_SESSION)
    try:
        hosted.admit(value, session)
        if classify(value).kind == REQUEST:
            await hosted.output_room()  # a client that reads nothing makes the agent write nothing
        await hosted.feed(line)
    except Refused as refused:
        raise HttpError(refused.status, refused.reason) from None
    await respond(send, 202, b"", [])


async def _initialize(
    app: AgentApp, principal: str | None, value: dict[str, Any], line: bytes, send: Send
) -> None:
    if classify(value).id is None:
        raise HttpError(400, "Initialize request must have an id")
    hosted = app.open(principal, Hosted(principal, app.limits, app.owners))
    try:
        answer = await hosted.initialize(value, line)
    except TimeoutError:
        await app.end(hosted)
        limit = app.limits.initialize_timeout
        raise HttpError(504, f"The agent did not answer initialize within {limit:g} s") from None
    except (ConnectionError, Refused):
        await app.end(hosted)
        raise HttpError(503, "The agent closed the connection during initialize") from None
    headers = [(b"content-type", JSON_TYPE.encode()), (_CONNECTION.encode(), hosted.id.encode())]
    await respond(send, 200, answer, headers)


async def _get(
    app: AgentApp, principal: str | None, headers: dict[str, str], receive: Receive, send: Send
) -> None:
    if "websocket" in headers.get("upgrade", "").lower():
        raise HttpError(426, "The WebSocket upgrade did not reach the server's WebSocket side")
    if EVENT_STREAM not in headers.get("accept", "").lower():
        raise HttpError(406, "Not Acceptable: accept text/event-stream")
    hosted = app.find(headers.get(_CONNECTION), principal)
    session = headers.get(_SESSION)
    try:
        outbox = hosted.outbox
        if session is not None:
            if len(session) > app.limits.max_id_length:
                raise Refused(400, f"The session id is over {app.limits.max_id_length} characters")
            refusal = hosted.owners.refusal(hosted, principal, None, session)
            if refusal is not None:
                raise Refused(*refusal)
            outbox = hosted.session_outbox(session, reader=True)
        hosted.readers += 1
        reader = hosted.readers
        outbox.attach(reader, headers.get("last-event-id"))
    except Refused as refused:
        raise HttpError(refused.status, refused.reason) from None
    except Conflict as conflict:
        raise HttpError(409, str(conflict)) from None
    hosted.touched = time.monotonic()
    await _stream(app, hosted, outbox, reader, receive, send)


async def _stream(
    app: AgentApp, hosted: Hosted, outbox: Outbox, reader: int, receive: Receive, send: Send
) -> None:
    """Write the stream's events until the client goes, another GET takes the stream over, or
    the connection closes."""
    head = [
        (b"content-type", EVENT_STREAM.encode()),
        (b"cache-control", b"no-cache"),
        (b"x-accel-buffering", b"no"),  # proxies must not hold events back
    ]
    await send({"type": "http.response.start", "status": 200, "headers": head})

    async def pump() -> None:
        await send({"type": "http.response.body", "body": b"", "more_body": True})
        while True:
            batch = await outbox.take(reader, app.limits.keepalive)
            body = b"".join(data for _, data in batch) if batch else KEEPALIVE
            await send({"type": "http.response.body", "body": body, "more_body": True})
            if batch:
                outbox.sent(batch)

    async def gone() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    tasks = [asyncio.ensure_future(pump()), asyncio.ensure_future(gone())]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        outbox.detach(reader)
        hosted.touched = time.monotonic()
    if not isinstance(results[0], (Replaced, asyncio.CancelledError, OSError)):
        if isinstance(results[0], BaseException):
            raise results[0]
    with contextlib.suppress(Exception):
        await send({"type": "http.response.body", "body": b"", "more_body": False})
