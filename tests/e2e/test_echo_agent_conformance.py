"""examples/echo_agent.py as a program, driven over its real stdin/stdout with raw JSON: the
requirements of the npm-sdk-2.4.0 v2 schema that are about the order of messages on the wire
(see test_agent_toolkit.py for each rule of the toolkit in detail)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.support.rpc_wire import INITIALIZE_PARAMS, run
from tests.support.toolkit_wire import ProcessWire, is_idle, is_request, state

ECHO_AGENT = [
    sys.executable,
    str(Path(__file__).resolve().parents[2] / "examples" / "echo_agent.py"),
]
ALLOW = {"outcome": {"outcome": "selected", "optionId": "allow-once"}}


async def started() -> ProcessWire:
    wire = await ProcessWire.spawn(*ECHO_AGENT)
    answer = await wire.call("initialize", INITIALIZE_PARAMS)
    assert answer["result"]["capabilities"] == {"session": {}}
    return wire


async def finished(wire: ProcessWire) -> None:
    """The agent exits 0 when its stdin closes, having logged nothing."""
    assert await wire.finish() == (0, "")


def kinds(messages: list[Any]) -> list[str]:
    """Each message as its method, `session/update` as its kind, an answer as `answer`."""
    out = []
    for m in messages:
        if m.get("method") == "session/update":
            out.append(m["params"]["update"]["sessionUpdate"])
        else:
            out.append(m.get("method", "answer"))
    return out


def test_list_filters_by_the_working_directory() -> None:
    async def scenario() -> tuple[list[str], list[str], list[str]]:
        wire = await started()
        made = [await wire.new_session(cwd) for cwd in ("/a", "/b", "/a/")]
        in_a = (await wire.call("session/list", {"cwd": "/a"}))["result"]["sessions"]
        everything = (await wire.call("session/list", {}))["result"]["sessions"]
        await finished(wire)
        return made, [s["sessionId"] for s in in_a], [s["sessionId"] for s in everything]

    made, in_a, everything = run(scenario(), timeout=30)
    assert in_a == [made[0], made[2]]
    assert everything == made


def test_a_permission_request_is_bracketed_by_requires_action_and_running() -> None:
    async def scenario() -> list[str]:
        wire = await started()
        sid = await wire.new_session("/w")
        await wire.prompt(sid)
        asked = await wire.until(is_request("session/request_permission"))
        wire.reply(asked["id"], ALLOW)
        await wire.idle()
        await finished(wire)
        updates = wire.updates()
        at = [u.get("state") for u in updates]
        return at[at.index("requires_action") :]

    assert run(scenario(), timeout=30) == [
        "requires_action", "running", None, None, None, None, "idle"
    ]  # fmt: skip


def test_cancel_withdraws_the_pending_permission_request_then_ends_cancelled() -> None:
    async def scenario() -> tuple[list[Any], Any]:
        wire = await started()
        sid = await wire.new_session("/w")
        await wire.prompt(sid)
        asked = await wire.until(is_request("session/request_permission"))
        wire.take()
        wire.send("session/cancel", {"sessionId": sid})
        await wire.idle()
        seen = wire.take()
        await finished(wire)
        return seen, asked["id"]

    seen, rid = run(scenario(), timeout=30)
    assert seen[0] == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": rid},
    }
    assert [m["params"]["update"] for m in seen[1:]] == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "status": "cancelled"},
        state("idle", stopReason="cancelled"),
    ]


def test_resume_replays_then_sends_the_state_then_answers() -> None:
    async def scenario() -> list[str]:
        wire = await started()
        sid = await wire.new_session("/w")
        await wire.prompt(sid, "hi")
        wire.reply((await wire.until(is_request("session/request_permission")))["id"], ALLOW)
        await wire.idle()
        before = len(wire.wire)
        params = {"sessionId": sid, "cwd": "/w", "replayFrom": {"type": "start"}}
        answer = await wire.call("session/resume", params)
        assert answer["result"] == {}
        after = wire.wire[before:]
        await finished(wire)
        return kinds(after)

    assert run(scenario(), timeout=30) == [
        "user_message", "plan_update", "agent_message", "tool_call_update", "state_update",
        "answer",
    ]  # fmt: skip


def test_close_sends_the_cancelled_turns_final_updates_before_its_answer_then_nothing() -> None:
    async def scenario() -> tuple[list[Any], list[Any]]:
        wire = await started()
        sid = await wire.new_session("/w")
        await wire.prompt(sid, "slow slow slow slow words")
        await wire.until(
            lambda m: (
                m.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"
            )
        )
        before = len(wire.wire)
        answer = await wire.call("session/close", {"sessionId": sid})
        around = wire.wire[before:]
        later = await wire.quiet()
        await finished(wire)
        return [answer["result"], *around], later

    (result, *around), later = run(scenario(), timeout=30)
    assert result == {}
    updates = [m["params"]["update"] for m in around if m.get("method") == "session/update"]
    assert updates[-1] == state("idle", stopReason="cancelled")
    assert kinds(around)[-1] == "answer"  # the answer comes after the final idle
    assert later == []


def test_a_held_prompt_is_answered_request_cancelled_by_session_cancel() -> None:
    async def scenario() -> tuple[Any, Any]:
        wire = await started()
        sid = await wire.new_session("/w")
        await wire.prompt(sid, "slow first")
        rid = 99
        wire.send_message(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "session/prompt",
                "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "held"}]},
            }
        )
        wire.send("session/cancel", {"sessionId": sid})
        idle = await wire.until(is_idle)
        held = await wire.answer_to(rid)
        await finished(wire)
        return held, idle["params"]["update"]

    held, idle = run(scenario(), timeout=30)
    assert held == {
        "jsonrpc": "2.0",
        "id": 99,
        "error": {"code": -32800, "message": "Request cancelled"},
    }
    assert idle == state("idle", stopReason="cancelled")
