"""Load a schema file and the meta files beside it, with its sha256, or fail with one line.

`meta_names` is the one rule for which meta files a schema reads (`pins.ensure_with_meta`
brings those of a pinned schema into the cache by it).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..diagnostics import InputError

MAX_SCHEMA_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Source:
    """A loaded schema, the meta files beside it (see `meta_names`) and its sha256."""

    path: Path
    schema: dict[str, Any]
    meta: dict[str, Any] | None
    stable_meta: dict[str, Any] | None  # meta.json of the stable lane, to mark unstable methods
    sha256: str


def meta_names(schema_name: str) -> tuple[str, ...]:
    """The meta files a schema reads beside it: its lane's own (`schema.json` → `meta.json`,
    `schema.unstable.json` → `meta.unstable.json`), then, for an unstable lane, the stable
    lane's `meta.json`, which tells which methods are unstable."""
    own = "meta" + schema_name[len("schema") :] if schema_name.startswith("schema") else "meta.json"
    return (own, "meta.json") if ".unstable" in schema_name and own != "meta.json" else (own,)


def read_json(path: Path, what: str) -> tuple[Any, bytes]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        where = "" if path.is_absolute() else f" (relative to {Path.cwd()})"
        raise InputError(f"{what} not found: {path}{where}") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror}") from None
    if len(raw) > MAX_SCHEMA_BYTES:
        raise InputError(f"{what} {path} is larger than {MAX_SCHEMA_BYTES} bytes")
    try:
        return json.loads(raw), raw
    except (ValueError, RecursionError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"{what} {path} is not valid JSON: {reason}") from None


def load(schema_path: Path) -> Source:
    schema, raw = read_json(schema_path, "schema")
    if not isinstance(schema, dict):
        raise InputError(f"schema {schema_path} must be a JSON object")
    defs = schema.get("$defs")
    if not isinstance(defs, dict):
        raise InputError(f"schema {schema_path} has no `$defs` object")
    own, *stable = meta_names(schema_path.name)
    meta = _optional_meta(schema_path.with_name(own))
    stable_meta = _optional_meta(schema_path.with_name(stable[0])) if stable else None
    return Source(schema_path, schema, meta, stable_meta, hashlib.sha256(raw).hexdigest())


def _optional_meta(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    meta, _ = read_json(path, "meta file")
    if not isinstance(meta, dict):
        raise InputError(f"meta file {path} must be a JSON object")
    return meta
