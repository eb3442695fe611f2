"""Write generated packages (each swapped in whole) or compare them with what is on disk."""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
from pathlib import Path

IGNORED_DIRS = {"__pycache__", ".mypy_cache"}


def on_disk(package_dir: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    if not package_dir.is_dir():
        return out
    for path in sorted(package_dir.rglob("*")):
        if path.is_file() and not IGNORED_DIRS & set(path.relative_to(package_dir).parts):
            rel = path.relative_to(package_dir.parent).as_posix()
            out[rel] = path.read_text(encoding="utf-8", errors="replace")
    return out


def diff(files: dict[str, str], out_dir: Path, packages: list[str]) -> str:
    """A unified diff from what is on disk to `files`; empty when they are the same."""
    current: dict[str, str] = {}
    for package in packages:
        current.update(on_disk(out_dir / package))
    chunks: list[str] = []
    for rel in sorted(set(current) | set(files)):
        old, new = current.get(rel), files.get(rel)
        if old == new:
            continue
        chunks.extend(
            difflib.unified_diff(
                (old or "").splitlines(keepends=True),
                (new or "").splitlines(keepends=True),
                fromfile=f"a/{rel}" if old is not None else "/dev/null",
                tofile=f"b/{rel}" if new is not None else "/dev/null",
            )
        )
    return "".join(chunks)


def write(files: dict[str, str], out_dir: Path, packages: list[str]) -> None:
    """Replace each package directory whole: build it aside, then swap it in with renames."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for package in packages:
        target = out_dir / package
        staging = Path(tempfile.mkdtemp(prefix=f".{package}.new-", dir=out_dir))
        try:
            for rel, text in files.items():
                if rel.split("/", 1)[0] != package:
                    continue
                path = staging / rel.split("/", 1)[1]
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            old = None
            if target.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{package}.old-", dir=out_dir))
                os.replace(target, old / package)
            os.replace(staging, target)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
