"""Write generated packages (each swapped in whole) or compare them with what is on disk."""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
from pathlib import Path

from .diagnostics import InputError

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
        fromfile = f"a/{rel}" if old is not None else "/dev/null"
        tofile = f"b/{rel}" if new is not None else "/dev/null"
        lines = list(
            difflib.unified_diff(
                (old or "").splitlines(keepends=True),
                (new or "").splitlines(keepends=True),
                fromfile=fromfile,
                tofile=tofile,
            )
        )
        # An empty file that appeared or vanished has no hunk: its header still tells.
        chunks.extend(lines or [f"--- {fromfile}\n", f"+++ {tofile}\n"])
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in chunks
    )


def write(files: dict[str, str], out_dir: Path, packages: list[str]) -> None:
    """Replace each package directory whole: build it aside, then swap it in with renames."""
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"output folder {out_dir} is a file")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for package in packages:
            _swap_in(files, out_dir, package)
    except OSError as exc:  # a bad --out (a file, read-only, ...): bad input, not a bug
        where = exc.filename or out_dir
        raise InputError(f"cannot write {where}: {exc.strerror or exc}") from None


def _swap_in(files: dict[str, str], out_dir: Path, package: str) -> None:
    target = out_dir / package
    staging = Path(tempfile.mkdtemp(prefix=f".{package}.new-", dir=out_dir))
    old = None
    try:
        for rel, text in files.items():
            if rel.split("/", 1)[0] != package:
                continue
            path = staging / rel.split("/", 1)[1]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{package}.old-", dir=out_dir))
            os.replace(target, old / package)
        os.replace(staging, target)
    except BaseException:
        if old is not None and not target.exists():  # put the previous package back
            os.replace(old / package, target)
        shutil.rmtree(staging, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
