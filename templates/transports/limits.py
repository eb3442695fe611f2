"""The bounds of a remote agent server, every one a cap (the peer can only stay under it). The
defaults are at least as strict as the official TypeScript SDK 2.4.0's (its numbers beside
each), and tighter where a Python agent serves several clients from one process.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Final

MIB: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """Caps of `AgentApp` (pass `limits=ServerLimits(max_connections=8)` to change one)."""

    max_message_bytes: int = 16 * MIB
    """Longest POST body or WebSocket message (413 / close 1009). SDK: 16 MiB bodies."""
    max_buffered_bytes: int = 16 * MIB
    """Output of one connection its client has not read yet; the agent's sends wait above it.
    SDK: 64 MiB."""
    replay_bytes: int = 1 * MIB
    """Events of each SSE stream kept after they were sent, for a client that reconnects with
    `Last-Event-ID` (counted in `max_buffered_bytes`; the oldest go first). SDK: none."""
    max_output_stall: float = 30.0
    """Seconds a connection may hold output nobody reads before it is closed. SDK: 60 s."""
    max_session_streams: int = 256
    """Session streams of one connection, open or waiting for a reader (429). SDK: 1024
    waiting ones."""
    max_id_length: int = 256
    """Longest session id or string request id (400). SDK: 1024."""
    max_connections: int = 256
    """ACP connections at once, over both transports (503). SDK: unbounded."""
    max_sessions: int = 10_000
    """Sessions whose owner the server remembers; past it the oldest detached are forgotten
    (a forgotten session can be loaded by any principal the agent itself admits)."""
    initialize_timeout: float = 30.0
    """Seconds the agent has to answer `initialize` (504)."""
    idle_timeout: float = 600.0
    """Seconds an HTTP connection may go with no request and no open stream before it is
    closed (its sessions stay with the agent, for a later load or resume)."""
    keepalive: float = 15.0
    """Seconds between comments on an idle SSE stream (SDK: 15 s)."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if not value > 0:
                raise ValueError(f"{field.name} must be positive, got {value!r}")
