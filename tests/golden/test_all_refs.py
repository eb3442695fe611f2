"""Every schema of the upstream mirror, stable and unstable, generates, imports, and passes
`ruff check` and `mypy --strict`.

All packages are generated into one tmp folder (the session fixture `all_refs`) and each tool
runs once over all of them. The mypy run over all 30 packages takes minutes from a cold cache:
it is `heavy` (`make heavy` runs it; `make typecheck` checks the committed packages on every
`make test`). mypy keeps its cache between runs (the `mypy_cache` fixture), so only the
modules whose code changed are checked again.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from codegen.pins import RAW_URL, read_lock
from codegen.render.ruff import ruff_binary
from tests.conftest import REPO

REFS = 30  # schema*.json files in the mirror: 10 releases, stable and unstable lanes
NPM_TARBALL = "https://registry.npmjs.org/@agentclientprotocol/sdk/-/sdk-2.4.0.tgz"


def test_every_mirror_file_is_pinned_with_its_sha256_and_url(mirror: Path) -> None:
    lock = read_lock(REPO / "schema" / "pins.lock.json")
    pinned = {(p.ref, p.path): p for p in lock.pins}
    files = sorted(f for f in mirror.rglob("*.json") if f.name.startswith(("schema", "meta")))
    assert len(files) == 56
    assert sorted(pinned) == sorted(
        (f.relative_to(mirror).parts[0], "/".join(f.relative_to(mirror).parts[1:])) for f in files
    )
    for file in files:
        ref, *parts = file.relative_to(mirror).parts
        pin = pinned[(ref, "/".join(parts))]
        assert pin.sha256 == hashlib.sha256(file.read_bytes()).hexdigest(), pin
        if ref == "npm-sdk-2.4.0":
            assert pin.url == f"{NPM_TARBALL}#package/schema/{pin.path}"
        else:
            assert pin.url == RAW_URL.format(ref=ref, path=pin.path)
    assert lock.refs() == [
        "npm-sdk-2.4.0",
        "schema-v2.0.0-alpha.1",
        "schema-v2.0.0-alpha.3",
        "schema-v2.0.0-alpha.5",
        "schema-v2.0.0-alpha.7",
        "schema-v2.0.0-alpha.8",
        "v0.10.8",
        "v0.12.2",
        "v0.2.0",
        "v0.6.3",
    ]


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


@pytest.mark.heavy
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


NEW_REFS = ["schema-v2.0.0-alpha.5", "schema-v2.0.0-alpha.7", "schema-v2.0.0-alpha.8"]


def test_schema_list_and_sync_cover_the_newer_alphas(
    make_project: Callable[..., Path],
    run_cli: Callable[..., subprocess.CompletedProcess[str]],
    mirror: Path,
) -> None:
    root = make_project(refs=["schema-v2.0.0-alpha.3", *NEW_REFS])
    synced = run_cli("schema", "sync", *NEW_REFS, cwd=root)
    assert (synced.returncode, synced.stderr) == (
        0,
        "acp-codegen: 32 pinned file(s) verified, 24 fetched\n",
    )
    for ref in NEW_REFS:
        for lane in ("v1", "v2"):
            for name in ("schema.json", "schema.unstable.json", "meta.json", "meta.unstable.json"):
                cached = root / "schema" / "cache" / ref / lane / name
                assert cached.read_bytes() == (mirror / ref / lane / name).read_bytes()
    listing = run_cli("schema", "list", cwd=root)
    assert listing.returncode == 0
    lines = listing.stdout.splitlines()
    assert len(lines) == 32
    digest = hashlib.sha256((mirror / NEW_REFS[2] / "v2/schema.json").read_bytes()).hexdigest()
    assert f"  schema-v2.0.0-alpha.8/v2/schema.json {digest}" in lines
    assert sum(line.startswith("  schema-v2.0.0-alpha.5/") for line in lines) == 8
    assert sum(line.startswith("* schema-v2.0.0-alpha.3/") for line in lines) == 8
