"""Every JSON example of the v2 prompt-lifecycle page (../shared/seed, read in place) decodes by
its method's params or result type to the expected classes and values, and encodes back to the
same JSON, byte for byte once keys are sorted.

The page is the seed's, written against schema-v2.0.0-alpha.3: the package under test is
alpha.3's v2 lane generated from the pins (tests/support/lanes.py). The last test says what the
committed default lane (npm-sdk-2.4.0) makes of the same page."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp_kit import v2 as acp_v2

from tests.support.lanes import seed_lane

acp = seed_lane("v2")
UNSET = acp.UNSET

SEED = Path(__file__).resolve().parents[3] / "shared" / "seed"
SESSION = "sess_abc123def456"


def seed_examples() -> list[dict[str, Any]]:
    """The JSON objects of the page: each starts with a line `{` and ends with a line `}`."""
    examples: list[dict[str, Any]] = []
    for page in sorted(SEED.glob("*.txt")):
        block: list[str] | None = None
        for line in page.read_text(encoding="utf-8").splitlines():
            if block is None and line == "{":
                block = [line]
            elif block is not None:
                block.append(line)
                if line == "}":
                    examples.append(json.loads("\n".join(block)))
                    block = None
        assert block is None, f"unterminated example in {page}"
    return examples


def typed_payload(message: dict[str, Any]) -> tuple[Any, Any]:
    """(type, payload) of a message: params by its method; the `{}` result is a PromptResponse."""
    if "method" in message:
        return acp.METHODS[message["method"]].params, message["params"]
    return acp.PromptResponse, message["result"]


def sorted_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def update(note: Any, cls: type, tag: str) -> Any:
    assert type(note) is acp.UpdateSessionNotification and note.session_id == SESSION
    assert type(note.update) is cls and cls.TAG == tag
    return note.update


def text_block(block: Any, text: str) -> None:
    assert type(block) is acp.ContentBlockText and block.text == text


def check_prompt(v: Any) -> None:
    assert type(v) is acp.PromptRequest and v.session_id == SESSION
    first, second = v.prompt
    text_block(first, "Can you analyze this code for potential issues?")
    assert (
        type(second) is acp.ContentBlockResource
        and type(second.resource) is acp.TextResourceContents
    )
    assert second.resource.uri == "file:///home/user/project/main.py"
    assert second.resource.mime_type == "text/x-python"
    assert second.resource.text.startswith("def process_data(items):\n")


def check_accepted(v: Any) -> None:
    assert type(v) is acp.PromptResponse and v.meta is UNSET and v.extra == {}


def check_user_message(v: Any) -> None:
    u = update(v, acp.SessionUpdateUserMessage, "user_message")
    assert u.message_id == "msg_user_8f7a1"
    [block] = u.content
    text_block(block, "Can you analyze this code for potential issues?")


def check_running(v: Any) -> None:
    u = update(v, acp.SessionUpdateStateUpdateRunning, "state_update")
    assert u.TAGS == {"sessionUpdate": "state_update", "state": "running"}
    assert (u.meta, u.extra) == (UNSET, {})


def check_plan(v: Any) -> None:
    plan = update(v, acp.SessionUpdatePlanUpdate, "plan_update").plan
    assert type(plan) is acp.PlanUpdateContentItems and plan.plan_id == "plan-1"
    assert all(type(e) is acp.PlanEntry for e in plan.entries)
    assert [e.priority for e in plan.entries] == [
        acp.PlanEntryPriority.HIGH,
        acp.PlanEntryPriority.MEDIUM,
        acp.PlanEntryPriority.MEDIUM,
        acp.PlanEntryPriority.LOW,
    ]
    assert {e.status for e in plan.entries} == {acp.PlanEntryStatus.PENDING}
    assert plan.entries[0].content == "Check for syntax errors"


def check_agent_message(v: Any) -> None:
    u = update(v, acp.SessionUpdateAgentMessage, "agent_message")
    assert u.message_id == "msg_agent_c42b9"
    [block] = u.content
    text_block(block, "I'll analyze your code for potential issues. Let me examine it...")


def check_agent_chunk(v: Any) -> None:
    u = update(v, acp.SessionUpdateAgentMessageChunk, "agent_message_chunk")
    assert u.message_id == "msg_agent_c42b9"
    text_block(u.content, " Let me examine it...")  # a chunk carries one block, not a list


def check_thought(v: Any) -> None:
    u = update(v, acp.SessionUpdateAgentThought, "agent_thought")
    assert u.message_id == "msg_thought_a12"
    [block] = u.content
    text_block(block, "Need to inspect the loop body before suggesting a fix.")


def check_tool_pending(v: Any) -> None:
    u = update(v, acp.SessionUpdateToolCallUpdate, "tool_call_update")
    assert (u.tool_call_id, u.title) == ("call_001", "Analyzing Python code")
    assert (u.kind, u.status, u.content) == (acp.ToolKind.OTHER, acp.ToolCallStatus.PENDING, UNSET)


def check_usage(v: Any) -> None:
    u = update(v, acp.SessionUpdateUsageUpdate, "usage_update")
    assert (u.used, u.size) == (53000, 200000)
    assert type(u.cost) is acp.Cost and (u.cost.amount, u.cost.currency) == (0.045, "USD")


def check_idle(v: Any) -> None:
    u = update(v, acp.SessionUpdateStateUpdateIdle, "state_update")
    assert u.TAGS == {"sessionUpdate": "state_update", "state": "idle"}
    assert u.stop_reason is acp.StopReason.END_TURN  # alpha.3: the idle state's own field


def check_tool_in_progress(v: Any) -> None:
    u = update(v, acp.SessionUpdateToolCallUpdate, "tool_call_update")
    assert (u.tool_call_id, u.status) == ("call_001", acp.ToolCallStatus.IN_PROGRESS)
    assert (u.title, u.kind, u.content) == (UNSET, UNSET, UNSET)  # omitted: unchanged


def check_tool_chunk(v: Any) -> None:
    u = update(v, acp.SessionUpdateToolCallContentChunk, "tool_call_content_chunk")
    assert u.tool_call_id == "call_001"
    assert type(u.content) is acp.ToolCallContentContent
    text_block(u.content.content, "Checked syntax...")


def check_tool_completed(v: Any) -> None:
    u = update(v, acp.SessionUpdateToolCallUpdate, "tool_call_update")
    assert u.status == acp.ToolCallStatus.COMPLETED
    [item] = u.content
    assert type(item) is acp.ToolCallContentContent
    assert type(item.content) is acp.ContentBlockText
    assert item.content.text.startswith("Analysis complete:\n- No syntax errors found\n")


def check_cancel(v: Any) -> None:
    assert type(v) is acp.CancelSessionNotification
    assert (v.session_id, v.meta, v.extra) == (SESSION, UNSET, {})


# In the page's order: (what the message is, its check).
EXPECTED: list[tuple[str, Callable[[Any], None]]] = [
    ("session/prompt", check_prompt),
    ("result", check_accepted),
    ("session/update", check_user_message),
    ("session/update", check_running),
    ("session/update", check_plan),
    ("session/update", check_agent_message),
    ("session/update", check_agent_chunk),
    ("session/update", check_thought),
    ("session/update", check_tool_pending),
    ("session/update", check_usage),
    ("session/update", check_idle),
    ("session/update", check_tool_in_progress),
    ("session/update", check_tool_chunk),
    ("session/update", check_tool_completed),
    ("session/cancel", check_cancel),
]


@pytest.fixture(scope="module")
def examples() -> list[dict[str, Any]]:
    if not SEED.is_dir():
        pytest.skip(f"no seed pages at {SEED}")
    return seed_examples()


def test_every_example_of_the_page_is_checked(examples: list[dict[str, Any]]) -> None:
    assert [m.get("method", "result") for m in examples] == [what for what, _ in EXPECTED]


@pytest.mark.parametrize(("index", "check"), [(i, c) for i, (_, c) in enumerate(EXPECTED)])
def test_example_decodes_to_the_expected_values_and_encodes_back(
    examples: list[dict[str, Any]], index: int, check: Callable[[Any], None]
) -> None:
    tp, payload = typed_payload(examples[index])
    value = acp.decode(tp, payload)
    check(value)
    assert sorted_json(acp.encode(value)) == sorted_json(payload)


def test_methods_of_the_page_have_their_side_and_kind() -> None:
    prompt, update_, cancel = (
        acp.METHODS[m] for m in ("session/prompt", "session/update", "session/cancel")
    )
    assert (prompt.side, prompt.kind, prompt.result) == ("agent", "request", acp.PromptResponse)
    assert (update_.side, update_.kind, update_.result) == ("client", "notification", None)
    assert (cancel.side, cancel.kind, cancel.params) == (
        "agent",
        "notification",
        acp.CancelSessionNotification,
    )


def test_the_package_is_alpha_3() -> None:
    assert acp.SCHEMA_REF == "schema-v2.0.0-alpha.3"


def test_the_default_lane_refuses_only_the_seeds_empty_prompt_response(
    examples: list[dict[str, Any]],
) -> None:
    """npm-sdk-2.4.0 requires `PromptResponse.messageId`; every other example of the page is
    valid there too and round-trips, the idle stop reason now a class of its own."""
    assert acp_v2.SCHEMA_REF == "npm-sdk-2.4.0"
    for message in examples:
        if "method" not in message:
            with pytest.raises(acp_v2.DecodeError) as caught:
                acp_v2.decode(acp_v2.PromptResponse, message["result"])
            assert str(caught.value) == "$.messageId: missing required field"
            continue
        payload = message["params"]
        value = acp_v2.decode(acp_v2.METHODS[message["method"]].params, payload)
        assert sorted_json(acp_v2.encode(value)) == sorted_json(payload)
    idle = acp_v2.decode(acp_v2.UpdateSessionNotification, examples[10]["params"]).update
    assert type(idle) is acp_v2.SessionUpdateStateUpdateIdleEndTurn  # the reason is a class now
    assert idle.TAGS == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
