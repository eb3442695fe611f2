"""The end-to-end pair on the PyPI Python SDK (`agent-client-protocol`, protocol v1), written
the way its README shows: `run_agent` on one side, `spawn_agent_process` on the other. Same
turn as `e2e_ours.py` (the prompt's text is the number of chunks; chunk `i` says
`word{i % 100} `), same output line.

    python benchmarks/e2e_pypi.py agent
    python benchmarks/e2e_pypi.py client --chunks 20000 -- AGENT_CMD [ARGS...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from typing import Any

import acp
from acp.schema import InitializeResponse, NewSessionResponse, PromptResponse

SESSION_ID = "sess_bench"


def peak_rss_kib() -> int:
    """As in e2e_ours.py: VmHWM (this process only), else the rusage maximum."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


class BenchAgent:
    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=acp.PROTOCOL_VERSION)

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id=SESSION_ID)

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        for i in range(int(prompt[0].text)):
            update = acp.update_agent_message_text(f"word{i % 100} ")
            await self.conn.session_update(session_id=session_id, update=update)
        return PromptResponse(stop_reason="end_turn")


class BenchClient:
    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.chunks = 0
        self.all_chunks = asyncio.Event()

    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if update.session_update == "agent_message_chunk":
            self.chunks += 1
            if self.chunks == self.expected:
                self.all_chunks.set()

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("session/request_permission")


async def run_client(chunks: int, command: list[str]) -> dict[str, Any]:
    client = BenchClient(chunks)
    async with acp.spawn_agent_process(client, *command) as (conn, _process):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
        start = time.perf_counter()
        await conn.prompt(session_id=session.session_id, prompt=[acp.text_block(str(chunks))])
        await client.all_chunks.wait()
        seconds = time.perf_counter() - start
    peak = peak_rss_kib()
    return {"chunks": client.chunks, "seconds": seconds, "peak_rss_kib": peak}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("role", choices=["agent", "client"])
    parser.add_argument("--chunks", type=int, default=20_000)
    argv = sys.argv[1:] if argv is None else argv
    command = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    if args.role == "agent":
        asyncio.run(acp.run_agent(BenchAgent()))  # type: ignore[arg-type]
        return 0
    if not command:
        parser.error("the client needs the agent's command after --")
    result = asyncio.run(run_client(args.chunks, command))
    print(json.dumps(result), flush=True)
    return 0 if result["chunks"] == args.chunks else 1


if __name__ == "__main__":
    sys.exit(main())
