"""Input paths given on the command line."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def input_path(path: Path) -> Path:
    """A file to read, as the caller meant it. A relative path is read from the working
    folder, as any command reads it. When it is not there, `$PWD` names another folder (the
    one the caller's shell was in: a launcher that changed folders did not update it) and the
    path is there, it is read from there, with a note on stderr. Otherwise `path` as given, for
    the reader to report missing."""
    if path.is_absolute() or path.exists():
        return path
    shell = os.environ.get("PWD", "")
    if not os.path.isabs(shell):
        return path
    there = Path(shell) / path
    try:
        elsewhere = Path(shell).resolve() != Path.cwd().resolve()
    except OSError:
        return path
    if not elsewhere or not there.exists():
        return path
    print(
        f"acp-codegen: note: {path} is not in {Path.cwd()}; reading {there} ($PWD names"
        " that folder)",
        file=sys.stderr,
    )
    return there
