"""A package for unit tests of the hand-written runtime, run against its real source.

The package's hand-written modules (`_runtime`, `jsonrpc`, `connection`, `stdio`) are the
files of templates/runtime themselves, imported from there (so tracebacks, coverage and
`__file__` name the source, not a generated copy); its generated modules (`__init__`,
`models`, `methods`, `rpc`) come from a small fixture schema, rendered into a tmp folder.
The package's `__path__` holds both folders, generated one first.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from codegen.config import default_templates
from codegen.diagnostics import Diagnostics
from codegen.modules import CORE_MODULES, EXTRA_MODULES
from codegen.pipeline import Target, generate

REPO = Path(__file__).resolve().parents[2]
RUNTIME = REPO / "templates" / "runtime"
FIXTURE = REPO / "tests" / "fixtures" / "golden" / "v2_tagged" / "schema.json"
HAND_WRITTEN = frozenset(m.filename for m in CORE_MODULES + EXTRA_MODULES if m.runtime)


def load(folder: Path, name: str, schema: Path = FIXTURE) -> ModuleType:
    """Generate `schema`'s package into `folder` without its hand-written modules, and import
    it as `name` with those taken from templates/runtime."""
    files = generate(Target(name, schema), default_templates(), Diagnostics(), fmt=False).files
    root = folder / name
    for relative, text in files.items():
        path = folder / relative
        if path.name not in HAND_WRITTEN:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(
        name, root / "__init__.py", submodule_search_locations=[str(root), str(RUNTIME)]
    )
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    try:
        spec.loader.exec_module(package)
    except BaseException:
        unload(name)
        raise
    return package


def unload(name: str) -> None:
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]
