"""A package for unit tests of the hand-written runtime and toolkit, run against their source.

The package's hand-written modules (`runtime/*`, `toolkit/*`) are the files of
templates/runtime and templates/toolkit themselves, imported from there (so tracebacks,
coverage and `__file__` name the source, not a generated copy); its generated modules (the
lane's models, methods, rpc, ... and the package's `__init__`) come from a small fixture
schema, rendered into a tmp folder. The subpackages `runtime` and `toolkit` have both folders
on their `__path__`, the generated one first.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from codegen.config import default_templates
from codegen.diagnostics import Diagnostics
from codegen.modules import RUNTIME_MODULES, TOOLKIT_MODULES
from codegen.pipeline import Target, generate

REPO = Path(__file__).resolve().parents[2]
RUNTIME = REPO / "templates" / "runtime"
TOOLKIT = REPO / "templates" / "toolkit"
FIXTURE = REPO / "tests" / "fixtures" / "golden" / "v2_tagged" / "schema.json"
HAND_WRITTEN = frozenset(m.filename for m in RUNTIME_MODULES + TOOLKIT_MODULES)


def load(folder: Path, name: str, schema: Path = FIXTURE) -> ModuleType:
    """Generate `schema`'s package into `folder` without its hand-written modules, and import
    it as `name` with those taken from templates/."""
    files = generate(Target(name, schema), default_templates(), Diagnostics(), fmt=False).files
    root = folder / name
    for relative, text in files.items():
        inside = relative.split("/", 1)[1]
        if inside not in HAND_WRITTEN:
            path = folder / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    toolkit = root / "toolkit"
    if not toolkit.is_dir():  # a package the toolkit does not serve has none: its tests need it
        toolkit.mkdir()
        (toolkit / "__init__.py").write_text('"""The toolkit, from its source."""\n', "utf-8")
    return import_package(folder, name)


def import_package(folder: Path, name: str) -> ModuleType:
    """Import the package `folder/name` whose hand-written modules are those of templates/:
    its `runtime` and `toolkit` subpackages also look there."""
    root = folder / name
    try:
        package = _module(name, root, [str(root)])
        for sub, source in (("runtime", RUNTIME), ("toolkit", TOOLKIT)):
            where = root / sub
            if where.is_dir():
                _run(_module(f"{name}.{sub}", where, [str(where), str(source)]))
        _run(package)
    except BaseException:
        unload(name)
        raise
    return package


def _module(name: str, folder: Path, path: list[str]) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=path
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    return module


def _run(module: ModuleType) -> None:
    assert module.__spec__ is not None and module.__spec__.loader is not None
    module.__spec__.loader.exec_module(module)


def unload(name: str) -> None:
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]
