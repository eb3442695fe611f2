"""`schema outdated`: each release line the lock pins, against the releases its source lists.

A line is the SDK on the registry (`npm-sdk`) or one protocol version of upstream's tags (`v1`:
the flat `vX.Y.Z` releases and `schema-v1.N.M`; `v2`: `schema-v2.*`). A line's newest pin is
compared with what its source lists; pre-releases count only on a line whose newest pin is
one. Older pins of a line are kept on purpose (for diffs and tests) and never reported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from .diagnostics import InputError
from .refs import Release, parse_ref


@dataclass(frozen=True)
class Source:
    """Where releases are listed: a name for people, its URL, and how to list its refs."""

    name: str  # "the registry", "upstream"
    where: str
    list_refs: Callable[[float], list[str]]


@dataclass(frozen=True)
class Seen:
    """What a source listed (`refs`), or why it could not be read (`problem`)."""

    source: Source
    refs: tuple[str, ...] = ()
    problem: str | None = None


def look(sources: list[Source], timeout: float) -> list[Seen]:
    """Ask every source at once (each within `timeout`), keeping each answer or error."""

    def ask(source: Source) -> Seen:
        try:
            return Seen(source, tuple(source.list_refs(timeout)))
        except InputError as exc:
            return Seen(source, problem=str(exc).removeprefix("error: "))

    with ThreadPoolExecutor(max_workers=max(len(sources), 1)) as pool:
        return list(pool.map(ask, sources))


@dataclass(frozen=True)
class Line:
    """One release line: its pins (by version), and the newer releases seen (None: unknown)."""

    name: str  # "npm-sdk", "v1", "v2", ...
    source: str
    pinned: tuple[str, ...]
    newer: tuple[str, ...] | None
    newest_seen: str | None = None  # on a line nothing is pinned on

    @property
    def outdated(self) -> bool:
        return bool(self.pinned and self.newer)


@dataclass(frozen=True)
class Report:
    lines: list[Line]
    others: list[str]  # pinned refs that are no release name: not checked
    unreachable: list[Seen] = field(default_factory=list)
    sources: tuple[Seen, ...] = ()

    @property
    def outdated(self) -> bool:
        return any(line.outdated for line in self.lines)

    @property
    def checked_nothing(self) -> bool:
        """No source answered, or none that a pinned line needs."""
        pinned = [line for line in self.lines if line.pinned]
        if pinned:
            return all(line.newer is None for line in pinned)
        return len(self.unreachable) == len(self.sources)


def report(pinned_refs: Iterable[str], registry: Seen, upstream: Seen) -> Report:
    """Compare the lock's refs with what the registry (SDK versions, as `npm-sdk-X.Y.Z`) and
    upstream (tags) listed."""
    pins: dict[str, list[Release]] = {}
    others: list[str] = []
    for ref in dict.fromkeys(pinned_refs):
        release = parse_ref(ref)
        if release is None:
            others.append(ref)
        else:
            pins.setdefault(release.line, []).append(release)
    listed: dict[str, list[Release]] = {}
    for seen, from_registry in ((registry, True), (upstream, False)):
        for ref in seen.refs:
            release = parse_ref(ref)
            if release is not None and (release.kind == "npm") == from_registry:
                listed.setdefault(release.line, []).append(release)
    lines: list[Line] = []
    for name in sorted(set(pins) | set(listed), key=_line_key):
        seen = registry if name == "npm-sdk" else upstream
        mine = sorted(pins.get(name, []), key=lambda r: r.version.key())
        theirs = sorted(listed.get(name, []), key=lambda r: r.version.key())
        if not mine:
            lines.append(Line(name, seen.source.name, (), None, _newest(theirs)))
            continue
        newest = mine[-1]
        newer = None
        if seen.problem is None:
            newer = tuple(
                r.ref
                for r in theirs
                if r.newer_than(newest) and (newest.version.prerelease or not r.version.prerelease)
            )
        lines.append(Line(name, seen.source.name, tuple(r.ref for r in mine), newer))
    unreachable = [s for s in (registry, upstream) if s.problem is not None]
    return Report(lines, others, unreachable, (registry, upstream))


def _newest(releases: list[Release]) -> str | None:
    return releases[-1].ref if releases else None


def _line_key(name: str) -> tuple[int, int]:
    return (0, 0) if name == "npm-sdk" else (1, int(name[1:]))


def text(report: Report, default: str | None) -> list[str]:
    """One row per release line (its name, its newest pin, what is newer), then one per
    pinned ref that is no release name; columns aligned."""
    rows: list[tuple[str, str, str]] = []
    for line in report.lines:
        if not line.pinned:
            if line.newest_seen:
                newest_seen = f"newest: {line.newest_seen} ({line.source})"
                rows.append((line.name, "(none pinned)", newest_seen))
            continue
        newest = line.pinned[-1]
        if newest == default:
            ref = f"{newest} (default)"
        elif default in line.pinned:
            ref = f"{newest} (default {default})"
        else:
            ref = newest
        if line.newer is None:
            status = f"not checked ({line.source} unreachable)"
        elif not line.newer:
            status = f"current ({line.source})"
        else:
            status = f"{len(line.newer)} newer ({line.source}): {_shorten(line.newer)}"
        rows.append((line.name, ref, status))
    rows += [("-", ref, "not a release name: not checked") for ref in report.others]
    widths = [max((len(row[i]) for row in rows), default=0) for i in range(2)]
    return [f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c}" for a, b, c in rows]


def _shorten(refs: tuple[str, ...]) -> str:
    """All of a few refs; the first two and the last two of many (newest last)."""
    if len(refs) <= 6:
        return ", ".join(refs)
    return ", ".join(refs[:2]) + f", ... ({len(refs) - 4} more), " + ", ".join(refs[-2:])


def as_json(report: Report, default: str | None) -> dict[str, object]:
    """The report for scripts: every pin and every newer ref of each line."""
    return {
        "default": default,
        "outdated": report.outdated,
        "lines": [
            {
                "line": line.name,
                "source": line.source,
                "pinned": list(line.pinned),
                "newer": None if line.newer is None else list(line.newer),
                **({} if line.pinned else {"newest": line.newest_seen}),
            }
            for line in report.lines
        ],
        "not_releases": report.others,
        "unreachable": {s.source.where: s.problem for s in report.unreachable},
    }
