"""Benchmarks of the generated ACP bindings against plain json and the pydantic baseline.

    python benchmarks/run.py [--quick] [--json] [--seed N] [--messages N]

Measures side by side in one run: decode, encode, import time and generation time, and prints
a Markdown table of times and ratios (JSON with --json; progress goes to stderr). It never
asserts on timing; a row whose subject is not importable or runnable yet says so.
See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: import the package from the repo root instead
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

from benchmarks import baseline, e2e, handwritten, store_e2e, stream  # noqa: E402

PARAMS_TYPE, V2_SCHEMA, to_line = stream.PARAMS_TYPE, stream.V2_SCHEMA, stream.to_line
V1_SCHEMA = str(Path(V2_SCHEMA).parent.parent / "v1" / "schema.json")

REPO = Path(__file__).resolve().parent.parent
GENERATED = REPO / "generated"
NOT_YET = "not available yet"

# Repetitions, as (full run, --quick).
PASSES = (20, 3)  # in-process passes over the whole stream; the best one is reported
IMPORT_RUNS = (30, 5)  # interpreter starts per command; median (and min) reported
GENERATE_RUNS = (5, 1)  # generator runs per tool, after one warm-up in a full run; median
E2E_RUNS = (9, 1)  # end-to-end runs per pair, interleaved, after one warm-up; best (and median)
STORE_RUNS = ((1000, 5, 10_000), (100, 1, 1000))  # turns, rounds, sessions of the store rows

Decode = Callable[[dict[str, Any]], Any]


@dataclass
class Row:
    group: str
    case: str
    seconds: float | None = None  # the statistic named by `stat`
    stat: str = ""
    per_message: float | None = None  # seconds, for the in-process rows
    ratio: float | None = None  # seconds / seconds of the row `ratio_to`
    ratio_to: str = ""
    goal: str = ""
    met: bool | None = None
    note: str = ""


class Bench:
    def __init__(self, quick: bool, seed: int, min_messages: int) -> None:
        full = not quick
        self.passes = PASSES[quick]
        self.import_runs = IMPORT_RUNS[quick]
        self.generate_runs = GENERATE_RUNS[quick]
        self.e2e_runs = E2E_RUNS[quick]
        self.store_runs = STORE_RUNS[quick]
        self.warm_up = full
        self.messages = stream.generate_messages(seed, min_messages)
        self.lines = [to_line(message) for message in self.messages]
        self.rows: list[Row] = []

    def add(
        self,
        row: Row,
        reference: Row | None = None,
        goal: str = "",
        limit: float | None = None,
    ) -> Row:
        """Record a row; with a reference, its ratio, and whether it meets `limit`."""
        row.goal = goal
        if reference is not None and row.seconds is not None and reference.seconds:
            row.ratio = row.seconds / reference.seconds
            row.ratio_to = reference.case
            if limit is not None:
                row.met = row.ratio <= limit
        self.rows.append(row)
        _progress(f"{row.group}: {row.case}: {_format_seconds(row.seconds) or row.note}")
        return row

    def in_process(self, group: str, case: str, run: Callable[[], object]) -> Row:
        seconds = baseline.best_time(run, self.passes)
        per_message = seconds / len(self.messages)
        return Row(group, case, seconds, f"best of {self.passes}", per_message)

    # --- decode: one JSON line to a typed value ---------------------------------------------

    def decode(self, ours: Any, pydantic_decode: Decode) -> None:
        lines, loads = self.lines, json.loads

        def loads_only() -> None:
            for line in lines:
                loads(line)

        def loads_ours() -> None:
            for line in lines:
                decode(params_type, loads(line)["params"])

        def loads_pydantic() -> None:
            for line in lines:
                pydantic_decode(loads(line)["params"])

        reference = self.add(self.in_process("decode", "json.loads", loads_only))
        case = "json.loads + acp_kit.v2.decode"
        if isinstance(ours, str):
            self.add(Row("decode", case, note=ours), goal="≤ 2×")
        else:
            decode, params_type = ours.decode, getattr(ours, PARAMS_TYPE)
            self.add(self.in_process("decode", case, loads_ours), reference, "≤ 2×", 2.0)
        row = self.in_process("decode", "json.loads + pydantic model_validate", loads_pydantic)
        self.add(row, reference, "~10× (baseline)")

    def decode_vs_handwritten(self, ours: Any) -> None:
        """Typed decode of the e2e stream's chunks vs `handwritten.py` on the same dicts."""
        data = [handwritten.chunk_params(i) for i in range(e2e.CHUNKS)]
        hand = handwritten.decode

        def by_hand() -> None:
            for params in data:
                hand(params)

        row = self.in_process("decode", "hand-written decoder (e2e chunks)", by_hand)
        row.per_message = (row.seconds or 0) / len(data)
        reference = self.add(row)
        case = "acp_kit.v2.decode (e2e chunks)"
        if isinstance(ours, str):
            self.add(Row("decode", case, note=ours), goal="≤ 1.1×")
            return
        decode, params_type = ours.decode, getattr(ours, PARAMS_TYPE)

        def generated() -> None:
            for params in data:
                decode(params_type, params)

        row = self.in_process("decode", case, generated)
        row.per_message = (row.seconds or 0) / len(data)
        self.add(row, reference, "≤ 1.1×", 1.1)

    # --- end to end: an agent streaming chunks to a client over stdio ----------------------

    def end_to_end(self) -> None:
        results = e2e.measure(self.e2e_runs, progress=_progress)
        ours = {p.lane: p for p in results if p.name == f"ours {p.lane}"}
        stat = f"median of {self.e2e_runs} interleaved"
        for pair in results:
            case = f"{pair.name}: {e2e.CHUNKS} agent_message_chunk over {pair.transport}"
            best, median = pair.best(), pair.median()
            if best is None or median is None:
                self.rows.append(Row("e2e", case, note=pair.why_not or NOT_YET))
                continue
            rss = max(pair.rss_kib) / 1024
            note = (
                f"best {_format_seconds(best)}; client peak RSS {rss:.1f} MiB; whole run "
                f"{_format_seconds(statistics.median(pair.wall))}"
            )
            row = Row("e2e", case, median, stat, median / e2e.CHUNKS, note=note)
            base = ours.get(pair.lane)
            if pair is base:
                if pair.transport == "stdio":
                    row.goal, row.met = "client peak RSS ≤ 30 MiB", rss <= 30
            elif base is not None and (base_median := base.median()) and (base_best := base.best()):
                row.ratio = median / base_median
                row.ratio_to = base.name
                if pair.name.startswith("router"):
                    row.goal, row.met = "≤ 1.05× ours (the router's cost)", row.ratio <= 1.05
                elif pair.transport != "stdio":
                    row.goal, row.met = "≥ 3× ours", row.ratio >= 3
                else:
                    row.goal, row.met = "≥ 5× ours", row.ratio >= 5
                row.note = f"best over best {best / base_best:.2f}×; " + row.note
            self.rows.append(row)

    # --- the session store: a toolkit agent's sessions in memory vs in a SQLite file ---------

    def session_store(self) -> None:
        turns, rounds, sessions = self.store_runs
        _progress(f"store: {turns}-turn session, {rounds} rounds; {sessions} sessions")
        got = asyncio.run(store_e2e.measure(turns, rounds, sessions))
        stat = f"median of {rounds} interleaved"
        case = f"toolkit agent, {turns}-turn session ({got['updates']} updates) over stdio"
        memory = self.add(
            Row("store", f"{case}, in memory", statistics.median(got["memory_seconds"]), stat,
                got["per_update_us"] / 1e6)
        )  # fmt: skip
        cpu = (
            f"agent CPU +{got['agent_cpu_overhead_per_update_us']:.1f} µs/update "
            f"({got['agent_cpu_overhead_share']:.0%} of its {got['agent_cpu_per_update_us']:.1f})"
        )
        row = Row("store", f"{case}, SQLite store", statistics.median(got["sqlite_seconds"]), stat,
                  note=f"+{got['overhead_per_update_us']:.1f} µs/update; {cpu}")  # fmt: skip
        row.per_message = row.seconds / got["updates"] if row.seconds else None
        self.add(row, memory)
        row.goal, row.met = "overhead ≤ 10% per update", got["overhead_share"] <= 0.10
        queued = Row("store", f"{case}, SQLite store, durable_turn_ends=False",
                     statistics.median(got["queued_seconds"]), stat,
                     note=f"+{got['queued_overhead_per_update_us']:.1f} µs/update")  # fmt: skip
        queued.per_message = queued.seconds / got["updates"] if queued.seconds else None
        self.add(queued, memory)
        queued.goal = "overhead ≤ 10% per update"
        queued.met = got["queued_overhead_share"] <= 0.10
        self.add(Row("store", f"session/resume replay of that session ({got['replayed_updates']}"
                     " updates) in a fresh agent", got["replay_seconds"], "one run"))  # fmt: skip
        rss = got["rss"]
        if rss:
            every = rss["creating_kib_every_1000"]
            note = (
                f"creating: {every[0] / 1024:.1f} MiB at 1,000, {every[-1] / 1024:.1f} at "
                f"{len(every)},000; fresh agent: {rss['fresh_start_kib'] / 1024:.1f} at start, "
                f"{rss['after_listing_kib'] / 1024:.1f} after listing {rss['listed']}, "
                f"{rss['after_100_resumes_kib'] / 1024:.1f} after 100 resumes"
            )
            flat = rss["after_100_resumes_kib"] <= 1.1 * rss["fresh_start_kib"]
            self.add(Row("store", f"agent RSS across {sessions} stored sessions", note=note),
                     goal="flat (≤ 1.1× a fresh agent's)")  # fmt: skip
            self.rows[-1].met = flat

    # --- encode: a typed value (decoded up front) to a JSON line ----------------------------

    def encode(self, ours: Any, pydantic_decode: Decode) -> None:
        raw = [message["params"] for message in self.messages]
        models = [pydantic_decode(params) for params in raw]

        def dumps_raw() -> None:
            for params in raw:
                to_line(params)

        def dumps_ours() -> None:
            for value in values:
                to_line(encode(value))

        def dump_pydantic() -> None:
            for model in models:
                model.model_dump_json(by_alias=True, exclude_unset=True)

        reference = self.add(self.in_process("encode", "json.dumps (raw dicts)", dumps_raw))
        case = "json.dumps(acp_kit.v2.encode(value))"
        if isinstance(ours, str):
            self.add(Row("encode", case, note=ours), goal="≤ 2×")
        else:
            encode, params_type = ours.encode, getattr(ours, PARAMS_TYPE)
            values = [ours.decode(params_type, params) for params in raw]
            row = self.in_process("encode", case, dumps_ours)
            differ = sum(encode(value) != params for value, params in zip(values, raw, strict=True))
            if differ:
                row.note = f"encode(decode(x)) != x for {differ} of {len(raw)} messages"
            self.add(row, reference, "≤ 2×", 2.0)
        row = self.in_process("encode", "pydantic model_dump_json", dump_pydantic)
        self.add(row, reference, "(baseline)")

    # --- import: interpreter start with the import minus a bare start -----------------------

    def imports(self) -> None:
        python = sys.executable
        path = os.pathsep.join([str(GENERATED), str(baseline.WORK_DIR)])
        env = {**tool_env(), "PYTHONPATH": path}
        commands = {
            "bare": [python, "-c", "pass"],
            "acp_v2": [python, "-c", "import acp_kit.v2"],
            "pydantic": [python, "-c", f"import {baseline.MODELS_MODULE}"],
        }
        times: dict[str, list[float]] = {}
        for name, command in commands.items():
            try:
                baseline.wall_time(command, env=env)  # warm-up; also writes .pyc files
                times[name] = []
            except RuntimeError as error:
                _progress(f"import: {name}: {error}")
        for _ in range(self.import_runs):  # interleaved, so drift hits every command alike
            for name, runs in times.items():
                runs.append(baseline.wall_time(commands[name], env=env))

        bare = times["bare"]
        stat = f"median of {self.import_runs}"
        note = f"min {_format_seconds(min(bare))}"
        self.add(Row("import", "python -c pass", statistics.median(bare), stat, note=note))
        for name, case, goal in (
            ("acp_v2", "import acp_kit.v2 (minus bare start)", "≤ 100 ms"),
            ("pydantic", "import pydantic models (minus bare start)", "(baseline)"),
        ):
            if name not in times:
                self.add(Row("import", case, note=NOT_YET), goal=goal)
                continue
            cost = statistics.median(times[name]) - statistics.median(bare)
            note = f"difference of mins {_format_seconds(min(times[name]) - min(bare))}"
            row = self.add(Row("import", case, cost, f"difference of {stat}", note=note), goal=goal)
            if name == "acp_v2":
                row.met = cost <= 0.100
                self.import_time(commands[name], env)

    def import_time(self, command: list[str], env: dict[str, str]) -> None:
        """Cumulative `-X importtime` of acp_v2 alone (no interpreter start-up)."""
        runs = []
        for _ in range(min(self.import_runs, 10)):
            stderr = subprocess.run(
                [command[0], "-X", "importtime", *command[1:]],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stderr
            for line in stderr.splitlines():
                fields = line.removeprefix("import time:").split("|")
                if len(fields) == 3 and fields[2].strip() == "acp_kit.v2":
                    runs.append(int(fields[1]) / 1e6)  # cumulative, in µs
        if runs:
            seconds = statistics.median(runs)
            row = Row(
                "import", "acp_kit.v2 -X importtime (cumulative)", seconds, f"median of {len(runs)}"
            )
            row.met = seconds <= 0.100
            self.add(row, goal="≤ 100 ms")

    # --- generate: the whole package from the schema, formatting included -------------------

    def generate(self) -> None:
        with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp:

            def theirs(run: int) -> list[str]:
                return baseline.datamodel_codegen_command(V2_SCHEMA, Path(tmp, f"dcg-{run}.py"))

            def ours(run: int) -> list[str]:
                out = Path(tmp, f"ours-{run}")
                return [sys.executable, "-m", "codegen", "generate", "--schema", V2_SCHEMA,
                        "--out", str(out), "--package", "acp_v2_bench"]  # fmt: skip

            def both(run: int) -> list[str]:
                out = Path(tmp, f"both-{run}")
                return [sys.executable, "-m", "codegen", "generate", "--schema", V1_SCHEMA,
                        "--schema", V2_SCHEMA, "--out", str(out),
                        "--package", "acp_kit_bench"]  # fmt: skip

            reference = self.add(self.generator_row("datamodel-codegen (pydantic v2)", theirs))
            row = self.generator_row("python -m codegen generate (acp_v2)", ours)
            self.add(row, reference, "≤ 1/8 (0.125×)", 1 / 8)
            row = self.generator_row("python -m codegen generate (acp_kit: v1 and v2)", both)
            self.add(row, reference, "≤ 1/4 (two schemas)", 1 / 4)

    def generator_row(self, case: str, command_for: Callable[[int], list[str]]) -> Row:
        venv_bin = str(Path(sys.executable).parent)  # tools such as ruff, venv not activated
        env = {**tool_env(), "PATH": os.pathsep.join([venv_bin, os.environ.get("PATH", "")])}
        times = []
        try:
            for run in range(-1 if self.warm_up else 0, self.generate_runs):  # -1: warm-up
                seconds = baseline.wall_time(command_for(run), cwd=REPO, env=env)
                if run >= 0:
                    times.append(seconds)
        except RuntimeError as error:
            return Row("generate", case, note=f"{NOT_YET} ({error})")
        note = f"min {_format_seconds(min(times))}"
        return Row("generate", case, statistics.median(times), f"median of {len(times)}", note=note)


def tool_env() -> dict[str, str]:
    """The environment for timed subprocesses: as an installed program runs, with bytecode
    caches (a PYTHONDONTWRITEBYTECODE in the caller's environment would make every start
    recompile every module, for both sides of a comparison)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def load_acp_v2(messages: list[dict[str, Any]]) -> Any:
    """The generated package, or a string saying why it can't be benchmarked (yet)."""
    sys.path.insert(0, str(GENERATED))
    try:
        acp_v2 = importlib.import_module("acp_kit.v2")
    except ImportError as error:
        return f"{NOT_YET} ({error})"
    missing = [name for name in ("decode", "encode", PARAMS_TYPE) if not hasattr(acp_v2, name)]
    if missing:
        return f"{NOT_YET} (acp_v2 has no {', '.join(missing)})"
    params_type = getattr(acp_v2, PARAMS_TYPE)
    for index, message in enumerate(messages):
        try:
            acp_v2.decode(params_type, message["params"])
        except Exception as error:  # any failure becomes a note in the table
            return f"error: decode failed on message #{index}: {type(error).__name__}: {error}"
    return acp_v2


def environment(bench: Bench) -> dict[str, Any]:
    import pydantic
    from datamodel_code_generator import get_version

    return {
        "messages": len(bench.lines),
        "bytes": sum(len(line.encode()) + 1 for line in bench.lines),
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "pydantic": pydantic.VERSION,
        "datamodel-codegen": get_version(),
        "schema": V2_SCHEMA,
        "passes": bench.passes,
        "import_runs": bench.import_runs,
        "generate_runs": bench.generate_runs,
    }


def markdown(env: dict[str, Any], rows: list[Row]) -> str:
    out = [
        "# acp-codegen benchmarks",
        "",
        f"Stream: {env['messages']} `session/update` notifications, {env['bytes'] / 1e3:.0f} kB. "
        f"Python {env['python']} ({env['platform']}), pydantic {env['pydantic']}, "
        f"datamodel-codegen {env['datamodel-codegen']}.",
        "Time: best pass for in-process rows (GC off while timing) and end-to-end rows, median "
        "run for the other subprocess rows; see `stat` in --json. Ratio: time / time of the row "
        "named after it.",
        "",
        "| group | case | time | per msg | ratio | goal | met | note |",
        "|---|---|---:|---:|---:|---|:-:|---|",
    ]
    for row in rows:
        per_message = f"{row.per_message * 1e6:.2f} µs" if row.per_message else ""
        ratio = f"{row.ratio:.2f}× {row.ratio_to}" if row.ratio is not None else ""
        met = {True: "yes", False: "**no**", None: ""}[row.met]
        time_ = _format_seconds(row.seconds) or "—"
        cells = [row.group, row.case, time_, per_message, ratio, row.goal, met, row.note]
        out.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(out)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return f"{seconds:.2f} s" if abs(seconds) >= 1 else f"{seconds * 1e3:.2f} ms"


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few repetitions: a smoke test")
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    parser.add_argument("--seed", type=int, default=stream.DEFAULT_SEED)
    parser.add_argument(
        "--messages", type=int, default=stream.DEFAULT_MESSAGES, help="minimum count"
    )
    args = parser.parse_args(argv)

    bench = Bench(args.quick, args.seed, args.messages)
    baseline.check_accepts(bench.messages)  # the baseline must do the real work, or no numbers
    pydantic_decode = baseline.params_decoder()
    ours = load_acp_v2(bench.messages)

    bench.decode(ours, pydantic_decode)
    bench.decode_vs_handwritten(ours)
    bench.encode(ours, pydantic_decode)
    bench.imports()
    bench.generate()
    bench.end_to_end()
    bench.session_store()

    env = environment(bench)
    if args.json:
        print(json.dumps({"environment": env, "rows": [asdict(r) for r in bench.rows]}, indent=2))
    else:
        print(markdown(env, bench.rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
