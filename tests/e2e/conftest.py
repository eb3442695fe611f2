"""The tool as a user gets it: a wheel of this working tree installed into a fresh virtual
environment (once a session; its dependencies come from the package index through pip's cache).

`installed` → the venv's `bin` folder; `user_env(installed, **extra)` → an environment that
finds only that venv's commands first and nothing of this repository.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, mirror_dir
from tests.support.toolkit_wire import lane as lane  # the toolkit's tests run once per lane

# What a build of the working tree needs: everything but caches, environments and outputs.
NOT_BUILT = shutil.ignore_patterns(
    ".git",
    ".venv",
    "node_modules",
    "build",
    "*.egg-info",
    "__pycache__",
    ".*_cache",
    ".hypothesis",
    ".work",
    "cache",
)


def _run(argv: list[str | Path]) -> None:
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise AssertionError(f"{argv} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    shutil.copytree(REPO, source, ignore=NOT_BUILT)  # a clean copy: no stale build/ folder
    dist = work / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    _run([*pip, "wheel", source, "--no-deps", "-w", dist])
    [wheel] = dist.glob("acp_codegen-*.whl")
    venv = work / "venv"
    _run([sys.executable, "-m", "venv", venv])
    _run(
        [
            venv / "bin" / "python",
            "-m",
            "pip",
            "--disable-pip-version-check",
            "-q",
            "install",
            wheel,
        ]
    )
    return venv / "bin"


def user_env(bin_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a user who installed the tool into `bin_dir`'s venv."""
    drop = {"PYTHONPATH", "VIRTUAL_ENV", "ACP_SCHEMA_MIRROR", "ACP_CODEGEN_DEBUG", "PYTHONHOME"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def mirror_env() -> dict[str, str]:
    path = mirror_dir()
    if not path.is_dir():
        pytest.skip(f"no schema mirror at {path}")
    return {"ACP_SCHEMA_MIRROR": str(path)}
