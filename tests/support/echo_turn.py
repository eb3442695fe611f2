"""What a turn of examples/echo_agent.py sends on each protocol version, exactly, for the tests
that drive it (or the SDKs' peers that play the same turn: interop/v1_agent.mjs and
tests/support/pypi_v1_peers.py on v1).

The turn: a plan of three `medium` entries, the reply `You said: <words>.` in chunks, the plan's
first entry completed, a tool call "Echo tool" behind a permission request, started and
completed with `Echo: <prompt>` (failed when refused), the usage `1000 * turn + len(prompt)`.
v2 frames it: the user message echoed, `running`, `requires_action` around the permission
request, idle with the stop reason; v1's prompt answer carries the stop reason instead.
"""

from __future__ import annotations

from typing import Any, Literal

Outcome = Literal["allowed", "refused", "cancelled"]
ENTRIES = ["Echo the prompt back", "Run the echo tool", "Report usage"]
ASKED = {"toolCallId": "call_001", "title": "Echo tool"}
"""The tool call a permission request names (v1's `toolCall`, v2's `subject.toolCall`)."""


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def chunks(prompt: str) -> list[str]:
    words = [word + " " for word in prompt.split()]
    if words:
        words[-1] = words[-1].rstrip()
    return ["You said: ", *(words or ["(nothing)"]), "."]


def plan(version: int, first: str) -> dict[str, Any]:
    rows = [
        {"content": c, "priority": "medium", "status": first if n == 0 else "pending"}
        for n, c in enumerate(ENTRIES)
    ]
    if version == 1:
        return {"sessionUpdate": "plan", "entries": rows}
    return {"sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "plan_1", "entries": rows}}  # fmt: skip


def tool(**fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", **fields}


def state(name: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "state_update", "state": name, **fields}


def updates(
    version: int, prompt: str = "hello", *, outcome: Outcome = "allowed", turn: int = 1
) -> list[dict[str, Any]]:
    """Every update of the turn, in order, when the permission request is allowed, refused, or
    answered `cancelled` (the client cancelled the turn there)."""
    said = [
        {"sessionUpdate": "agent_message_chunk", "messageId": f"msg_agent_{turn}",
         "content": text(c)}
        for c in chunks(prompt)
    ]  # fmt: skip
    opened = {"toolCallId": "call_001", "title": "Echo tool", "kind": "other",
              "status": "pending", "rawInput": {"text": prompt}}  # fmt: skip
    usage = {"sessionUpdate": "usage_update", "used": 1000 * turn + len(prompt), "size": 200000}
    content = f"Echo: {prompt}" if outcome == "allowed" else "Permission was not granted."
    if outcome == "allowed":
        ran = [tool(status="in_progress"), tool(status="completed", content=[tool_text(content)])]
    else:
        ran = [tool(status="failed", content=[tool_text(content)])]
    before = [plan(version, "pending"), *said, plan(version, "completed")]
    if version == 1:
        opened_v1 = {"sessionUpdate": "tool_call", **opened}
        if outcome == "cancelled":  # the client marks the open tool call itself
            return [*before, opened_v1]
        return [*before, opened_v1, *ran, usage]
    echo = {"sessionUpdate": "user_message", "messageId": f"msg_user_{turn}",
            "content": [text(prompt)]}  # fmt: skip
    asked = [echo, state("running"), *before, tool(**opened), state("requires_action")]
    if outcome == "cancelled":
        return [*asked, tool(status="cancelled"), state("idle", stopReason="cancelled")]
    return [*asked, state("running"), *ran, usage, state("idle", stopReason="end_turn")]


def tool_text(value: str) -> dict[str, Any]:
    return {"type": "content", "content": text(value)}


def kinds(items: list[dict[str, Any]]) -> list[str]:
    return [str(u["sessionUpdate"]) for u in items]


def permissions(outcome: Outcome) -> list[dict[str, Any]]:
    """What the example clients print of the turn's permission request."""
    answered = {
        "allowed": {"outcome": "selected", "optionId": "allow-once"},
        "refused": {"outcome": "selected", "optionId": "reject-once"},
        "cancelled": {"outcome": "cancelled"},
    }[outcome]
    return [{"toolCall": ASKED, "outcome": answered}]


FULL_TURN = kinds(updates(2))
"""The kinds of a full v2 turn of the echo agent for the prompt `hello`."""

TS_AGENT_TURN = [
    "user_message", "state_update", "plan_update", "agent_message_chunk", "agent_message_chunk",
    "agent_message_chunk", "tool_call_update", "state_update", "state_update",
    "tool_call_update", "tool_call_content_chunk", "tool_call_update", "usage_update",
    "state_update",
]  # fmt: skip
"""The kinds of a full turn of interop/ts_agent.mjs (the TypeScript SDK's v2 agent) for
`hello`: its plan is not reported again, its tool streams one content chunk."""
