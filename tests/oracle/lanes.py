"""The lanes under test and the fixed budget of values: shared by the fixtures and the report."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

from codegen.config import default_templates
from codegen.diagnostics import Diagnostics
from codegen.emit import write
from codegen.pins import ensure, read_lock
from codegen.pipeline import Target, generate
from tests.conftest import REPO
from tests.support.differential import Lane
from tests.support.oracle_run import LaneReport, run_lane
from tests.support.oracle_values import OracleStrategies, drawn, edges, without_local_constants
from tests.support.zod_oracle import ZodOracle

REF = "npm-sdk-2.4.0"
LANES = ("v1", "v2")  # the SDK's stable validators: dist/v1/schema, dist/v2/schema
PREFIX = "oracle_sdk_"
# The fixed budget, per `$defs` type: values drawn from the IR and mutations of others.
VALID = 16
MUTATED = 16


def build_lanes(out: Path) -> dict[str, Lane]:
    """Generate each lane's package from its pin into `out` and import it."""
    lock = read_lock(REPO / "schema" / "pins.lock.json")
    built: dict[str, tuple[Any, Any, dict[str, Any]]] = {}
    for lane in LANES:
        pin = lock.find(REF, f"{lane}/schema.json")
        path = ensure(lock, pin)
        target = Target(PREFIX + lane, path, ref=REF, label=pin.path, expected_sha256=pin.sha256)
        generated = generate(target, default_templates(), Diagnostics(), fmt=False)
        write(generated.files, out, [PREFIX + lane])
        defs = json.loads(path.read_text(encoding="utf-8"))["$defs"]
        built[lane] = (generated.model, generated.names, defs)
    sys.path.insert(0, str(out))
    return {
        lane: Lane(lane, importlib.import_module(f"{PREFIX}{lane}.{lane}"), *built[lane])
        for lane in LANES
    }


def unload_lanes(out: Path) -> None:
    if str(out) in sys.path:
        sys.path.remove(str(out))
    for name in [m for m in sys.modules if m.startswith(PREFIX)]:
        del sys.modules[name]


def samples(lane: Lane) -> list[tuple[str, str, Any]]:
    """Every `$defs` type's values, in schema order: (type, "valid" | "mutated" | "edge",
    value); the edges are those of the type's first valid value."""
    strategies = OracleStrategies(lane.model)
    out: list[tuple[str, str, Any]] = []
    with without_local_constants():
        for t in lane.model.types:
            values = drawn(strategies.of(t.name), VALID, MUTATED)
            out += [(t.name, kind, value) for kind, value in values]
            base = next(value for kind, value in values if kind == "valid")
            out += [(t.name, "edge", value) for value in edges(lane.model, t.name, base)]
    return out


def run_all(lanes: dict[str, Lane], oracle: ZodOracle) -> dict[str, LaneReport]:
    return {name: run_lane(lane, oracle, samples(lane)) for name, lane in lanes.items()}
