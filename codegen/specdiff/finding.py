"""Changes (what differs, found by `compare`) and findings (a change judged by `rules`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .reach import merge
from .rules import RANK, RULES, Direction, Severity, broken, severity


@dataclass(frozen=True, slots=True)
class Change:
    """One structural difference between the old and the new IR."""

    kind: str  # a key of rules.RULES
    path: str  # `Type.field`, `Union[tag]`, `Enum[value]`, `method:session/prompt`, ...
    detail: str  # what changed, in words
    owners: tuple[str | None, str | None] = (None, None)  # the `$defs` names (old, new) sent
    direction: Direction | None = None  # set for methods; else from the owners' reach
    python: str | None = None  # the Python API note; None: the rule's, "": no API change
    hint: str = ""


@dataclass(frozen=True, slots=True)
class Finding:
    """A change with its severity, direction and Python API impact."""

    severity: Severity
    kind: str
    path: str
    direction: Direction
    message: str
    breaks: str  # "agents", "clients", "clients and agents" or ""
    python: str  # the Python API note, "" when the API does not change
    python_severity: Severity | None

    def to_json(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "kind": self.kind,
            "path": self.path,
            "direction": self.direction,
            "message": self.message,
            "breaks": self.breaks,
            "python": self.python or None,
            "python_severity": self.python_severity,
        }


def judge(
    change: Change, old_reach: dict[str, Direction], new_reach: dict[str, Direction]
) -> Finding:
    rule = RULES[change.kind]
    direction = change.direction
    if direction is None:
        old_name, new_name = change.owners
        direction = merge(
            old_reach.get(old_name, "none") if old_name else "none",
            new_reach.get(new_name, "none") if new_name else "none",
        )
    message = f"{change.detail}: {_concrete(rule.reason, direction)}"
    if direction == "none" and rule.severity != "info":
        message += " (but no method sends this type)"
    if change.hint:
        message += f"; {change.hint}"
    python = ""
    if rule.python is not None:
        python = rule.python_reason if change.python is None else change.python
    return Finding(
        severity=severity(rule, direction),
        kind=change.kind,
        path=change.path,
        direction=direction,
        message=message,
        breaks=broken(rule, direction) if severity(rule, direction) != "info" else "",
        python=python,
        python_severity=rule.python if python else None,
    )


_ROLES = re.compile(r"\b(senders|callers|receivers|handlers)\b")


def _concrete(reason: str, direction: Direction) -> str:
    """Say `agents`/`clients` instead of `senders`/`receivers` when the direction is known."""
    if direction == "client->agent":
        sender, receiver = "clients", "agents"
    elif direction == "agent->client":
        sender, receiver = "agents", "clients"
    else:
        return reason
    return _ROLES.sub(
        lambda m: sender if m.group(1) in ("senders", "callers") else receiver, reason
    )


def sort_key(f: Finding) -> tuple[int, str, str, str]:
    return (-RANK[f.severity], f.path, f.kind, f.message)
