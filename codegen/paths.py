"""Input paths given on the command line."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

from .pins import MIRROR_ENV


def input_path(path: Path) -> Path:
    """A file to read, as the caller meant it. A relative path is read from the working
    folder, as any command reads it. When it is not there, it is looked for, in this order,
    under the folder the caller's shell was in (`$PWD`, which a launcher that changed folders
    did not update, then `$OLDPWD`, the folder a script's `cd` left), and in the schema mirror
    (`$ACP_SCHEMA_MIRROR/<ref>/...` for a path that names a release folder of the mirror, such
    as `../shared/acp-schema/<ref>/v2/schema.json`); the first found is read, with a note on
    stderr naming it. Otherwise `path` as given, for the reader to report missing."""
    if path.is_absolute() or path.exists():
        return path
    for there, why in _elsewhere(path):
        if there.exists():
            print(f"acp-codegen: note: {path} is not in {Path.cwd()}; reading {there} ({why})",
                  file=sys.stderr)  # fmt: skip
            return there
    return path


def _elsewhere(path: Path) -> Iterator[tuple[Path, str]]:
    try:
        here = Path.cwd().resolve()
    except OSError:
        return
    for name in ("PWD", "OLDPWD"):
        folder = os.environ.get(name, "")
        if os.path.isabs(folder) and Path(folder).resolve() != here:
            yield Path(folder) / path, f"${name} names that folder"
    mirror = os.environ.get(MIRROR_ENV, "")
    if mirror:
        parts = path.parts
        for i, part in enumerate(parts[:-1]):
            if part not in (".", "..") and (Path(mirror) / part).is_dir():
                yield Path(mirror).joinpath(*parts[i:]), f"release {part} of ${MIRROR_ENV}"
