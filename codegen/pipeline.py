"""The pipeline for one package: load → classify (IR) → name → lower → render → format.

`analyse` is the part every command shares (a schema to its IR and names); `generate` adds
the rendering: one typed context per module (`render.lower`), Jinja over `templates/`, and the
hand-written runtime modules copied with the banner.
"""

from __future__ import annotations

import contextlib
import keyword
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .diagnostics import Diagnostics, InputError
from .ir import Model
from .modules import CORE_MODULES, EXTRA_MODULES, ModuleSpec
from .naming import Names, assign_names
from .parse.classify import build_model
from .parse.load import Source, load
from .render.env import banner, environment
from .render.lower import lower
from .render.ruff import Formatting


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
    """Load, classify and name one schema; stops with InputError when the input has errors."""
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
    env = environment(template_dir)
    modules = _modules(model, template_dir)
    header = banner(target.ref, target.label or target.schema_path.name, source.sha256)
    contexts = lower(model, names, modules, banner=header, ref=target.ref, sha256=source.sha256)
    files: dict[str, str] = {}
    runtime: set[str] = set()  # formatted source already (`make lint` checks them)
    with contextlib.ExitStack() as stack:
        early: Formatting | None = None  # models.py, the largest: ruff starts on it at once
        for module in modules:
            path = f"{target.package}/{module.filename}"
            if module.template is not None:
                variables = contexts[module.context or module.module].variables()
                files[path] = env.get_template(module.template).render(variables)
                if fmt and module.module == "models":
                    early = stack.enter_context(Formatting({path: files[path]}))
            else:
                files[path] = _runtime_text(module, template_dir, header)
                runtime.add(path)
        files[f"{target.package}/py.typed"] = ""
        if fmt:  # the rest in a second ruff, beside the first
            apart = runtime | (early.names if early is not None else set())
            rest = stack.enter_context(
                Formatting({p: t for p, t in files.items() if p not in apart})
            )
            files.update(rest.result())
            if early is not None:
                files.update(early.result())
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
