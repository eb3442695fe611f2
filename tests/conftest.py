"""Shared fixtures: inline schemas through the pipeline, generated packages in tmp, the CLI.

- `build_ir(schema, meta=None)` → (Model, Diagnostics), without touching the disk;
- `name_ir(schema, overrides=None)` → (Model, Names, Diagnostics);
- `make_package(schema, meta=None)` → the generated package, imported under a unique name;
- `run_cli(*args, cwd=...)` → the `acp-codegen` CLI in a fresh interpreter (exit code, output);
- `mirror` → the folder of upstream schemas (`$ACP_SCHEMA_MIRROR`, else ../shared/acp-schema);
- `mypy_cache` → a mypy cache folder that survives between runs;
- `make_project(refs=None, with_generated=False)` → a tmp project like this one: its own
  pyproject.toml, lock file (the pins of `refs`, or all) and cache, this repo's templates, and
  optionally a copy of generated/ (tests never touch the real one);
- `acp_v2_alpha3`, `acp_v1_alpha3` → the seed's lane: alpha.3's stable packages generated from
  the pins into tmp (tests/support/lanes.py; module-level code calls `seed_lane` directly).
"""

from __future__ import annotations

import importlib
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from codegen.config import default_templates
from codegen.diagnostics import Diagnostics, InputError
from codegen.emit import write
from codegen.ir import Model
from codegen.naming import Names, assign_names
from codegen.parse.classify import build_model
from codegen.parse.load import Source
from codegen.pipeline import Target, generate
from tests.support.lanes import seed_lane

REPO = Path(__file__).resolve().parent.parent
_counter = itertools.count()


def mirror_dir() -> Path:
    configured = os.environ.get("ACP_SCHEMA_MIRROR")
    path = Path(configured) if configured else REPO.parent / "shared" / "acp-schema"
    return path if path.is_absolute() else (REPO / path).resolve()


@pytest.fixture(scope="session")
def mirror() -> Path:
    path = mirror_dir()
    if not path.is_dir():
        pytest.skip(f"no schema mirror at {path}")
    return path


def inline_source(
    schema: dict[str, Any],
    meta: dict[str, Any] | None = None,
    stable_meta: dict[str, Any] | None = None,
) -> Source:
    return Source(Path("inline.json"), schema, meta, stable_meta, "0" * 64)


BuildIR = Callable[..., tuple[Model, Diagnostics]]
NameIR = Callable[..., tuple[Model, Names, Diagnostics]]


@pytest.fixture
def build_ir() -> BuildIR:
    def run(
        schema: dict[str, Any],
        meta: dict[str, Any] | None = None,
        stable_meta: dict[str, Any] | None = None,
    ) -> tuple[Model, Diagnostics]:
        diags = Diagnostics()
        return build_model(inline_source(schema, meta, stable_meta), diags), diags

    return run


@pytest.fixture
def name_ir() -> NameIR:
    def run(
        schema: dict[str, Any], overrides: dict[str, Any] | None = None
    ) -> tuple[Model, Names, Diagnostics]:
        diags = Diagnostics()
        model = build_model(inline_source(schema), diags)
        assert not diags.has_errors, [str(d) for d in diags.items]
        return model, assign_names(model, overrides, diags), diags

    return run


def write_schema(folder: Path, schema: Any, meta: Any = None) -> Path:
    """schema.json (and meta.json beside it, when given) in `folder`; returns the schema path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "schema.json"
    path.write_text(json.dumps(schema, indent=2), encoding="utf-8")
    if meta is not None:
        (folder / "meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return path


@pytest.fixture
def make_package(tmp_path: Path) -> Iterator[Callable[..., ModuleType]]:
    """Generate a package from an inline schema into tmp and import it under a unique name."""
    added: list[tuple[str, str]] = []

    def run(
        schema: dict[str, Any],
        meta: dict[str, Any] | None = None,
        overrides: dict[str, Any] | None = None,
    ) -> ModuleType:
        package = f"gen_pkg_{next(_counter)}"
        path = write_schema(tmp_path / f"{package}_schema", schema, meta)
        out = tmp_path / "out"
        generated = generate(
            Target(package, path, overrides=overrides), default_templates(), Diagnostics()
        )
        write(generated.files, out, [package])
        sys.path.insert(0, str(out))
        added.append((package, str(out)))
        return importlib.import_module(package)

    yield run
    for package, folder in added:
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]
        if folder in sys.path:
            sys.path.remove(folder)


def cli_env() -> dict[str, str]:
    """The environment of a CLI run: no debug tracebacks; pinned files from the mirror if any."""
    env = {k: v for k, v in os.environ.items() if k != "ACP_CODEGEN_DEBUG"}
    if mirror_dir().is_dir():
        env["ACP_SCHEMA_MIRROR"] = str(mirror_dir())
    return env


@pytest.fixture
def run_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    def run(
        *args: str | Path, cwd: Path = REPO, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "codegen", *map(str, args)],
            cwd=cwd,
            env=env or cli_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )

    return run


@pytest.fixture
def make_project(tmp_path: Path) -> Callable[..., Path]:
    def run(refs: list[str] | None = None, with_generated: bool = False) -> Path:
        root = tmp_path / "project"
        config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
        section = config["tool"]["acp-codegen"]
        lock = json.loads((REPO / section["lock"]).read_text(encoding="utf-8"))
        if refs is not None:
            lock["pins"] = [p for p in lock["pins"] if p["ref"] in refs]
            lock["default"] = refs[0]
        (root / "schema").mkdir(parents=True)
        (root / "schema" / "pins.lock.json").write_text(json.dumps(lock, indent=2) + "\n")
        lines = [
            "[tool.acp-codegen]",
            'lock = "schema/pins.lock.json"',
            f"templates = {json.dumps((REPO / section['templates']).as_posix())}",
            'out = "generated"',
        ]
        for package in section["packages"]:
            lines += ["[[tool.acp-codegen.packages]]"]
            lines += [f"{key} = {json.dumps(value)}" for key, value in package.items()]
        (root / "pyproject.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        if with_generated:
            shutil.copytree(
                REPO / section["out"],
                root / "generated",
                ignore=shutil.ignore_patterns("__pycache__", ".mypy_cache"),
            )
        return root

    return run


def ref_package_name(relative: Path) -> str:
    """`schema-v2.0.0-alpha.3/v2/schema.unstable.json` → `ref_v2_0_0_alpha_3_v2_unstable`."""
    words = [part for part in re.split(r"\W+", relative.with_suffix("").as_posix()) if part]
    return "ref_" + "_".join(w for w in words if w != "schema")


@pytest.fixture(scope="session")
def all_refs(mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """Every schema of the mirror, stable and unstable, generated into one tmp folder.

    Returns the folder and, per package name, the problem that stopped it ("" when none).
    """
    out = tmp_path_factory.mktemp("all_refs")
    problems: dict[str, str] = {}
    for path in sorted(mirror.rglob("schema*.json")):
        package = ref_package_name(path.relative_to(mirror))
        try:
            generated = generate(Target(package, path), default_templates(), Diagnostics())
        except InputError as exc:
            problems[package] = str(exc)
            continue
        write(generated.files, out, [package])
        problems[package] = ""
    return out, problems


@pytest.fixture(scope="session")
def mypy_cache(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mypy's cache, kept in pytest's cache folder between runs (keyed by module name and
    source hash: only modules whose code changed are checked again); tmp without that plugin."""
    cache = getattr(request.config, "cache", None)
    return cache.mkdir("mypy") if cache is not None else tmp_path_factory.mktemp("mypy")


@pytest.fixture(scope="session")
def acp_v2_alpha3() -> ModuleType:
    """alpha.3's stable v2 lane, generated from the pins (the seed's release)."""
    return seed_lane("v2")


@pytest.fixture(scope="session")
def acp_v1_alpha3() -> ModuleType:
    """alpha.3's stable v1 lane (schema-v1.21.0), generated from the pins."""
    return seed_lane("v1")
