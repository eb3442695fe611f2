"""The pipeline for one package: load → resolve/build (IR) → name → view → render → format."""

from __future__ import annotations

import keyword
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .diagnostics import Diagnostics, InputError
from .ir import Model
from .modules import CORE_MODULES, EXTRA_MODULES, META_NAMES, ModuleSpec
from .naming import Names, assign_names
from .parse.classify import build_model
from .parse.load import Source, load
from .parse.methods import defines_batches
from .render.context import ModuleView
from .render.env import banner, environment
from .render.lower import ViewBuilder
from .render.rpc import build_rpc_view
from .render.ruff import format_files

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
    modules = _modules(model, template_dir)
    context = _context(target, source, model, names, view, modules)
    files: dict[str, str] = {}
    for module in modules:
        path = f"{target.package}/{module.filename}"
        if module.template is not None:
            files[path] = env.get_template(module.template).render(**context)
        else:
            files[path] = _runtime_text(module, template_dir, context["banner"])
    files[f"{target.package}/py.typed"] = ""
    if fmt:
        files = format_files(files)
    return Generated(model, names, files)


def _modules(model: Model, template_dir: Path) -> list[ModuleSpec]:
    """The modules this schema's package has (optional ones only when their template exists)."""
    return list(CORE_MODULES) + [
        m
        for m in EXTRA_MODULES
        if _source(m, template_dir).exists()
        and all(t in model.index for t in m.needs_types)
        and not any(t in model.index for t in m.unless_types)
    ]


def _source(module: ModuleSpec, template_dir: Path) -> Path:
    if module.runtime is not None:
        return template_dir / "runtime" / module.runtime
    assert module.template is not None
    return template_dir / module.template


def _runtime_text(module: ModuleSpec, template_dir: Path, banner_text: str) -> str:
    """A hand-written runtime module as shipped: the banner, then the file unchanged."""
    try:
        text = _source(module, template_dir).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read the runtime module {module.runtime}: {exc}") from None
    return banner_text + "\n" + text


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
    modules: list[ModuleSpec],
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
    eager: dict[str, list[str]] = {"models": list(view.exports)}
    lazy: dict[str, list[str]] = {}
    for m in modules:
        if m.exports:
            (lazy if m.lazy else eager)[m.module] = list(m.exports)
    imports = _sorted_imports(eager)
    lazy_imports = _sorted_imports(lazy)
    all_names = [n for _, names in imports + lazy_imports for n in names] + list(META_NAMES)
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
        "rpc": build_rpc_view(model, names, defines_batches(source.schema)),
    }
