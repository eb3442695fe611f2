"""The seed's lane: packages generated from the `schema-v2.0.0-alpha.3` pins, in a temp folder.

The committed `generated/acp_v1` and `acp_v2` follow the lock file's default ref (what real peers
speak). alpha.3 stays pinned as the release the prompt-lifecycle seed was written against:
tests about alpha.3 behaviour (the seed's examples, the docs corpus checked against alpha.3,
rules written from its schemas) use `seed_lane("v2")` → `acp_v2_alpha3` (`"v1"` →
`acp_v1_alpha3`). Each is generated once per test process from the pinned files (sha256-checked
by the lock, filled from the mirror or upstream when missing), into a folder removed at exit.
Nothing of it is committed.
"""

from __future__ import annotations

import atexit
import importlib
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

REPO = Path(__file__).resolve().parents[2]
LOCK = REPO / "schema" / "pins.lock.json"
SEED_REF = "schema-v2.0.0-alpha.3"


def pinned_schema(ref: str, path: str) -> Path:
    """The cached, sha256-checked file of a pin (and the meta.json beside it, when pinned)."""
    lock = read_lock(LOCK)
    return ensure_with_meta(lock, lock.find(ref, path))


@cache
def _out() -> Path:
    out = Path(tempfile.mkdtemp(prefix="acp_seed_lane_"))
    atexit.register(shutil.rmtree, out, True)
    sys.path.insert(0, str(out))
    return out


@cache
def seed_lane(lane: str) -> ModuleType:
    """`acp_{lane}_alpha3`: the stable `lane` ("v1" or "v2") of alpha.3, generated and imported."""
    return pinned_lane(SEED_REF, lane, f"acp_{lane}_alpha3")


@cache
def pinned_lane(ref: str, lane: str, package: str) -> ModuleType:
    """The `lane` ("v1" or "v2") of the pinned `ref`, generated as the one-lane `package`; its
    lane's subpackage (`package.v2`: the models, dispatch and runtime names), imported."""
    label = f"{lane}/schema.json"
    schema = pinned_schema(ref, label)
    sha256 = read_lock(LOCK).find(ref, label).sha256
    generated = generate(
        Target(package, schema, ref, label, sha256), default_templates(), Diagnostics()
    )
    write(generated.files, _out(), [package])
    return importlib.import_module(f"{package}.{lane}")  # the lane's own subpackage
