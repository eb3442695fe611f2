"""The entries of a toolkit module's exports, read from its source with `ast` (imported only
when the user's cache has no entries for that source; see `api.toolkit_api`)."""

from __future__ import annotations

import ast

from ..diagnostics import InputError
from ..modules import ModuleSpec
from .api import Entry, Member


def module_entries(module: ModuleSpec, source: bytes) -> list[Entry]:
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
