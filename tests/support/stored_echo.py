"""What a replay of a stored echo-agent session sends (examples/echo_agent.py --store): one
turn of "hello", allowed; or, when the agent died waiting on its permission request, what was
durable by then. Shared by the store's end-to-end and interop tests."""

from __future__ import annotations

from typing import Any

from tests.support import echo_turn
from tests.support.toolkit_wire import WireLane


def expected_replay(lane: WireLane, *, turn_ended: bool = True) -> list[Any]:
    """What a replay of one echo turn of "hello" sends (allowed; or, when the agent died at
    the permission request, what was durable by then)."""
    text = echo_turn.text
    said = {"messageId": "msg_agent_1", "content": text("You said: hello.")}
    tool = {"toolCallId": "call_001", "title": "Echo tool", "kind": "other",
            "rawInput": {"text": "hello"}}  # fmt: skip
    if turn_ended:
        tool |= {"status": "completed", "content": [echo_turn.tool_text("Echo: hello")]}
    else:
        tool |= {"status": "pending"}
    if lane.v1:
        return [
            {"sessionUpdate": "user_message_chunk", "messageId": "msg_user_1",
             "content": text("hello")},
            echo_turn.plan(1, "completed"),
            {"sessionUpdate": "agent_message_chunk", **said},
            {"sessionUpdate": "tool_call", **tool},
        ]  # fmt: skip
    idle = {"stopReason": "end_turn"} if turn_ended else {}
    return [
        {"sessionUpdate": "user_message", "messageId": "msg_user_1", "content": [text("hello")]},
        echo_turn.plan(2, "completed"),
        {"sessionUpdate": "agent_message", **{**said, "content": [said["content"]]}},
        {"sessionUpdate": "tool_call_update", **tool},
        echo_turn.state("idle", **idle),
    ]
