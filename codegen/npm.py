"""The official TypeScript SDK on the npm registry: its versions, and the schema files its
package tarball ships.

The registry is `$ACP_CODEGEN_NPM_REGISTRY` when set (an http(s) base URL laid out as the npm
registry is: `BASE/@agentclientprotocol/sdk` lists the versions, `BASE/@agentclientprotocol/sdk/
X.Y.Z` is one version's document), else https://registry.npmjs.org. A tarball is checked against
the `dist.integrity` and `dist.shasum` the registry gives before anything is read from it, and
read in memory with caps: no member is ever extracted to disk.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import os
import re
import tarfile
import zlib
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from .diagnostics import InputError
from .fetch import MiB, NotFound, check_url, download

PACKAGE = "@agentclientprotocol/sdk"
REGISTRY_ENV = "ACP_CODEGEN_NPM_REGISTRY"
DEFAULT_REGISTRY = "https://registry.npmjs.org"
DOCUMENT_LIMIT = 32 * MiB  # the whole package document is ~0.2 MiB today
TARBALL_LIMIT = 64 * MiB  # 2.4.0's is 0.8 MiB
UNPACKED_LIMIT = 256 * MiB  # all members together, decompressed
MEMBER_LIMIT = 32 * MiB  # one schema file (2.4.0's largest is 0.5 MiB)
# A schema file inside the package: `<top>/schema/[vN/](schema|meta)[.unstable].json`.
_SCHEMA_MEMBER = re.compile(r"[^/]+/schema/((?:v[0-9]+/)?(?:schema|meta)(?:\.unstable)?\.json)\Z")
_SRI_HASHES = {"sha512": hashlib.sha512, "sha384": hashlib.sha384, "sha256": hashlib.sha256}


def registry() -> str:
    base = os.environ.get(REGISTRY_ENV) or DEFAULT_REGISTRY
    return check_url(base, f"${REGISTRY_ENV}").rstrip("/")


def tarball_url(version: str) -> str:
    """Where the registry keeps a version's tarball (the npm layout), for pins made from the
    mirror, which has the files but not the version document."""
    return f"{registry()}/{PACKAGE}/-/{PACKAGE.rpartition('/')[2]}-{version}.tgz"


def versions(timeout: float = 30.0) -> list[str]:
    """Every version of the SDK the registry lists."""
    url = f"{registry()}/{PACKAGE}"
    doc = _json(download(url, limit=DOCUMENT_LIMIT, timeout=timeout), url)
    listed = doc.get("versions")
    if not isinstance(listed, dict):
        raise InputError(f'{url} is not a package document: it has no "versions" object')
    return [v for v in listed if isinstance(v, str)]


@dataclass(frozen=True)
class Tarball:
    """One version's package tarball, and the digests the registry gives for it."""

    url: str
    integrity: str | None  # SRI, e.g. "sha512-<base64>"
    shasum: str | None  # sha1, hex

    def fetch(self) -> bytes:
        data = download(self.url, limit=TARBALL_LIMIT)
        self.check(data)
        return data

    def check(self, data: bytes) -> None:
        """Raise unless `data` matches every digest the registry gave (at least one)."""
        checked = False
        for entry in (self.integrity or "").split():
            algorithm, _, expected = entry.partition("-")
            hasher = _SRI_HASHES.get(algorithm)
            if hasher is None:
                continue  # sha1 SRI and unknown names: shasum covers sha1
            got = base64.b64encode(hasher(data).digest()).decode()
            if got != expected:
                raise InputError(
                    f"integrity mismatch for {self.url}: {algorithm} is {got}, the registry"
                    f" says {expected}; nothing written"
                )
            checked = True
        if self.shasum:
            got = hashlib.sha1(data).hexdigest()
            if got != self.shasum.lower():
                raise InputError(
                    f"integrity mismatch for {self.url}: sha1 is {got}, the registry says"
                    f" {self.shasum}; nothing written"
                )
            checked = True
        if not checked:
            raise InputError(f"the registry gives no sha512 or sha1 for {self.url}: refused")


def tarball(version: str) -> Tarball:
    """The tarball of one published version (a version the registry lacks is an error)."""
    url = f"{registry()}/{PACKAGE}/{version}"
    try:
        body = download(url, limit=DOCUMENT_LIMIT)
    except NotFound:
        raise InputError(f"{PACKAGE} has no version {version} on {registry()}") from None
    dist = _json(body, url).get("dist")
    if not isinstance(dist, dict) or not isinstance(dist.get("tarball"), str):
        raise InputError(f"{url} gives no dist.tarball")
    integrity, shasum = dist.get("integrity"), dist.get("shasum")
    return Tarball(
        check_url(dist["tarball"], f"{url}: dist.tarball"),
        integrity if isinstance(integrity, str) else None,
        shasum if isinstance(shasum, str) else None,
    )


def schema_files(data: bytes, source: str) -> dict[str, str]:
    """The schema files a package tarball ships: {path under the release: member name}.

    Paths keep their place under the package's `schema/` folder; a flat `schema.json` or
    `meta.json` beside lane folders (SDK 1.6 to 1.9 ship `schema/schema.json` and
    `schema/v2/...`) is lane v1's, as the flat releases are."""
    names = [m.name for m in _members(data, source, wanted=None)]
    found = {m.group(1): name for name in names if (m := _SCHEMA_MEMBER.match(name))}
    lanes = {path.partition("/")[0] for path in found if "/" in path}
    if lanes and "v1" not in lanes:
        found = {(path if "/" in path else f"v1/{path}"): name for path, name in found.items()}
    return found


def read_members(data: bytes, source: str, wanted: Collection[str]) -> dict[str, bytes]:
    """The bytes of the members named `wanted` (each a regular file of at most 32 MiB)."""
    out: dict[str, bytes] = {}
    for member, read in _members_with_data(data, source, set(wanted)):
        out[member.name] = read
    missing = sorted(set(wanted) - set(out))
    if missing:
        raise InputError(f"{source} has no member {missing[0]}")
    return out


def _json(body: bytes, url: str) -> dict[str, Any]:
    try:
        doc = json.loads(body)
    except ValueError:
        raise InputError(f"{url} did not answer with JSON") from None
    if not isinstance(doc, dict):
        raise InputError(f"{url} did not answer with a JSON object")
    return doc


def _members(data: bytes, source: str, wanted: set[str] | None) -> list[tarfile.TarInfo]:
    return [member for member, _ in _members_with_data(data, source, wanted)]


def _members_with_data(
    data: bytes, source: str, wanted: set[str] | None
) -> list[tuple[tarfile.TarInfo, bytes]]:
    """Every member's header (and the bytes of those in `wanted`), refusing unsafe names, a
    tarball that is not gzip'd tar, and one that unpacks past the caps."""
    out: list[tuple[tarfile.TarInfo, bytes]] = []
    try:
        stream = _Capped(gzip.GzipFile(fileobj=io.BytesIO(data)))
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            for member in tar:
                name = member.name
                if name.startswith("/") or "\\" in name or ".." in name.split("/"):
                    raise InputError(f"{source} has an unsafe member path {name!r}: refused")
                if wanted is None or name not in wanted:
                    out.append((member, b""))
                    continue
                if not member.isreg():
                    raise InputError(f"{source}: {name} is not a regular file")
                if member.size > MEMBER_LIMIT:
                    raise InputError(f"{source}: {name} is larger than {MEMBER_LIMIT // MiB} MiB")
                extracted = tar.extractfile(member)
                out.append((member, extracted.read() if extracted else b""))
    except _TooLarge:
        raise InputError(
            f"{source} unpacks to more than {UNPACKED_LIMIT // MiB} MiB: refused"
        ) from None
    except EOFError:
        raise InputError(f"{source} is truncated (the gzip stream ends early)") from None
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise InputError(f"{source} is not a gzip'd tarball: {exc}") from None
    except tarfile.TarError as exc:
        raise InputError(f"{source} is not a valid tar archive: {exc}") from None
    return out


class _TooLarge(Exception):
    pass


class _Capped(io.RawIOBase):
    """A read-only stream that fails once more than UNPACKED_LIMIT bytes came through it."""

    def __init__(self, inner: io.BufferedIOBase) -> None:
        self._inner = inner
        self._total = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        chunk = self._inner.read(size)
        self._total += len(chunk)
        if self._total > UNPACKED_LIMIT:
            raise _TooLarge
        return chunk
