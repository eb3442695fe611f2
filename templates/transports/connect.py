"""`connect_remote`: `spawn_agent`'s sibling for an agent behind a URL.

    async with connect_remote("https://agents.example/acp", token=token) as agent:
        session = await agent.new_session("/srv/project")
        result = await session.prompt("hello")

`http://` and `https://` speak Streamable HTTP (httpx), `ws://` and `wss://` WebSocket
(websockets); either library is imported only when its scheme is used, and a missing one is
named in a one-line `MissingExtra` error. The agent is the same `RemoteAgent` as a spawned
one's, on whichever protocol version it answers.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any, Unpack
from urllib.parse import urlsplit

from ..runtime.connection import Connection, ConnectionOptions, RoleBase
from ..toolkit.client import Client, RemoteAgent, connect_agent
from ..toolkit.policies import PermissionPolicy
from ..toolkit.workspace import Workspace
from .http_client import HttpTransport
from .ws_client import WebSocketTransport

__all__ = ["connect_remote"]


class _Unrouted(RoleBase):
    """The connection's handler until the agent answers `initialize`."""


def remote_transport(
    url: str,
    *,
    token: str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 30.0,
    max_message_bytes: int = 32 * 1024 * 1024,
    verify: Any = True,
) -> HttpTransport | WebSocketTransport:
    """The transport for `url` (not opened yet: a WebSocket's `open()` is still to await)."""
    scheme = urlsplit(url).scheme.lower()
    if scheme in ("http", "https"):
        return HttpTransport(
            url,
            token=token,
            headers=headers,
            timeout=timeout,
            max_message_bytes=max_message_bytes,
            verify=verify,
        )
    if scheme in ("ws", "wss"):
        ssl = None if verify is True or scheme == "ws" else verify
        return WebSocketTransport(
            url,
            token=token,
            headers=headers,
            timeout=timeout,
            max_message_bytes=max_message_bytes,
            ssl=ssl,
        )
    raise ValueError(f"not an http(s):// or ws(s):// URL: {url[:200]!r}")


@contextlib.asynccontextmanager
async def connect_remote(
    url: str,
    *,
    client: Client | None = None,
    permissions: PermissionPolicy | None = None,
    workspace: Workspace | None = None,
    protocol: int | None = None,
    token: str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 30.0,
    verify: Any = True,
    **options: Unpack[ConnectionOptions],
) -> AsyncIterator[RemoteAgent]:
    """Connect to the agent at `url`, initialize it, and yield it as a RemoteAgent; leaving
    the block closes the connection (over HTTP: a DELETE).

    `token` is sent as `Authorization: Bearer`, `headers` on every request; `timeout` bounds
    each request (not the streams); `verify` is httpx's TLS verification (False, a CA bundle's
    path, or an `ssl.SSLContext`). `client`, `permissions`, `workspace`, `protocol` are
    `spawn_agent`'s; `options` the Connection's (`max_message_bytes` also bounds what the
    transport reads: default 32 MiB, the official SDK's). Raises ValueError for another URL
    scheme, MissingExtra when its library is not installed, WebSocketError when an upgrade is
    refused, and IncompatibleAgent, RpcError (an HTTP refusal of `initialize`: `data` has its
    `status` and `body`) or ConnectionClosed when initialization fails.
    """
    limit = options.get("max_message_bytes", 32 * 1024 * 1024)
    options.setdefault("max_message_bytes", limit)
    verify_arg: Any = os.fspath(verify) if isinstance(verify, os.PathLike) else verify
    transport = remote_transport(
        url,
        token=token,
        headers=headers,
        timeout=timeout,
        max_message_bytes=limit,
        verify=verify_arg,
    )
    if isinstance(transport, WebSocketTransport):
        await transport.open()
    handler = Client() if client is None else client
    if permissions is not None:
        handler.permissions = permissions
    if workspace is not None:
        handler.workspace = workspace
    connection = Connection(_Unrouted(), transport, **options)
    try:
        agent = await connect_agent(handler, connection, protocol=protocol)
        try:
            yield agent
        finally:
            await handler.shut()
    finally:
        await connection.close()
