"""Fixtures of the SDK oracle suite: the lanes, one node process, and the run of each lane.

- `lanes` → per lane ("v1", "v2"), a package generated in tmp from the pinned npm-sdk-2.4.0
  schema (sha256-checked), imported under its own name, with its IR, names and `$defs`;
- `zod_oracle` → the one `node interop/zod_oracle.mjs` of the session;
- `reports` → per lane, every drawn value checked on both sides, disagreements explained.

`python -m tests.oracle.report` runs the same outside pytest and prints the counts.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.oracle.lanes import build_lanes, run_all, unload_lanes
from tests.support.differential import Lane
from tests.support.oracle_run import LaneReport
from tests.support.zod_oracle import SDK, ZodOracle


@pytest.fixture(scope="session")
def lanes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Lane]]:
    out = tmp_path_factory.mktemp("oracle_packages")
    try:
        yield build_lanes(out)
    finally:
        unload_lanes(out)


@pytest.fixture(scope="session")
def zod_oracle() -> Iterator[ZodOracle]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("the SDK oracle needs `node` on PATH")
    if not Path(SDK).is_dir():
        pytest.skip("the SDK oracle needs the TypeScript SDK: run `npm ci --prefix interop`")
    oracle = ZodOracle(node)
    try:
        yield oracle
    finally:
        oracle.close()


@pytest.fixture(scope="session")
def reports(lanes: dict[str, Lane], zod_oracle: ZodOracle) -> dict[str, LaneReport]:
    return run_all(lanes, zod_oracle)
