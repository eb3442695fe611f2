"""Pinned upstream schemas: a lock file of (ref, path, sha256, url) and a git-ignored cache.

`sync` copies each pinned file from `$ACP_SCHEMA_MIRROR/<ref>/<path>` when that variable is
set, else downloads its URL; a file whose sha256 differs from the pin is never written.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from .diagnostics import InputError

RAW_URL = "https://raw.githubusercontent.com/agentclientprotocol/agent-client-protocol/{ref}/schema/{path}"
# Files a release may carry, by layout (flat before v2, then one folder per protocol version).
CANDIDATE_PATHS = tuple(
    f"{lane}{kind}{suffix}.json"
    for lane in ("", "v1/", "v2/")
    for kind in ("schema", "meta")
    for suffix in ("", ".unstable")
)
MIRROR_ENV = "ACP_SCHEMA_MIRROR"


@dataclass(frozen=True)
class Pin:
    """One pinned upstream file: ref, path under `schema/`, sha256 and URL."""

    ref: str
    path: str
    sha256: str
    url: str


@dataclass
class Lock:
    """The lock file: the pins and the default ref."""

    path: Path
    default_ref: str
    pins: list[Pin]

    @property
    def cache_dir(self) -> Path:
        return self.path.parent / "cache"

    def cached(self, pin: Pin) -> Path:
        return self.cache_dir / pin.ref / pin.path

    def find(self, ref: str, path: str) -> Pin:
        for pin in self.pins:
            if pin.ref == ref and pin.path == path:
                return pin
        raise InputError(
            f"no pin for {path} at {ref} in {self.path}: run `acp-codegen schema pin {ref}`"
        )

    def refs(self) -> list[str]:
        return list(dict.fromkeys(p.ref for p in self.pins))

    def save(self) -> None:
        data = {
            "default": self.default_ref,
            "pins": [asdict(p) for p in sorted(self.pins, key=lambda p: (p.ref, p.path))],
        }
        _atomic_write(self.path, (json.dumps(data, indent=2) + "\n").encode())


def read_lock(path: Path) -> Lock:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        pins = [Pin(**p) for p in data["pins"]]
        default = data["default"]
    except FileNotFoundError:
        raise InputError(f"lock file not found: {path}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"lock file {path} is malformed: {exc}") from None
    for pin in pins:
        if (
            ".." in Path(pin.path).parts
            or ".." in Path(pin.ref).parts
            or Path(pin.path).is_absolute()
        ):
            raise InputError(f"lock file {path}: unsafe path {pin.ref}/{pin.path}")
    return Lock(path, default, pins)


def sync(lock: Lock, refs: list[str] | None = None) -> list[Path]:
    """Fill the cache for every pin (or those of `refs`); return the files written."""
    wanted = [p for p in lock.pins if refs is None or p.ref in refs]
    fetched = [(pin, _fetch(pin)) for pin in wanted if not _cache_ok(lock, pin)]
    for pin, data in fetched:  # all verified before anything is written
        _atomic_write(lock.cached(pin), data)
    return [lock.cached(pin) for pin, _ in fetched]


def ensure(lock: Lock, pin: Pin) -> Path:
    if not _cache_ok(lock, pin):
        _atomic_write(lock.cached(pin), _fetch(pin))
    return lock.cached(pin)


def pin_ref(lock: Lock, ref: str, make_default: bool = True) -> list[Pin]:
    """Pin every schema/meta file a release has; returns the new pins."""
    mirror = os.environ.get(MIRROR_ENV)
    added: list[Pin] = []
    for path in CANDIDATE_PATHS:
        url = RAW_URL.format(ref=ref, path=path)
        data = _read_mirror(mirror, ref, path) if mirror else _download(url, missing_ok=True)
        if data is None:
            continue
        pin = Pin(ref, path, hashlib.sha256(data).hexdigest(), url)
        lock.pins = [p for p in lock.pins if not (p.ref == ref and p.path == path)] + [pin]
        _atomic_write(lock.cached(pin), data)
        added.append(pin)
    if not added:
        where = f"{mirror}/{ref}" if mirror else "upstream"
        raise InputError(f"no schema files found for ref {ref!r} in {where}")
    if make_default:
        lock.default_ref = ref
    lock.save()
    return added


def _cache_ok(lock: Lock, pin: Pin) -> bool:
    path = lock.cached(pin)
    return path.exists() and hashlib.sha256(path.read_bytes()).hexdigest() == pin.sha256


def _fetch(pin: Pin) -> bytes:
    mirror = os.environ.get(MIRROR_ENV)
    if mirror:
        data = _read_mirror(mirror, pin.ref, pin.path)
        if data is None:
            raise InputError(f"{pin.ref}/{pin.path} is not in the mirror {mirror}")
        source = f"{mirror}/{pin.ref}/{pin.path}"
    else:
        data = _download(pin.url, missing_ok=False)
        assert data is not None
        source = pin.url
    digest = hashlib.sha256(data).hexdigest()
    if digest != pin.sha256:
        raise InputError(
            f"sha256 mismatch for {source}: got {digest}, pinned {pin.sha256}; nothing written"
        )
    return data


def _read_mirror(mirror: str, ref: str, path: str) -> bytes | None:
    file = Path(mirror) / ref / path
    try:
        return file.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(f"cannot read {file}: {exc.strerror}") from None


def _download(url: str, missing_ok: bool) -> bytes | None:
    """Fetch a URL; `tarball.tgz#member` reads one member of a (npm) tarball."""
    import io  # the network path only: keep these imports off every start-up
    import tarfile
    import urllib.error
    import urllib.request

    base, _, member = url.partition("#")
    try:
        with urllib.request.urlopen(base, timeout=30) as response:
            data: bytes = response.read()
    except urllib.error.HTTPError as exc:
        if missing_ok and exc.code == 404:
            return None
        raise InputError(f"cannot download {base}: HTTP {exc.code}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise InputError(f"cannot download {base}: {getattr(exc, 'reason', exc)}") from None
    if not member:
        return data
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            extracted = tar.extractfile(member)
            if extracted is None:
                raise KeyError(member)
            return extracted.read()
    except (tarfile.TarError, KeyError):
        raise InputError(f"{base} has no member {member}") from None


def _atomic_write(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    except OSError as exc:  # e.g. a file where the cache folder should be
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
