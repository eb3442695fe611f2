"""Interop on the unstable v2 lane with the official TypeScript SDK's unstable entry point
(`@agentclientprotocol/sdk/experimental/v2/unstable`, 2.4.0): its client (interop/ts_client.mjs
--unstable, whose validators know the unstable schema) against our agent serving `v2_unstable`
and delegating to a subagent (tests/support/subagent_agent.py), and our client speaking
`v2_unstable` against its agent (interop/ts_agent.mjs --unstable), which delegates too. As
strict as tests/e2e/test_interop_ts.py: the SDK must neither drop one of our updates nor print
anything."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import acp_kit as kit
import pytest

from tests.e2e.test_interop_ts import INTEROP, NODE, REPO, SDK_CLIENT, result_of, sdk_console
from tests.support.echo_turn import TS_AGENT_TURN
from tests.support.rpc_wire import run

UNSTABLE_CLIENT = [*SDK_CLIENT, "--unstable"]
UNSTABLE_AGENT = [str(NODE), str(INTEROP / "ts_agent.mjs"), "--unstable"]
DELEGATING = [sys.executable, str(REPO / "tests" / "support" / "subagent_agent.py")]
PARENT_TURN = [
    "user_message", "state_update", "subagent_update", "session_message", "subagent_update",
    "session_message", "subagent_update", "agent_message_chunk", "state_update",
]  # fmt: skip
CHILD_TURN = [
    "session_message", "state_update", "agent_message_chunk", "agent_message_chunk",
    "tool_call_update", "tool_call_update", "session_message", "state_update",
]  # fmt: skip


def only_child(result: dict[str, Any]) -> list[str]:
    children = result.pop("children")
    assert isinstance(children, dict) and len(children) == 1
    [kinds] = children.values()
    assert isinstance(kinds, list)
    return kinds


def test_sdk_unstable_client_follows_our_agent_s_subagent() -> None:
    result = result_of([*UNSTABLE_CLIENT, "--prompt", "the moon", *DELEGATING])
    assert only_child(result) == CHILD_TURN
    assert result == {"stopReason": "end_turn", "updates": PARENT_TURN}


def test_sdk_unstable_client_lists_resumes_and_closes_a_session_with_a_child() -> None:
    result = result_of([*UNSTABLE_CLIENT, "--sessions", *DELEGATING])
    assert only_child(result) == CHILD_TURN
    assert result == {
        "stopReason": "end_turn",
        "updates": PARENT_TURN,
        "sessions": {
            "listed": ["this"],  # the child is not a session of its own in the list
            "replayed": [
                "user_message",
                "subagent_update",
                "subagent_update",
                "session_message",
                "session_message",
                "agent_message",
                "state_update",
            ],  # fmt: skip
            "afterClose": [],
        },
    }


def test_sdk_unstable_client_cancels_the_parent_and_so_the_child() -> None:
    """The cancel goes out after the child's first message chunk; the child (ten chunks 0.1 s
    apart) ends `cancelled` first, then the parent."""
    result = result_of([*UNSTABLE_CLIENT, "--cancel", "--prompt", "slow one", *DELEGATING])
    child = only_child(result)
    assert child[:3] == ["session_message", "state_update", "agent_message_chunk"]
    assert child[-1] == "state_update" and "session_message" not in child[1:]
    assert result["stopReason"] == "cancelled"
    assert result["updates"][-2:] == ["subagent_update", "state_update"]


def test_sdk_unstable_client_runs_a_plain_turn_with_our_unstable_lane() -> None:
    """A v1 + unstable v2 agent whose turn has no child: the unstable lane's turn is v2's."""
    done = subprocess.run(
        [*UNSTABLE_CLIENT, "--prompt", "x", sys.executable, "-c", PLAIN_AGENT],
        capture_output=True, text=True, timeout=60, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sdk_console(done.stderr) == []
    assert json.loads(done.stdout) == {
        "stopReason": "end_turn",
        "updates": ["user_message", "state_update", "agent_message_chunk", "state_update"],
    }


PLAIN_AGENT = f"""
import sys
sys.path.insert(0, {str(REPO / "generated")!r})
import acp_kit as acp

class Plain(acp.Agent):
    lanes = ("v1", "v2_unstable")

    async def prompt(self, turn):
        assert turn.features.lane == "v2_unstable", turn.features
        await turn.say("plain")
        return "end_turn"

acp.run_agent(Plain())
"""


def spawn_sdk_agent(log: Path) -> Any:
    """The SDK agent, its stderr (where it copies what the SDK prints) into `log`."""
    client = kit.Client(lanes=("v1", "v2_unstable"), permissions=kit.allow)
    return kit.spawn_agent(*UNSTABLE_AGENT, client=client, stderr=log.open("wb"))


def test_our_unstable_client_follows_the_sdk_agent_s_child_session(tmp_path: Path) -> None:
    log = tmp_path / "agent.log"

    async def scenario() -> tuple[kit.TurnResult, kit.RemoteSession, str]:
        async with spawn_sdk_agent(log) as agent:
            assert agent.features.lane == "v2_unstable" and agent.features.subagents
            session = await agent.new_session()
            result = await session.prompt("please delegate this")
            [child] = session.children.values()
            with pytest.raises(kit.NotPermitted):
                await child.cancel()  # the SDK agent gave no cancel capability
            return result, session, child.id

    result, session, child_id = run(scenario(), timeout=30)
    assert sdk_console(log.read_text()) == []
    assert result.stop_reason == "end_turn"
    assert result.text == "You said: please delegate this."
    kinds = [kit.v2_unstable.encode(u)["sessionUpdate"] for u in result.updates]
    assert kinds[:8] == [
        "user_message", "state_update", "plan_update", "subagent_update", "session_message",
        "subagent_update", "session_message", "subagent_update",
    ]  # fmt: skip
    child = session.state.child(child_id)
    assert (
        child_id == "sess_child_1"
        and child.message_text("msg_child") == "Child: please delegate this"
    )
    assert (child.state, child.stop_reason) == ("idle", "end_turn")
    info = session.state.child_info(child_id)
    assert info == {
        "sessionId": "sess_child_1",
        "title": "Helper",
        "description": "echoes in a child session",
        "meta": {"example.com/role": "helper"},  # a vendor _meta key, kept
        "state": {"state": "idle", "stopReason": "end_turn"},
    }
    roles = [(m["role"], m["messageId"]) for m in session.state.snapshot()["messages"]]
    assert roles[:3] == [
        ("user", "msg_user_1"),
        ("session", "msg_out_1"),
        ("session", "msg_reported_1"),
    ]


def test_our_unstable_client_runs_the_sdk_agent_s_plain_turn_and_cancel(tmp_path: Path) -> None:
    log = tmp_path / "agent.log"

    async def scenario() -> tuple[kit.TurnResult, kit.TurnResult]:
        async with spawn_sdk_agent(log) as agent:
            session = await agent.new_session()
            full = await session.prompt("hello")
            turn = asyncio.ensure_future(session.prompt("slow and long"))
            while not session.state.message_text("msg_agent_2"):  # its first chunk came
                await asyncio.sleep(0.02)
            await session.cancel()
            return full, await turn

    full, cancelled = run(scenario(), timeout=30)
    assert sdk_console(log.read_text()) == []
    assert "aborting the running turn" in log.read_text()
    kinds = [kit.v2_unstable.encode(u)["sessionUpdate"] for u in full.updates]
    assert kinds == TS_AGENT_TURN
    assert cancelled.stop_reason == "cancelled"
