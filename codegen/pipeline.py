"""The pipeline for one package: load → classify (IR) → name → lower → render → format.

`analyse` is the part every command shares (a schema to its IR and names). `generate_package`
adds the rendering: for each lane, one typed context per module (`render.lower`) and Jinja over
`templates/`; once for the package, the hand-written runtime and toolkit modules copied with the
banner, and the modules that tie the lanes together (`render.package`). `generate` is the
one-lane package (its lane at the root).
"""

from __future__ import annotations

import contextlib
import keyword
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .diagnostics import Diagnostics, InputError
from .ir import Model
from .modules import DIALECTS, LANE_MODULES, ModuleSpec
from .naming import Names, assign_names
from .parse.classify import build_model
from .parse.load import Source, load
from .render.env import banner, environment
from .render.lower import lower, lower_models
from .render.ruff import Formatting, WaitingRuff

if TYPE_CHECKING:
    from .render.package import LaneFacts


@dataclass(frozen=True)
class Target:
    """One lane to generate: the package it goes into and the schema it comes from."""

    package: str
    schema_path: Path
    ref: str = "local"
    label: str = ""  # the schema's path as pinned (e.g. "v2/schema.json")
    expected_sha256: str | None = None
    overrides: dict[str, Any] | None = None


@dataclass
class Generated:
    """The output of one package: its lanes' IRs and names, and the files."""

    model: Model  # the first lane's
    names: Names
    files: dict[str, str] = field(default_factory=dict)  # path relative to the out dir → text
    lanes: dict[str, tuple[Model, Names]] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # one line per module a lane went without


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
    """A one-lane package: its lane's names exported at the package's root."""
    return generate_package(target.package, [target], template_dir, diags, flat=True, fmt=fmt)


Sink = Callable[[dict[str, str]], None]  # given files once they are final (emit.Writer.add)


def lane_name(target: Target, model: Model) -> str:
    """The folder a lane gets in a package of several: its major version (`v2`), and
    `_unstable` for an unstable schema (`v2/schema.unstable.json` → `v2_unstable`)."""
    label = target.label or target.schema_path.name
    head = label.split("/")[0] if "/" in label else target.schema_path.parent.name
    if head.startswith("v") and head[1:].isdigit():
        name = head
    elif model.version is not None:
        name = f"v{model.version}"
    elif "/" not in label:  # a flat release before v2 (`schema.json`) is lane v1
        name = "v1"
    else:
        raise InputError(f"cannot tell which protocol version {label} is: it names no v1/ or v2/")
    return name + ("_unstable" if ".unstable." in label else "")


def generate_package(
    package: str,
    lanes: list[Target],
    template_dir: Path,
    diags: Diagnostics,
    *,
    flat: bool = False,
    fmt: bool = True,
    sink: Sink | None = None,
) -> Generated:
    """A package of `lanes`, each in a subpackage named after it (`lane_name`), beside one
    runtime and one toolkit; with `flat`, its one lane's names are exported at the root too.
    `sink`, when given, gets every file as soon as it is final: the copied ones while ruff
    formats the rest, each ruff's as it is waited for (models.py last)."""
    if not package.isidentifier() or keyword.iskeyword(package):
        raise InputError(f"package name {package!r} is not a Python identifier")
    if not lanes or (flat and len(lanes) != 1):
        raise InputError(f"package {package} needs {'one lane' if flat else 'lanes'}")
    env = environment(template_dir)
    files: dict[str, str] = {}
    facts: list[LaneFacts] = []
    seen: dict[str, tuple[Model, Names]] = {}
    skipped: list[str] = []
    copied: set[str] = set()  # formatted source already (`make lint` checks them)
    with contextlib.ExitStack() as stack:
        early: list[WaitingRuff] = []  # models.py, the largest: ruff starts on each at once
        for target in lanes:
            source, model, names = analyse(target.schema_path, diags, target.overrides)
            folder = lane_name(target, model)
            if target.expected_sha256 and source.sha256 != target.expected_sha256:
                raise InputError(
                    f"{target.schema_path}: sha256 {source.sha256} "
                    f"does not match the pin {target.expected_sha256}"
                )
            if folder in seen:
                raise InputError(f"package {package} has two lanes named {folder}")
            seen[folder] = (model, names)
            dialect = next(
                (d for d, types in DIALECTS if all(t in model.index for t in types)), None
            )
            modules = _lane_modules(model, template_dir)
            if dialect is None and {"SessionUpdate", "PromptRequest"} <= model.index.keys():
                skipped.append(_skip_note(package, folder, target, model))  # an older ACP draft
            header = banner(target.ref, target.label or target.schema_path.name, source.sha256)
            prefix = f"{package}/{folder}/"
            # models.py first, for a ruff started now (it starts up while models.py is made),
            # which formats it while the lane's other modules are made.
            spec = next((m for m in modules if m.module == "models"), None)
            ruff = None
            if fmt and spec is not None:
                ruff = stack.enter_context(WaitingRuff(prefix + spec.filename))
            models = lower_models(model, names, header)
            rendered: dict[str, str] = {}
            if spec is not None:
                assert spec.template is not None
                text = env.get_template(spec.template).render(models.variables())
                rendered[prefix + spec.filename] = text
                if ruff is not None:
                    ruff.format(text)
                    early.append(ruff)
            contexts = lower(
                model,
                names,
                modules,
                banner=header,
                ref=target.ref,
                sha256=source.sha256,
                models=models,
            )
            for module in modules:
                if module.module != "models":
                    assert module.template is not None
                    variables = contexts[module.context or module.module].variables()
                    template = env.get_template(module.template)
                    rendered[prefix + module.filename] = template.render(variables)
            files.update(rendered)
            exports = models.exports
            from .render.package import LaneFacts  # imported once ruff has models.py to format

            facts.append(
                LaneFacts(
                    folder,
                    target.label or target.schema_path.name,
                    model,
                    names,
                    modules,
                    header,
                    target.ref,
                    source.sha256,
                    dialect,
                    exports,
                )
            )
        from .render.package import package_files

        shared, copied = package_files(package, facts, template_dir, env, flat=flat)
        files.update(shared)
        if fmt:  # the rest in one more ruff, beside the first ones
            apart = copied.union(*(e.names for e in early))
            rest = stack.enter_context(
                Formatting({p: t for p, t in files.items() if p not in apart})
            )
            if sink is not None:  # final already: written while ruff formats
                sink({p: files[p] for p in copied})
            waits: list[Formatting | WaitingRuff] = [rest, *early]  # models.py, the longest, last
            for formatting in waits:
                result = formatting.result()
                files.update(result)
                if sink is not None:
                    sink(result)
        elif sink is not None:
            sink(files)
    model, names = next(iter(seen.values()))
    return Generated(model, names, files, seen, skipped)


def _lane_modules(model: Model, template_dir: Path) -> list[ModuleSpec]:
    """The modules a lane has (optional ones only when their template exists)."""
    chosen = [
        m
        for m in LANE_MODULES
        if (template_dir / str(m.template)).exists()
        and all(t in model.index for t in m.needs_types)
        and not any(t in model.index for t in m.unless_types)
    ]
    return chosen


def _skip_note(package: str, folder: str, target: Target, model: Model) -> str:
    """Why a lane has no toolkit: the types of the nearest dialect its schema lacks."""
    where = f"{package}/{folder}"
    label = target.label or target.schema_path.name
    missing = min(([t for t in types if t not in model.index] for _, types in DIALECTS), key=len)
    return (
        f"{where}: no toolkit (Agent, Client, ...) for {target.ref} {label}: the schema"
        f" lacks {', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}"
        f" (a draft older than the prompt lifecycle the toolkit speaks)"
    )
