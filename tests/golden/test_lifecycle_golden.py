"""Golden test of the v2 prompt lifecycle: every JSON example of the seed spec page.

The seed was written against schema-v2.0.0-alpha.3, so the package under test is alpha.3's v2
lane generated from the pins (the `acp_v2_alpha3` fixture), not the committed default lane.
For each example (read in place from ../shared/seed): decode it by its method's type, compare
the decoded value (class and every field, as `repr`) with tests/fixtures/prompt_lifecycle.golden,
then encode it back and demand byte-identical JSON with sorted keys. Set ACP_UPDATE_GOLDEN=1
to rewrite the golden file after an intended change, and review its diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

SEED = Path(__file__).resolve().parents[3] / "shared" / "seed"
GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "prompt_lifecycle.golden"


def seed_examples() -> list[dict[str, Any]]:
    """Every top-level JSON object in the seed page, in order."""
    text = "".join(p.read_text(encoding="utf-8") for p in sorted(SEED.glob("*.txt")))
    decoder = json.JSONDecoder()
    found, pos = [], 0
    while (start := text.find("{\n", pos)) >= 0:
        value, pos = decoder.raw_decode(text, start)
        found.append(value)
    return found


def decode_message(acp: ModuleType, message: dict[str, Any]) -> tuple[str, Any, Any]:
    """(label, payload, decoded value): params by the method's type; results by the request's."""
    if "method" in message:
        info = acp.METHODS[message["method"]]
        return message["method"], message["params"], acp.decode(info.params, message["params"])
    # The seed's only response answers its session/prompt request (id 2).
    return (
        "result of session/prompt",
        message["result"],
        acp.decode(acp.PromptResponse, message["result"]),
    )


def sorted_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2)


def test_seed_has_the_whole_lifecycle() -> None:
    messages = seed_examples()
    kinds = [
        m["params"]["update"]["sessionUpdate"]
        for m in messages
        if m.get("method") == "session/update"
    ]
    assert [m.get("method") for m in messages][:2] == ["session/prompt", None]
    assert messages[-1]["method"] == "session/cancel"
    assert kinds == [
        "user_message",
        "state_update",
        "plan_update",
        "agent_message",
        "agent_message_chunk",
        "agent_thought",
        "tool_call_update",
        "usage_update",
        "state_update",
        "tool_call_update",
        "tool_call_content_chunk",
        "tool_call_update",
    ]


def test_the_package_is_alpha_3(acp_v2_alpha3: ModuleType) -> None:
    assert acp_v2_alpha3.SCHEMA_REF == "schema-v2.0.0-alpha.3"
    assert acp_v2_alpha3.__name__ == "acp_v2_alpha3.v2"  # the lane of the one-lane package


def test_lifecycle_decodes_to_the_golden_values_and_encodes_back_byte_identical(
    acp_v2_alpha3: ModuleType,
) -> None:
    lines = []
    for index, message in enumerate(seed_examples(), 1):
        label, payload, value = decode_message(acp_v2_alpha3, message)
        lines.append(f"## {index} {label}\n{value!r}\n")
        assert sorted_json(acp_v2_alpha3.encode(value)) == sorted_json(payload), label
    actual = "\n".join(lines)
    if os.environ.get("ACP_UPDATE_GOLDEN"):
        GOLDEN.write_text(actual, encoding="utf-8")
    assert actual == GOLDEN.read_text(encoding="utf-8")


def test_golden_names_the_variant_classes() -> None:
    golden = GOLDEN.read_text(encoding="utf-8")
    for cls in (
        "PromptRequest(",
        "ContentBlockText(",
        "ContentBlockResource(",
        "TextResourceContents(",
        "PromptResponse(",
        "SessionUpdateUserMessage(",
        "SessionUpdateStateUpdateRunning(",
        "SessionUpdateStateUpdateIdle(",
        "SessionUpdatePlanUpdate(",
        "PlanUpdateContentItems(",
        "PlanEntry(",
        "SessionUpdateAgentMessageChunk(",
        "SessionUpdateAgentThought(",
        "SessionUpdateToolCallUpdate(",
        "SessionUpdateUsageUpdate(",
        "Cost(",
        "SessionUpdateToolCallContentChunk(",
        "ToolCallContentContent(",
        "CancelSessionNotification(",
        "<StopReason.END_TURN: 'end_turn'>",
        "<ToolKind.OTHER: 'other'>",
        "<PlanEntryPriority.HIGH: 'high'>",
    ):
        assert cls in golden, cls
