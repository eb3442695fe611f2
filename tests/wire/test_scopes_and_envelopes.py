"""The committed default lanes (npm-sdk-2.4.0): elicitation scopes as one flattened `scope`
field, and the JSON-RPC envelopes' inline branches and inline unions as real classes."""

from __future__ import annotations

from typing import Any

import pytest
from acp_kit import v1 as acp_v1
from acp_kit import v2 as acp_v2

SCHEMA = {"type": "object", "properties": {}}
FORM = {"mode": "form", "message": "Sign in", "requestedSchema": SCHEMA}


def error_of(pkg: Any, tp: Any, data: Any) -> str:
    with pytest.raises(pkg.DecodeError) as caught:
        pkg.decode(tp, data)
    return str(caught.value)


# -- scopes --------------------------------------------------------------------------------------
def test_a_session_scope_decodes_to_its_class_and_encodes_back_flat() -> None:
    data = {**FORM, "sessionId": "s1", "toolCallId": "t1", "vendor": {"k": 1}}
    form = acp_v2.decode(acp_v2.CreateElicitationRequest, data)
    assert type(form) is acp_v2.CreateElicitationRequestForm
    assert form.scope == acp_v2.ElicitationSessionScope(session_id="s1", tool_call_id="t1")
    assert form.extra == {"vendor": {"k": 1}}
    assert form.scope.extra == {}
    assert acp_v2.encode(form) == data


def test_a_request_scope_leaves_the_session_scope_s_keys_in_extra() -> None:
    data = {**FORM, "requestId": 7, "toolCallId": "t1"}
    form = acp_v2.decode(acp_v2.CreateElicitationRequest, data)
    assert form.scope == acp_v2.ElicitationRequestScope(request_id=7)
    assert form.extra == {"toolCallId": "t1"}
    assert acp_v2.encode(form) == data


def test_built_by_hand_it_encodes_its_scope_on_the_same_object() -> None:
    url = acp_v2.ElicitationUrlMode(
        elicitation_id="e1",
        url="https://example.com/login",
        scope=acp_v2.ElicitationSessionScope(session_id="s1"),
    )
    assert url.to_json() == {
        "elicitationId": "e1",
        "url": "https://example.com/login",
        "sessionId": "s1",
    }


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (FORM, "$: expected exactly one of `sessionId` or `requestId`, found none"),
        (
            {**FORM, "sessionId": "s1", "requestId": 7},
            "$: expected exactly one of `sessionId` or `requestId`, found 2",
        ),
        ({**FORM, "sessionId": None}, "$.sessionId: expected a string, got null"),
        (
            {**FORM, "requestId": None},
            "$.requestId: expected an integer or a string, got null",
        ),
    ],
)
def test_v2_needs_exactly_one_valid_scope(data: dict[str, Any], error: str) -> None:
    assert error_of(acp_v2, acp_v2.CreateElicitationRequest, data) == error


def test_the_path_reaches_a_scope_inside_a_request() -> None:
    request = {"id": 1, "method": "elicitation/create", "params": {**FORM, "sessionId": 5}}
    # params is the first alternative that decodes: a broken elicitation is kept raw there
    assert acp_v2.decode(acp_v2.AgentRequest, request).params == request["params"]
    assert (
        error_of(acp_v2, acp_v2.CreateElicitationRequest, request["params"])
        == "$.sessionId: expected a string, got an integer"
    )


def test_v1_scopes_are_any_of_the_first_that_decodes() -> None:
    both = {**FORM, "sessionId": "s1", "requestId": 7}
    form = acp_v1.decode(acp_v1.CreateElicitationRequest, both)
    assert form.scope == acp_v1.ElicitationSessionScope(session_id="s1")
    assert form.extra == {"requestId": 7}
    assert acp_v1.encode(form) == both
    fallback = acp_v1.decode(acp_v1.CreateElicitationRequest, {**both, "sessionId": 5})
    assert fallback.scope == acp_v1.ElicitationRequestScope(request_id=7)
    assert fallback.extra == {"sessionId": 5}
    assert (
        error_of(acp_v1, acp_v1.CreateElicitationRequest, FORM)
        == "$: expected one of `sessionId` or `requestId`, found none"
    )
    assert (
        error_of(acp_v1, acp_v1.CreateElicitationRequest, {**FORM, "sessionId": 5})
        == "$.sessionId: expected a string, got an integer"
    )


# -- envelopes -----------------------------------------------------------------------------------
def test_a_response_is_its_result_or_error_class() -> None:
    ok = acp_v2.decode(acp_v2.AgentResponse, {"id": 3, "result": {"sessionId": "s1"}, "x": 1})
    assert type(ok) is acp_v2.AgentResponseResult
    assert (ok.id, ok.extra) == (3, {"x": 1})
    failed = acp_v2.decode(
        acp_v2.ClientResponse, {"id": None, "error": {"code": 1, "message": "m"}}
    )
    assert type(failed) is acp_v2.ClientResponseError
    assert failed.error == acp_v2.Error(code=1, message="m")
    assert acp_v2.encode(failed) == {"id": None, "error": {"code": 1, "message": "m"}}


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"id": None, "result": {}}, "$.id: expected an integer or a string, got null"),
        (
            {"id": 1, "error": {"code": "x", "message": "m"}},
            "$.error.code: expected an integer from -2147483648 to 2147483647, got a string",
        ),
        (
            {"id": 1},
            "$: object matches no alternative: needs the keys of one of {id, result} or"
            " {id, error}",
        ),
    ],
)
def test_a_broken_response_is_an_error_with_its_path(data: dict[str, Any], error: str) -> None:
    assert error_of(acp_v2, acp_v2.AgentResponse, data) == error


def test_params_are_the_first_alternative_that_decodes_else_raw() -> None:
    cancel = acp_v2.ClientNotification.from_json(
        {"method": "session/cancel", "params": {"sessionId": "s1"}}
    )
    assert cancel.params == acp_v2.CancelSessionNotification(session_id="s1")
    ext = acp_v2.ClientNotification.from_json({"method": "_x/ping", "params": [1]})
    assert ext.params == [1]
    built = acp_v2.ClientNotification(
        method="session/cancel", params=acp_v2.CancelSessionNotification(session_id="s1")
    )
    assert built.to_json() == {"method": "session/cancel", "params": {"sessionId": "s1"}}
    assert acp_v2.ClientNotification.from_json({"method": "m", "params": None}).params is None
