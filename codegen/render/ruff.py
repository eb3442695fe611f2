"""Format rendered files with the pinned ruff, in one process for the whole package."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..diagnostics import InputError


class RuffFailed(RuntimeError):
    """ruff rejected the rendered output: a bug of acp-codegen's (exit 3), not bad input."""


RUFF_ARGS = ("--isolated", "--no-cache", "--line-length", "100", "--target-version", "py311")


def ruff_binary() -> str:
    """The ruff installed beside this interpreter (the pinned one), else the one on PATH."""
    here = Path(sys.executable).parent / ("ruff.exe" if os.name == "nt" else "ruff")
    if here.exists():
        return str(here)
    try:
        from ruff.__main__ import find_ruff_bin  # type: ignore[import-untyped]

        return str(find_ruff_bin())
    except ImportError:
        found = shutil.which("ruff")
        if found is None:
            raise InputError("ruff is not installed: run the README's set-up command") from None
        return found


def format_files(files: dict[str, str]) -> dict[str, str]:
    """Return `files` (relative path → text) with every `.py` file formatted by ruff."""
    py = {name: text for name, text in files.items() if name.endswith(".py")}
    if not py:
        return dict(files)
    with tempfile.TemporaryDirectory(prefix="acp-codegen-") as tmp:
        root = Path(tmp)
        for name, text in py.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        ruff = ruff_binary()
        _run([ruff, "format", *RUFF_ARGS, str(root)], root)  # not --quiet: it hides errors
        out = dict(files)
        for name in py:
            out[name] = (root / name).read_text(encoding="utf-8")
        return out


def _run(argv: list[str], root: Path) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        # ruff names files by their temporary path: show them relative to the output folder.
        text = (proc.stderr or proc.stdout).replace(f"{root}{os.sep}", "").strip()
        first = text.splitlines()[0] if text else f"exit status {proc.returncode}"
        raise RuffFailed(f"ruff failed on the generated code: {first}")
