"""Property tests: valid values round-trip exactly; mutated ones decode or raise DecodeError.

Valid values come from strategies built from the generator's IR (tests/support/strategies.py); the
differential test also asks jsonschema whether a mutated value is valid, and then demands that
the decoder accepts it and re-encodes it unchanged. Hypothesis runs with its health checks on;
the differential test `assume`s schema-valid mutations (so it fails as unsatisfiable rather
than pass having tested nothing), and `event`s tell in the statistics which outcome each
example had (`pytest --hypothesis-show-statistics`).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import acp_v2
import jsonschema
import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from codegen.diagnostics import Diagnostics
from codegen.pipeline import analyse
from tests.support.strategies import WireStrategies, mutate

V2 = Path("schema-v2.0.0-alpha.3") / "v2" / "schema.json"  # the schema acp_v2 is made from
TYPES = sorted(
    {name for m in acp_v2.METHODS.values() for name in (m.params, m.result) if name is not None}
    | {
        acp_v2.SessionUpdate,
        acp_v2.ContentBlock,
        acp_v2.ToolCallContent,
        acp_v2.EmbeddedResourceResource,
    },
    key=repr,
)
SETTINGS = settings(max_examples=40, deadline=None)


@pytest.fixture(scope="module")
def schema(mirror: Path) -> Path:
    return mirror / V2


@cache
def strategies(schema: Path) -> WireStrategies:
    _, model, _ = analyse(schema, Diagnostics())
    return WireStrategies(model)


@cache
def validator(schema: Path, name: str) -> jsonschema.protocols.Validator:
    defs = json.loads(schema.read_text(encoding="utf-8"))["$defs"]
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": defs})


def type_name(tp: Any) -> str:
    metadata = getattr(tp, "__metadata__", None)  # an alias: Annotated[..., Alias(name)]
    return str(metadata[0].name) if metadata else str(tp.__name__)


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


@pytest.mark.parametrize("tp", TYPES, ids=type_name)
@SETTINGS
@given(data=st.data())
def test_valid_values_round_trip_exactly(schema: Path, tp: Any, data: st.DataObject) -> None:
    value = data.draw(strategies(schema).of(type_name(tp)))
    assert canonical(acp_v2.encode(acp_v2.decode(tp, value))) == canonical(value)


@pytest.mark.parametrize("tp", TYPES, ids=type_name)
@SETTINGS
@given(data=st.data())
def test_mutated_values_decode_or_raise_decode_error(
    schema: Path, tp: Any, data: st.DataObject
) -> None:
    value = mutate(data.draw(strategies(schema).of(type_name(tp))), data)
    try:
        decoded = acp_v2.decode(tp, value)
    except acp_v2.DecodeError as exc:
        event("rejected with a DecodeError")
        assert exc.path.startswith("$") and "\n" not in str(exc)
    else:
        event("accepted")
        json.dumps(acp_v2.encode(decoded))  # whatever was accepted encodes to JSON


@pytest.mark.parametrize(
    "tp", [acp_v2.UpdateSessionNotification, acp_v2.PromptRequest], ids=type_name
)
@SETTINGS
@given(data=st.data())
def test_schema_valid_mutations_are_accepted_unchanged(
    schema: Path, tp: Any, data: st.DataObject
) -> None:
    name = type_name(tp)
    value = mutate(data.draw(strategies(schema).of(name)), data, same_type=True)
    assume(validator(schema, name).is_valid(value))
    try:
        decoded = acp_v2.decode(tp, value)
    except acp_v2.DecodeError as exc:
        # The one place the decoder is stricter than the schema: integer formats (uint64, int32...)
        # bound values the way the reference implementation's integer types do.
        event("rejected: an integer outside its format's bounds")
        assert "integer from" in exc.reason, exc
    else:
        event("accepted")
        assert canonical(acp_v2.encode(decoded)) == canonical(value)
