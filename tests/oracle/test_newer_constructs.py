"""Held-out decode cases for the constructs of the newer drafts (issue 12 item 3), on packages
generated from the pinned npm-sdk-2.4.0 schemas, each cross-checked with the SDK's validators:
round trips, lenient cases, and must-error cases with the exact DecodeError path and reason.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.differential import Lane, ours
from tests.support.zod_oracle import Accepted, Issue, Rejected, SdkAnswer, ZodOracle


@pytest.fixture
def check(lanes: dict[str, Lane], zod_oracle: ZodOracle) -> Any:
    def run(type_name: str, value: Any, lane: str = "v2") -> tuple[Any, SdkAnswer]:
        (sdk,) = zod_oracle.check(lane, [(type_name, value)])
        return ours(lanes[lane], type_name, value), sdk

    return run


def round_trip(lanes: dict[str, Lane], type_name: str, value: Any, lane: str = "v2") -> Any:
    pkg = lanes[lane].package
    return pkg.encode(pkg.decode(lanes[lane].py_type(type_name), value))


# -- minLength -----------------------------------------------------------------------------------
@pytest.mark.parametrize("lane", ["v1", "v2"])
def test_min_length_rejects_an_empty_title(check: Any, lane: str) -> None:
    mine, sdk = check("Notice", {"severity": "info", "title": ""}, lane)
    assert mine.error == "$.title: expected at least 1 character(s)"
    assert sdk == Rejected(
        (Issue(("title",), "too_small", "Too small: expected string to have >=1 characters"),)
    )
    mine, sdk = check("Notice", {"severity": "info", "title": "T"}, lane)
    assert mine.data == {"severity": "info", "title": "T"}
    assert sdk == Accepted(mine.data)


def test_min_length_in_a_session_update(lanes: dict[str, Lane]) -> None:
    pkg = lanes["v2"].package
    value = {"sessionUpdate": "notice", "severity": "warning", "title": ""}
    with pytest.raises(pkg.DecodeError) as caught:
        pkg.decode(pkg.SessionUpdate, value)
    assert str(caught.value) == "$.title: expected at least 1 character(s)"
    ok = {**value, "title": "Rate limited"}
    assert round_trip(lanes, "SessionUpdate", ok) == ok


# -- int32 / int64 / uint64 bounds ---------------------------------------------------------------
@pytest.mark.parametrize("lane", ["v1", "v2"])
def test_open_error_code_stays_within_int32(check: Any, lane: str) -> None:
    mine, sdk = check("Error", {"code": 2**31, "message": "m"}, lane)
    assert (
        mine.error == "$.code: expected an integer from -2147483648 to 2147483647, got an integer"
    )
    assert sdk == Rejected(
        (Issue(("code",), "too_big", "Invalid value: Expected int32 to be <= 2147483647"),)
    )
    for code in (-(2**31), 2**31 - 1, -32002, 7):
        mine, sdk = check("Error", {"code": code, "message": "m"}, lane)
        assert mine.data == {"code": code, "message": "m"}
        assert sdk == Accepted(mine.data)
    mine, sdk = check("Error", {"code": True, "message": "m"}, lane)
    assert mine.error == "$.code: expected an integer from -2147483648 to 2147483647, got a boolean"
    assert isinstance(sdk, Rejected)


def test_64_bit_bounds_and_booleans(check: Any) -> None:
    for used in (0, 2**53 - 1):
        mine, sdk = check("UsageUpdate", {"used": used, "size": 1})
        assert mine.data == {"used": used, "size": 1}
        assert sdk == Accepted(mine.data)
    for used, got in ((-1, "an integer"), (True, "a boolean"), (1.5, "a number")):
        mine, sdk = check("UsageUpdate", {"used": used, "size": 1})
        assert (
            mine.error == f"$.used: expected an integer from 0 to 18446744073709551615, got {got}"
        )
        assert isinstance(sdk, Rejected)


# -- untagged unions with a catch-all: order decides ---------------------------------------------
def test_error_data_order_decides(check: Any, lanes: dict[str, Lane]) -> None:
    pkg = lanes["v2"].package
    typed = {"requested": 3, "supported": [2]}
    decoded = pkg.decode(lanes["v2"].py_type("ErrorData"), typed)
    assert type(decoded).__name__ == "UnsupportedProtocolVersionErrorData"
    assert round_trip(lanes, "ErrorData", typed) == typed
    session = pkg.decode(lanes["v2"].py_type("ErrorData"), {"sessionId": "s"})
    assert type(session).__name__ == "SessionNotFoundErrorData"
    # What fails every typed branch falls to the empty catch-all, kept as it is.
    for raw in ({"detail": "x"}, {"sessionId": 5}, {"requested": "x", "supported": 1}, 7, None):
        mine, sdk = check("ErrorData", raw)
        assert mine.data == raw
        assert sdk == Accepted(raw)
        assert pkg.decode(lanes["v2"].py_type("ErrorData"), raw) == raw
    value = {"code": -32002, "message": "m", "data": {"sessionId": 5}}
    mine, sdk = check("Error", value)
    assert mine.data == value
    assert sdk == Accepted(value)
    error = pkg.decode(pkg.Error, {"code": -32002, "message": "m", "data": {"sessionId": "s"}})
    assert type(error.data).__name__ == "SessionNotFoundErrorData"


def test_elicitation_content_value_catch_all(check: Any) -> None:
    for raw in ([1, 2], {"a": 1}, None, 2**63, ["a", None]):
        mine, sdk = check("ElicitationContentValue", raw)
        assert mine.data == raw
        assert isinstance(sdk, Accepted)
    for raw in ("a", 1, 1.5, True, ["a", "b"]):
        mine, sdk = check("ElicitationContentValue", raw)
        assert mine.data == raw
        assert sdk == Accepted(raw)


# -- tagged unions with a tag-less branch (v1) ---------------------------------------------------
def test_tag_less_branch_takes_what_the_tagged_variant_rejects(check: Any) -> None:
    broken = {"type": "terminal", "id": "a", "name": "b", "env": 1}
    mine, sdk = check("AuthMethod", broken, lane="v1")
    assert mine.data == {"id": "a", "name": "b"}  # AuthMethodAgent, `type` and `env` extra
    assert sdk == Accepted(mine.data)
    mine, sdk = check("AuthMethod", {"type": True, "id": "a", "name": "b"}, lane="v1")
    assert mine.data == {"id": "a", "name": "b"}
    assert sdk == Accepted(mine.data)
    terminal = {"type": "terminal", "id": "a", "name": "b", "env": {"K": "v"}}
    mine, sdk = check("AuthMethod", terminal, lane="v1")
    assert mine.data == terminal and sdk == Accepted(terminal)


def test_tag_less_branch_failing_too_reports_the_variant(
    check: Any, lanes: dict[str, Lane]
) -> None:
    pkg = lanes["v1"].package
    value = {"type": "terminal", "id": "a", "env": 1}  # no `name`: neither branch takes it
    mine, sdk = check("AuthMethod", value, lane="v1")
    assert mine.error == "$.name: missing required field"  # the terminal variant's error
    assert isinstance(sdk, Rejected)
    decoded = pkg.decode(lanes["v1"].py_type("AuthMethod"), broken := {"id": "a", "name": "b"})
    assert type(decoded).__name__ == "AuthMethodAgent"
    assert pkg.encode(decoded) == broken


# -- x-deserialize-default-on-null ---------------------------------------------------------------
def test_default_on_null_gives_the_empty_value(check: Any, lanes: dict[str, Lane]) -> None:
    mine, sdk = check("McpServerStdio", {"name": "m", "command": "c", "args": None, "env": None})
    assert mine.data == {"name": "m", "command": "c", "args": [], "env": []}
    assert sdk == Accepted(mine.data)
    mine, sdk = check("NewSessionRequest", {"cwd": "/w", "mcpServers": None})
    assert mine.data == {"cwd": "/w", "mcpServers": []}
    assert sdk == Accepted(mine.data)
    # Missing stays missing; a wrong type is still an error.
    assert round_trip(lanes, "NewSessionRequest", {"cwd": "/w"}) == {"cwd": "/w"}
    mine, sdk = check("NewSessionRequest", {"cwd": "/w", "mcpServers": 5})
    assert mine.error == "$.mcpServers: expected a list, got an integer"
    assert isinstance(sdk, Rejected)


# -- required fields with x-deserialize-default-on-error -----------------------------------------
def test_required_default_on_error_falls_back_but_missing_fails(check: Any) -> None:
    mine, sdk = check("ListSessionsResponse", {"sessions": 5})
    assert mine.data == {"sessions": []}
    assert sdk == Accepted(mine.data)
    mine, sdk = check("ListSessionsResponse", {})
    assert mine.error == "$.sessions: missing required field"
    assert isinstance(sdk, Rejected)


# -- RequestId without null ----------------------------------------------------------------------
def test_request_id_has_no_null(check: Any) -> None:
    mine, sdk = check("CancelRequestNotification", {"requestId": None})
    assert mine.error == "$.requestId: expected an integer or a string, got null"
    assert isinstance(sdk, Rejected)
    for rid in (0, "r-1", -(2**53 - 1)):
        mine, sdk = check("CancelRequestNotification", {"requestId": rid})
        assert mine.data == {"requestId": rid} and sdk == Accepted(mine.data)


# -- AvailableCommand as a tagged union, new enum values -----------------------------------------
def test_available_command_is_a_tagged_union(check: Any, lanes: dict[str, Lane]) -> None:
    pkg = lanes["v2"].package
    command = {"type": "command", "name": "plan", "description": "Plan it"}
    decoded = pkg.decode(lanes["v2"].py_type("AvailableCommand"), command)
    assert type(decoded).__name__ == "AvailableCommandCommand"
    mine, sdk = check("AvailableCommand", command)
    assert mine.data == command and sdk == Accepted(command)
    custom = {"type": "_macro", "name": "m", "description": "d", "steps": [1]}
    assert round_trip(lanes, "AvailableCommand", custom) == custom  # the payload kept whole
    mine, sdk = check("AvailableCommand", custom)
    assert mine.data == custom and sdk == Accepted(custom)
    mine, sdk = check("AvailableCommand", {"type": "command", "name": "plan"})
    assert mine.error == "$.description: missing required field"
    assert isinstance(sdk, Rejected)
    mine, sdk = check("AvailableCommand", {"name": "plan", "description": "d"})
    assert mine.error == "$.type: missing tag"
    assert isinstance(sdk, Rejected)


def test_paused_tool_call_status(check: Any, lanes: dict[str, Lane]) -> None:
    pkg = lanes["v2"].package
    assert pkg.decode(lanes["v2"].py_type("ToolCallStatus"), "paused").value == "paused"
    mine, sdk = check("ToolCallStatus", "paused")
    assert mine.data == "paused" and sdk == Accepted("paused")
    mine, sdk = check("ToolCallStatus", "sleeping")  # an open enum: kept as it is
    assert mine.data == "sleeping" and sdk == Accepted("sleeping")
    mine, sdk = check("ToolCallStatus", 3)
    assert mine.error == "$: expected a string, got an integer"
    assert isinstance(sdk, Rejected)


# -- nested tagged unions: SessionUpdate → StateUpdate (`state`) → IdleStateUpdate (`stopReason`)
def cls_of(lanes: dict[str, Lane], type_name: str, value: Any) -> str:
    pkg = lanes["v2"].package
    return type(pkg.decode(lanes["v2"].py_type(type_name), value)).__name__


NESTED_AGREED = [
    # (type, input, what both sides give, our class)
    (
        "SessionUpdate",
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "refusal"},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "refusal"},
        "SessionUpdateStateUpdateIdleRefusal",
    ),
    (  # another state's fields are not this state's: dropped on both sides
        "SessionUpdate",
        {"sessionUpdate": "state_update", "state": "running", "stopReason": "x"},
        {"sessionUpdate": "state_update", "state": "running"},
        "SessionUpdateStateUpdateRunning",
    ),
    (  # a custom state keeps its whole payload, unvalidated
        "SessionUpdate",
        {"sessionUpdate": "state_update", "state": "_x", "error": {"code": 1, "k": 1}},
        {"sessionUpdate": "state_update", "state": "_x", "error": {"code": 1, "k": 1}},
        "SessionUpdateStateUpdateOther",
    ),
    (  # `error` belongs to the error reason only
        "IdleStateUpdate",
        {"stopReason": "end_turn", "error": None},
        {"stopReason": "end_turn"},
        "IdleStateUpdateEndTurn",
    ),
    (  # a custom reason keeps its payload
        "IdleStateUpdate",
        {"stopReason": "_paused", "note": 1},
        {"stopReason": "_paused", "note": 1},
        "IdleStateUpdateOther",
    ),
    (  # a malformed reason is dropped before the variant is chosen: `none`
        "IdleStateUpdate",
        {"stopReason": 5, "background": []},
        {"background": []},
        "IdleStateUpdateNone",
    ),
    ("IdleStateUpdate", {"stopReason": None}, {"stopReason": None}, "IdleStateUpdateNone"),
    ("IdleStateUpdate", {}, {}, "IdleStateUpdateNone"),
    (  # the error variant's own field is lenient
        "IdleStateUpdate",
        {"stopReason": "error", "error": 42},
        {"stopReason": "error"},
        "IdleStateUpdateError",
    ),
    (  # standalone StateUpdate: the same three levels, without `sessionUpdate`
        "StateUpdate",
        {"state": "idle", "stopReason": "_z", "k": [1]},
        {"state": "idle", "stopReason": "_z", "k": [1]},
        "StateUpdateIdleOther",
    ),
    # MultiSelectItems: a catch-all and a tag-less branch in one union on `type`
    (
        "MultiSelectItems",
        {"type": "string", "enum": ["a"]},
        {"type": "string", "enum": ["a"]},
        "MultiSelectItemsString",
    ),
    ("MultiSelectItems", {"type": "_x", "q": 1}, {"type": "_x", "q": 1}, "MultiSelectItemsOther"),
    (  # the string branch rejects it (no `enum`), the tag-less one takes it
        "MultiSelectItems",
        {"type": "string", "anyOf": [{"const": "a", "title": "A"}]},
        {"anyOf": [{"const": "a", "title": "A"}]},
        "MultiSelectItemsTitled",
    ),
    (
        "MultiSelectItems",
        {"type": 5, "anyOf": [{"const": "a", "title": "A"}]},
        {"anyOf": [{"const": "a", "title": "A"}]},
        "MultiSelectItemsTitled",
    ),
]


@pytest.mark.parametrize(("type_name", "value", "agreed", "cls"), NESTED_AGREED)
def test_nested_and_mixed_unions_agree_with_the_sdk(
    check: Any, lanes: dict[str, Lane], type_name: str, value: Any, agreed: Any, cls: str
) -> None:
    mine, sdk = check(type_name, value)
    assert mine.data == agreed
    assert sdk == Accepted(agreed)
    assert cls_of(lanes, type_name, value) == cls
    # back exactly as it came (unknown keys kept), or as both sides read it where leniency drops
    back = round_trip(lanes, type_name, value)
    assert back in (value, agreed)


@pytest.mark.parametrize(
    ("type_name", "value", "error"),
    [
        ("SessionUpdate", {"sessionUpdate": "state_update"}, "$.state: missing tag"),
        (
            "SessionUpdate",
            {"sessionUpdate": "state_update", "state": 3},
            "$.state: expected a string tag, got an integer",
        ),
        ("MultiSelectItems", {"enum": ["a"]}, "$.anyOf: missing required field"),
        ("MultiSelectItems", {"type": "string"}, "$.enum: missing required field"),
    ],
)
def test_nested_and_mixed_unions_reject_with_the_sdk(
    check: Any, type_name: str, value: Any, error: str
) -> None:
    mine, sdk = check(type_name, value)
    assert mine.error == error
    assert isinstance(sdk, Rejected)


def test_a_nested_class_checks_every_tag_it_carries(lanes: dict[str, Lane]) -> None:
    pkg = lanes["v2"].package
    cls = pkg.SessionUpdateStateUpdateIdleCancelled
    assert cls().to_json() == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "cancelled",
    }
    with pytest.raises(pkg.DecodeError) as caught:
        pkg.decode(cls, {"sessionUpdate": "state_update", "state": "idle", "stopReason": "x"})
    assert str(caught.value) == '$.stopReason: expected tag "cancelled", got "x"'
    with pytest.raises(pkg.DecodeError) as caught:
        pkg.decode(pkg.SessionUpdateStateUpdateIdle, {"sessionUpdate": "state_update"})
    assert str(caught.value).startswith("$.state: ")
    value = pkg.decode(
        pkg.SessionUpdateStateUpdate, {"sessionUpdate": "state_update", "state": "idle"}
    )
    assert isinstance(value, pkg.SessionUpdateStateUpdateIdleNone)
    assert isinstance(value, pkg.SessionUpdateStateUpdateIdle)
    assert isinstance(value, pkg.SessionUpdate)


# -- exclusive alternatives: the elicitation scopes ----------------------------------------------
URL_MODE = {"elicitationId": "e", "url": "https://example.com/"}


def test_elicitation_needs_exactly_one_scope_in_v2(check: Any) -> None:
    message = "Expected exactly one of `sessionId` or `requestId`, found {}"
    mine, sdk = check("ElicitationUrlMode", URL_MODE)
    assert mine.error == "$: expected exactly one of `sessionId` or `requestId`, found none"
    assert sdk == Rejected((Issue((), "custom", message.format(0)),))
    mine, sdk = check("ElicitationUrlMode", {**URL_MODE, "sessionId": "s", "requestId": 1})
    assert mine.error == "$: expected exactly one of `sessionId` or `requestId`, found 2"
    assert sdk == Rejected((Issue((), "custom", message.format(2)),))
    mine, sdk = check("ElicitationUrlMode", {**URL_MODE, "sessionId": 5})
    assert mine.error == "$.sessionId: expected a string, got an integer"
    assert isinstance(sdk, Rejected) and sdk.issues[0].path == ("sessionId",)


def test_the_other_scopes_keys_are_extra_and_round_trip(check: Any, lanes: dict[str, Lane]) -> None:
    # toolCallId belongs to the session scope only: the SDK strips it from a request scope
    value = {**URL_MODE, "requestId": 1, "toolCallId": "t"}
    mine, sdk = check("ElicitationUrlMode", value)
    assert mine.data == sdk.data == {**URL_MODE, "requestId": 1}
    assert round_trip(lanes, "ElicitationUrlMode", value) == value
    pkg = lanes["v2"].package
    decoded = pkg.ElicitationUrlMode.from_json(value)
    assert decoded.scope == pkg.ElicitationRequestScope(request_id=1)
    assert decoded.extra == {"toolCallId": "t"}


def test_a_custom_elicitation_mode_needs_a_scope_too(check: Any, lanes: dict[str, Lane]) -> None:
    value = {"mode": "_x", "message": "m", "sessionId": "s", "vendor": [1]}
    mine, sdk = check("CreateElicitationRequest", value)
    assert sdk == Accepted(mine.data) and mine.data == value  # the custom payload kept whole
    assert round_trip(lanes, "CreateElicitationRequest", value) == value
    mine, sdk = check("CreateElicitationRequest", {"mode": "_x", "message": "m"})
    assert mine.error == "$: expected exactly one of `sessionId` or `requestId`, found none"
    assert isinstance(sdk, Rejected)


def test_v1_scopes_are_any_of_the_first_that_decodes_wins(
    check: Any, lanes: dict[str, Lane]
) -> None:
    both = {**URL_MODE, "sessionId": "s", "requestId": 1}
    mine, sdk = check("ElicitationUrlMode", both, "v1")
    assert mine.data == sdk.data == {**URL_MODE, "sessionId": "s"}
    assert round_trip(lanes, "ElicitationUrlMode", both, "v1") == both  # requestId kept as extra
    mine, sdk = check("ElicitationUrlMode", {**URL_MODE, "sessionId": 5, "requestId": 1}, "v1")
    assert mine.data == sdk.data == {**URL_MODE, "requestId": 1}
    mine, sdk = check("ElicitationUrlMode", URL_MODE, "v1")
    assert mine.error == "$: expected one of `sessionId` or `requestId`, found none"
    assert isinstance(sdk, Rejected)


# -- the JSON-RPC envelopes ----------------------------------------------------------------------
def test_envelope_response_branches_are_classes(check: Any, lanes: dict[str, Lane]) -> None:
    pkg = lanes["v2"].package
    mine, sdk = check("AgentResponse", {"id": None, "result": {}})  # RequestId has no null
    assert mine.error == "$.id: expected an integer or a string, got null"
    assert isinstance(sdk, Rejected)
    value = {"id": 1, "result": {"messageId": "m"}, "vendorKey": 1}
    mine, sdk = check("AgentResponse", value)
    # the untyped envelope cannot know the method: the first result type that decodes takes
    # it, here `LoginAuthResponse` (all optional), on both sides; unknown keys stripped there
    assert mine.data == sdk.data == {"id": 1, "result": {}}
    assert round_trip(lanes, "AgentResponse", value) == value
    decoded = pkg.decode(pkg.AgentResponse, value)
    assert type(decoded) is pkg.AgentResponseResult and decoded.extra == {"vendorKey": 1}
    assert decoded.result == pkg.LoginAuthResponse(extra={"messageId": "m"})
    error = {"id": None, "error": {"code": -32600, "message": "Invalid request"}}
    mine, sdk = check("AgentResponse", error)
    assert mine.data == sdk.data == error
    assert type(pkg.decode(pkg.AgentResponse, error)) is pkg.AgentResponseError
    mine, sdk = check("AgentResponse", {"id": True, "error": error["error"]})
    assert mine.error == (
        "$.id: expected an integer from -9223372036854775808 to 9223372036854775807"
        " or a string, got a boolean"
    )
    assert isinstance(sdk, Rejected)


def test_envelope_params_are_the_first_alternative_that_decodes(
    check: Any, lanes: dict[str, Lane]
) -> None:
    pkg = lanes["v2"].package
    params = {"sessionId": "s", "vendor": 1}
    value = {"method": "session/cancel", "params": params}
    mine, sdk = check("ClientNotification", value)
    assert mine.data == sdk.data == {"method": "session/cancel", "params": {"sessionId": "s"}}
    decoded = pkg.ClientNotification.from_json(value)
    assert decoded.params == pkg.CancelSessionNotification(session_id="s", extra={"vendor": 1})
    assert decoded.to_json() == value
    raw = {"method": "_x", "params": [1, "two"]}  # ExtNotification: any value, kept as it is
    mine, sdk = check("ClientNotification", raw)
    assert mine.data == sdk.data == raw
