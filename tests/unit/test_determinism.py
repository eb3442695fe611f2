"""The output does not depend on string hashing: a run under another PYTHONHASHSEED writes the
same bytes, for every upstream schema and every golden fixture.

Run one is this process (the session fixture `all_refs` and the golden cases generated here);
run two is a fresh interpreter with a different hash seed, which proves it hashes differently.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from codegen.config import default_templates
from codegen.diagnostics import Diagnostics
from codegen.emit import write
from codegen.pipeline import Target, generate
from tests.conftest import REPO, ref_package_name

GOLDEN = REPO / "tests" / "fixtures" / "golden"
PROBE = "acp-codegen"

SCRIPT = """
import json, sys
from pathlib import Path
from codegen.config import default_templates
from codegen.diagnostics import Diagnostics
from codegen.emit import write
from codegen.pipeline import Target, generate
out = Path(sys.argv[1])
for package, schema in json.loads(sys.argv[2]):
    files = generate(Target(package, Path(schema)), default_templates(), Diagnostics()).files
    write(files, out, [package])
print(hash(sys.argv[3]))
"""


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_two_runs_under_different_hash_seeds_write_identical_bytes(
    all_refs: tuple[Path, dict[str, str]], mirror: Path, tmp_path: Path
) -> None:
    here, _ = all_refs
    golden_here = tmp_path / "golden_here"
    jobs = [
        (ref_package_name(p.relative_to(mirror)), str(p))
        for p in sorted(mirror.rglob("schema*.json"))
    ]
    for case in sorted(p.parent for p in GOLDEN.glob("*/schema.json")):
        package = f"golden_{case.name}"
        jobs.append((package, str(case / "schema.json")))
        files = generate(
            Target(package, case / "schema.json"), default_templates(), Diagnostics()
        ).files
        write(files, golden_here, [package])

    seed = "1" if os.environ.get("PYTHONHASHSEED") != "1" else "2"
    there = tmp_path / "there"
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(there), json.dumps(jobs), PROBE],
        env={**os.environ, "PYTHONHASHSEED": seed},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert int(result.stdout) != hash(PROBE), "the two runs hash strings alike: nothing was tested"

    ours, theirs = {**tree(here), **tree(golden_here)}, tree(there)
    assert sorted(ours) == sorted(theirs)
    assert len(ours) >= 5 * len(jobs)  # __init__, _runtime, models, methods, py.typed at least
    assert [name for name in ours if ours[name] != theirs[name]] == []
