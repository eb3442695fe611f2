"""Load a schema file and the meta.json beside it, with its sha256, or fail with one line."""

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
    """A loaded schema with the meta.json beside it and its sha256."""

    path: Path
    schema: dict[str, Any]
    meta: dict[str, Any] | None
    stable_meta: dict[str, Any] | None  # meta.json of the stable lane, to mark unstable methods
    sha256: str


def meta_path_for(schema_path: Path) -> Path:
    """`schema.json` → `meta.json`, `schema.unstable.json` → `meta.unstable.json`."""
    name = schema_path.name
    if name.startswith("schema"):
        return schema_path.with_name("meta" + name[len("schema") :])
    return schema_path.with_name("meta.json")


def read_json(path: Path, what: str) -> tuple[Any, bytes]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{what} not found: {path}") from None
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
    meta = _optional_meta(meta_path_for(schema_path))
    stable_meta = None
    if ".unstable" in schema_path.name:
        stable_meta = _optional_meta(schema_path.with_name("meta.json"))
    return Source(schema_path, schema, meta, stable_meta, hashlib.sha256(raw).hexdigest())


def _optional_meta(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    meta, _ = read_json(path, "meta file")
    if not isinstance(meta, dict):
        raise InputError(f"meta file {path} must be a JSON object")
    return meta
