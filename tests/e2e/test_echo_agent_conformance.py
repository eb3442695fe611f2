"""examples/echo_agent.py as a program, driven over its real stdin/stdout with raw JSON on each
protocol version: the requirements of the npm-sdk-2.4.0 schemas that are about the order of
messages on the wire (test_agent_toolkit.py has each rule of the toolkit in detail). Every run
ends with the agent exiting 0 at EOF, having logged nothing."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.support.rpc_wire import run
from tests.support.toolkit_wire import (
    ProcessWire,
    WireLane,
    is_idle,
    is_request,
    is_update,
    selected,
    state,
)

ECHO_AGENT = [
    sys.executable,
    str(Path(__file__).resolve().parents[2] / "examples" / "echo_agent.py"),
]
ALLOW = selected("allow-once")


async def started(lane: WireLane) -> ProcessWire:
    wire = await ProcessWire.spawn(*ECHO_AGENT, lane=lane)
    answer = await wire.initialize()
    assert answer["result"]["protocolVersion"] == lane.version
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


def test_list_filters_by_the_working_directory(lane: WireLane) -> None:
    async def scenario() -> tuple[list[str], list[str], list[str]]:
        wire = await started(lane)
        made = [await wire.new_session(cwd) for cwd in ("/a", "/b", "/a/")]
        in_a = (await wire.call("session/list", {"cwd": "/a"}))["result"]["sessions"]
        everything = (await wire.call("session/list", {}))["result"]["sessions"]
        await finished(wire)
        return made, [s["sessionId"] for s in in_a], [s["sessionId"] for s in everything]

    made, in_a, everything = run(scenario(), timeout=30)
    assert in_a == [made[0], made[2]]
    assert everything == made


def test_the_permission_request_comes_after_the_tool_call_and_the_turn_goes_on_after_it(
    lane: WireLane,
) -> None:
    async def scenario() -> list[Any]:
        wire = await started(lane)
        sid = await wire.new_session("/w")
        pending = wire.prompt_later(sid)
        asked = await wire.until(is_request("session/request_permission"))
        wire.reply(asked["id"], ALLOW)
        await wire.ended(pending)
        await finished(wire)
        around = wire.wire[
            [m.get("method") for m in wire.wire].index("session/request_permission") - 2 :
        ]
        return [m.get("params", {}).get("update", {}).get("state") or k
                for m, k in zip(around, kinds(around), strict=True)]  # fmt: skip

    assert run(scenario(), timeout=30) == lane.pick(
        v1=["plan", "tool_call", "session/request_permission", "tool_call_update",
            "tool_call_update", "usage_update", "answer"],
        v2=["tool_call_update", "requires_action", "session/request_permission", "running",
            "tool_call_update", "tool_call_update", "usage_update", "idle"],
    )  # fmt: skip


def test_a_cancel_at_the_permission_request_ends_the_turn_cancelled(lane: WireLane) -> None:
    """v2 withdraws the request; v1 answers the prompt at once and leaves the request to the
    client, which answers it `cancelled`; nothing follows."""

    async def scenario() -> tuple[list[Any], Any, list[Any]]:
        wire = await started(lane)
        sid = await wire.new_session("/w")
        pending = wire.prompt_later(sid)
        asked = await wire.until(is_request("session/request_permission"))
        before = len(wire.wire)
        wire.send("session/cancel", {"sessionId": sid})
        await wire.ended(pending)
        seen = wire.wire[before:]
        if lane.v1:
            wire.reply(asked["id"], {"outcome": {"outcome": "cancelled"}})
        later = await wire.quiet()
        await finished(wire)
        return seen, asked["id"], later

    seen, rid, later = run(scenario(), timeout=30)
    if lane.v1:
        assert seen == [{"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "cancelled"}}]
    else:
        assert seen[0] == {"jsonrpc": "2.0", "method": "$/cancel_request",
                           "params": {"requestId": rid}}  # fmt: skip
        assert [m["params"]["update"] for m in seen[1:]] == [
            {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "status": "cancelled"},
            state("idle", stopReason="cancelled"),
        ]
    assert later == []


def test_a_replay_comes_before_its_answer(lane: WireLane) -> None:
    async def scenario() -> list[str]:
        wire = await started(lane)
        sid = await wire.new_session("/w")
        pending = wire.prompt_later(sid, "hi")
        wire.reply((await wire.until(is_request("session/request_permission")))["id"], ALLOW)
        await wire.ended(pending)
        before = len(wire.wire)
        if lane.v1:
            answer = await wire.call(
                "session/load", {"sessionId": sid, "cwd": "/w", "mcpServers": []}
            )
        else:
            params = {"sessionId": sid, "cwd": "/w", "replayFrom": {"type": "start"}}
            answer = await wire.call("session/resume", params)
        assert answer["result"] == {}
        after = wire.wire[before:]
        await finished(wire)
        return kinds(after)

    assert run(scenario(), timeout=30) == lane.pick(
        v1=["user_message_chunk", "plan", "agent_message_chunk", "tool_call", "answer"],
        v2=["user_message", "plan_update", "agent_message", "tool_call_update", "state_update",
            "answer"],
    )  # fmt: skip


def test_close_ends_the_turn_before_its_answer_then_nothing(lane: WireLane) -> None:
    async def scenario() -> tuple[list[Any], list[Any]]:
        wire = await started(lane)
        sid = await wire.new_session("/w")
        pending = wire.prompt_later(sid, "slow slow slow slow words")
        await wire.until(is_update("agent_message_chunk"))
        before = len(wire.wire)
        answer = await wire.call("session/close", {"sessionId": sid})
        await pending
        around = wire.wire[before:]
        later = await wire.quiet()
        await finished(wire)
        return [answer["result"], *around], later

    (result, *around), later = run(scenario(), timeout=30)
    assert result == {}
    ended = [kinds([m])[0] if "method" in m else m.get("result") for m in around][-2:]
    # the turn's end (v1: its prompt's answer; v2: the idle update), then close's answer
    assert ended == lane.pick(v1=[{"stopReason": "cancelled"}, {}], v2=["state_update", {}])
    if not lane.v1:
        updates = [m["params"]["update"] for m in around if m.get("method") == "session/update"]
        assert updates[-1] == state("idle", stopReason="cancelled")
    assert later == []


def test_a_held_prompt_is_answered_by_session_cancel(lane: WireLane) -> None:
    async def scenario() -> tuple[Any, Any]:
        wire = await started(lane)
        sid = await wire.new_session("/w")
        first = wire.prompt_later(sid, "slow first")
        await wire.until(is_update("agent_message_chunk"))
        rid = 99
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "held"}]}
        wire.send_message({"jsonrpc": "2.0", "id": rid, "method": "session/prompt",
                           "params": prompt})  # fmt: skip
        wire.send("session/cancel", {"sessionId": sid})
        ended = await wire.ended(first)
        held = await wire.answer_to(rid)
        idle = None if lane.v1 else (await wire.until(is_idle))["params"]["update"]
        await finished(wire)
        return held, ended["result"] if lane.v1 else idle

    held, ended = run(scenario(), timeout=30)
    assert held == lane.pick(
        v1={"jsonrpc": "2.0", "id": 99, "result": {"stopReason": "cancelled"}},
        v2={"jsonrpc": "2.0", "id": 99, "error": {"code": -32800, "message": "Request cancelled"}},
    )
    assert ended == lane.pick(v1={"stopReason": "cancelled"},
                              v2=state("idle", stopReason="cancelled"))  # fmt: skip
