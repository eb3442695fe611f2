"""The toolkit's public API as the package's `REFERENCE.md` lists it: each exported name of the
hand-written toolkit modules, read from their source with `ast` (its signature, its public
methods and properties, the first paragraph of its docstring). Nothing is imported; what a
module's source gives is kept in the user's cache, keyed by the source's sha256."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import astuple, dataclass
from pathlib import Path

from ..diagnostics import InputError
from ..modules import ModuleSpec
from .env import user_cache


@dataclass(frozen=True)
class Member:
    """One public method or property of a toolkit class, as the API reference lists it."""

    name: str
    signature: str  # `(self, ...) -> T` without `self`, or `: T` for a property
    doc: str


@dataclass(frozen=True)
class Entry:
    """One exported name: `kind` is `class`, `function` or `value`."""

    name: str
    module: str
    kind: str
    signature: str
    doc: str
    members: tuple[Member, ...]


def toolkit_api(template_dir: Path, modules: Sequence[ModuleSpec]) -> list[Entry]:
    """Every exported name of `modules`, in registry order, then by name."""
    out: list[Entry] = []
    cache = user_cache()
    for module in modules:
        if not module.exports or module.source is None:
            continue
        try:
            source = (template_dir / module.source).read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read the toolkit module {module.source}: {exc}") from None
        key = hashlib.sha256(repr((module.module, module.exports)).encode() + source).hexdigest()
        kept = _cached(cache, key)
        if kept is None:
            from .api_source import module_entries  # parsing only when the cache has none

            kept = module_entries(module, source)
            _keep(cache, key, kept)
        out.extend(kept)
    return out


def _cached(cache: Path | None, key: str) -> list[Entry] | None:
    if cache is None:
        return None
    try:
        rows = json.loads((cache / f"api-{key}.json").read_text(encoding="utf-8"))
        return [
            Entry(
                name=str(name),
                module=str(module),
                kind=str(kind),
                signature=str(signature),
                doc=str(doc),
                members=tuple(Member(str(n), str(sig), str(d)) for n, sig, d in members),
            )
            for name, module, kind, signature, doc, members in rows
        ]
    except (OSError, ValueError, TypeError):
        return None  # none yet, or not ours to trust: parse again


def _keep(cache: Path | None, key: str, entries: list[Entry]) -> None:
    if cache is None:
        return
    rows = [[*astuple(entry)[:5], [astuple(m) for m in entry.members]] for entry in entries]
    temporary = cache / f"api-{key}.{os.getpid()}.tmp"
    try:
        temporary.write_text(json.dumps(rows), encoding="utf-8")
        temporary.replace(cache / f"api-{key}.json")
    except OSError:
        temporary.unlink(missing_ok=True)
