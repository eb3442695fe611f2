"""The remote rows of the end-to-end benchmark: the same turn (20,000 `agent_message_chunk`s)
carried over WebSocket and over Streamable HTTP (SSE), on loopback, by each side's own server
and client:

- ours: `e2e_remote_ours.py` (the agent under `AgentApp` and uvicorn, the client on
  `WebSocketTransport` / `HttpTransport`);
- the official TypeScript SDK 2.4.0's experimental server and clients
  (`interop/bench_agent.mjs --listen`, `interop/bench_remote_client.mjs`).

Each pair is compared with ours on the same transport (its lane reads `v2 ws` / `v2 http`),
by the median of the interleaved rounds e2e.py runs.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
INTEROP = REPO / "interop"
NAMES = {"ws": "WebSocket", "http": "HTTP/SSE"}


def remote_pairs(chunks: int, pair: Any) -> list[Any]:
    """The remote pairs, as e2e.py's `Pair`s."""
    python = sys.executable
    ours = str(REPO / "benchmarks" / "e2e_remote_ours.py")
    node = shutil.which("node")
    has_libraries = all(importlib.util.find_spec(m) for m in ("uvicorn", "httpx", "websockets"))
    has_sdk = node is not None and (INTEROP / "node_modules" / "ws").is_dir()
    out = []
    for transport in ("ws", "http"):
        lane, over = f"v2 {transport}", NAMES[transport]
        if has_libraries:
            client = [python, ours, "client", "--transport", transport, "--chunks", str(chunks)]
            command = [*client, "--", python, ours, "agent", "--lane", "v2"]
            out.append(pair(f"ours {lane}", lane, command, transport=over))
        else:
            why = "needs uvicorn, httpx, websockets"
            out.append(pair(f"ours {lane}", lane, None, why, transport=over))
        if has_sdk:
            assert node is not None
            client = [node, str(INTEROP / "bench_remote_client.mjs"), "--transport", transport]
            agent = [node, str(INTEROP / "bench_agent.mjs"), "--listen", "127.0.0.1:0"]
            command = [*client, "--chunks", str(chunks), "--", *agent]
            out.append(pair(f"TypeScript SDK {lane}", lane, command, transport=over))
        else:
            why = "needs `npm ci --prefix interop`"
            out.append(pair(f"TypeScript SDK {lane}", lane, None, why, transport=over))
    return out
