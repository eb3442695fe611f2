"""The one walk over raw schema JSON: every key of every object, with where it stands.

The whole-schema checks and the `$ref` scans (methods' envelopes, and `ref_graph`, from which
`specdiff` finds who sends which type) all read the schema through `iter_keys`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..diagnostics import pointer_join

DEFS_PREFIX = "#/$defs/"
Path = tuple[str | int, ...]


def iter_keys(node: Any) -> Iterator[tuple[Path, str, Any]]:
    """Every (path of the object, key, value) below `node`, objects and lists alike; a path
    is the keys and indexes from `node` down (`pointer(base, path)` spells it)."""
    stack: list[tuple[Path, Any]] = [((), node)]
    while stack:
        path, cur = stack.pop()
        if isinstance(cur, dict):
            for key, value in cur.items():
                yield path, key, value
                if isinstance(value, dict | list):
                    stack.append(((*path, key), value))
        elif isinstance(cur, list):
            for i, value in enumerate(cur):
                if isinstance(value, dict | list):
                    stack.append(((*path, i), value))


def pointer(base: str, path: Path) -> str:
    return pointer_join(base, *path)


def refs_in(node: Any) -> list[str]:
    """Every `#/$defs/...` name referenced anywhere inside a schema node."""
    return [
        defs_name(value)
        for _, key, value in iter_keys(node)
        if key == "$ref" and isinstance(value, str) and value.startswith(DEFS_PREFIX)
    ]


def ref_graph(schema: dict[str, Any]) -> dict[str, list[str]]:
    """Every `$defs` name → the names its definition references, anywhere inside it."""
    defs = schema.get("$defs")
    return {name: refs_in(node) for name, node in defs.items()} if isinstance(defs, dict) else {}


def defs_name(ref: str) -> str:
    """`#/$defs/a~1b` → `a/b`: the name a local reference points at (RFC 6901 escapes)."""
    return ref[len(DEFS_PREFIX) :].replace("~1", "/").replace("~0", "~")
