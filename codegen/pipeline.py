"""The pipeline for one package: load → resolve/build (IR) → name → view → render → format."""

from __future__ import annotations

import keyword
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .build import build_model
from .diagnostics import Diagnostics, InputError
from .fmt import format_files
from .ir import Model
from .loader import Source, load
from .naming import Names, assign_names
from .render import banner, environment
from .rpcview import build_rpc_view
from .view import ViewBuilder
from .views import ModuleView

# dataclass() options of every generated class. `__init__` is written out in the template and
# `__repr__`/`__eq__` come from the runtime's Model base: dataclass() would otherwise compile
# three functions per class with exec() at every import, which triples the import time.
DATACLASS_OPTIONS = "slots=True, kw_only=True, init=False, repr=False, eq=False"


@dataclass(frozen=True)
class Target:
    """What to generate: a package name and the schema it comes from."""

    package: str
    schema_path: Path
    ref: str = "local"
    label: str = ""  # the schema's path as pinned (e.g. "v2/schema.json")
    expected_sha256: str | None = None
    overrides: dict[str, Any] | None = None


@dataclass
class Generated:
    """The output of one package: the IR, the names and the files."""

    model: Model
    names: Names
    files: dict[str, str] = field(default_factory=dict)  # path relative to the out dir → text


def analyse(
    path: Path, diags: Diagnostics, overrides: dict[str, Any] | None = None
) -> tuple[Source, Model, Names]:
    """Load, build and name one schema; stops with InputError when the input has errors."""
    source = load(path)
    model = build_model(source, diags)
    diags.raise_if_errors()
    names = assign_names(model, overrides, diags)
    diags.raise_if_errors()
    return source, model, names


def generate(
    target: Target, template_dir: Path, diags: Diagnostics, *, fmt: bool = True
) -> Generated:
    if not target.package.isidentifier() or keyword.iskeyword(target.package):
        raise InputError(f"package name {target.package!r} is not a Python identifier")
    source, model, names = analyse(target.schema_path, diags, target.overrides)
    if target.expected_sha256 and source.sha256 != target.expected_sha256:
        raise InputError(
            f"{target.schema_path}: sha256 {source.sha256} "
            f"does not match the pin {target.expected_sha256}"
        )
    view = ViewBuilder(model, names).build()
    env = environment(template_dir)
    context = _context(target, source, model, names, view, _extra_modules(model, template_dir))
    files: dict[str, str] = {}
    for template, module in _modules(model, template_dir):
        files[f"{target.package}/{module}"] = env.get_template(template).render(**context)
    files[f"{target.package}/py.typed"] = ""
    if fmt:
        files = format_files(files)
    return Generated(model, names, files)


@dataclass(frozen=True)
class ExtraModule:
    """A module generated beside the models when its template exists and the schema has what
    it needs (e.g. the session model needs v2's `SessionUpdate`)."""

    template: str
    module: str
    exports: tuple[str, ...]
    needs_types: tuple[str, ...] = ()
    # Imported on first use of one of its names: the asyncio runtime would double the import
    # time of a package most users import for its models.
    lazy: bool = False


EXTRA_MODULES = (
    ExtraModule("jsonrpc.py.j2", "jsonrpc", ("ConnectionClosed", "RpcError")),
    ExtraModule("connection.py.j2", "connection", ("Connection",), lazy=True),
    ExtraModule(
        "rpc.py.j2", "rpc", ("AgentBase", "AgentStub", "ClientBase", "ClientStub"), lazy=True
    ),
    ExtraModule("stdio.py.j2", "stdio", ("connect_process", "connect_stdio"), lazy=True),
    ExtraModule(
        "session_state.py.j2", "session_state", ("SessionState",), ("SessionUpdate", "StateUpdate")
    ),
)


def _extra_modules(model: Model, template_dir: Path) -> list[ExtraModule]:
    return [
        m
        for m in EXTRA_MODULES
        if (template_dir / m.template).exists() and all(t in model.index for t in m.needs_types)
    ]


def _modules(model: Model, template_dir: Path) -> list[tuple[str, str]]:
    core = [
        ("__init__.py.j2", "__init__.py"),
        ("_runtime.py.j2", "_runtime.py"),
        ("models.py.j2", "models.py"),
        ("methods.py.j2", "methods.py"),
    ]
    return core + [(m.template, m.module + ".py") for m in _extra_modules(model, template_dir)]


def isort_key(name: str) -> tuple[int, str, str]:
    """Ruff's import order within one `from` statement: CONSTANTS, Classes, then the rest."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return (kind, name.lower(), name)


def _sorted_imports(modules: dict[str, list[str]]) -> list[tuple[str, list[str]]]:
    return [(module, sorted(names, key=isort_key)) for module, names in sorted(modules.items())]


def _context(
    target: Target,
    source: Source,
    model: Model,
    names: Names,
    view: ModuleView,
    extra: list[ExtraModule],
) -> dict[str, Any]:
    methods = [
        {
            "name": m.name,
            "side": m.side,
            "kind": m.kind,
            "params_py": names.types.get(m.params or "", ""),
            "result_py": names.types.get(m.result or "", ""),
            "unstable": m.unstable,
        }
        for m in model.methods
    ]
    modules: dict[str, list[str]] = {
        "_runtime": ["UNSET", "UnsetType", "DecodeError", "JsonValue", "decode", "encode"],
        "methods": ["METHODS", "MethodInfo"],
        "models": list(view.exports),
    }
    lazy: dict[str, list[str]] = {}
    for m in extra:
        (lazy if m.lazy else modules)[m.module] = list(m.exports)
    imports = _sorted_imports(modules)
    lazy_imports = _sorted_imports(lazy)
    meta_names = ["SCHEMA_REF", "SCHEMA_SHA256", "PROTOCOL_VERSION"]
    all_names = [n for _, names in imports + lazy_imports for n in names] + meta_names
    return {
        "banner": banner(target.ref, target.label or target.schema_path.name, source.sha256),
        "title": model.title,
        "ref": target.ref,
        "sha256": source.sha256,
        "version": model.version,
        "enums": view.enums,
        "unions": view.unions,
        "classes": view.classes,
        "aliases": view.aliases,
        "exports": view.exports,
        "methods": methods,
        "imports": imports,
        "lazy_imports": lazy_imports,
        "union_by_name": {u.py: u for u in view.unions},
        "class_by_name": {c.py: c for c in view.classes},
        "type_names": names.types,
        "all_names": all_names,
        "dataclass_options": DATACLASS_OPTIONS,
        "rpc": build_rpc_view(model, names),
    }
