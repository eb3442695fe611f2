"""Each difference listed in interop/DIFFERENCES.md, shown on one hand-written value per side.

These pin down what the entries say. A `gap` or `pending` test that starts failing means the
generator got it right: delete the test, the rule in tests/support/differences.py and the
entry in DIFFERENCES.md.
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
    """Our decode then encode, extras included."""
    pkg = lanes[lane].package
    return pkg.encode(pkg.decode(lanes[lane].py_type(type_name), value))


def decode_error(lanes: dict[str, Lane], type_name: str, value: Any, lane: str = "v2") -> str:
    pkg = lanes[lane].package
    with pytest.raises(pkg.DecodeError) as caught:
        pkg.decode(lanes[lane].py_type(type_name), value)
    return str(caught.value)


# -- deliberate ----------------------------------------------------------------------------------
def test_uri_format(check: Any) -> None:
    mine, sdk = check("ResourceLink", {"name": "a", "uri": "not a url"})
    assert mine.data == {"name": "a", "uri": "not a url"}
    assert sdk == Rejected((Issue(("uri",), "invalid_format", "Invalid URL", "url"),))
    mine, sdk = check("ResourceLink", {"name": "a", "uri": "file:///a.py"})
    assert sdk == Accepted(mine.data)


def test_date_time_format(check: Any) -> None:
    value = {"sessionId": "s", "cwd": "/", "updatedAt": "yesterday"}
    mine, sdk = check("SessionInfo", value)
    assert mine.data == value
    assert sdk == Accepted({"sessionId": "s", "cwd": "/"})  # default-on-error drops it


def test_integral_floats(check: Any, lanes: dict[str, Lane]) -> None:
    mine, sdk = check("CancelRequestNotification", {"requestId": 1.0})
    assert mine.error == "$.requestId: expected an integer or a string, got a number"
    assert sdk == Accepted({"requestId": 1})
    assert round_trip(lanes, "CancelRequestNotification", {"requestId": 1}) == {"requestId": 1}


def test_unbounded_64_bit(check: Any) -> None:
    mine, sdk = check("UsageUpdate", {"used": 2**64, "size": 1})
    assert mine.error == (
        "$.used: expected an integer from 0 to 18446744073709551615, got an integer"
    )
    assert sdk == Accepted({"used": 18446744073709552000, "size": 1})  # as JS prints 2**64
    mine, sdk = check("UsageUpdate", {"used": 2**53 + 1, "size": 1})
    assert mine.data == {"used": 2**53 + 1, "size": 1}
    assert sdk == Accepted({"used": 2**53, "size": 1})


def test_schema_defaults(check: Any) -> None:
    value = {"protocolVersion": 2, "info": {"name": "n", "version": "1"}}
    mine, sdk = check("InitializeResponse", value)
    assert mine.data == value
    assert sdk == Accepted({**value, "capabilities": {}})
    mine, sdk = check("AgentCapabilities", {}, lane="v1")
    assert mine.data == {}
    assert sdk == Accepted(
        {
            "loadSession": False,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": False},
            "mcpCapabilities": {"http": False, "sse": False},
            "sessionCapabilities": {},
            "auth": {},
        }
    )


def test_empty_list_fallback(check: Any) -> None:
    mine, sdk = check("NewSessionResponse", {"sessionId": "s", "availableCommands": 5})
    assert mine.data == {"sessionId": "s"}
    assert sdk == Accepted({"sessionId": "s", "availableCommands": []})


def test_unknown_keys_are_kept_here_and_stripped_there(check: Any, lanes: dict[str, Lane]) -> None:
    # Not a listed difference: the comparison removes the keys the SDK strips.
    value = {"sessionId": "s", "messageId": "m", "vendorKey": {"a": 1}}
    assert round_trip(lanes, "PromptResponse", value) == value
    mine, sdk = check("PromptResponse", value)
    assert mine.data == sdk.data == {"messageId": "m"}
