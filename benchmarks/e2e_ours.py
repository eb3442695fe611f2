"""The end-to-end pair on our bindings: an agent that streams N `agent_message_chunk`s in one
turn, and a client that spawns it, runs the turn and reports how long the stream took.

    python benchmarks/e2e_ours.py agent --lane v2        # or v1, or both (the version router)
    python benchmarks/e2e_ours.py client --lane v2 --chunks 20000 -- AGENT_CMD [ARGS...]

The client prints one JSON line: `{"chunks", "seconds", "peak_rss_kib"}`, where `seconds` runs
from sending `session/prompt` to handling the turn's last message, and `peak_rss_kib` is the
client's own peak resident memory. The prompt's text is the number of chunks to send, so every
pair in `e2e.py` (ours, the TypeScript SDK's, the Python SDK's) runs the same turn. Chunk `i`
carries the text `word{i % 100} `. v2 turns end with `state_update` idle, v1 turns with the
`session/prompt` answer.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import importlib
import json
import os
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))

SESSION_ID = "sess_bench"
MESSAGE_ID = "msg_bench"


def peak_rss_kib() -> int:
    """This process's peak resident memory in KiB: VmHWM, which starts afresh at exec (the
    rusage maximum would include the parent's memory from before the fork)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def bindings(lane: str) -> ModuleType:
    return importlib.import_module(f"acp_kit.{lane}")


def notification_type(acp: ModuleType) -> Any:
    """The params type of `session/update` (its `$defs` name differs between lanes)."""
    return (
        acp.UpdateSessionNotification
        if hasattr(acp, "UpdateSessionNotification")
        else (acp.SessionNotification)
    )


def chunk_template(acp: ModuleType) -> Any:
    """A decoded chunk: its classes build the stream (class names stay out of this file)."""
    wire = {"sessionUpdate": "agent_message_chunk", "messageId": MESSAGE_ID,
            "content": {"type": "text", "text": ""}}  # fmt: skip
    return acp.decode(acp.SessionUpdate, wire)


# --- the agent -----------------------------------------------------------------------------


def make_agent(acp: ModuleType, lane: str) -> Any:
    params_type = notification_type(acp)
    template = chunk_template(acp)
    chunk_cls, text_cls = type(template), type(template.content)

    class BenchAgent(acp.AgentBase):  # type: ignore[misc, name-defined]
        async def initialize(self, params: Any) -> Any:
            info = {"name": "bench-agent", "version": "1"}
            wire: dict[str, Any] = {"protocolVersion": acp.PROTOCOL_VERSION}
            wire.update({"info": info} if lane == "v2" else {"agentInfo": info})
            return acp.decode(acp.InitializeResponse, wire)

        async def session_new(self, params: Any) -> Any:
            return acp.decode(acp.NewSessionResponse, {"sessionId": SESSION_ID})

        async def session_prompt(self, params: Any) -> Any:
            count = int(params.prompt[0].text)
            if lane == "v2":  # answered at once; the turn follows as updates
                asyncio.get_running_loop().create_task(self.stream(count, idle=True))
                return acp.decode(acp.PromptResponse, {"messageId": "msg_user"})
            await self.stream(count, idle=False)
            return acp.decode(acp.PromptResponse, {"stopReason": "end_turn"})

        async def stream(self, count: int, idle: bool) -> None:
            send = self.client.session_update
            for i in range(count):
                update = chunk_cls(message_id=MESSAGE_ID, content=text_cls(text=f"word{i % 100} "))
                await send(params_type(session_id=SESSION_ID, update=update))
            if idle:
                wire = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
                last = acp.decode(acp.SessionUpdate, wire)
                await send(params_type(session_id=SESSION_ID, update=last))

    return BenchAgent()


async def run_agent(lane: str) -> None:
    """Serve one lane, or (`both`) each through the version router, as an agent written for
    both versions is: the router costs the connection nothing once `initialize` is answered."""
    if lane == "both":
        kit = importlib.import_module("acp_kit")
        factories = {
            name: functools.partial(make_agent, bindings(name), name) for name in ("v1", "v2")
        }
        connection = await kit.connect_stdio(kit.AgentRouter(factories))
    else:
        acp = bindings(lane)
        connection = await acp.connect_stdio(make_agent(acp, lane))
    await connection.wait_closed()


# --- the client ----------------------------------------------------------------------------


def make_client(acp: ModuleType, expected: int) -> Any:
    chunk_cls = type(chunk_template(acp))

    class BenchClient(acp.ClientBase):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            self.chunks = 0
            self.text_bytes = 0
            self.idle = asyncio.Event()
            self.all_chunks = asyncio.Event()

        async def session_update(self, params: Any) -> None:
            update = params.update
            if type(update) is chunk_cls:
                self.chunks += 1
                self.text_bytes += len(update.content.text)
                if self.chunks == expected:
                    self.all_chunks.set()
                return
            wire = acp.encode(update)
            if wire.get("sessionUpdate") == "state_update" and wire.get("state") == "idle":
                self.idle.set()

    return BenchClient()


async def run_client(lane: str, chunks: int, command: list[str]) -> dict[str, Any]:
    acp = bindings(lane)
    client = make_client(acp, chunks)
    async with acp.connect_process(client, *command) as agent_process:
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
        del agent_process
    peak = peak_rss_kib()
    return {"chunks": client.chunks, "seconds": seconds, "peak_rss_kib": peak}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("role", choices=["agent", "client"])
    parser.add_argument("--lane", choices=["v1", "v2", "both"], default="v2")
    parser.add_argument("--chunks", type=int, default=20_000)
    argv = sys.argv[1:] if argv is None else argv
    command = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    args.command = command
    if args.role == "agent":
        asyncio.run(run_agent(args.lane))
        return 0
    if not args.command:
        parser.error("the client needs the agent's command after --")
    result = asyncio.run(run_client(args.lane, args.chunks, args.command))
    print(json.dumps(result), flush=True)
    return 0 if result["chunks"] == args.chunks else 1


if __name__ == "__main__":
    sys.exit(main())
