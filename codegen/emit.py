"""Write generated packages (each swapped in whole) or compare them with what is on disk.

Every package gets a manifest (`.acp-codegen-manifest.json`: each file it holds and its
sha256). A folder already at the target is replaced only when it proves it is ours: it has the
manifest, every file in it is listed there with that sha256, and every `.py` file starts with
the banner (or a file is byte for byte what is about to replace it). Anything else (a
hand-written package, a plain file, a generated package with a file added or edited) is
refused before anything is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

from .diagnostics import InputError
from .render.env import BANNER_PREFIX

MANIFEST = ".acp-codegen-manifest.json"
MANIFEST_NOTE = (
    "Written by acp-codegen with the files below. `acp-codegen generate` replaces this folder"
    " only while it holds exactly these files, unchanged."
)
IGNORED_DIRS = {"__pycache__", ".mypy_cache"}  # caches Python and mypy add: replaced with it


def with_manifests(
    files: dict[str, str], packages: list[str], digests: dict[str, str] | None = None
) -> dict[str, str]:
    """`files` (path relative to the out dir → text) plus each package's manifest (`digests`:
    the sha256 of some of the files, known already)."""
    out = dict(files)
    known = digests or {}
    for package in packages:
        entries = {
            rel.split("/", 1)[1]: known.get(rel) or _sha256(text.encode("utf-8"))
            for rel, text in sorted(files.items())
            if rel.split("/", 1)[0] == package
        }
        data = {"generator": "acp-codegen", "about": MANIFEST_NOTE, "files": entries}
        out[f"{package}/{MANIFEST}"] = json.dumps(data, indent=2) + "\n"
    return out


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
    """A unified diff from what is on disk to `files` (with their manifests); empty when they
    are the same."""
    import difflib  # only --check needs it

    wanted = with_manifests(files, packages)
    current: dict[str, str] = {}
    for package in packages:
        current.update(on_disk(out_dir / package))
    chunks: list[str] = []
    for rel in sorted(set(current) | set(wanted)):
        old, new = current.get(rel), wanted.get(rel)
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


def refusals(files: dict[str, str], out_dir: Path, packages: list[str]) -> list[str]:
    """Why `write(files, ...)` would refuse each package target it would refuse (a line each)."""
    present = [package for package in packages if os.path.lexists(out_dir / package)]
    wanted = with_manifests(files, present)  # a target not there yet refuses nothing
    reasons = [_refusal(out_dir / package, _package_files(wanted, package)) for package in present]
    return [r for r in reasons if r]


def write(files: dict[str, str], out_dir: Path, packages: list[str]) -> None:
    """Replace each package directory whole: build it aside, then swap it in. Every target is
    checked first: one that is not ours stops the run with nothing written."""
    with Writer(out_dir, packages) as writer:
        writer.finish(files)


class Writer:
    """`write`, begun before every file is known: `add` puts final files into each package's
    staging folder at once (the generator calls it while ruff still formats the rest), `finish`
    checks every target, adds the manifests and swaps the packages in. Until `finish` no target
    changes; leaving the `with` block without it removes the staging folders (and the folders
    of `out_dir` it made). An error of `add`'s is raised by `finish`, after the generation's."""

    def __init__(self, out_dir: Path, packages: list[str]) -> None:
        self._out = out_dir
        self._packages = packages
        self._staging: dict[str, Path] = {}
        self._staged: dict[str, str] = {}  # path relative to out_dir -> text written
        self._made: list[Path] = []  # the folders of out_dir this made, outermost first
        self._folders: set[Path] = set()  # the folders made in the staging folders
        self._digests: dict[str, str] = {}  # the sha256 of each file staged
        self._error: OSError | None = None
        self._done = False

    def add(self, files: dict[str, str]) -> None:
        if self._error is not None or (self._out.exists() and not self._out.is_dir()):
            return  # finish says why
        try:
            for rel, text in files.items():
                package, _, inner = rel.partition("/")
                if package in self._packages:
                    path = self._stage(package) / inner
                    if path.parent not in self._folders:  # one mkdir a folder, not a file
                        path.parent.mkdir(parents=True, exist_ok=True)
                        self._folders.add(path.parent)
                    data = text.encode("utf-8")
                    path.write_bytes(data)
                    self._staged[rel] = text
                    self._digests[rel] = _sha256(data)  # for the manifest
        except OSError as exc:
            self._error = exc

    def finish(self, files: dict[str, str]) -> None:
        out_dir = self._out
        if out_dir.exists() and not out_dir.is_dir():
            raise InputError(f"output folder {out_dir} is a file")
        if out_dir.is_dir():
            refused = refusals(files, out_dir, self._packages)
            if refused:
                raise InputError(refused[0])
        digests = {
            rel: d for rel, d in self._digests.items() if self._staged[rel] == files.get(rel)
        }
        files = with_manifests(files, self._packages, digests)
        try:
            if self._error is not None:
                raise self._error
            for package in self._packages:
                staging = self._stage(package)
                wanted = _package_files(files, package)
                for inner, text in wanted.items():
                    if self._staged.get(f"{package}/{inner}") != text:
                        _write_file(staging / inner, text)
                for rel in self._staged:
                    if rel.startswith(package + "/") and rel.split("/", 1)[1] not in wanted:
                        (staging / rel.split("/", 1)[1]).unlink()
                target = out_dir / package
                if os.path.lexists(target):
                    _exchange(staging, target)  # staging now holds the previous package
                else:
                    os.rename(staging, target)
        except OSError as exc:  # a bad --out (read-only, ...): bad input, not a bug
            where = exc.filename or out_dir
            raise InputError(f"cannot write {where}: {exc.strerror or exc}") from None
        self._done = True

    def _stage(self, package: str) -> Path:
        """The staging folder of `package` (made, and out_dir with it, on first use)."""
        if package not in self._staging:
            if not self._out.is_dir():
                missing = [self._out, *(p for p in self._out.parents if not p.exists())]
                self._out.mkdir(parents=True, exist_ok=True)
                self._made = sorted(missing, key=lambda p: len(p.parts))
            self._staging[package] = _fresh_dir(self._out, f".{package}.new-")
        return self._staging[package]

    def close(self) -> None:
        for staging in self._staging.values():
            shutil.rmtree(staging, ignore_errors=True)
        self._staging.clear()
        if not self._done:
            for folder in reversed(self._made):
                with contextlib.suppress(OSError):
                    folder.rmdir()  # only while empty

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _package_files(files: dict[str, str], package: str) -> dict[str, str]:
    """The files of one package, by path inside it."""
    return {
        rel.split("/", 1)[1]: text for rel, text in files.items() if rel.split("/", 1)[0] == package
    }


def _refusal(target: Path, wanted: dict[str, str]) -> str | None:
    """None when replacing `target` by `wanted` loses nothing acp-codegen did not write: it is
    absent, or each file in it is listed in its manifest with that sha256 (and a `.py` file has
    the banner), or is byte for byte the file about to replace it. Else the reason."""
    if not os.path.lexists(target):
        return None
    head = f"refusing to replace {target}"
    if target.is_symlink():
        return f"{head}: it is a symbolic link, not a package acp-codegen generated"
    if not target.is_dir():
        return f"{head}: it is a file, not a package acp-codegen generated"
    entries: dict[str, str] = {}
    try:
        entries = _read_manifest(target / MANIFEST)
        no_manifest = ""
    except FileNotFoundError:
        no_manifest = f"it has no {MANIFEST}, so nothing shows acp-codegen made it"
    except (OSError, ValueError):
        no_manifest = f"its {MANIFEST} is not one acp-codegen wrote"
    known = set(entries) | set(wanted)
    parents = {"/".join(rel.split("/")[:i]) for rel in known for i in range(1, rel.count("/") + 1)}
    for folder, dirs, names in os.walk(target):
        base = Path(folder).relative_to(target).as_posix()
        prefix = "" if base == "." else base + "/"
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_DIRS)
        for name in dirs:
            path = Path(folder) / name
            if path.is_symlink() or prefix + name not in parents:
                return f"{head}: {path} was not written by acp-codegen"
        for name in sorted(names):
            rel, path = prefix + name, Path(folder) / name
            if path.is_symlink():
                return f"{head}: {path} was not written by acp-codegen"
            try:
                data = path.read_bytes()
            except OSError as exc:
                return f"{head}: cannot read {path}: {exc.strerror}"
            if rel in wanted and data == wanted[rel].encode("utf-8"):
                continue  # replaced by the very same bytes: nothing is lost
            if rel == MANIFEST and not no_manifest:
                continue  # our own marker, about to be rewritten
            if no_manifest:
                return f"{head}: {no_manifest} (move it away to generate there)"
            if rel not in entries:
                return f"{head}: {path} was not written by acp-codegen"
            banner_ok = not rel.endswith(".py") or data.startswith(BANNER_PREFIX.encode())
            if _sha256(data) != entries[rel] or not banner_ok:
                return f"{head}: {path} was edited since acp-codegen wrote it"
    return None


def _read_manifest(path: Path) -> dict[str, str]:
    """The manifest's file → sha256 map; ValueError when it is not one we wrote."""
    data = json.loads(path.read_text(encoding="utf-8"))
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("generator") != "acp-codegen":
        raise ValueError(path)
    if not isinstance(files, dict):
        raise ValueError(path)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise ValueError(path)
    return files


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fresh_dir(parent: Path, prefix: str) -> Path:
    """A new folder with the umask's mode (mkdtemp would make it 0700)."""
    while True:
        path = parent / f"{prefix}{os.urandom(4).hex()}"
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue


def _write_file(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _exchange(new: Path, old: Path) -> None:
    """Swap two folders: in one step where the OS can (Linux renameat2), else in two renames
    that put the old one back if the second fails."""
    if _renameat2_exchange(new, old):
        return
    aside = _fresh_dir(old.parent, f".{old.name}.old-")
    os.rename(old, aside / old.name)
    try:
        os.rename(new, old)
    except BaseException:
        os.rename(aside / old.name, old)
        aside.rmdir()
        raise
    os.rename(aside / old.name, new)  # the caller removes `new`, now the previous package
    aside.rmdir()


def _renameat2_exchange(a: Path, b: Path) -> bool:
    """Atomically exchange two paths with Linux's renameat2(RENAME_EXCHANGE); False when the
    system or file system does not offer it."""
    if sys.platform != "linux":
        return False
    import ctypes  # only the write path pays for this import
    import errno

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))
