"""Micro-benchmark of the session store (issue 24): one 1,000-turn session written through the
SQLite store (synchronous FULL and NORMAL) and the memory store, side by side; and the RSS of
a process holding 10,000 stored sessions.

    python benchmarks/store.py [--turns N] [--rounds N] [--sessions N] [--json]

A turn is 27 updates: a user message, 20 agent message chunks, a tool call written 3 times, a
plan written twice, usage. `measure()` returns, per store, the median over interleaved rounds
of: the event loop's CPU per update (the writes' own cost where the agent runs), the process's
CPU per update (the writer thread included), the wall time from the first write to "all of it
is durable" (`flush()` returned), and the time to read the whole history back (a fresh store on
the same file). `measure_rss()` runs one child process per store that creates the sessions
(one turn each) and reports its RSS as they accumulate, after listing them all, and after
replaying some. Nothing here asserts on timing; read the ratios (see benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: import the package from the repo root instead
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

from templates.toolkit.store import ANY_OWNER, Retention, SessionSetup, SessionStore  # noqa: E402
from templates.toolkit.store_memory import MemoryStore  # noqa: E402
from templates.toolkit.store_sqlite import SQLiteStore  # noqa: E402

UPDATES_PER_TURN = 27
UNBOUNDED = Retention(max_age=None, max_sessions=None, max_bytes=None, sweep_every=0)
STORES: dict[str, Callable[[Path], SessionStore]] = {
    "memory": lambda folder: MemoryStore(retention=UNBOUNDED),
    "sqlite FULL": lambda folder: SQLiteStore(folder / "s.db", retention=UNBOUNDED),
    "sqlite NORMAL": lambda folder: SQLiteStore(
        folder / "s.db", retention=UNBOUNDED, synchronous="NORMAL"
    ),
}
_WORDS = "the store keeps each session so an editor can load it after a restart".split()


def _chunk(turn: int, n: int) -> dict[str, Any]:
    words = " ".join(_WORDS[(turn + n + i) % len(_WORDS)] for i in range(3 + n % 5))
    return {"type": "text", "text": f"{words} "}


Write = tuple[str, tuple[Any, ...], dict[str, Any]]  # a store method, its arguments


def turn_writes(session: str, turn: int) -> list[Write]:
    """One turn's 27 updates, as the toolkit would write them (values made here, before any
    timing, so that only the store's own cost is measured)."""
    user = {"role": "user", "content": [{"type": "text", "text": " ".join(_WORDS) * 2}]}
    writes: list[Write] = [("put", (session, "message", f"u{turn}", user), {})]
    for n in range(20):
        writes.append(("append", (session, "message", f"a{turn}", _chunk(turn, n)), {}))
    call = {"toolCallId": f"call_{turn}", "title": "Read src/app.py", "kind": "read"}
    for status in ("pending", "in_progress", "completed"):
        content = [{"type": "content", "content": {"type": "text", "text": "42 lines"}}]
        value = {**call, "status": status, "content": content}
        writes.append(("put", (session, "tool_call", f"call_{turn}", value), {}))
    for done in (0, 1):
        steps = [
            {
                "content": f"step {i}",
                "priority": "medium",
                "status": "completed" if i < done else "pending",
            }
            for i in range(4)
        ]
        writes.append(("put", (session, "plan", "plan", {"entries": steps}), {}))
    writes.append(("update", (session,), {"usage": {"used": 1000 + turn, "size": 200_000}}))
    return writes


def write_turn(store: SessionStore, session: str, turn: int) -> None:
    for method, args, options in turn_writes(session, turn):
        getattr(store, method)(*args, **options)


async def one_round(name: str, turns: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="acp-store-bench-") as folder:
        make = STORES[name]
        store = await make(Path(folder)).open()
        await store.create(SessionSetup("bench", "/work/project", protocol_version=2))
        loop_cpu = 0.0
        plan = [
            [(getattr(store, m), a, o) for m, a, o in turn_writes("bench", turn)]
            for turn in range(turns)
        ]  # the values are made before the clocks start
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for calls in plan:
            t0 = time.thread_time()
            for method, args, options in calls:
                method(*args, **options)
            loop_cpu += time.thread_time() - t0
            await asyncio.sleep(0)  # the agent awaits its sends between turns
        await store.flush()
        durable, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        if name != "memory":
            await store.close()
            store = await make(Path(folder)).open()
        read0 = time.perf_counter()
        entries = items = 0
        async for entry in store.history("bench"):
            entries, items = entries + 1, items + len(entry.items)
        replay = time.perf_counter() - read0
        await store.close()
    assert (entries, items) == (turns * 3 + 1, turns * 20), (entries, items)  # one plan
    updates = turns * UPDATES_PER_TURN
    return {
        "loop_cpu_us_per_update": loop_cpu / updates * 1e6,
        "process_cpu_us_per_update": cpu / updates * 1e6,
        "durable_s": durable,
        "replay_s": replay,
    }


def measure(turns: int = 1000, rounds: int = 5) -> dict[str, dict[str, float]]:
    """Median of `rounds` interleaved rounds per store (one warm-up round first)."""
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in STORES}
    for round_ in range(rounds + 1):
        for name in STORES:
            result = asyncio.run(one_round(name, turns))
            if round_:
                samples[name].append(result)
            print(f"round {round_} {name}: {result}", file=sys.stderr)
    return {
        name: {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        for name, runs in samples.items()
    }


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def _rss_child(name: str, sessions: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="acp-store-rss-") as folder:
        store = await STORES[name](Path(folder)).open()
        seen: dict[str, Any] = {"start": _rss()}
        for n in range(sessions):
            await store.create(SessionSetup(f"s{n}", "/work/project", protocol_version=2))
            write_turn(store, f"s{n}", 0)
            if (n + 1) % 100 == 0:
                await store.flush()
            if (n + 1) % (sessions // 10 or 1) == 0:
                seen[str(n + 1)] = _rss()
        await store.flush()
        cursor, listed = None, 0
        while True:
            page = await store.list_sessions(owner=ANY_OWNER, cursor=cursor, limit=1000)
            listed += len(page.sessions)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        seen["listed"] = _rss()
        for n in range(0, sessions, sessions // 100 or 1):
            async for _ in store.history(f"s{n}"):
                pass
        seen["replayed"] = _rss()
        seen["db_bytes"] = sum(p.stat().st_size for p in Path(folder).iterdir())
        await store.close()
    assert listed == sessions
    return seen


def measure_rss(sessions: int = 10_000) -> dict[str, dict[str, Any]]:
    """RSS (bytes) of one child process per store as `sessions` sessions are stored."""
    found = {}
    for name in STORES:
        out = subprocess.run(
            [sys.executable, __file__, "--rss-child", name, "--sessions", str(sessions)],
            capture_output=True,
            text=True,
            check=True,
        )
        found[name] = json.loads(out.stdout)
        print(f"rss {name}: {found[name]}", file=sys.stderr)
    return found


def load() -> str:
    return open("/proc/loadavg").read().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--rss-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child:
        print(json.dumps(asyncio.run(_rss_child(args.rss_child, args.sessions))))
        return
    before = load()
    speed = measure(args.turns, args.rounds)
    rss = measure_rss(args.sessions)
    result = {"load_before": before, "load_after": load(), "speed": speed, "rss": rss}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    base = speed["memory"]
    print(f"load average before/after: {before} / {result['load_after']}")
    updates = args.turns * UPDATES_PER_TURN
    print(f"\n{args.turns}-turn session ({updates} updates), median of {args.rounds}:\n")
    print("| store | loop CPU µs/update | process CPU µs/update | to durable s | replay s |")
    print("|---|---|---|---|---|")
    for name, row in speed.items():
        print(
            f"| {name} | {row['loop_cpu_us_per_update']:.2f} "
            f"({row['loop_cpu_us_per_update'] / base['loop_cpu_us_per_update']:.2f}×) "
            f"| {row['process_cpu_us_per_update']:.2f} | {row['durable_s']:.3f} "
            f"({row['durable_s'] / base['durable_s']:.2f}×) | {row['replay_s']:.3f} "
            f"({row['replay_s'] / base['replay_s']:.2f}×) |"
        )
    mib = 1 << 20
    print(f"\nRSS MiB while {args.sessions} sessions are stored (one turn each):\n")
    marks = [k for k in next(iter(rss.values())) if k not in ("db_bytes",)]
    print("| store | " + " | ".join(marks) + " | file MiB |")
    print("|---" * (len(marks) + 2) + "|")
    for name, seen in rss.items():
        cells = " | ".join(f"{seen[k] / mib:.1f}" for k in marks)
        print(f"| {name} | {cells} | {seen['db_bytes'] / mib:.1f} |")


if __name__ == "__main__":
    main()
