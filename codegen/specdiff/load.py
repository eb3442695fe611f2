"""The two inputs of a diff: a schema file (or a folder holding one), or a pinned `REF:LANE`.

- `path/to/schema.json`: that file, with the `meta.json` beside it when there is one;
- `path/to/folder`: its `schema.json` (`schema.unstable.json` with `--unstable`);
- `REF:LANE`, e.g. `schema-v2.0.0-alpha.3:v2`: the pinned file `LANE/schema.json` of that ref
  (fetched into the cache and sha256-checked like `generate` does; a ref the project's lock
  does not pin yet is pinned first, not as the default); the flat releases before
  v2 (`v0.12.2`) have one lane, `v1`, which may be left out: `v0.12.2`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from ..config import find_project, load_config
from ..diagnostics import Diagnostics, InputError
from ..ir import Model
from ..naming import Names
from ..parse.walk import ref_graph
from ..pins import check_ref, ensure_with_meta, pin_ref, read_lock
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
    batches: tuple[str, ...] = ()  # the root's JSON-RPC batch messages, by title


def load_input(spec: str, unstable: bool = False) -> Input:
    path, label = resolve(spec, unstable)
    diags = Diagnostics()
    source, model, names = analyse(path, diags)
    graph = ref_graph(source.schema)
    return Input(label, path, model, names, directions(graph, model), model.batches)


def resolve(spec: str, unstable: bool) -> tuple[Path, str]:
    """The schema file an input names, and its label."""
    schema_name = "schema.unstable.json" if unstable else "schema.json"
    candidate = Path(spec)  # a relative path is read from the working folder, like any file
    if candidate.is_dir():
        return candidate / schema_name, str(candidate / schema_name)
    if candidate.exists() or spec.endswith(".json") or not spec:
        return candidate, spec  # the loader reports a missing or unreadable file
    return _pinned(spec, schema_name)


def _pinned(spec: str, schema_name: str) -> tuple[Path, str]:
    """A pinned `REF:LANE` of the project's lock; a ref it does not pin yet is pinned first
    (from the mirror or upstream, not as the default), as `schema pin REF --no-default` does."""
    ref, _, lane = spec.partition(":")
    head = f"{spec!r} is neither a schema file nor a pinned ref"
    try:
        check_ref(ref)
    except InputError as exc:
        raise InputError(f"{head} ({exc})") from None
    if find_project(Path.cwd()) is None:
        raise InputError(f"{head}: no pyproject.toml with [tool.acp-codegen] here or above")
    lock = read_lock(load_config().lock, missing_ok=True)
    if ref not in lock.refs():
        try:
            added = pin_ref(lock, ref, make_default=False)
        except InputError as exc:
            raise InputError(f"{head}, and pinning it failed: {exc}") from None
        print(
            f"acp-codegen: pinned {ref} ({len(added)} file(s)) in {lock.path}, not as the default",
            file=sys.stderr,
        )
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
    file = ensure_with_meta(lock, lock.find(ref, path))
    suffix = " (unstable)" if "unstable" in schema_name else ""
    return file, f"{ref}:{lane or 'v1'}{suffix}"
