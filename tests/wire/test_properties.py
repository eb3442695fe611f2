"""Property tests: valid values round-trip exactly; mutated ones decode or raise DecodeError.

Valid values come from strategies built from the generator's IR (tests/support/strategies.py); the
differential test also asks jsonschema whether a mutated value is valid, and then demands that
the decoder accepts it and re-encodes it unchanged. Each test runs on two v2 packages against
the schema each was generated from: the committed default lane (`acp_v2`) and the seed's
alpha.3 lane generated from the pins (tests/support/lanes.py). Hypothesis runs with its health
checks on; the differential test `assume`s schema-valid mutations (so it fails as
unsatisfiable rather than pass having tested nothing), and `event`s tell in the statistics
which outcome each example had (`pytest --hypothesis-show-statistics`).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest
from acp_kit import v2 as acp_v2
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from codegen.diagnostics import Diagnostics
from codegen.pipeline import analyse
from tests.support.lanes import pinned_schema, seed_lane
from tests.support.strategies import WireStrategies, mutate

LANES = {"default": acp_v2, "alpha.3": seed_lane("v2")}
SETTINGS = settings(max_examples=40, deadline=None)


def types_of(pkg: ModuleType) -> list[Any]:
    """Every method's params and result type, and the unions a message is made of."""
    roots = {pkg.SessionUpdate, pkg.ContentBlock, pkg.ToolCallContent, pkg.EmbeddedResourceResource}
    return sorted(
        {name for m in pkg.METHODS.values() for name in (m.params, m.result) if name is not None}
        | roots,
        key=repr,
    )


def type_name(tp: Any) -> str:
    metadata = getattr(tp, "__metadata__", None)  # an alias: Annotated[..., Alias(name)]
    return str(metadata[0].name) if metadata else str(tp.__name__)


CASES = [(lane, tp) for lane, pkg in LANES.items() for tp in types_of(pkg)]
CASE_IDS = [f"{lane}-{type_name(tp)}" for lane, tp in CASES]


@cache
def schema_path(lane: str) -> Path:
    return pinned_schema(LANES[lane].SCHEMA_REF, "v2/schema.json")


@cache
def strategies(lane: str) -> WireStrategies:
    _, model, _ = analyse(schema_path(lane), Diagnostics())
    return WireStrategies(model)


@cache
def validator(lane: str, name: str) -> jsonschema.protocols.Validator:
    schema = json.loads(schema_path(lane).read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": schema["$defs"]})


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def test_the_lanes_are_the_default_and_alpha_3() -> None:
    assert acp_v2.SCHEMA_REF == "npm-sdk-2.4.0"
    assert LANES["alpha.3"].SCHEMA_REF == "schema-v2.0.0-alpha.3"


@pytest.mark.parametrize(("lane", "tp"), CASES, ids=CASE_IDS)
@SETTINGS
@given(data=st.data())
def test_valid_values_round_trip_exactly(lane: str, tp: Any, data: st.DataObject) -> None:
    pkg = LANES[lane]
    value = data.draw(strategies(lane).of(type_name(tp)))
    assert canonical(pkg.encode(pkg.decode(tp, value))) == canonical(value)


@pytest.mark.parametrize(("lane", "tp"), CASES, ids=CASE_IDS)
@SETTINGS
@given(data=st.data())
def test_mutated_values_decode_or_raise_decode_error(
    lane: str, tp: Any, data: st.DataObject
) -> None:
    pkg = LANES[lane]
    value = mutate(data.draw(strategies(lane).of(type_name(tp))), data)
    try:
        decoded = pkg.decode(tp, value)
    except pkg.DecodeError as exc:
        event("rejected with a DecodeError")
        assert exc.path.startswith("$") and "\n" not in str(exc)
    else:
        event("accepted")
        json.dumps(pkg.encode(decoded))  # whatever was accepted encodes to JSON


DIFFERENTIAL = [
    (lane, getattr(pkg, name))
    for lane, pkg in LANES.items()
    for name in ("UpdateSessionNotification", "PromptRequest")
]


@pytest.mark.parametrize(
    ("lane", "tp"), DIFFERENTIAL, ids=[f"{lane}-{type_name(tp)}" for lane, tp in DIFFERENTIAL]
)
@SETTINGS
@given(data=st.data())
def test_schema_valid_mutations_are_accepted_unchanged(
    lane: str, tp: Any, data: st.DataObject
) -> None:
    pkg, name = LANES[lane], type_name(tp)
    value = mutate(data.draw(strategies(lane).of(name)), data, same_type=True)
    assume(validator(lane, name).is_valid(value))
    try:
        decoded = pkg.decode(tp, value)
    except pkg.DecodeError as exc:
        # The one place the decoder is stricter than the schema: integer formats (uint64, int32...)
        # bound values the way the reference implementation's integer types do.
        event("rejected: an integer outside its format's bounds")
        assert "integer from" in exc.reason, exc
    else:
        event("accepted")
        assert canonical(pkg.encode(decoded)) == canonical(value)
