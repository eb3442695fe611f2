"""The schema files of one release, fetched for `schema pin`: from `$ACP_SCHEMA_MIRROR`, the
npm registry (`npm-sdk-X.Y.Z`) or upstream's raw files (every other ref).

Each comes back as the pin to record and its bytes. The URL recorded is where any clone can
fetch the same bytes again with no mirror: the raw file upstream, or `TARBALL#MEMBER` for an
SDK release (the member of the package tarball the registry serves).
"""

from __future__ import annotations

import hashlib
import os

from . import npm
from .diagnostics import InputError
from .fetch import NotFound, download
from .pins import CANDIDATE_PATHS, FILE_LIMIT, MIRROR_ENV, RAW_URL, Pin, read_mirror
from .refs import NPM_PREFIX, parse_ref

Found = list[tuple[Pin, bytes]]


def release_files(ref: str) -> Found:
    """Every schema/meta file of `ref` (at least one, else a one-line error)."""
    sdk_version = _sdk_version(ref)
    mirror = os.environ.get(MIRROR_ENV)
    if mirror:
        files = {
            path: data
            for path in CANDIDATE_PATHS
            if (data := read_mirror(mirror, ref, path)) is not None
        }
        if files:
            tarball = npm.tarball_url(sdk_version) if sdk_version else None
            return [
                (_pin(ref, p, d, f"{tarball}#package/schema/{p}" if tarball else _raw(ref, p)), d)
                for p, d in files.items()
            ]
        if sdk_version is None:
            raise InputError(f"no schema files found for ref {ref!r} in {mirror}/{ref}")
    if sdk_version is not None:
        return _from_registry(ref, sdk_version)
    return _from_upstream(ref)


def _sdk_version(ref: str) -> str | None:
    """X.Y.Z of `npm-sdk-X.Y.Z`; None for a ref of another form."""
    if not ref.startswith(NPM_PREFIX):
        return None
    release = parse_ref(ref)
    if release is None:
        raise InputError(
            f"invalid ref {ref!r}: an SDK release is {NPM_PREFIX}X.Y.Z, with a version of"
            f" {npm.PACKAGE} on the registry"
        )
    return ref[len(NPM_PREFIX) :]


def _from_registry(ref: str, version: str) -> Found:
    tarball = npm.tarball(version)
    data = tarball.fetch()
    members = npm.schema_files(data, tarball.url)
    if not members:
        raise InputError(
            f"{npm.PACKAGE}@{version} ships no schema files: {tarball.url} has no"
            " schema/[vN/](schema|meta)[.unstable].json"
        )
    contents = npm.read_members(data, tarball.url, members.values())
    return [
        (_pin(ref, path, contents[member], f"{tarball.url}#{member}"), contents[member])
        for path, member in sorted(members.items())
    ]


def _from_upstream(ref: str) -> Found:
    found: Found = []
    for path in CANDIDATE_PATHS:
        url = _raw(ref, path)
        try:
            data = download(url, limit=FILE_LIMIT)
        except NotFound:
            continue
        found.append((_pin(ref, path, data, url), data))
    if not found:
        raise InputError(f"no schema files found for ref {ref!r} in upstream")
    return found


def _raw(ref: str, path: str) -> str:
    return RAW_URL.format(ref=ref, path=path)


def _pin(ref: str, path: str, data: bytes, url: str) -> Pin:
    return Pin(ref, path, hashlib.sha256(data).hexdigest(), url)
