"""The two inputs of a diff: a schema file (or a folder holding one), or a pinned `REF:LANE`.

- `path/to/schema.json`: that file, with the `meta.json` beside it when there is one;
- `path/to/folder`: its `schema.json` (`schema.unstable.json` with `--unstable`);
- `REF:LANE`, e.g. `schema-v2.0.0-alpha.3:v2`: the pinned file `LANE/schema.json` of that ref
  (fetched into the cache and sha256-checked like `generate` does); the flat releases before
  v2 (`v0.12.2`) have one lane, `v1`, which may be left out: `v0.12.2`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import load_config
from ..diagnostics import Diagnostics, InputError
from ..ir import Model
from ..naming import Names
from ..parse.load import ensure_meta_beside
from ..parse.walk import ref_graph
from ..pins import ensure, read_lock
from ..pipeline import analyse
from .reach import directions
from .rules import Direction


@dataclass(frozen=True)
class Input:
    """One side of a diff: where it came from and its analysed IR."""

    label: str  # how the input is shown in reports
    path: Path
    model: Model
    names: Names
    reach: dict[str, Direction]


def load_input(spec: str, unstable: bool = False) -> Input:
    path, label = resolve(spec, unstable)
    diags = Diagnostics()
    source, model, names = analyse(path, diags)
    return Input(label, path, model, names, directions(ref_graph(source.schema), model))


def resolve(spec: str, unstable: bool) -> tuple[Path, str]:
    """The schema file an input names, and its label."""
    schema_name = "schema.unstable.json" if unstable else "schema.json"
    candidate = Path(spec)
    if candidate.is_dir():
        return candidate / schema_name, str(candidate / schema_name)
    if candidate.exists() or spec.endswith(".json") or not spec:
        return candidate, spec  # the loader reports a missing or unreadable file
    return _pinned(spec, schema_name)


def _pinned(spec: str, schema_name: str) -> tuple[Path, str]:
    ref, _, lane = spec.partition(":")
    try:
        lock = read_lock(load_config().lock)
    except InputError:
        raise InputError(
            f"{spec!r} is not a schema file, and no pin lock is here to resolve it as a ref"
        ) from None
    if ref not in lock.refs():
        pinned = ", ".join(lock.refs())
        raise InputError(f"{spec!r} is neither a schema file nor a pinned ref (pinned: {pinned})")
    lanes = sorted({p.path.split("/")[0] for p in lock.pins if p.ref == ref and "/" in p.path})
    if not lane:
        if lanes:
            raise InputError(f"{ref} has lanes {', '.join(lanes)}: write {ref}:{lanes[-1]}")
        path = schema_name
    elif lane in lanes:
        path = f"{lane}/{schema_name}"
    elif lane == "v1" and not lanes:
        path = schema_name  # the flat releases before v2 are protocol v1
    else:
        known = ", ".join(lanes) or "v1"
        raise InputError(f"{ref} has no lane {lane!r} (lanes: {known})")
    pin = lock.find(ref, path)
    file = ensure(lock, pin)
    ensure_meta_beside(lock, ref, path)
    suffix = " (unstable)" if "unstable" in schema_name else ""
    return file, f"{ref}:{lane or 'v1'}{suffix}"
