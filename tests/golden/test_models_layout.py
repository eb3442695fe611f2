"""The layout of the generated `models.py`, read with `ast`: each decoder right after its class
(with its lookup table), the tag dispatch tables and the registry at the end, and no decoder
that tests the JSON type of a value it has tested already."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from acp_kit import v1 as acp_v1
from acp_kit import v2 as acp_v2

MODELS = {pkg.__name__: Path(pkg.__file__).with_name("models.py") for pkg in (acp_v1, acp_v2)}


def statements(package: str) -> list[ast.stmt]:
    return ast.parse(MODELS[package].read_text(encoding="utf-8")).body


def assigned(stmt: ast.stmt) -> str:
    target = stmt.target if isinstance(stmt, ast.AnnAssign) else None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
    return target.id if isinstance(target, ast.Name) else ""


@pytest.mark.parametrize("package", MODELS)
def test_each_decoder_follows_its_class(package: str) -> None:
    body = statements(package)
    classes = [(i, s.name) for i, s in enumerate(body) if isinstance(s, ast.ClassDef)]
    assert len(classes) > 100
    for index, name in classes:
        rest = body[index + 1 :]
        decoder = next(i for i, s in enumerate(rest) if isinstance(s, ast.FunctionDef))
        union = name[1 : -len("Base")] if name.startswith("_") else ""  # a union's private base
        expected = f"_d_{union or name}"
        assert isinstance(rest[decoder], ast.FunctionDef) and rest[decoder].name == expected
        between = {assigned(s) for s in rest[:decoder]}
        assert between <= {f"_K_{name}", f"_E_{name}"}, (name, between)


@pytest.mark.parametrize("package", MODELS)
def test_only_dispatch_tables_and_the_registry_come_after_the_last_decoder(package: str) -> None:
    body = statements(package)
    last = max(i for i, s in enumerate(body) if isinstance(s, ast.FunctionDef))
    tail = body[last + 1 :]
    names = {assigned(s) for s in tail} - {""}
    tables = ("_T_", "_X_", "_d_")  # tag dispatch, exclusive alternatives, decoder aliases
    assert all(n.startswith(tables) or n == "__all__" for n in names), names
    calls = [
        ast.unparse(s.value.func)
        for s in tail
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
    ]
    assert set(calls) == {"_rt.register", "_rt.DECODERS.update"}


def type_tests(test: ast.expr, *, positive: bool = False) -> set[str]:
    """The values whose JSON type an `if` test looks at (`type(v) is ...`, `v is None`); with
    `positive`, only `is` tests, after which the type is known."""
    ops = (ast.Is,) if positive else (ast.Is, ast.IsNot)
    found = set()
    for node in ast.walk(test):
        if isinstance(node, ast.Compare) and isinstance(node.ops[0], ops):
            left, right = node.left, node.comparators[0]
            if isinstance(left, ast.Call) and ast.unparse(left.func) == "type":
                found.add(ast.unparse(left.args[0]))
            elif isinstance(right, ast.Constant) and right.value is None:
                found.add(ast.unparse(left))
    return found


@pytest.mark.parametrize("package", MODELS)
def test_no_decoder_tests_a_json_type_it_knows(package: str) -> None:
    known_then_tested = []
    for stmt in statements(package):
        if not isinstance(stmt, ast.FunctionDef):
            continue
        for outer in ast.walk(stmt):
            if not isinstance(outer, ast.If):
                continue
            known = type_tests(outer.test, positive=True)
            for inner in (n for s in outer.body for n in ast.walk(s)):
                if isinstance(inner, ast.If) and known & type_tests(inner.test):
                    known_then_tested.append(f"{stmt.name}: {ast.unparse(inner.test)}")
    assert known_then_tested == []
