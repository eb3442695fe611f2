"""The benchmark stream (benchmarks/stream.py) is valid ACP v2 and shaped like a real turn."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from acp_kit import v2 as acp_v2
from jsonschema import Draft202012Validator

from benchmarks.stream import PARAMS_TYPE, V2_SCHEMA, generate_lines, generate_messages, kind_counts

if not Path(V2_SCHEMA).is_file():
    pytest.skip(f"schema not found: {V2_SCHEMA}", allow_module_level=True)


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads(Path(V2_SCHEMA).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def messages() -> list[dict]:
    return generate_messages()


# Free-form strings: the schema types them as plain strings (no pattern, no format), so any
# value validates like any other. Masking them lets each distinct message shape be validated
# once, which keeps this module fast without weakening the check.
_FREE_TEXT_KEYS = ("text", "messageId")


def _mask_free_text(value):
    if isinstance(value, dict):
        return {
            key: "…" if key in _FREE_TEXT_KEYS and isinstance(item, str) else _mask_free_text(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_mask_free_text(item) for item in value]
    return value


def _distinct(instances: list[dict]) -> list[dict]:
    seen = {json.dumps(_mask_free_text(i), sort_keys=True): i for i in instances}
    return list(seen.values())


@pytest.mark.skipif("ACP_V2_SCHEMA" in os.environ, reason="a schema of the user's choice")
def test_the_schema_is_the_one_acp_v2_was_generated_from():
    """The benchmark decodes the stream with acp_v2: it must be valid for that package's lane."""
    assert hashlib.sha256(Path(V2_SCHEMA).read_bytes()).hexdigest() == acp_v2.SCHEMA_SHA256


def test_acp_v2_decodes_every_message_and_encodes_it_back(messages):
    params_type = getattr(acp_v2, PARAMS_TYPE)
    for params in _distinct([m["params"] for m in messages]):
        assert acp_v2.encode(acp_v2.decode(params_type, params)) == params


def test_masked_keys_are_free_strings_in_the_schema(schema):
    defs = schema["$defs"]
    assert defs["MessageId"] == {"type": "string", "description": defs["MessageId"]["description"]}
    for owner in ("TextContent", "DiffPatch"):
        assert set(defs[owner]["properties"]["text"]) <= {"type", "description"}
        assert defs[owner]["properties"]["text"]["type"] == "string"


def _first_errors(validator: Draft202012Validator, instances: list[dict]) -> list[str]:
    errors = []
    for index, instance in enumerate(instances):
        error = next(iter(validator.iter_errors(instance)), None)
        if error is not None:
            errors.append(f"#{index}: {error.json_path}: {error.message[:200]}")
    return errors[:5]


def test_every_message_validates_against_the_root_schema(schema, messages):
    validator = Draft202012Validator(schema)
    assert _first_errors(validator, _distinct(messages)) == []


def test_every_params_validates_against_the_typed_params_def(schema, messages):
    typed = {"$ref": f"#/$defs/{PARAMS_TYPE}", "$defs": schema["$defs"]}
    assert schema["$defs"][PARAMS_TYPE]["x-method"] == "session/update"
    validator = Draft202012Validator(typed)
    assert _first_errors(validator, _distinct([m["params"] for m in messages])) == []


def test_messages_are_session_update_notifications(messages):
    for message in messages:
        assert message.keys() == {"jsonrpc", "method", "params"}
        assert message["jsonrpc"] == "2.0" and message["method"] == "session/update"


def test_stream_is_deterministic():
    assert generate_lines() == generate_lines()
    assert generate_lines(seed=1, min_messages=50) != generate_lines(seed=2, min_messages=50)


def test_mix_looks_like_real_turns(messages):
    counts = kind_counts(messages)
    assert len(messages) >= 1000
    assert counts["agent_message_chunk"] / len(messages) > 0.5
    for kind in (
        "tool_call_update",
        "tool_call_content_chunk",
        "plan_update",
        "usage_update",
        "state_update:running",
        "state_update:requires_action",
        "state_update:idle",
    ):
        assert counts[kind] > 0, kind
    statuses = {
        m["params"]["update"].get("status")
        for m in messages
        if m["params"]["update"]["sessionUpdate"] == "tool_call_update"
    }
    assert {"pending", "in_progress", "completed"} <= statuses
    # every turn ends idle with a stop reason, and the stream ends on a whole turn
    last = messages[-1]["params"]["update"]
    assert (
        last["sessionUpdate"] == "state_update" and last["state"] == "idle" and last["stopReason"]
    )


def test_typed_check_rejects_a_broken_known_update(schema, messages):
    """Guards against a vacuous check: the root's extension branches accept almost anything."""
    typed = Draft202012Validator({"$ref": f"#/$defs/{PARAMS_TYPE}", "$defs": schema["$defs"]})
    usage = next(
        m["params"] for m in messages if m["params"]["update"]["sessionUpdate"] == "usage_update"
    )
    broken = {**usage, "update": {**usage["update"], "used": -1}}
    assert typed.is_valid(usage) and not typed.is_valid(broken)
