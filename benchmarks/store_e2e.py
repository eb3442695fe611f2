"""The session store end to end: a toolkit agent (`acp_kit.Agent`) over stdio, its sessions in
memory or in a SQLite file, driven by a raw v2 client.

    python benchmarks/store_e2e.py [--turns 1000] [--rounds 3] [--sessions 10000] [--json]
    python benchmarks/store_e2e.py agent [--store PATH] [--queued]  # the agent (spawned)

- **stream**: one session of `--turns` turns (27 updates a turn: the user message, running,
  20 agent message chunks, a tool call pending → in_progress → completed, usage, idle), the
  client's seconds from the first `session/prompt` to the last turn's idle; memory and SQLite
  rounds interleaved, the median of each. The overhead per update is (SQLite − memory) /
  updates, and its share of the memory run's time per update (the goal: ≤ 10%); the same for
  a SQLite store whose turns end without waiting for their commit (`durable_turn_ends=False`,
  "queued").
- **replay**: a fresh agent process on that file resumes the session from the start: seconds
  from `session/resume` to the idle update after its replay (27,000 updates read back).
- **rss**: the agent's resident memory (VmRSS) while one client creates `--sessions` sessions
  of one turn each (every 1,000), then a fresh agent on that file: at start, after listing
  every page, after resuming 100 sessions with their replays.

Nothing here asserts on timing; see benchmarks/README.md for how to read ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))

CHUNKS = 20
UPDATES_PER_TURN = CHUNKS + 7


# --- the agent -----------------------------------------------------------------------------
def run_agent(store: str | None, queued: bool = False) -> None:
    import acp_kit as kit

    class Streamer(kit.Agent):
        name = "store-bench-agent"
        max_sessions = 1000

        async def prompt(self, turn: kit.Turn) -> kit.TurnStopReason:
            for i in range(CHUNKS):
                await turn.say(f"word{i} ")
            tool = await turn.tool_call("Read", kind="read", raw_input={"n": turn.session.turns})
            await tool.start()
            await tool.complete("done")
            await turn.usage(turn.session.turns, 200_000)
            return "end_turn"

    options: dict[str, Any] = {"durable_turn_ends": not queued}
    if sync := os.environ.get("STORE_E2E_SYNCHRONOUS"):  # FULL or NORMAL: a SQLiteStore's
        options["synchronous"] = sync
    spec: Any = kit.SQLiteStore(store, **options) if store else None
    kit.run_agent(Streamer(store=spec))


# --- the client ----------------------------------------------------------------------------
class Peer:
    """A raw v2 client over the agent's stdin/stdout (JSON lines, no decoding beyond json)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process, self.stdin, self.stdout = process, process.stdin, process.stdout
        self.ids = iter(range(1, 10**9))
        self.updates = 0

    @classmethod
    async def spawn(cls, store: str | None, queued: bool = False) -> Peer:
        args = [sys.executable, __file__, "agent", *(["--store", store] if store else [])]
        args += ["--queued"] if queued else []
        process = await asyncio.create_subprocess_exec(
            *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        peer = cls(process)
        await peer.call("initialize", {"protocolVersion": 2, "info": {"name": "b", "version": "1"}})
        return peer

    def send(self, method: str, params: Any) -> int:
        rid = next(self.ids)
        line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        self.stdin.write(line.encode() + b"\n")
        return rid

    async def call(self, method: str, params: Any) -> Any:
        rid = self.send(method, params)
        while True:
            message = json.loads(await self.stdout.readline())
            if message.get("id") == rid and "method" not in message:
                return message
            self.count(message)

    def count(self, message: dict[str, Any]) -> bool:
        """Count an update; True for an idle state_update."""
        if message.get("method") != "session/update":
            return False
        self.updates += 1
        update = message["params"]["update"]
        return bool(update.get("sessionUpdate") == "state_update" and update["state"] == "idle")

    async def until_idle(self) -> None:
        while not self.count(json.loads(await self.stdout.readline())):
            pass

    async def turn(self, sid: str) -> None:
        prompt = [{"type": "text", "text": "go"}]
        await self.call("session/prompt", {"sessionId": sid, "prompt": prompt})
        await self.until_idle()

    async def new_session(self) -> str:
        answer = await self.call("session/new", {"cwd": "/bench"})
        sid: str = answer["result"]["sessionId"]
        return sid

    def cpu_seconds(self) -> float:
        """The agent process's CPU time so far (user + system, every thread)."""
        with open(f"/proc/{self.process.pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_kib(self) -> int:
        with open(f"/proc/{self.process.pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    async def close(self) -> None:
        self.stdin.close()
        await self.process.wait()


async def stream(
    store: str | None, turns: int, queued: bool = False
) -> tuple[float, float, int, str]:
    """Wall seconds and the agent's CPU seconds of `turns` turns; updates; the session."""
    peer = await Peer.spawn(store, queued)
    sid = await peer.new_session()
    peer.updates = 0
    cpu = peer.cpu_seconds()
    start = time.perf_counter()
    for _ in range(turns):
        await peer.turn(sid)
    seconds = time.perf_counter() - start
    cpu = peer.cpu_seconds() - cpu
    updates = peer.updates
    await peer.close()
    return seconds, cpu, updates, sid


async def replay(store: str, sid: str) -> tuple[float, int]:
    peer = await Peer.spawn(store)
    peer.updates = 0
    start = time.perf_counter()
    replay_from = {"type": "start"}
    peer.send("session/resume", {"sessionId": sid, "cwd": "/bench", "replayFrom": replay_from})
    await peer.until_idle()
    seconds = time.perf_counter() - start
    updates = peer.updates
    await peer.close()
    return seconds, updates


async def rss(store: str, sessions: int) -> dict[str, Any]:
    peer = await Peer.spawn(store)
    creating = []
    made: list[str] = []
    for n in range(1, sessions + 1):
        made.append(await peer.new_session())
        await peer.turn(made[-1])
        if n % 1000 == 0:
            creating.append(peer.rss_kib())
    await peer.close()
    fresh = await Peer.spawn(store)
    at_start = fresh.rss_kib()
    cursor: str | None = None
    listed = 0
    while True:
        page = (await fresh.call("session/list", {"cursor": cursor} if cursor else {}))["result"]
        listed += len(page["sessions"])
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    after_list = fresh.rss_kib()
    for sid in made[:: max(1, len(made) // 100)][:100]:
        fresh.send("session/resume", {"sessionId": sid, "cwd": "/bench",
                                      "replayFrom": {"type": "start"}})  # fmt: skip
        await fresh.until_idle()
    after_resume = fresh.rss_kib()
    await fresh.close()
    return {
        "creating_kib_every_1000": creating,
        "fresh_start_kib": at_start,
        "after_listing_kib": after_list,
        "listed": listed,
        "after_100_resumes_kib": after_resume,
    }


async def measure(turns: int, rounds: int, sessions: int) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="store-bench-"))
    memory: list[float] = []
    stored: list[float] = []
    queued: list[float] = []
    memory_cpu: list[float] = []
    stored_cpu: list[float] = []
    updates = 0
    sid = ""
    db = ""
    await stream(None, min(turns, 50))  # warm-up
    for r in range(rounds):
        print(f"round {r + 1}/{rounds}", file=sys.stderr)
        seconds, cpu, updates, _ = await stream(None, turns)
        memory.append(seconds)
        memory_cpu.append(cpu)
        db = str(folder / f"stream{r}.db")
        seconds, cpu, stored_updates, sid = await stream(db, turns)
        assert stored_updates == updates, (stored_updates, updates)
        stored.append(seconds)
        stored_cpu.append(cpu)
        seconds, _, queued_updates, _ = await stream(str(folder / f"queued{r}.db"), turns, True)
        assert queued_updates == updates, (queued_updates, updates)
        queued.append(seconds)
    replay_seconds, replayed = await replay(db, sid)
    per_update = statistics.median(memory) / updates
    overhead = (statistics.median(stored) - statistics.median(memory)) / updates
    queued_overhead = (statistics.median(queued) - statistics.median(memory)) / updates
    cpu_per_update = statistics.median(memory_cpu) / updates
    cpu_overhead = (statistics.median(stored_cpu) - statistics.median(memory_cpu)) / updates
    print("rss", file=sys.stderr)
    memory_use = await rss(str(folder / "many.db"), sessions) if sessions else {}
    return {
        "turns": turns,
        "updates": updates,
        "memory_seconds": memory,
        "sqlite_seconds": stored,
        "per_update_us": per_update * 1e6,
        "overhead_per_update_us": overhead * 1e6,
        "overhead_share": overhead / per_update,
        "queued_seconds": queued,
        "queued_overhead_per_update_us": queued_overhead * 1e6,
        "queued_overhead_share": queued_overhead / per_update,
        "memory_agent_cpu_seconds": memory_cpu,
        "sqlite_agent_cpu_seconds": stored_cpu,
        "agent_cpu_per_update_us": cpu_per_update * 1e6,
        "agent_cpu_overhead_per_update_us": cpu_overhead * 1e6,
        "agent_cpu_overhead_share": cpu_overhead / cpu_per_update,
        "replay_seconds": replay_seconds,
        "replayed_updates": replayed,
        "rss": memory_use,
        "load": os.getloadavg(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("role", nargs="?", choices=["agent", "measure"], default="measure")
    parser.add_argument("--store")
    parser.add_argument("--queued", action="store_true", help="durable_turn_ends=False")
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.role == "agent":
        run_agent(args.store, args.queued)
        return 0
    result = asyncio.run(measure(args.turns, args.rounds, args.sessions))
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
