"""The workspace's files: confining a path to a session's folders, reading lines of a text file,
writing one atomically, and the errors the workspace answers with.

A path is checked as text (absolute, no NUL, no `..`, at most `MAX_PATH_BYTES`), resolved with
its symbolic links (`os.path.realpath`) and placed under one of the roots. It is then opened by
walking down from the root's folder one component at a time, each opened relative to the one
before with `O_NOFOLLOW`: a component swapped for a symbolic link after the check is refused,
so nothing outside the roots is ever opened. Files are opened `O_NONBLOCK` after an `lstat`
showed a regular file, and checked again with `fstat`: a FIFO or device never blocks a thread.

Blocking functions, run in a thread by `Workspace`. Every failure is an `RpcError` whose `data`
is `{"path": <the parameter>, "reason": <one line>}`: -32602 for what the request names,
-32002 for what does not exist, -32603 for the file system failing.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ..runtime.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, RpcError

MAX_PATH_BYTES: Final = 4096
"""Longest path accepted (PATH_MAX on Linux)."""
RESOURCE_NOT_FOUND: Final = -32002
_CHUNK: Final = 65536
_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_READ_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_TEMP_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


# -- the answers -------------------------------------------------------------------------------
def invalid(param: str, reason: str) -> RpcError:
    """-32602: the request names something the workspace will not serve."""
    return RpcError(INVALID_PARAMS, "Invalid params", {"path": param, "reason": reason})


def not_found(param: str, reason: str) -> RpcError:
    """-32002: a file, folder, session or terminal that does not exist."""
    return RpcError(RESOURCE_NOT_FOUND, "Resource not found", {"path": param, "reason": reason})


def failed(param: str, reason: str) -> RpcError:
    """-32603: the file system or the system failed."""
    return RpcError(INTERNAL_ERROR, "Internal error", {"path": param, "reason": reason})


def shown(text: str, limit: int = 200) -> str:
    """`text` quoted for a one-line message: escapes for what is not printable, cut if long."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def check_text(param: str, what: str, text: str) -> bytes:
    """`text` as UTF-8, refused if it holds a NUL byte or a lone surrogate."""
    if "\0" in text:
        raise invalid(param, f"the {what} contains a NUL byte")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise invalid(param, f"the {what} is not valid Unicode (a lone surrogate)") from None


# -- placing a path under a root ----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Place:
    """Where a path resolved to: a root (its real path) and the components below it."""

    root: str
    parts: tuple[str, ...]

    @property
    def path(self) -> str:
        return os.path.join(self.root, *self.parts)


def locate(roots: Sequence[str], path: str, param: str = "$.path") -> Place:
    """The place of `path` (symbolic links resolved) under the first root that holds it."""
    if len(check_text(param, "path", path)) > MAX_PATH_BYTES:
        raise invalid(param, f"the path is over {MAX_PATH_BYTES} bytes long")
    if not path.startswith("/"):
        raise invalid(param, f"not an absolute path: {shown(path)}")
    if ".." in path.split("/"):
        raise invalid(param, f"'..' is not allowed in a path: {shown(path)}")
    try:
        real = os.path.realpath(path)
    except OSError as exc:
        raise _os_failure(exc, param, "resolve", path) from None
    for root in roots:
        top = os.path.realpath(root)
        if real == top or real.startswith(top.rstrip("/") + "/"):
            return Place(top, tuple(part for part in real[len(top) :].split("/") if part))
    raise invalid(param, f"outside the session's folders: {shown(path)}")


def _os_failure(exc: OSError, param: str, verb: str, path: str) -> RpcError:
    if exc.errno == errno.ENOENT:
        return not_found(param, f"no such file or folder: {shown(path)}")
    if exc.errno == errno.ENAMETOOLONG:
        return invalid(param, f"a name in the path is too long: {shown(path)}")
    if exc.errno == errno.ELOOP:
        return invalid(param, f"a symbolic link where none was when checked: {shown(path)}")
    if exc.errno == errno.ENOTDIR:
        return invalid(param, f"not a folder: {shown(path)}")
    return failed(param, f"cannot {verb} {shown(path)}: {exc.strerror or exc}")


class Folder:
    """The open folder a place's last component is in, reached from the root without
    following a symbolic link; `created` lists the folders made on the way (when asked to)."""

    def __init__(self, place: Place, param: str, *, create: bool = False) -> None:
        self.created: list[str] = []
        self._param, self._path = param, place.path
        at = place.root
        try:
            self.fd = os.open(at, _DIR_FLAGS)
        except OSError as exc:
            raise self._failure(exc, at) from None
        try:
            for name in place.parts[:-1]:
                at = os.path.join(at, name)
                self.fd = self._enter(name, at, create)
        except BaseException:
            self.close()
            raise

    def _enter(self, name: str, at: str, create: bool) -> int:
        try:
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=self.fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(name, 0o777, dir_fd=self.fd)
                self.created.append(at)
                fd = os.open(name, _DIR_FLAGS, dir_fd=self.fd)
        except OSError as exc:
            if exc.errno == errno.ENOTDIR and _is_link(name, self.fd):
                exc.errno = errno.ELOOP  # Linux says ENOTDIR for a link with O_DIRECTORY
            raise self._failure(exc, at) from None
        os.close(self.fd)
        return fd

    def _failure(self, exc: OSError, at: str) -> RpcError:
        """What a failure to open folder `at` answers (a missing one: the path asked for)."""
        return _os_failure(
            exc, self._param, "open", self._path if exc.errno == errno.ENOENT else at
        )

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Folder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _is_link(name: str, folder: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _kind(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def _regular(mode: int, param: str, path: str) -> None:
    if not stat.S_ISREG(mode):
        raise invalid(param, f"not a regular file ({_kind(mode)}): {shown(path)}")


# -- reading -----------------------------------------------------------------------------------
def read_text(roots: Sequence[str], path: str, line: int, limit: int | None, cap: int) -> str:
    """Lines `line` (1-based) to `line + limit - 1` of the file, each with its `\\n`; lines
    end at `\\n` only (`sed -n` counts the same way). Refused past `cap` bytes."""
    return read_place(locate(roots, path), path, line, limit, cap)


def read_place(place: Place, path: str, line: int, limit: int | None, cap: int) -> str:
    """`read_text` of a place already located (a component may have been swapped since)."""
    if not place.parts:
        raise invalid("$.path", f"not a regular file (a folder): {shown(path)}")
    with Folder(place, "$.path") as folder:
        name = place.parts[-1]
        try:
            _regular(os.stat(name, dir_fd=folder.fd, follow_symlinks=False).st_mode, "$.path", path)
            fd = os.open(name, _READ_FLAGS, dir_fd=folder.fd)
        except OSError as exc:
            raise _os_failure(exc, "$.path", "read", path) from None
    try:
        _regular(os.fstat(fd).st_mode, "$.path", path)  # swapped since the lstat
        data = _lines(fd, line, limit, cap, path)
    except OSError as exc:
        raise _os_failure(exc, "$.path", "read", path) from None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = f"not UTF-8 text: byte {exc.start} of the lines read, in {shown(path)}"
        raise invalid("$.path", reason) from None


def _lines(fd: int, line: int, limit: int | None, cap: int, path: str) -> bytes:
    """Read only as far as the lines asked for: skip `line - 1` line breaks, then keep up to
    `limit` lines (all when None) and never more than `cap` bytes."""
    if limit == 0:
        return b""
    to_skip = line - 1
    chunk = b""
    while to_skip:
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            return b""
        breaks = chunk.count(b"\n")
        if breaks < to_skip:
            to_skip -= breaks
            continue
        at = -1
        for _ in range(to_skip):
            at = chunk.index(b"\n", at + 1)
        chunk, to_skip = chunk[at + 1 :], 0
    kept = bytearray()
    wanted = limit
    while True:
        if not chunk:
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                return bytes(kept)
        if wanted is not None:
            breaks = chunk.count(b"\n")
            if breaks >= wanted:
                at = -1
                for _ in range(wanted):
                    at = chunk.index(b"\n", at + 1)
                chunk = chunk[: at + 1]
                wanted = 0
            else:
                wanted -= breaks
        if len(kept) + len(chunk) > cap:
            param = "$.path" if limit is None else "$.limit"
            reason = (
                f"the lines asked for are over the read cap of {cap} bytes;"
                f" read {shown(path)} in parts with line and limit"
            )
            raise invalid(param, reason)
        kept += chunk
        chunk = b""
        if wanted == 0:
            return bytes(kept)


# -- writing -----------------------------------------------------------------------------------
def inspect_target(roots: Sequence[str], path: str) -> tuple[Place, bool]:
    """Where a write of `path` would go, and whether it replaces a file (refused if what is
    there is not a regular file)."""
    place = locate(roots, path)
    if not place.parts:
        raise invalid("$.path", f"not a regular file (a folder): {shown(path)}")
    try:
        folder = Folder(place, "$.path")
    except RpcError as exc:
        if exc.code == RESOURCE_NOT_FOUND:  # folders still to make: a new file
            return place, False
        raise
    with folder:
        try:
            mode = os.stat(place.parts[-1], dir_fd=folder.fd, follow_symlinks=False).st_mode
        except FileNotFoundError:
            return place, False
        except OSError as exc:
            raise _os_failure(exc, "$.path", "write", path) from None
    _regular(mode, "$.path", path)
    return place, True


def write_text(roots: Sequence[str], path: str, data: bytes, approved: Place) -> None:
    """Write `data` to the file at `approved` (checked again: it must still be where `path`
    resolves): a temporary file in the same folder, renamed over the target, which keeps the
    mode of the file it replaces. Missing folders are made, and removed again on failure."""
    place = locate(roots, path)
    if place != approved:
        reason = f"{shown(path)} resolves elsewhere than when it was approved"
        raise invalid("$.path", reason)
    name = place.parts[-1]
    with Folder(place, "$.path", create=True) as folder:
        try:
            _write_in(folder.fd, name, data, path)
        except BaseException:
            for made in reversed(folder.created):
                try:
                    os.rmdir(made)
                except OSError:
                    break
            raise


def _write_in(folder: int, name: str, data: bytes, path: str) -> None:
    try:
        mode: int | None = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise _os_failure(exc, "$.path", "write", path) from None
    if mode is not None:
        _regular(mode, "$.path", path)
    temp = f".{secrets.token_hex(6)}.acp-write"
    try:
        fd = os.open(temp, _TEMP_FLAGS, 0o666, dir_fd=folder)
    except OSError as exc:
        raise _write_failure(exc, path) from None
    try:
        try:
            if mode is not None:
                os.fchmod(fd, stat.S_IMODE(mode))
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException as exc:
        try:
            os.unlink(temp, dir_fd=folder)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise _write_failure(exc, path) from None
        raise


def _write_failure(exc: OSError, path: str) -> RpcError:
    """In a folder already open, even ENOENT is the file system failing (as in /proc)."""
    if exc.errno in (errno.ENAMETOOLONG, errno.ELOOP):
        return _os_failure(exc, "$.path", "write", path)
    return failed("$.path", f"cannot write {shown(path)}: {exc.strerror or exc}")
