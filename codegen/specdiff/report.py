"""Render findings as text (grouped, for a terminal), Markdown (for a pull request) or JSON."""

from __future__ import annotations

import json
from collections.abc import Iterable

from .finding import Finding, sort_key
from .rules import SEVERITIES

# Kinds whose line says it all in text output (the message only repeats the rule).
_ONE_LINE = frozenset({"type-added"})
_ARROWS = {"client->agent": "client → agent", "agent->client": "agent → client"}


def summary(findings: list[Finding]) -> dict[str, int]:
    counts: dict[str, int] = {
        sev: sum(1 for f in findings if f.severity == sev) for sev in SEVERITIES
    }
    counts["python_breaking"] = sum(1 for f in findings if f.python_severity == "breaking")
    return counts


def render(fmt: str, findings: list[Finding], old: str, new: str, verbose: bool = False) -> str:
    ordered = sorted(findings, key=sort_key)
    if fmt == "json":
        return _json(ordered, old, new)
    if fmt == "markdown":
        return _markdown(ordered, old, new, verbose)
    return _text(ordered, old, new, verbose)


def _json(findings: list[Finding], old: str, new: str) -> str:
    data = {
        "old": old,
        "new": new,
        "summary": summary(findings),
        "findings": [f.to_json() for f in findings],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _headline(findings: list[Finding]) -> str:
    c = summary(findings)
    return (
        f"wire: {c['breaking']} breaking, {c['warning']} warning, {c['info']} info; "
        f"Python API: {c['python_breaking']} breaking"
    )


def _split(findings: list[Finding], verbose: bool) -> tuple[list[Finding], list[Finding]]:
    """(shown, folded): description-only changes are folded unless asked for."""
    if verbose:
        return findings, []
    shown = [f for f in findings if f.kind != "description-changed"]
    return shown, [f for f in findings if f.kind == "description-changed"]


def _text(findings: list[Finding], old: str, new: str, verbose: bool) -> str:
    lines = [f"{old} → {new}", _headline(findings)]
    if not findings:
        lines.append("no differences")
    shown, folded = _split(findings, verbose)
    for sev in SEVERITIES:
        group = [f for f in shown if f.severity == sev]
        if not group:
            continue
        lines += ["", f"{sev.upper()} ({len(group)})"]
        for f in group:
            where = _ARROWS.get(f.direction, f.direction)
            lines.append(f"  {f.path}  [{f.kind}, {where}]")
            if f.kind in _ONE_LINE:
                continue
            lines.append(f"      {f.message}")
            if f.python and f.python_severity != "info":
                lines.append(f"      Python API ({f.python_severity}): {f.python}")
    if folded:
        lines += ["", f"({len(folded)} description-only changes not shown: --verbose lists them)"]
    return "\n".join(lines) + "\n"


def _markdown(findings: list[Finding], old: str, new: str, verbose: bool) -> str:
    lines = [f"## ACP schema diff: `{old}` → `{new}`", "", _headline(findings) + "."]
    if not findings:
        lines += ["", "No differences."]
    shown, folded = _split(findings, verbose)
    for sev in SEVERITIES:
        group = [f for f in shown if f.severity == sev]
        if group:
            lines += ["", f"### {sev.capitalize()} ({len(group)})", ""]
            lines += _md_table(group)
    if folded:
        lines += ["", f"<details><summary>{len(folded)} description-only changes</summary>", ""]
        lines += [f"- `{_cell(f.path)}`" for f in folded]
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def _md_table(findings: Iterable[Finding]) -> list[str]:
    rows = [
        "| where | change | sent | wire | Python API |",
        "| --- | --- | --- | --- | --- |",
    ]
    for f in findings:
        py = f"{f.python_severity}: {f.python}" if f.python else ""
        where = _ARROWS.get(f.direction, f.direction)
        cells = [f"`{_cell(f.path)}`", f.kind, where, _cell(f.message), _cell(py)]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
