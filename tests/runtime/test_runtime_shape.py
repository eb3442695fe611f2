"""The shape of the hand-written runtime (templates/runtime), read from its source with `ast`:
its modules import one another without a circle and without a TYPE_CHECKING import, and none
imports a lane's generated `_wire` (lanes register their writers in the runtime instead)."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[2] / "templates" / "runtime"
MODULES = {path.stem: ast.parse(path.read_text(encoding="utf-8")) for path in RUNTIME.glob("*.py")}


def sibling_imports(tree: ast.Module) -> set[str]:
    """The modules of the same package `tree` imports (`from .x import` and `from . import x`)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module is not None:
                found.add(node.module.split(".")[0])
            else:
                found.update(alias.name for alias in node.names)
    return found


def test_the_runtime_modules_import_one_another_without_a_circle() -> None:
    graph = {name: sibling_imports(tree) & set(MODULES) for name, tree in MODULES.items()}
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as exc:  # pragma: no cover - the failure's message
        raise AssertionError(f"an import circle: {exc.args[1]}") from None
    assert order.index("jsonrpc") < order.index("connection")
    assert order.index("connection") < order.index("stdio")


def test_no_runtime_module_imports_under_type_checking_or_imports_a_lane_s_wire() -> None:
    for name, tree in MODULES.items():
        guarded = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        ]
        assert not guarded, f"{name} imports under TYPE_CHECKING"
        assert "_wire" not in sibling_imports(tree), f"{name} imports _wire"
