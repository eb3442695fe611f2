"""One focused test per wire rule of the decoders issue, written from the alpha.3 schemas.

The packages under test are therefore alpha.3's v1 and v2 lanes, generated from the pins
(tests/support/lanes.py), not the committed default lane.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.lanes import seed_lane

seed_v1 = seed_lane("v1")
seed_v2 = seed_lane("v2")
UNSET, DecodeError, decode, encode = (
    seed_v2.UNSET,
    seed_v2.DecodeError,
    seed_v2.decode,
    seed_v2.encode,
)


def same_json(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def round_trip(tp: Any, data: Any) -> Any:
    value = decode(tp, data)
    assert same_json(encode(value), data)
    return value


def error_of(tp: Any, data: Any) -> DecodeError:
    with pytest.raises(DecodeError) as caught:
        decode(tp, data)
    return caught.value


# -- tagged unions ---------------------------------------------------------------------------------
def test_tag_picks_the_variant_class() -> None:
    chunk = {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m1",
        "content": {"type": "text", "text": "hi"},
    }
    value = round_trip(seed_v2.SessionUpdate, chunk)
    assert type(value) is seed_v2.SessionUpdateAgentMessageChunk
    assert value.message_id == "m1"
    assert type(value.content) is seed_v2.ContentBlockText
    assert value.content.text == "hi"


@pytest.mark.parametrize(
    "tag_field", ["sessionUpdate", "type", "state", "outcome", "operation", "mode", "action"]
)
def test_every_tag_field_of_v2_has_a_tagged_union(tag_field: str) -> None:
    unions = [
        getattr(seed_v2, n)
        for n in seed_v2.__all__
        if getattr(getattr(seed_v2, n), "TAG_FIELD", None) == tag_field
    ]
    assert unions, f"no tagged union on {tag_field}"


def test_unknown_tag_keeps_tag_and_payload() -> None:
    data = {
        "sessionUpdate": "_acme_progress",
        "percent": 40,
        "nested": {"a": [1, None]},
        "_meta": {"k": 1},
    }
    value = round_trip(seed_v2.SessionUpdate, data)
    assert type(value) is seed_v2.SessionUpdateOther
    assert value.session_update == "_acme_progress"
    assert value.extra == {"percent": 40, "nested": {"a": [1, None]}, "_meta": {"k": 1}}


def test_unknown_content_block_inside_a_known_update_is_kept() -> None:
    data = {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m",
        "content": {"type": "_x", "blob": "b"},
    }
    value = round_trip(seed_v2.SessionUpdate, data)
    assert type(value.content) is seed_v2.ContentBlockOther
    assert value.content.type == "_x"


def test_known_tag_with_broken_payload_is_an_error_not_the_open_variant() -> None:
    err = error_of(seed_v2.SessionUpdate, {"sessionUpdate": "usage_update", "used": -1, "size": 10})
    assert err.path == "$.used"
    assert err.reason == "expected an integer from 0 to 18446744073709551615, got an integer"
    err = error_of(
        seed_v2.SessionUpdate,
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m",
            "content": {"type": "text", "text": 5},
        },
    )
    assert err.path == "$.content.text"
    assert err.reason == "expected a string, got an integer"


def test_reserved_tag_without_a_variant_is_an_error() -> None:
    # PlanUpdateContent's catch-all excludes `file`, `markdown`: stable v2 has no branch for them.
    assert seed_v2.PlanUpdateContentOther.RESERVED_TAGS >= {"file", "markdown", "items"}
    err = error_of(seed_v2.PlanUpdateContent, {"type": "markdown", "planId": "p"})
    assert err.path == "$.type"
    assert "reserved" in err.reason
    other = round_trip(seed_v2.PlanUpdateContent, {"type": "_gantt", "planId": "p", "bars": []})
    assert type(other) is seed_v2.PlanUpdateContentOther


def test_missing_or_non_string_tag() -> None:
    assert error_of(seed_v2.SessionUpdate, {"messageId": "m"}).path == "$.sessionUpdate"
    err = error_of(seed_v2.SessionUpdate, {"sessionUpdate": 3})
    assert (err.path, err.reason) == ("$.sessionUpdate", "expected a string tag, got an integer")


def test_variant_decoded_directly_checks_its_tag() -> None:
    err = error_of(
        seed_v2.SessionUpdateAgentMessageChunk,
        {
            "sessionUpdate": "user_message_chunk",
            "messageId": "m",
            "content": {"type": "text", "text": ""},
        },
    )
    assert err.path == "$.sessionUpdate"
    assert err.reason == 'expected tag "agent_message_chunk", got "user_message_chunk"'


def test_closed_union_rejects_unknown_tags() -> None:
    # v1 (schema-v1.21.0) has closed tagged unions: no catch-all branch.
    with pytest.raises(seed_v1.DecodeError) as caught:
        seed_v1.decode(seed_v1.SessionUpdate, {"sessionUpdate": "state_update", "state": "idle"})
    err = caught.value
    assert err.path == "$.sessionUpdate"
    assert err.reason.startswith('unknown tag "state_update"; expected one of user_message_chunk')


def test_union_with_a_default_branch() -> None:
    # v1 SetSessionConfigOptionRequest: `type: boolean`, or no `type` at all for a value id.
    by_id = seed_v1.decode(
        seed_v1.SetSessionConfigOptionRequest,
        {"sessionId": "s", "configId": "mode", "value": "code"},
    )
    assert type(by_id) is seed_v1.SetSessionConfigOptionRequestValueId
    assert seed_v1.encode(by_id) == {"sessionId": "s", "configId": "mode", "value": "code"}
    data = {"sessionId": "s", "configId": "x", "type": "boolean", "value": True}
    flag = seed_v1.decode(seed_v1.SetSessionConfigOptionRequest, data)
    assert flag.value is True
    assert seed_v1.encode(flag) == data


# -- enums ---------------------------------------------------------------------------------------
def test_open_string_enum_keeps_unknown_values() -> None:
    assert decode(seed_v2.StopReason, "end_turn") is seed_v2.StopReason.END_TURN
    assert decode(seed_v2.StopReason, "_acme_budget") == "_acme_budget"
    update = round_trip(
        seed_v2.SessionUpdate,
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "_acme"},
    )
    assert update.stop_reason == "_acme"


def test_tool_kind_other_is_a_real_value() -> None:
    assert decode(seed_v2.ToolKind, "other") is seed_v2.ToolKind.OTHER
    assert decode(seed_v2.ToolKind, "_custom") == "_custom"
    assert error_of(seed_v2.ToolKind, 3).reason == "expected a string, got an integer"


def test_open_integer_enum() -> None:
    assert decode(seed_v2.ErrorCode, -32601) is seed_v2.ErrorCode.METHOD_NOT_FOUND
    assert decode(seed_v2.ErrorCode, -32099) == -32099
    int32 = "expected an integer from -2147483648 to 2147483647"
    assert error_of(seed_v2.ErrorCode, True).reason == f"{int32}, got a boolean"
    assert error_of(seed_v2.ErrorCode, -32601.0).reason == f"{int32}, got a number"
    assert error_of(seed_v2.ErrorCode, 2**31).reason == f"{int32}, got an integer"


def test_closed_enum_rejects_unknown_values() -> None:
    assert decode(seed_v2.ElicitationSchemaType, "object") is seed_v2.ElicitationSchemaType.OBJECT
    assert (
        error_of(seed_v2.ElicitationSchemaType, "array").reason
        == "expected one of 'object', got a string"
    )


# -- untagged unions -----------------------------------------------------------------------------
def test_request_id_by_json_type() -> None:
    assert decode(seed_v2.RequestId, None) is None
    assert decode(seed_v2.RequestId, 7) == 7
    assert decode(seed_v2.RequestId, "7") == "7"
    assert (
        error_of(seed_v2.RequestId, 1.5).reason
        == "expected null, an integer or a string, got a number"
    )
    assert (
        error_of(seed_v2.RequestId, True).reason
        == "expected null, an integer or a string, got a boolean"
    )


def test_embedded_resource_by_required_fields() -> None:
    text = round_trip(seed_v2.EmbeddedResourceResource, {"uri": "file:///a", "text": "x"})
    assert type(text) is seed_v2.TextResourceContents
    blob = round_trip(seed_v2.EmbeddedResourceResource, {"uri": "file:///a", "blob": "AAE="})
    assert type(blob) is seed_v2.BlobResourceContents
    err = error_of(seed_v2.EmbeddedResourceResource, {"uri": "file:///a"})
    assert err.path == "$"
    assert "{text, uri} or {blob, uri}" in err.reason


def test_untagged_union_documents_its_rule() -> None:
    source = Path(seed_v2.models.__file__).read_text(encoding="utf-8")
    start = source.index("EmbeddedResourceResource: _TypeAlias")
    docstring = source[source.index('"""', start) + 3 : source.index('"""\n', start)]
    assert " ".join(docstring.split()).endswith(
        "Untagged union: every alternative is an object. Among objects, the first alternative"
        " in schema order whose required keys are all present."
    )


def test_elicitation_value_keeps_json_types() -> None:
    for value in ("a", 3, 2.5, True, ["x", "y"]):
        assert decode(seed_v2.ElicitationContentValue, value) == value
        assert type(decode(seed_v2.ElicitationContentValue, value)) is type(value)
    assert error_of(seed_v2.ElicitationContentValue, ["x", 1]).path == "$[1]"


def test_select_options_by_first_item() -> None:
    flat = round_trip(seed_v2.SessionConfigSelectOptions, [{"value": "a", "name": "A"}])
    assert type(flat[0]) is seed_v2.SessionConfigSelectOption
    grouped = round_trip(
        seed_v2.SessionConfigSelectOptions,
        [{"groupId": "g", "name": "G", "options": [{"value": "a", "name": "A"}]}],
    )
    assert type(grouped[0]) is seed_v2.SessionConfigSelectGroup
    assert decode(seed_v2.SessionConfigSelectOptions, []) == []


# -- three states, unknown fields, _meta ---------------------------------------------------------
def test_omitted_null_and_value_are_three_states() -> None:
    omitted = round_trip(seed_v2.ToolCallUpdate, {"toolCallId": "c"})
    cleared = round_trip(
        seed_v2.ToolCallUpdate, {"toolCallId": "c", "title": None, "content": None, "_meta": None}
    )
    valued = round_trip(seed_v2.ToolCallUpdate, {"toolCallId": "c", "title": "t", "content": []})
    assert (omitted.title, cleared.title, valued.title) == (UNSET, None, "t")
    assert (omitted.content, cleared.content, valued.content) == (UNSET, None, [])
    assert (omitted.meta, cleared.meta) == (UNSET, None)
    assert encode(omitted) == {"toolCallId": "c"}


def test_constructed_values_encode_only_what_was_set() -> None:
    update = seed_v2.SessionUpdateToolCallUpdate(
        tool_call_id="c", status=seed_v2.ToolCallStatus.COMPLETED, title=None
    )
    assert encode(update) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "status": "completed",
        "title": None,
    }


def test_unknown_fields_are_kept_and_re_emitted_at_every_level() -> None:
    data = {
        "sessionId": "s",
        "prompt": [{"type": "text", "text": "hi", "x-editor": {"cursor": 3}}],
        "_acme": True,
    }
    value = round_trip(seed_v2.PromptRequest, data)
    assert value.extra == {"_acme": True}
    assert value.prompt[0].extra == {"x-editor": {"cursor": 3}}


def test_meta_is_an_open_object() -> None:
    meta = {"a": {"b": [1, 2, {"c": None}]}, "traceparent": "00-1"}
    value = round_trip(seed_v2.CancelSessionNotification, {"sessionId": "s", "_meta": meta})
    assert value.meta == meta


# -- leniency ------------------------------------------------------------------------------------
def test_default_on_error_decodes_an_invalid_optional_value_as_omitted() -> None:
    value = decode(
        seed_v2.ToolCallUpdate,
        {"toolCallId": "c", "kind": 5, "title": ["x"], "status": "in_progress"},
    )
    assert value.kind is UNSET and value.title is UNSET
    assert encode(value) == {"toolCallId": "c", "status": "in_progress"}


def test_skip_invalid_items_drops_bad_items_in_order() -> None:
    good1 = {"type": "content", "content": {"type": "text", "text": "1"}}
    bad = {"type": "content"}
    good2 = {"type": "terminal", "terminalId": "t"}
    value = decode(seed_v2.ToolCallUpdate, {"toolCallId": "c", "content": [good1, bad, 3, good2]})
    assert encode(value)["content"] == [good1, good2]


def test_required_lenient_list_missing_is_an_error_but_garbage_is_empty() -> None:
    assert error_of(seed_v2.PlanItems, {"planId": "p"}).path == "$.entries"
    assert decode(seed_v2.PlanItems, {"planId": "p", "entries": "oops"}).entries == []
    kept = decode(
        seed_v2.PlanItems,
        {"planId": "p", "entries": [{"content": "a", "priority": "high", "status": "pending"}, {}]},
    )
    assert len(kept.entries) == 1


def test_skip_items_without_default_still_needs_a_list() -> None:
    assert (
        decode(
            seed_v2.Diff, {"changes": [{"operation": "add", "path": "/a"}, {"operation": "add"}]}
        )
        .changes[0]
        .path
        == "/a"
    )
    err = error_of(seed_v2.Diff, {"changes": {"operation": "add"}})
    assert (err.path, err.reason) == ("$.changes", "expected a list, got an object")


def test_required_fields_still_fail() -> None:
    assert error_of(seed_v2.ToolCallUpdate, {"title": "t"}).reason == "missing required field"


# -- errors --------------------------------------------------------------------------------------
def test_error_path_through_lists_and_unions() -> None:
    data = {
        "sessionId": "s",
        "prompt": [
            {"type": "text", "text": "a"},
            {"type": "text", "text": "b"},
            {"type": "text", "text": 5},
        ],
    }
    err = error_of(seed_v2.PromptRequest, data)
    assert err.path == "$.prompt[2].text"
    assert str(err) == "$.prompt[2].text: expected a string, got an integer"
    assert isinstance(err, ValueError)


@pytest.mark.parametrize(
    ("data", "path", "reason"),
    [
        ([], "$", "expected an object, got a list"),
        ({"sessionUpdate": "usage_update", "used": True, "size": 1}, "$.used", "got a boolean"),
        ({"sessionUpdate": "usage_update", "used": 1.0, "size": 1}, "$.used", "got a number"),
        ({"sessionUpdate": "usage_update", "used": -1, "size": 1}, "$.used", "got an integer"),
        ({"sessionUpdate": "usage_update", "used": 2**64, "size": 1}, "$.used", "got an integer"),
        (
            {"sessionUpdate": "usage_update", "used": 1, "size": 1, 7: "x"},
            "$",
            "object keys must be strings, got an integer",
        ),
        (
            {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": 5, "entries": []}},
            "$.plan.planId",
            "expected a string, got an integer",
        ),
    ],
)
def test_bad_values_raise_decode_error_with_path(data: Any, path: str, reason: str) -> None:
    err = error_of(seed_v2.SessionUpdate, data)
    assert err.path == path
    assert err.reason.endswith(reason)


def test_deeply_nested_and_huge_inputs_only_raise_decode_error() -> None:
    deep: Any = "x"
    for _ in range(100_000):
        deep = [deep]
    assert error_of(seed_v2.SessionUpdate, deep).reason == "expected an object, got a list"
    meta: Any = {}
    cursor = meta
    for _ in range(5_000):
        cursor["k"] = {}
        cursor = cursor["k"]
    value = decode(seed_v2.CancelSessionNotification, {"sessionId": "s", "_meta": meta})
    assert value.meta is meta
    huge = error_of(seed_v2.RequestId, 10**400)
    assert (
        huge.reason
        == "expected an integer from -9223372036854775808 to 9223372036854775807, got an integer"
    )


def test_non_json_python_values_are_refused() -> None:
    assert (
        error_of(
            seed_v2.SessionUpdate, {"sessionUpdate": "usage_update", "used": {1}, "size": 1}
        ).reason
        == "expected an integer from 0 to 18446744073709551615, got a non-JSON set"
    )


def test_decode_of_a_foreign_type_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        decode(int, 1)


def test_encode_gives_plain_json_types() -> None:
    value = decode(
        seed_v2.SessionUpdate,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c",
            "status": "completed",
            "kind": "read",
        },
    )
    assert value.status is seed_v2.ToolCallStatus.COMPLETED
    out = encode(value)
    assert [type(v) for v in out.values()] == [str, str, str, str]
    error = encode(decode(seed_v2.Error, {"code": -32601, "message": "m"}))
    assert type(error["code"]) is int
