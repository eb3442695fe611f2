"""Run a lane's values through both decoders and explain every disagreement, in three batches.

Batch one sends every value to the SDK. Each disagreement is then explained by the known
differences (tests/support/differences.py): by its differing places, or by a repair. The
repaired values go to the SDK in batch two (each repair alone, then all of a case's repairs in
turn); batch three drops each repair of an explanation that took several, to keep only the
causes that matter. Last, a disagreement nothing else explains may be explained by its type
(a rule about that type as a whole). What no rule explains stays `unexplained`.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tests.support.differences import BY_ID, DIFFERENCES
from tests.support.differential import Lane, Ours, agree, describe, entries, ours
from tests.support.zod_oracle import Accepted, SdkAnswer, ZodOracle


@dataclass
class Case:
    type_name: str
    kind: str  # "valid" (drawn from the IR) or "mutated"
    value: Any
    mine: Ours
    sdk: SdkAnswer
    agreed: bool = False
    because: tuple[str, ...] = ()  # the differences that explain a disagreement
    unexplained: bool = False

    def __str__(self) -> str:
        verdict = describe(self.mine, self.sdk)
        return f"{self.type_name} ({self.kind}): {verdict}; value {self.value!r:.300}"


@dataclass
class LaneReport:
    lane: str
    cases: list[Case]
    round_trips: int = 0
    by_difference: Counter[str] = field(default_factory=Counter)

    @property
    def agreed(self) -> list[Case]:
        return [c for c in self.cases if c.agreed]

    @property
    def explained(self) -> list[Case]:
        return [c for c in self.cases if c.because]

    @property
    def unexplained(self) -> list[Case]:
        return [c for c in self.cases if c.unexplained]


def run_lane(lane: Lane, oracle: ZodOracle, samples: list[tuple[str, str, Any]]) -> LaneReport:
    before = oracle.round_trips
    answers = oracle.check(lane.name, [(name, value) for name, _, value in samples])
    cases = [
        Case(name, kind, value, mine, answer, agree(mine, answer))
        for (name, kind, value), answer in zip(samples, answers, strict=True)
        for mine in [ours(lane, name, value)]
    ]
    attempts: list[tuple[Case, tuple[str, ...], Any]] = []
    for case in cases:
        if case.agreed:
            continue
        found = _entry_rules(lane, case.value, case.mine, case.sdk)
        if found:
            case.because = found
            continue
        attempts.extend((case, ids, value) for ids, value in _repairs(lane, case))
    _settle(lane, oracle, attempts)
    # A combination may carry a repair that changed nothing that mattered: try without each.
    narrower = [
        (case, tuple(i for i in case.because if i != drop), _apply(lane, case, drop))
        for case in cases
        if len(case.because) > 1 and all(BY_ID[i].repair for i in case.because)
        for drop in case.because
    ]
    _settle(lane, oracle, narrower, narrowing=True)
    for case in cases:  # last: what a rule is about by its type alone
        if not case.agreed and not case.because:
            case.because = tuple(d.id for d in DIFFERENCES if case.type_name in d.types)
    report = LaneReport(lane.name, cases, oracle.round_trips - before)
    for case in cases:
        case.unexplained = not case.agreed and not case.because
        report.by_difference.update(case.because)
    return report


def _settle(
    lane: Lane,
    oracle: ZodOracle,
    attempts: list[tuple[Case, tuple[str, ...], Any]],
    narrowing: bool = False,
) -> None:
    """Ask the SDK about every attempt in one batch; the first that agrees explains its case."""
    answers = oracle.check(lane.name, [(case.type_name, value) for case, _, value in attempts])
    for (case, ids, value), answer in zip(attempts, answers, strict=True):
        if case.because and not (narrowing and len(ids) < len(case.because)):
            continue
        mine = ours(lane, case.type_name, value)
        if agree(mine, answer):
            case.because = ids
        elif found := _entry_rules(lane, value, mine, answer):
            case.because = tuple(dict.fromkeys(ids + found))


def _apply(lane: Lane, case: Case, skip: str) -> Any:
    """The case's value with every repair of its explanation except `skip`."""
    value = case.value
    for d in DIFFERENCES:
        if d.repair is not None and d.id in case.because and d.id != skip:
            value = d.repair(lane, case.type_name, value)
    return value


def _entry_rules(lane: Lane, value: Any, mine: Ours, sdk: SdkAnswer) -> tuple[str, ...]:
    """The entry rules that together explain every differing place; () if some place is not."""
    if not (mine.ok and isinstance(sdk, Accepted)):
        return ()
    rules = [d for d in DIFFERENCES if d.entry is not None]
    found: list[str] = []
    for e in entries(mine.data, sdk.data):
        hit = next((d.id for d in rules if d.entry is not None and d.entry(lane, value, e)), None)
        if hit is None:
            return ()
        found.append(hit)
    return tuple(dict.fromkeys(found))


def _repairs(lane: Lane, case: Case) -> list[tuple[tuple[str, ...], Any]]:
    """Each repair that changes the value alone, then all repairs in turn (the ids of those
    that changed something: one cause can hide another, as 2.7e240 is a float, then too big)."""
    rules = [d for d in DIFFERENCES if d.repair is not None]
    out: list[tuple[tuple[str, ...], Any]] = []
    for d in rules:
        assert d.repair is not None
        fixed = d.repair(lane, case.type_name, case.value)
        if _text(fixed) != _text(case.value):
            out.append(((d.id,), fixed))
    value, ids = case.value, list[str]()
    for d in rules:
        assert d.repair is not None
        fixed = d.repair(lane, case.type_name, value)
        if _text(fixed) != _text(value):
            value, ids = fixed, [*ids, d.id]
    if len(ids) > 1:
        out.append((tuple(ids), value))
    return out


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True)  # 1.0 and 1 differ here, unlike with ==
