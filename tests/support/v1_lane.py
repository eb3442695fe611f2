"""A v1 package of any pinned ref, generated from the pins into a temp folder for the tests.

`v1_package("npm-sdk-2.4.0")` → `acp_v1_npm_sdk_2_4_0`, generated once per test process from the
sha256-checked pinned `v1/schema.json` (and its meta.json when pinned) with the shipped
templates, imported from a folder removed at exit. Nothing of it is committed.
"""

from __future__ import annotations

import atexit
import importlib
import re
import shutil
import sys
import tempfile
from functools import cache
from pathlib import Path
from types import ModuleType

from codegen.config import default_templates
from codegen.diagnostics import Diagnostics
from codegen.emit import write
from codegen.pins import ensure_with_meta, read_lock
from codegen.pipeline import Target, generate

LOCK = Path(__file__).resolve().parents[2] / "schema" / "pins.lock.json"
LABEL = "v1/schema.json"


@cache
def _out() -> Path:
    out = Path(tempfile.mkdtemp(prefix="acp_v1_lane_"))
    atexit.register(shutil.rmtree, out, True)
    sys.path.insert(0, str(out))
    return out


@cache
def v1_package(ref: str) -> ModuleType:
    """The stable v1 lane of `ref`, generated and imported."""
    package = "acp_v1_" + re.sub(r"\W", "_", ref)
    lock = read_lock(LOCK)
    pin = lock.find(ref, LABEL)
    schema = ensure_with_meta(lock, pin)
    generated = generate(
        Target(package, schema, ref, LABEL, pin.sha256), default_templates(), Diagnostics()
    )
    write(generated.files, _out(), [package])
    return importlib.import_module(package)
