"""Pinned upstream schemas: a lock file of (ref, path, sha256, url) and a git-ignored cache.

A pin's URL is a raw upstream file, or `TARBALL#MEMBER`: one member of a package tarball (the
`npm-sdk-X.Y.Z` refs, from the npm registry). `sync` copies each pinned file from
`$ACP_SCHEMA_MIRROR/<ref>/<path>` when that variable is set (an `npm-sdk-` file the mirror lacks
comes from its URL), else downloads its URL, one download per tarball; a file whose sha256
differs from the pin is never written. Refs, paths and members are plain relative names
(checked on the way in and when the lock is read), so no pin can reach outside `cache/`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Collection
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .diagnostics import InputError
from .parse.load import meta_names

RAW_URL = "https://raw.githubusercontent.com/agentclientprotocol/agent-client-protocol/{ref}/schema/{path}"
# Files a release may carry, by layout (flat before v2, then one folder per protocol version).
CANDIDATE_PATHS = tuple(
    f"{lane}{kind}{suffix}.json"
    for lane in ("", "v1/", "v2/")
    for kind in ("schema", "meta")
    for suffix in ("", ".unstable")
)
MIRROR_ENV = "ACP_SCHEMA_MIRROR"
FILE_LIMIT = 32 * 1024 * 1024  # one downloaded schema file; tarballs have their own caps
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*\Z")
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")
_PIN_KEYS = ("ref", "path", "sha256", "url")


def check_ref(ref: str) -> str:
    """`ref` if it is one plain name (a tag or branch without `/`); else a one-line InputError."""
    if not ref:
        reason = "it is empty"
    elif "/" in ref or "\\" in ref:
        reason = "a ref cannot contain a path separator"
    elif ref.strip(".") == "":
        reason = "it would leave the schema cache"
    elif not _NAME.match(ref):
        reason = "use letters, digits and . _ + - only, starting with a letter or digit"
    else:
        return ref
    raise InputError(f"invalid ref {ref!r}: {reason}")


def _path_problem(path: str) -> str | None:
    """Why `path` is not a plain relative path under a ref's folder (None when it is)."""
    if not path or path.startswith("/") or "\\" in path:
        return "not a relative path"
    for part in path.split("/"):
        if part in ("", ".", "..") or not _NAME.match(part):
            return "not a plain relative path"
    return None


def locate(files: Collection[str], path: str) -> str | None:
    """`path` among a release's files: itself, or `X` for `v1/X` in a flat release (the
    releases before v2 have no lane folders and are protocol v1); None when it has neither."""
    if path in files:
        return path
    lane, _, rest = path.partition("/")
    flat = all("/" not in f for f in files)
    return rest if flat and lane == "v1" and rest in files else None


def _flat_note(files: Collection[str], path: str) -> str:
    flat = bool(files) and all("/" not in f for f in files)
    return " (a flat release before v2: protocol v1 only)" if flat and "/" in path else ""


def missing_in_mirror(ref: str, paths: Collection[str]) -> str | None:
    """With $ACP_SCHEMA_MIRROR set: why pinning `ref` cannot provide all of `paths` (None when
    it can, or when there is no mirror to ask)."""
    from .refs import NPM_PREFIX  # here: what names refs is no part of generate's start-up

    mirror = os.environ.get(MIRROR_ENV)
    if not mirror:
        return None
    check_ref(ref)
    files = [p for p in CANDIDATE_PATHS if (Path(mirror) / ref / p).is_file()]
    if not files and ref.startswith(NPM_PREFIX):
        return None  # pinning takes it from the registry
    if not files:
        return f"{ref} is not pinned, and the mirror {mirror} has no release {ref}"
    for path in paths:
        if locate(files, path) is None:
            return (
                f"{ref} has no {path}{_flat_note(files, path)}; its files in the mirror: "
                + ", ".join(sorted(files))
            )
    return None


@dataclass(frozen=True)
class Pin:
    """One pinned upstream file: ref, path under `schema/`, sha256 and URL."""

    ref: str
    path: str
    sha256: str
    url: str


class NotPinned(InputError):
    """A ref the lock does not pin at all (as opposed to a file a pinned ref does not have)."""


@dataclass
class Lock:
    """The lock file: the pins and the default ref (None in a lock that has no default yet)."""

    path: Path
    default_ref: str | None
    pins: list[Pin] = field(default_factory=list)

    @property
    def cache_dir(self) -> Path:
        return self.path.parent / "cache"

    def cached(self, pin: Pin) -> Path:
        return self.cache_dir / pin.ref / pin.path

    def refs(self) -> list[str]:
        return list(dict.fromkeys(p.ref for p in self.pins))

    def find(self, ref: str, path: str) -> Pin:
        """The pin of `path` at `ref`; `v1/X` is `X` in the flat releases before v2."""
        pins = {p.path: p for p in self.pins if p.ref == ref}
        if not pins:
            flag = " --no-default" if self.default_ref is not None else ""
            raise NotPinned(
                f"{ref} is not pinned in {self.path}: run `acp-codegen schema pin {ref}{flag}`"
                " first"
            )
        found = locate(pins, path)
        if found is not None:
            return pins[found]
        raise InputError(
            f"{ref} has no {path}{_flat_note(pins, path)}; its pinned files: "
            + ", ".join(sorted(pins))
        )

    def save(self) -> None:
        data = {
            "default": self.default_ref,
            "pins": [asdict(p) for p in sorted(self.pins, key=lambda p: (p.ref, p.path))],
        }
        _atomic_write(self.path, (json.dumps(data, indent=2) + "\n").encode())


def read_lock(path: Path, missing_ok: bool = False, unpinned_default_ok: bool = False) -> Lock:
    """The lock at `path`; a missing one is an empty lock with `missing_ok`, else an error.

    A default ref the lock does not pin (a hand-edited bump) is an error saying which
    `schema pin` to run, except with `unpinned_default_ok` (for that very command)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if missing_ok:
            return Lock(path, None, [])
        raise InputError(
            f"no lock file {path}: run `acp-codegen schema pin REF` to create it"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise InputError(f"cannot read lock file {path}: {reason or exc}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputError(f"lock file {path} is not valid JSON: {exc}") from None
    try:
        default, pins = _parse_lock(data)
    except ValueError as exc:
        raise InputError(f"lock file {path} is malformed: {exc}") from None
    if default is not None and default not in {p.ref for p in pins} and not unpinned_default_ok:
        raise InputError(
            f"lock file {path}: its default ref {default} is not pinned:"
            f" run `acp-codegen schema pin {default}`"
        )
    return Lock(path, default, pins)


def _parse_lock(data: Any) -> tuple[str | None, list[Pin]]:
    if not isinstance(data, dict) or set(data) != {"default", "pins"}:
        raise ValueError('expected an object with exactly the keys "default" and "pins"')
    raw_pins, default = data["pins"], data["default"]
    if not isinstance(raw_pins, list):
        raise ValueError('"pins" must be a list')
    pins: list[Pin] = []
    seen: set[tuple[str, str]] = set()
    for i, raw in enumerate(raw_pins):
        if not isinstance(raw, dict) or set(raw) != set(_PIN_KEYS):
            raise ValueError(f"pins[{i}] must be an object with the keys {', '.join(_PIN_KEYS)}")
        if not all(isinstance(raw[k], str) for k in _PIN_KEYS):
            raise ValueError(f"pins[{i}]: every value must be a string")
        pin = Pin(**raw)
        try:
            check_ref(pin.ref)
        except InputError as exc:
            raise ValueError(f"pins[{i}]: {exc}") from None
        problem = _path_problem(pin.path)
        if problem:
            raise ValueError(f"pins[{i}]: path {pin.path!r} is {problem}")
        if not _SHA256.match(pin.sha256):
            raise ValueError(f"pins[{i}]: sha256 must be 64 lowercase hex digits")
        if not pin.url.startswith(("https://", "http://")):
            raise ValueError(f"pins[{i}]: url must be an http(s) URL")
        _, hash_mark, member = pin.url.partition("#")
        if hash_mark and _path_problem(member):
            raise ValueError(f"pins[{i}]: tarball member {member!r} is {_path_problem(member)}")
        if (pin.ref, pin.path) in seen:
            raise ValueError(f"{pin.ref}/{pin.path} is pinned twice")
        seen.add((pin.ref, pin.path))
        pins.append(pin)
    if default is not None:
        if not isinstance(default, str):
            raise ValueError(f'"default" {default!r} is not a ref name')
        try:
            check_ref(default)
        except InputError as exc:
            raise ValueError(f'"default": {exc}') from None
    return default, pins


def sync(lock: Lock, refs: list[str] | None = None) -> list[Path]:
    """Fill the cache for every pin (or those of `refs`); return the files written."""
    wanted = [p for p in lock.pins if refs is None or p.ref in refs]
    fetched = _fetch_all([pin for pin in wanted if not _cache_ok(lock, pin)])
    for pin, data in fetched:  # all verified before anything is written
        _atomic_write(lock.cached(pin), data)
    return [lock.cached(pin) for pin, _ in fetched]


def ensure(lock: Lock, pin: Pin) -> Path:
    """The cached file of `pin`, fetched when missing. A tarball member comes with the other
    missing members of its tarball, so a run downloads each tarball once."""
    if not _cache_ok(lock, pin):
        base, member = _split(pin.url)
        group = [pin]
        if member:
            group += [
                other
                for other in lock.pins
                if other != pin and _split(other.url)[0] == base and not _cache_ok(lock, other)
            ]
        for done, data in _fetch_all(group):
            _atomic_write(lock.cached(done), data)
    return lock.cached(pin)


def ensure_with_meta(lock: Lock, pin: Pin) -> Path:
    """The cached schema of `pin`, with the pinned meta file(s) beside it in the cache too."""
    folder, _, name = pin.path.rpartition("/")
    prefix = f"{folder}/" if folder else ""
    wanted = {prefix + meta for meta in meta_names(name)}
    for other in lock.pins:
        if other.ref == pin.ref and other.path in wanted:
            ensure(lock, other)
    return ensure(lock, pin)


@dataclass(frozen=True)
class Pinned:
    """A file `pin_ref` pinned, and the sha256 it had before when it was pinned already."""

    pin: Pin
    previous_sha256: str | None


def pin_ref(lock: Lock, ref: str, make_default: bool = True) -> list[Pinned]:
    """Pin every schema/meta file a release has, fill the cache and save the lock.

    Everything is fetched before anything is written: a failure leaves lock and cache as
    they were."""
    from .releases import release_files  # the network paths: off every other start-up

    check_ref(ref)
    found = release_files(ref)
    before = {(p.ref, p.path): p.sha256 for p in lock.pins}
    for pin, data in found:
        _atomic_write(lock.cached(pin), data)
    new = {(pin.ref, pin.path) for pin, _ in found}
    lock.pins = [p for p in lock.pins if (p.ref, p.path) not in new] + [pin for pin, _ in found]
    if make_default:
        lock.default_ref = ref
    lock.save()
    return [Pinned(pin, before.get((pin.ref, pin.path))) for pin, _ in found]


def _split(url: str) -> tuple[str, str]:
    """`(url, "")` for a plain file, `(tarball, member)` for `tarball#member`."""
    base, _, member = url.partition("#")
    return base, member


def _cache_ok(lock: Lock, pin: Pin) -> bool:
    try:
        data = lock.cached(pin).read_bytes()
    except OSError:
        return False
    return hashlib.sha256(data).hexdigest() == pin.sha256


def _fetch_all(pins: list[Pin]) -> list[tuple[Pin, bytes]]:
    """The bytes of every pin, each sha256-checked: from the mirror when one is set, else
    from their URLs, downloading each URL (a tarball) once."""
    from .refs import NPM_PREFIX

    mirror = os.environ.get(MIRROR_ENV)
    out: list[tuple[Pin, bytes]] = []
    by_url: dict[str, list[Pin]] = {}
    for pin in pins:
        data = read_mirror(mirror, pin.ref, pin.path) if mirror else None
        if data is not None:
            out.append((pin, _verified(pin, data, f"{mirror}/{pin.ref}/{pin.path}")))
        elif mirror and not pin.ref.startswith(NPM_PREFIX):
            raise InputError(f"{pin.ref}/{pin.path} is not in the mirror {mirror}")
        else:  # no mirror, or an SDK release the mirror lacks: the registry has it
            by_url.setdefault(_split(pin.url)[0], []).append(pin)
    if by_url:
        from . import npm  # the network path only
        from .fetch import download

        for url, group in by_url.items():
            body = download(url, limit=npm.TARBALL_LIMIT if "#" in group[0].url else FILE_LIMIT)
            members = {_split(pin.url)[1] for pin in group} - {""}
            contents = npm.read_members(body, url, members) if members else {}
            for pin in group:
                member = _split(pin.url)[1]
                out.append((pin, _verified(pin, contents[member] if member else body, pin.url)))
    return out


def _verified(pin: Pin, data: bytes, source: str) -> bytes:
    digest = hashlib.sha256(data).hexdigest()
    if digest != pin.sha256:
        raise InputError(
            f"sha256 mismatch for {source}: got {digest}, pinned {pin.sha256}; nothing written"
        )
    return data


def read_mirror(mirror: str | None, ref: str, path: str) -> bytes | None:
    """The bytes of `path` at `ref` in the mirror, None when it has no such file."""
    file = Path(mirror or ".") / ref / path
    try:
        return file.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(f"cannot read {file}: {exc.strerror}") from None


def _atomic_write(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    except OSError as exc:  # e.g. a file where the cache folder should be
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a plain open() would not
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
