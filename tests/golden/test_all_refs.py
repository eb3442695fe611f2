"""Every schema of the upstream mirror, stable and unstable, generates, imports, and passes
`ruff check` and `mypy --strict`.

All packages are generated into one tmp folder (the session fixture `all_refs`) and each tool
runs once over all of them. mypy keeps its cache between runs (the `mypy_cache` fixture), so
only the modules whose code changed are checked again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from codegen.render.ruff import ruff_binary
from tests.conftest import REPO

REFS = 30  # schema*.json files in the mirror: 10 releases, stable and unstable lanes


def test_every_schema_generates(all_refs: tuple[Path, dict[str, str]]) -> None:
    _, problems = all_refs
    assert len(problems) == REFS
    assert {name: problem for name, problem in problems.items() if problem} == {}


IMPORT_SCRIPT = """
import importlib, json, sys
counts = {}
for name in sys.argv[1:]:
    pkg = importlib.import_module(name)
    missing = [n for n in pkg.__all__ if not hasattr(pkg, n)]
    assert not missing, (name, missing)
    counts[name] = len(pkg.__all__)
print(json.dumps(counts))
"""


def test_every_package_imports_in_a_fresh_interpreter(
    all_refs: tuple[Path, dict[str, str]],
) -> None:
    out, problems = all_refs
    names = sorted(problems)
    shares = max(1, min(os.cpu_count() or 1, 4))  # compiling the modules is the cost: share it
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", IMPORT_SCRIPT, *names[i::shares]],
            cwd=out,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(shares)
    ]
    counts: dict[str, int] = {}
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr[-3000:]
        counts.update(json.loads(stdout))
    assert sorted(counts) == names
    assert all(n > 50 for n in counts.values()), counts


def test_ruff_check_is_clean(all_refs: tuple[Path, dict[str, str]]) -> None:
    out, _ = all_refs
    # The project's rules for generated/: its lint selection, long docstring lines allowed.
    result = subprocess.run(
        [
            ruff_binary(),
            "check",
            "--no-cache",
            "--config",
            str(REPO / "pyproject.toml"),
            "--ignore",
            "E501",
            "--output-format",
            "concise",
            ".",
        ],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]


def test_mypy_strict_is_clean(all_refs: tuple[Path, dict[str, str]], mypy_cache: Path) -> None:
    out, problems = all_refs
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--python-version",
            "3.11",
            "--config-file",
            "",
            "--cache-dir",
            str(mypy_cache),
            "--no-error-summary",
            *sorted(problems),
        ],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
