"""Our decoders against the official SDK's own zod validators (npm 2.4.0), every `$defs` type.

Per lane, values of every type (drawn from our IR, and mutations of them) go to the SDK in a
few batches over one node process, and through a package generated from the same schema. Both
must reject, or both accept with the same JSON once the unknown keys the SDK strips are gone.
Each disagreement must be one of the differences listed in tests/support/differences.py and
interop/DIFFERENCES.md, and each listed difference must still be seen.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from tests.conftest import REPO
from tests.oracle.lanes import LANES, MUTATED, VALID
from tests.support.differences import DIFFERENCES
from tests.support.differential import Lane
from tests.support.oracle_run import LaneReport
from tests.support.zod_oracle import BATCH, Accepted, Issue, OracleError, Rejected, ZodOracle


def test_the_oracle_answers_a_batch_in_order_and_survives_a_bad_request(
    zod_oracle: ZodOracle,
) -> None:
    with pytest.raises(OracleError, match='the oracle could not answer: unknown lane "v9"'):
        zod_oracle.check("v9", [("SessionId", "s")])
    assert zod_oracle.check("v2", [("SessionId", "s"), ("SessionId", 5), ("Nope", {})]) == [
        Accepted("s"),
        Rejected((Issue((), "invalid_type", "Invalid input: expected string, received number"),)),
        Rejected((Issue((), "no_type", "Nope"),)),
    ]


@pytest.mark.parametrize("lane", LANES)
def test_every_defs_type_has_an_sdk_validator_and_a_decoder(
    lane: str, lanes: dict[str, Lane], zod_oracle: ZodOracle
) -> None:
    defs = sorted(lanes[lane].defs)
    assert zod_oracle.types(lane) == defs
    assert sorted(lanes[lane].names.types) == defs
    assert len(defs) == {"v1": 178, "v2": 197}[lane]


@pytest.mark.parametrize("lane", LANES)
def test_every_defs_type_is_checked_both_valid_and_mutated(
    lane: str, lanes: dict[str, Lane], reports: dict[str, LaneReport]
) -> None:
    kinds = {(c.type_name, c.kind) for c in reports[lane].cases}
    assert {name for name, _ in kinds} == set(lanes[lane].defs)
    assert all((name, "mutated") in kinds and (name, "edge") in kinds for name in lanes[lane].defs)
    drawn = Counter(c.type_name for c in reports[lane].cases if c.kind != "edge")
    assert max(drawn.values()) == VALID + MUTATED
    # a few batches, never one process or one round trip per value
    assert reports[lane].round_trips <= -(-len(reports[lane].cases) // BATCH) + 2


@pytest.mark.parametrize("lane", LANES)
def test_we_agree_with_the_sdk_or_the_difference_is_listed(
    lane: str, reports: dict[str, LaneReport]
) -> None:
    unexplained = reports[lane].unexplained
    shown = "\n".join(str(c) for c in unexplained[:10])
    assert not unexplained, (
        f"{len(unexplained)} disagreement(s) no listed difference explains:\n{shown}"
    )


@pytest.mark.parametrize("lane", LANES)
def test_most_drawn_values_are_accepted_alike(lane: str, reports: dict[str, LaneReport]) -> None:
    # A floor against a run that agrees only because both sides reject everything.
    valid = [c for c in reports[lane].cases if c.kind == "valid"]
    alike = [c for c in valid if c.agreed and isinstance(c.sdk, Accepted)]
    assert len(alike) >= 0.85 * len(valid)
    mutated = [c for c in reports[lane].cases if c.kind == "mutated"]
    assert sum(not c.mine.ok for c in mutated) >= 0.5 * len(mutated)


def test_every_listed_difference_is_seen_and_documented(reports: dict[str, LaneReport]) -> None:
    seen = Counter[str]()
    for report in reports.values():
        seen.update(report.by_difference)
    stale = [d.id for d in DIFFERENCES if not seen[d.id]]
    assert not stale, (
        f"no longer seen: {stale}; fixed? remove the rule from tests/support/differences.py "
        "and its entry from interop/DIFFERENCES.md"
    )
    text = (REPO / "interop" / "DIFFERENCES.md").read_text(encoding="utf-8")
    documented = re.findall(r"^#### `([a-z0-9-]+)` \((deliberate|gap|pending)\)", text, re.M)
    assert sorted(documented) == sorted((d.id, d.kind) for d in DIFFERENCES)
