"""The toolkit's public API as the package's `REFERENCE.md` lists it: each exported name of the
hand-written toolkit modules, read from their source with `ast` (its signature, its public
methods and properties, the first paragraph of its docstring). Nothing is imported; what a
module's source gives is kept in the user's cache, keyed by the source's sha256."""

from __future__ import annotations

import ast
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
            kept = _module_entries(module, source)
            _keep(cache, key, kept)
        out.extend(kept)
    return out


def _module_entries(module: ModuleSpec, source: bytes) -> list[Entry]:
    """The entries of one module's exports, read from its source (parsing is the slow part of
    a package's generation, hence the cache around it)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        raise InputError(f"cannot read the toolkit module {module.source}: {exc}") from None
    found = _definitions(tree)
    return [
        _entry(name, module.module, found.get(name))
        for name in sorted(module.exports, key=str.lower)
    ]


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


def _definitions(tree: ast.Module) -> dict[str, ast.stmt]:
    found: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            found[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found[node.target.id] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                found.setdefault(alias.asname or alias.name, node)
    return found


def _entry(name: str, module: str, node: ast.stmt | None) -> Entry:
    if isinstance(node, ast.ClassDef):
        bases = ", ".join(ast.unparse(b) for b in node.bases)
        members = tuple(m for m in map(_member, node.body) if m is not None)
        return Entry(name, module, "class", f"({bases})" if bases else "", _doc(node), members)
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        prefix = "async " if isinstance(node, ast.AsyncFunctionDef) else ""
        return Entry(name, module, "function", prefix + _signature(node), _doc(node), ())
    if isinstance(node, ast.ImportFrom):
        return Entry(name, module, "value", f"from {node.module or '.'}", "", ())
    value = ""
    if isinstance(node, ast.AnnAssign | ast.Assign) and node.value is not None:
        value = " = " + _short(ast.unparse(node.value))
    return Entry(name, module, "value", value, "", ())


def _member(node: ast.stmt) -> Member | None:
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    if node.name.startswith("_") and node.name not in ("__init__", "__aenter__"):
        return None
    decorators = {ast.unparse(d) for d in node.decorator_list}
    if "property" in decorators:
        returns = ast.unparse(node.returns) if node.returns is not None else ""
        return Member(node.name, f": {returns}" if returns else "", _doc(node))
    prefix = "async " if isinstance(node, ast.AsyncFunctionDef) else ""
    return Member(node.name, prefix + _signature(node, skip_self=True), _doc(node))


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef, *, skip_self: bool = False) -> str:
    args = node.args
    if skip_self and args.args and args.args[0].arg in ("self", "cls"):
        args = ast.arguments(
            posonlyargs=args.posonlyargs,
            args=args.args[1:],
            vararg=args.vararg,
            kwonlyargs=args.kwonlyargs,
            kw_defaults=args.kw_defaults,
            kwarg=args.kwarg,
            defaults=args.defaults,  # they belong to the last arguments: `self` has none
        )
    returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    return _short(f"({ast.unparse(args)}){returns}")


def _doc(node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The first paragraph of the docstring, on one line."""
    text = ast.get_docstring(node) or ""
    return " ".join(text.split("\n\n")[0].split())


def _short(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
