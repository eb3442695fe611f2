"""Print the oracle's counts per lane (for the README): `python -m tests.oracle.report`."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from tests.oracle.lanes import build_lanes, run_all, unload_lanes
from tests.support.differences import DIFFERENCES
from tests.support.zod_oracle import ZodOracle


def main() -> int:
    node = shutil.which("node")
    if node is None:
        print("the SDK oracle needs `node` on PATH", file=sys.stderr)
        return 2
    oracle = ZodOracle(node)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            reports = run_all(build_lanes(Path(tmp)), oracle)
        finally:
            oracle.close()
            unload_lanes(Path(tmp))
    print("| lane | values | agree | listed differences | unexplained | round trips |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, r in reports.items():
        row = (len(r.cases), len(r.agreed), len(r.explained), len(r.unexplained), r.round_trips)
        print(f"| {name} | " + " | ".join(map(str, row)) + " |")
    print()
    print("| difference | kind | " + " | ".join(reports) + " | what |")
    print("| --- | --- | " + " | ".join("---" for _ in reports) + " | --- |")
    for d in DIFFERENCES:
        counts = " | ".join(str(r.by_difference[d.id]) for r in reports.values())
        print(f"| `{d.id}` | {d.kind} | {counts} | {d.summary} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
