"""What a ref names, and the order of refs by version (never by string).

Three forms are releases:
- `npm-sdk-X.Y.Z`: version X.Y.Z of the official TypeScript SDK on the npm registry (its
  tarball ships the schemas it speaks);
- `schema-vX.Y.Z`, `schema-vX.Y.Z-alpha.N`, `schema-vX.Y.Z-beta.N`: an upstream schema tag;
- `vX.Y.Z`: an upstream release from before the schema tags (flat, protocol v1).

Versions compare as semver does: a pre-release sorts before its release, identifiers compare
one by one, numbers as numbers (`alpha.10` > `alpha.9`) and before words (`alpha` < `beta`).
Any other plain name (a branch, a tag of another shape) is still a ref, just not a release.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

NPM_PREFIX = "npm-sdk-"
_SEMVER = re.compile(
    r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z.-]+)?\Z"
)
Kind = Literal["npm", "schema", "flat"]
_PREFIXES: tuple[tuple[str, Kind], ...] = (
    (NPM_PREFIX, "npm"),
    ("schema-v", "schema"),
    ("v", "flat"),
)


@dataclass(frozen=True)
class Version:
    """A semver version: the release numbers and the pre-release identifiers."""

    release: tuple[int, int, int]
    pre: tuple[int | str, ...]

    @classmethod
    def parse(cls, text: str) -> Version | None:
        match = _SEMVER.match(text)
        if match is None:
            return None
        major, minor, patch, pre = match.groups()
        ids = tuple(int(i) if i.isdigit() else i for i in pre.split(".")) if pre else ()
        return cls((int(major), int(minor), int(patch)), ids)

    @property
    def prerelease(self) -> bool:
        return bool(self.pre)

    def key(self) -> tuple[object, ...]:
        """Sorts as semver precedence: a release after its pre-releases, numbers before words."""
        ids = tuple((0, i, "") if isinstance(i, int) else (1, 0, i) for i in self.pre)
        return (self.release, not self.pre, ids)


@dataclass(frozen=True)
class Release:
    """A ref that names a release: where it comes from, and its version."""

    ref: str
    kind: Kind
    version: Version

    @property
    def line(self) -> str:
        """The line it is a release of: `npm-sdk`, or the protocol version (`v1`, `v2`) of an
        upstream tag. The flat releases before the schema tags are protocol v1."""
        if self.kind == "npm":
            return "npm-sdk"
        return "v1" if self.kind == "flat" else f"v{max(self.version.release[0], 1)}"

    def line_key(self) -> tuple[int, ...]:
        """The SDK's line first, then the protocol versions in numeric order."""
        return (0,) if self.kind == "npm" else (1, int(self.line[1:]))

    def newer_than(self, other: Release) -> bool:
        return self.version.key() > other.version.key()


def parse_ref(ref: str) -> Release | None:
    """The release `ref` names, or None when it is not of a release form."""
    for prefix, kind in _PREFIXES:
        if ref.startswith(prefix):
            version = Version.parse(ref[len(prefix) :])
            return None if version is None else Release(ref, kind, version)
    return None


def ref_key(ref: str) -> tuple[object, ...]:
    """A sort key: releases by line, then version; other names after them, by name."""
    release = parse_ref(ref)
    if release is None:
        return (1, ref)
    return (0, release.line_key(), release.version.key(), release.ref)


def by_version(refs: Iterable[str]) -> list[str]:
    return sorted(refs, key=ref_key)
