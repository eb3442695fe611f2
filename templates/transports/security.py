"""Who may use a remote agent: the request as the authentication hook sees it, the bearer-token
hook, and the checks made before any hook runs (loopback addresses, `Origin`, `Host`).

An authentication hook takes a `Request` and returns the principal (any string naming who is
at the other end: the agent sees it, and a session belongs to the principal that made it), or
None to refuse (401). It may be a coroutine function.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Final
from urllib.parse import urlsplit

__all__ = ["Authenticate", "Request", "bearer_token", "is_loopback"]

_LOOPBACK_NAMES: Final = frozenset({"localhost", "localhost.", "ip6-localhost"})


class Request:
    """The parts of an HTTP request (or WebSocket upgrade) an authentication hook may read."""

    __slots__ = ("method", "path", "headers", "client", "scheme")

    def __init__(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str],
        client: str | None,
        scheme: str,
    ) -> None:
        self.method = method
        self.path = path
        self.headers = headers
        """Header names in lower case; a header sent several times is joined with `, `."""
        self.client = client
        """The peer's address (as the ASGI server reports it), None when unknown."""
        self.scheme = scheme  # "http", "https", "ws" or "wss"

    def __repr__(self) -> str:
        return f"Request({self.method} {self.path} from {self.client})"


Authenticate = Callable[[Request], "str | None | Awaitable[str | None]"]


def bearer_token(token: str, principal: str | None = None) -> Authenticate:
    """A hook that admits requests carrying `Authorization: Bearer <token>` (compared in
    constant time) as `principal` (default: a name derived from the token, so two servers
    with the same token agree on it)."""
    if not token or any(c.isspace() for c in token):
        raise ValueError("a bearer token must be non-empty and hold no whitespace")
    expected = token.encode()
    who = principal or "bearer:" + hashlib.sha256(expected).hexdigest()[:12]

    def authenticate(request: Request) -> str | None:
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer":
            return None
        return who if hmac.compare_digest(given.strip().encode(), expected) else None

    return authenticate


def is_loopback(host: str | None) -> bool:
    """Whether `host` (an address or a name, with or without brackets) is this machine only."""
    if not host:
        return False
    name = host.strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The host part of a `Host` header (no port, no brackets), lower case."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def origin_allowed(origin: str, allowed: Iterable[str], host: str) -> bool:
    """Whether a browser's `Origin` may use the agent: one of `allowed` (exact, or `*`), or
    the server's own origin (same host and port as the request's `Host`)."""
    allowed = list(allowed)
    if "*" in allowed or origin in allowed:
        return True
    parts = urlsplit(origin)
    return bool(parts.netloc) and parts.netloc.lower() == host.strip().lower()
