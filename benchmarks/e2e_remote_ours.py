"""The end-to-end pair on our bindings over a remote transport: e2e_ours.py's agent served by
`AgentApp` (uvicorn, loopback), and its client over WebSocket or Streamable HTTP.

    python benchmarks/e2e_remote_ours.py agent --lane v2            # prints `listening: URL`s
    python benchmarks/e2e_remote_ours.py client --transport ws --chunks 20000 -- AGENT_CMD...

The client starts AGENT_CMD, reads its `listening:` lines, connects to the URL of the transport
asked for, runs the same turn as e2e_ours.py and prints the same JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.e2e_ours import bindings, make_agent, make_client, peak_rss_kib  # noqa: E402


async def run_agent(lane: str) -> None:
    from acp_kit.transports.serve import serve_remote
    from acp_kit.transports.server import AgentApp

    acp = bindings(lane)
    app = AgentApp(lambda principal: make_agent(acp, lane))

    def announce(urls: list[str]) -> None:
        for url in urls:
            print(f"listening: {url}", flush=True)

    await serve_remote(app, "127.0.0.1:0", ready=announce)


async def run_client(lane: str, transport_name: str, chunks: int, command: list[str]) -> Any:
    from acp_kit.runtime.connection import Connection
    from acp_kit.transports.connect import remote_transport
    from acp_kit.transports.ws_client import WebSocketTransport

    agent_process = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    try:
        assert agent_process.stdout is not None
        urls = []
        while len(urls) < 2:
            line = (await asyncio.wait_for(agent_process.stdout.readline(), 20)).decode()
            if not line:
                raise RuntimeError("the agent exited before it listened")
            if line.startswith("listening: "):
                urls.append(line.split(" ", 1)[1].strip())
        url = next(u for u in urls if u.startswith(transport_name))
        acp = bindings(lane)
        client = make_client(acp, chunks)
        transport = remote_transport(url)
        if isinstance(transport, WebSocketTransport):
            await transport.open()
        connection = Connection(client, transport)
        connection.start()
        agent = client.agent
        init: dict[str, Any] = {"protocolVersion": acp.PROTOCOL_VERSION}
        if lane == "v2":
            init["info"] = {"name": "bench-client", "version": "1"}
        await agent.initialize(acp.decode(acp.InitializeRequest, init))
        session = await agent.session_new(
            acp.decode(acp.NewSessionRequest, {"cwd": os.getcwd(), "mcpServers": []})
        )
        prompt = {"sessionId": session.session_id,
                  "prompt": [{"type": "text", "text": str(chunks)}]}  # fmt: skip
        start = time.perf_counter()
        await agent.session_prompt(acp.decode(acp.PromptRequest, prompt))
        await client.all_chunks.wait()
        if lane == "v2":
            await client.idle.wait()
        seconds = time.perf_counter() - start
        await connection.close()
    finally:
        if agent_process.returncode is None:
            agent_process.terminate()
        await agent_process.wait()
    return {"chunks": client.chunks, "seconds": seconds, "peak_rss_kib": peak_rss_kib()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("role", choices=["agent", "client"])
    parser.add_argument("--lane", choices=["v1", "v2"], default="v2")
    parser.add_argument("--transport", choices=["ws", "http"], default="ws")
    parser.add_argument("--chunks", type=int, default=20_000)
    argv = sys.argv[1:] if argv is None else argv
    command = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    if args.role == "agent":
        try:
            asyncio.run(run_agent(args.lane))
        except KeyboardInterrupt:
            pass
        return 0
    if not command:
        parser.error("the client needs the agent's command after --")
    result = asyncio.run(run_client(args.lane, args.transport, args.chunks, command))
    print(json.dumps(result), flush=True)
    return 0 if result["chunks"] == args.chunks else 1


if __name__ == "__main__":
    sys.exit(main())
