"""End to end over stdio: an agent streams N `agent_message_chunk`s in one turn to a client
that spawned it. Three pairs run the same turn side by side (interleaved):

- ours, v2 and v1 (`e2e_ours.py`, the lanes `acp_kit.v2` / `acp_kit.v1`), and the same clients
  against one agent that serves both versions through the toolkit's version router (`router v2`,
  `router v1`: what the router costs, against ours on the same version);
- the official TypeScript SDK 2.4.0, v2 (`interop/bench_agent.mjs`, `interop/bench_client.mjs`);
- the PyPI Python SDK `agent-client-protocol`, v1 (`e2e_pypi.py`).

    python benchmarks/e2e.py [--runs N] [--chunks N] [--only TEXT ...]

Each client reports the seconds from sending `session/prompt` to handling the turn's last
message, and its own peak RSS; the whole run (spawn to exit) is timed too. Ratios compare a
pair with ours on the same protocol version (TypeScript v2 / ours v2, Python SDK v1 / ours
v1). Nothing here asserts on timing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
INTEROP = REPO / "interop"
SDK = INTEROP / "node_modules" / "@agentclientprotocol" / "sdk"
CHUNKS = 20_000


@dataclass
class Pair:
    name: str
    lane: str
    command: list[str] | None  # None: not available here
    why_not: str = ""
    stream: list[float] = field(default_factory=list)  # client-reported seconds per run
    wall: list[float] = field(default_factory=list)  # spawn to exit
    rss_kib: list[int] = field(default_factory=list)  # the client's peak RSS

    def median(self) -> float | None:
        return statistics.median(self.stream) if self.stream else None

    def best(self) -> float | None:
        """The fastest run, shown beside the median (see benchmarks/README.md)."""
        return min(self.stream) if self.stream else None


def ratio_text(pair: Pair, base: Pair | None) -> str:
    """`pair` against ours on its lane: median over median, then best over best."""
    best, median = pair.best(), pair.median()
    if base is None or best is None or median is None:
        return ""
    base_best, base_median = base.best(), base.median()
    if not base_best or not base_median:
        return ""
    return f"{median / base_median:5.2f}× ours {pair.lane} (best {best / base_best:.2f}×)"


def pairs(chunks: int) -> list[Pair]:
    python = sys.executable
    ours = str(REPO / "benchmarks" / "e2e_ours.py")
    pypi = str(REPO / "benchmarks" / "e2e_pypi.py")
    out = []
    for lane in ("v2", "v1"):
        client = [python, ours, "client", "--lane", lane, "--chunks", str(chunks)]
        out.append(
            Pair(f"ours {lane}", lane, [*client, "--", python, ours, "agent", "--lane", lane])
        )
        out.append(
            Pair(f"router {lane}", lane, [*client, "--", python, ours, "agent", "--lane", "both"])
        )
    node = shutil.which("node")
    if node is None or not SDK.is_dir():
        out.append(
            Pair("TypeScript SDK v2", "v2", None, "needs node and `npm ci --prefix interop`")
        )
    else:
        client = [node, str(INTEROP / "bench_client.mjs"), "--chunks", str(chunks)]
        agent = [node, str(INTEROP / "bench_agent.mjs")]
        out.append(Pair("TypeScript SDK v2", "v2", [*client, "--", *agent]))
    if importlib.util.find_spec("acp") is None:  # not imported: this process stays small
        out.append(Pair("Python SDK v1", "v1", None, "needs `pip install agent-client-protocol`"))
    else:
        client = [python, pypi, "client", "--chunks", str(chunks)]
        out.append(Pair("Python SDK v1", "v1", [*client, "--", python, pypi, "agent"]))
    return out


def run_once(pair: Pair, env: dict[str, str]) -> None:
    assert pair.command is not None
    start = time.perf_counter()
    done = subprocess.run(
        pair.command, capture_output=True, text=True, timeout=300, cwd=REPO, env=env, check=False
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise RuntimeError(f"{pair.name}: exit {done.returncode}: {last}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    pair.stream.append(float(result["seconds"]))
    pair.wall.append(wall)
    pair.rss_kib.append(int(result["peak_rss_kib"]))


def measure(
    runs: int, chunks: int = CHUNKS, progress: Any = None, only: list[str] | None = None
) -> list[Pair]:
    """Every available pair `runs` times, interleaved (plus one warm-up each: bytecode and
    disk caches). `only`: the pairs whose name contains one of these (case-insensitive)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    chosen = [
        p for p in pairs(chunks) if not only or any(o.lower() in p.name.lower() for o in only)
    ]
    available = [p for p in chosen if p.command is not None]
    for round_ in range(-1, runs):
        for pair in available:
            if pair.why_not:
                continue
            try:
                run_once(pair, env)
            except (RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError) as error:
                pair.why_not = f"failed: {error}"
                continue
            if round_ < 0:  # the warm-up does not count
                pair.stream.clear()
                pair.wall.clear()
                pair.rss_kib.clear()
            elif progress is not None:
                progress(f"e2e: {pair.name}: {pair.stream[-1] * 1e3:.0f} ms")
    return available + [p for p in chosen if p.command is None]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--chunks", type=int, default=CHUNKS)
    parser.add_argument(
        "--only", nargs="+", metavar="TEXT", help="run the pairs whose name contains TEXT"
    )
    args = parser.parse_args(argv)
    progress = lambda text: print(text, file=sys.stderr)  # noqa: E731
    results = measure(args.runs, args.chunks, progress, args.only)
    ours = {p.lane: p for p in results if p.name == f"ours {p.lane}"}
    for pair in results:
        best, median = pair.best(), pair.median()
        if best is None or median is None:
            print(f"{pair.name:20} {pair.why_not}")
            continue
        ratio = "" if pair.name.startswith("ours") else ratio_text(pair, ours.get(pair.lane))
        rss = max(pair.rss_kib) / 1024
        print(
            f"{pair.name:20} stream median {median * 1e3:6.1f} ms (best {best * 1e3:6.1f})  "
            f"wall {statistics.median(pair.wall) * 1e3:7.1f} ms  client peak RSS {rss:5.1f} MiB  "
            f"{ratio}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
