"""The little of ASGI (the calling convention of uvicorn, hypercorn, Starlette...) the server
needs, with no library: headers, bodies read within a size and a time bound, one-line text
responses.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

TEXT: Final = [(b"content-type", b"text/plain; charset=utf-8")]


class HttpError(Exception):
    """An HTTP error answered with a one-line text body."""

    def __init__(
        self, status: int, reason: str, headers: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.headers = headers or []


def headers_of(scope: Scope) -> dict[str, str]:
    """The request's headers, names in lower case, repeated ones joined with `, `."""
    found: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", ()):
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        found[name] = f"{found[name]}, {value}" if name in found else value
    return found


async def read_body(receive: Receive, limit: int, declared: str | None, timeout: float) -> bytes:
    """The whole request body: 413 past `limit` bytes (by its Content-Length before reading),
    408 when it does not arrive within `timeout` seconds, 400 when the client goes away."""
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise HttpError(413, f"The request body is over {limit} bytes")
    parts: list[bytes] = []
    size = 0

    async def read() -> None:
        nonlocal size
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise HttpError(400, "The client went away")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise HttpError(413, f"The request body is over {limit} bytes")
            parts.append(chunk)
            if not message.get("more_body", False):
                return

    try:
        await asyncio.wait_for(read(), timeout)
    except TimeoutError:
        raise HttpError(408, f"The request body did not arrive within {timeout:g} s") from None
    return b"".join(parts)


async def respond(
    send: Send,
    status: int,
    body: bytes = b"",
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """A whole response."""
    head = list(TEXT if headers is None else headers)
    head.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


async def respond_error(send: Send, error: HttpError) -> None:
    await respond(send, error.status, error.reason.encode(), TEXT + error.headers)
