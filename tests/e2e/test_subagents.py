"""Subagent sessions end to end on the unstable v2 lane: our agent toolkit starts a child session
inside a turn (`turn.subagent`) and streams into it, our client follows it
(`session.children`, subscriptions), over a real connection (in-memory pipes; the agent's side
tapped for the exact JSON), and as a spawned process whose transcript `acp-codegen replay`
rebuilds. Cancels: the parent's cancels its children first; the client's reaches a child only
when the agent made it cancellable. Lanes without subagents raise NotSupported."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import acp_kit as kit
import pytest
from acp_kit.runtime.connection import RoleBase
from acp_kit.toolkit.router import AgentRouter

from codegen.cli import main
from tests.support.rpc_wire import pipe, run

REPO = Path(__file__).resolve().parents[2]
DELEGATING_AGENT = [sys.executable, str(REPO / "tests" / "support" / "subagent_agent.py")]
Script = Callable[[kit.Turn], Awaitable[Any]]


class Scripted(kit.Agent):
    name = "scripted"
    lanes = ("v1", "v2_unstable")

    def __init__(self, script: Script) -> None:
        super().__init__()
        self.script = script

    async def prompt(self, turn: kit.Turn) -> Any:
        return await self.script(turn)


class Wire(list[dict[str, Any]]):
    """Every message the agent wrote, parsed, in order (and in `read`, what it read)."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[dict[str, Any]] = []

    def tap(self, direction: str, line: bytes) -> None:
        (self if direction == "out" else self.read).append(json.loads(line))

    def cancels(self) -> list[dict[str, Any]]:
        return [m for m in self.read if m.get("method") == "session/cancel"]

    def updates(self, session_id: str) -> list[dict[str, Any]]:
        return [
            m["params"]["update"]
            for m in self
            if m.get("method") == "session/update" and m["params"]["sessionId"] == session_id
        ]

    def kinds(self, session_id: str) -> list[str]:
        return [u["sessionUpdate"] for u in self.updates(session_id)]


async def connected(
    agent: kit.Agent, *, lanes: tuple[str, ...] = ("v2_unstable",), permissions: Any = kit.allow
) -> tuple[kit.RemoteAgent, Wire]:
    to_agent, client_out = pipe()
    to_client, agent_out = pipe()
    wire = Wire()
    kit.Connection(AgentRouter(agent), to_agent, agent_out, tap=wire.tap).start()
    client = kit.Client(lanes=lanes, permissions=permissions)
    remote = await kit.connect_agent(client, kit.Connection(RoleBase(), to_client, client_out))
    return remote, wire


async def research(child: kit.SubagentTurn) -> kit.TurnStopReason:
    await child.say("Looking for: ")
    await child.say(child.text)
    tool = await child.tool_call("Search", kind="search")
    await tool.complete("3 hits")
    await child.report("Three sources.")
    return "end_turn"


async def delegate(turn: kit.Turn) -> kit.TurnStopReason:
    researcher = await turn.subagent("Researcher", description="finds sources", task=turn.text)
    reason = await researcher.run(research)
    await turn.say(f"{reason}: {researcher.reported}")
    return "end_turn"


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def test_a_child_session_on_the_wire() -> None:
    async def scenario() -> tuple[kit.TurnResult, str, str, Wire]:
        remote, wire = await connected(Scripted(delegate))
        session = await remote.new_session("/w")
        result = await session.prompt("the moon")
        [child_id] = session.children
        return result, session.id, child_id, wire

    result, parent, child, wire = run(scenario())
    assert result.stop_reason == "end_turn" and result.text == "end_turn: Three sources."
    announce = {"sessionUpdate": "subagent_update", "sessionId": child, "title": "Researcher",
                "description": "finds sources", "capabilities": {"cancel": {}}}  # fmt: skip
    out = {"senderSessionId": parent, "recipientSessionId": child}
    back = {"senderSessionId": child, "recipientSessionId": parent}
    assert wire.updates(parent) == [
        {"sessionUpdate": "user_message", "messageId": "msg_user_1", "content": [text("the moon")]},
        {"sessionUpdate": "state_update", "state": "running"},
        announce,  # before anything bears the child's id
        {
            "sessionUpdate": "session_message",
            "messageId": "msg_out_1",
            **out,
            "recipientMessageId": "msg_in_1",
            "content": [text("the moon")],
        },  # fmt: skip
        {"sessionUpdate": "subagent_update", "sessionId": child, "state": {"state": "running"}},
        {
            "sessionUpdate": "session_message",
            "messageId": "msg_in_1",
            **back,
            "senderMessageId": "msg_out_1",
            "content": [text("Three sources.")],
        },  # fmt: skip
        {
            "sessionUpdate": "subagent_update",
            "sessionId": child,
            "state": {"state": "idle", "stopReason": "end_turn"},
        },  # fmt: skip
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "msg_agent_1",
            "content": text("end_turn: Three sources."),
        },  # fmt: skip
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
    ]
    first_of_child = next(
        i for i, m in enumerate(wire) if m.get("params", {}).get("sessionId") == child
    )
    assert wire.index(next(m for m in wire if m.get("params", {}).get("update") == announce)) < (
        first_of_child
    )
    assert wire.kinds(child) == [
        "session_message", "state_update", "agent_message_chunk", "agent_message_chunk",
        "tool_call_update", "tool_call_update", "session_message", "state_update",
    ]  # fmt: skip
    assert wire.updates(child)[0] == {
        "sessionUpdate": "session_message", "messageId": "msg_in_1", **out,
        "senderMessageId": "msg_out_1", "content": [text("the moon")],
    }  # fmt: skip
    assert wire.updates(child)[-1] == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "end_turn",
    }
    # The parent's turn reports its own updates only.
    assert [kit.v2_unstable.encode(u)["sessionUpdate"] for u in result.updates] == wire.kinds(
        parent
    )


def test_the_client_follows_the_child_and_its_subscribers_see_its_updates() -> None:
    async def scenario() -> tuple[kit.RemoteSession, list[str], list[str]]:
        remote, _ = await connected(Scripted(delegate))
        session = await remote.new_session("/w")
        seen: list[str] = []
        announced: list[str] = []

        def on_parent(update: Any) -> None:  # subscribe to a child as it is announced
            if isinstance(update, kit.v2_unstable.SessionUpdateSubagentUpdate):
                if update.session_id not in announced:
                    announced.append(update.session_id)
                    child = session.children[update.session_id]
                    child.subscribe(
                        lambda u: seen.append(kit.v2_unstable.encode(u)["sessionUpdate"])
                    )

        session.subscribe(on_parent)
        await session.prompt("the moon")
        return session, seen, announced

    session, seen, announced = run(scenario())
    [child] = session.children.values()
    assert announced == [child.id]
    assert isinstance(child, kit.RemoteChild) and child.parent is session
    assert (child.title, child.cancellable, child.state.state, child.state.stop_reason) == (
        "Researcher", True, "idle", "end_turn",
    )  # fmt: skip
    assert seen == [
        "session_message", "state_update", "agent_message_chunk", "agent_message_chunk",
        "tool_call_update", "tool_call_update", "session_message", "state_update",
    ]  # fmt: skip
    assert child.state is session.state.child(child.id)  # one state: the parent's holds it
    assert child.state.message_text("msg_agent_1") == "Looking for: the moon"
    assert child.state.tool_call_status("call_001") == "completed"
    assert child.info["state"] == {"state": "idle", "stopReason": "end_turn"}
    snapshot = session.state.snapshot()
    assert snapshot["children"][child.id]["session"] == child.state.snapshot()
    assert [(m["role"], m["messageId"]) for m in snapshot["messages"]] == [
        ("user", "msg_user_1"), ("session", "msg_out_1"), ("session", "msg_in_1"),
        ("agent", "msg_agent_1"),
    ]  # fmt: skip


async def slow_research(child: kit.SubagentTurn) -> kit.TurnStopReason:
    tool = await child.tool_call("Search", kind="search")
    await tool.start()
    await child.say("working")
    await asyncio.sleep(30)
    return "end_turn"


def test_a_cancel_of_the_parent_cancels_its_children_first() -> None:
    async def script(turn: kit.Turn) -> kit.TurnStopReason:
        child = await turn.subagent("Slow")
        await child.run(slow_research)
        return "end_turn"

    async def scenario() -> tuple[kit.TurnResult, kit.RemoteSession, Wire]:
        remote, wire = await connected(Scripted(script))
        session = await remote.new_session("/w")
        turn = asyncio.ensure_future(session.prompt("go"))
        while not session.children or not next(iter(session.children.values())).state.message_ids:
            await asyncio.sleep(0.01)
        await session.cancel()
        return await turn, session, wire

    result, session, wire = run(scenario())
    [child] = session.children.values()
    assert result.stop_reason == "cancelled"
    assert wire.updates(child.id)[-2:] == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "status": "cancelled"},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"},
    ]
    assert wire.updates(session.id)[-2:] == [
        {
            "sessionUpdate": "subagent_update",
            "sessionId": child.id,
            "state": {"state": "idle", "stopReason": "cancelled"},
        },  # fmt: skip
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"},
    ]
    assert (child.state.state, child.state.stop_reason) == ("idle", "cancelled")
    assert list(session.children) == [child.id]  # the association stays


def test_the_client_cancels_a_cancellable_child_and_the_parent_goes_on() -> None:
    async def script(turn: kit.Turn) -> kit.TurnStopReason:
        child = await turn.subagent("Slow")
        reason = await child.run(slow_research)
        await turn.say(f"the child ended {reason}")
        return "end_turn"

    async def scenario() -> tuple[kit.TurnResult, kit.RemoteSession, Wire]:
        remote, wire = await connected(Scripted(script))
        session = await remote.new_session("/w")
        turn = asyncio.ensure_future(session.prompt("go"))
        while not session.children or not next(iter(session.children.values())).state.message_ids:
            await asyncio.sleep(0.01)
        await next(iter(session.children.values())).cancel()
        return await turn, session, wire

    result, session, wire = run(scenario())
    [child] = session.children.values()
    assert (result.stop_reason, result.text) == ("end_turn", "the child ended cancelled")
    assert wire.cancels() == [
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": child.id}}
    ]
    assert wire.updates(child.id)[-1] == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "cancelled",
    }
    assert (child.state.stop_reason, session.state.stop_reason) == ("cancelled", "end_turn")


def test_a_child_not_cancellable_refuses_the_client_and_the_agent_ignores_its_cancel() -> None:
    async def quick(child: kit.SubagentTurn) -> kit.TurnStopReason:
        await child.say("a")
        await asyncio.sleep(0.3)
        await child.say("b")
        return "end_turn"

    async def script(turn: kit.Turn) -> kit.TurnStopReason:
        child = await turn.subagent("Fixed", cancellable=False)
        return await child.run(quick)  # type: ignore[return-value]

    async def scenario() -> tuple[kit.TurnResult, kit.RemoteSession]:
        remote, wire = await connected(Scripted(script))
        session = await remote.new_session("/w")
        turn = asyncio.ensure_future(session.prompt("go"))
        while not session.children or not next(iter(session.children.values())).state.message_ids:
            await asyncio.sleep(0.01)
        child = next(iter(session.children.values()))
        with pytest.raises(kit.NotPermitted, match="does not let the client cancel"):
            await child.cancel()
        await asyncio.sleep(0.05)
        assert wire.cancels() == []  # nothing was sent
        # A client that sends it anyway: the agent ignores it, the child ends its work.
        await remote.stub.session_cancel(
            remote.lane.models.CancelSessionNotification(session_id=child.id)
        )
        with pytest.raises(kit.NotPermitted, match="does not prompt it"):
            await child.prompt("hi")
        with pytest.raises(kit.NotPermitted, match="ends with its parent"):
            await child.close()
        return await turn, session

    result, session = run(scenario())
    [child] = session.children.values()
    assert child.info.get("capabilities") is None and not child.cancellable
    assert result.stop_reason == "end_turn"
    assert child.state.message_text("msg_agent_1") == "ab"


def test_what_a_child_still_runs_when_its_parent_ends_is_cancelled_first() -> None:
    started: list[asyncio.Task[str]] = []

    async def script(turn: kit.Turn) -> kit.TurnStopReason:
        child = await turn.subagent("Detached")
        started.append(asyncio.ensure_future(child.run(slow_research)))
        await asyncio.sleep(0.05)
        return "end_turn"

    async def scenario() -> tuple[Wire, str, str]:
        remote, wire = await connected(Scripted(script))
        session = await remote.new_session("/w")
        await session.prompt("go")
        return wire, session.id, await started[0]

    wire, parent, child_ended = run(scenario())
    assert child_ended == "cancelled"
    assert wire.kinds(parent)[-2:] == ["subagent_update", "state_update"]
    assert wire.updates(parent)[-1] == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "end_turn",
    }


def test_a_child_runs_inside_a_turn_only_and_again_in_a_later_one() -> None:
    kept: list[kit.Subagent] = []

    async def script(turn: kit.Turn) -> kit.TurnStopReason:
        if not kept:
            kept.append(await turn.subagent("Helper"))
        await kept[0].tell(turn.text)
        await kept[0].run(research)
        return "end_turn"

    async def scenario() -> tuple[kit.RemoteSession, Any]:
        remote, _ = await connected(Scripted(script))
        session = await remote.new_session("/w")
        await session.prompt("first")
        with pytest.raises(kit.TurnEnded, match="runs inside a turn of its parent"):
            await kept[0].run(research)
        await session.prompt("second")
        return session, remote

    session, _ = run(scenario())
    [child] = session.children.values()  # one child, messaged twice
    texts = [child.state.message_text(i) for i in child.state.message_ids]
    assert texts[0] == "first" and "second" in texts
    assert child.state.stop_reason == "end_turn"


def test_a_child_asks_permission_with_its_own_session_id() -> None:
    asked: list[str] = []

    async def policy(request: Any) -> Any:
        asked.append(request.session_id)
        return request.options[0]

    async def careful(child: kit.SubagentTurn) -> kit.TurnStopReason:
        tool = await child.tool_call("Delete", kind="delete")
        allowed = await child.ask_permission(tool)
        await (tool.complete("gone") if allowed else tool.fail("kept"))
        return "end_turn"

    async def script(turn: kit.Turn) -> kit.TurnStopReason:
        await (await turn.subagent("Careful")).run(careful)
        return "end_turn"

    async def scenario() -> tuple[kit.RemoteSession, Wire]:
        remote, wire = await connected(Scripted(script), permissions=policy)
        session = await remote.new_session("/w")
        await session.prompt("go")
        return session, wire

    session, wire = run(scenario())
    [child] = session.children.values()
    assert asked == [child.id]
    [request] = [m for m in wire if m.get("method") == "session/request_permission"]
    assert request["params"]["sessionId"] == child.id
    states = [u["state"] for u in wire.updates(child.id) if u["sessionUpdate"] == "state_update"]
    assert states == ["running", "requires_action", "running", "idle"]
    mirrored = [u["state"]["state"] for u in wire.updates(session.id)
                if u["sessionUpdate"] == "subagent_update" and "state" in u]  # fmt: skip
    assert mirrored == ["running", "requires_action", "running", "idle"]
    assert child.state.tool_call_status("call_001") == "completed"


def test_a_resume_replays_each_child_after_its_announcement() -> None:
    async def scenario() -> tuple[kit.RemoteSession, Wire, int]:
        remote, wire = await connected(Scripted(delegate))
        session = await remote.new_session("/w")
        await session.prompt("the moon")
        before = len(wire)
        resumed = await remote.resume_session(session.id, "/w")
        return resumed, wire, before

    session, wire, before = run(scenario())
    [child] = session.children.values()
    replayed = [
        (m["params"]["sessionId"] == child.id, m["params"]["update"]["sessionUpdate"])
        for m in wire[before:]
        if m.get("method") == "session/update"
    ]
    assert replayed[:4] == [
        (False, "user_message"), (False, "subagent_update"), (True, "session_message"),
        (True, "agent_message"),
    ]  # fmt: skip
    assert child.state.message_text("msg_agent_1") == "Looking for: the moon"
    assert child.state.tool_call_status("call_001") == "completed"
    assert child.title == "Researcher" and child.state is session.state.child(child.id)


@pytest.mark.parametrize("lanes", [("v2",), ("v1",)], ids=["v2", "v1"])
def test_lanes_without_subagents_raise_not_supported(lanes: tuple[str, ...]) -> None:
    failures: list[BaseException] = []

    async def script(turn: kit.Turn) -> kit.TurnStopReason:
        assert not turn.features.subagents
        try:
            await turn.subagent("Nope")
        except kit.NotSupported as exc:
            failures.append(exc)
        return "end_turn"

    class Stable(Scripted):
        lanes = ("v1", "v2")

    async def scenario() -> kit.RemoteSession:
        remote, _ = await connected(Stable(script), lanes=lanes)
        session = await remote.new_session("/w")
        await session.prompt("go")
        return session

    session = run(scenario())
    [failure] = failures
    assert str(failure).startswith("subagent sessions is not part of protocol version")
    with pytest.raises(kit.NotSupported, match="subagent sessions"):
        session.children  # noqa: B018


def test_a_spawned_delegating_agent_s_transcript_replays_with_its_children(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    transcript = tmp_path / "turn.jsonl"

    async def scenario() -> str:
        recorder = kit.TranscriptRecorder(str(transcript))
        client = kit.Client(lanes=("v1", "v2_unstable"), permissions=kit.allow)
        async with kit.spawn_agent(*DELEGATING_AGENT, client=client, tap=recorder) as agent:
            session = await agent.new_session(tmp_path)
            result = await session.prompt("the moon")
            assert agent.features.lane == "v2_unstable"
            assert result.text == "researcher: end_turn: Three sources."
            [child] = session.children
        recorder.close()
        return child

    child = run(scenario(), timeout=30)
    assert main(["replay", "--json", str(transcript)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    snapshot = json.loads(out)
    replayed = snapshot["children"][child]
    assert (replayed["title"], replayed["state"]) == (
        "Researcher", {"state": "idle", "stopReason": "end_turn"},
    )  # fmt: skip
    assert replayed["session"]["toolCalls"]["call_001"]["status"] == "completed"
    assert [m["role"] for m in replayed["session"]["messages"]] == ["session", "agent", "session"]
    assert main(["replay", str(transcript)]) == 0
    text_view = capsys.readouterr().out
    assert f"child sessions:\n  {child} (Researcher): idle (end_turn)\n" in text_view
    assert "    agent (msg_agent_1):\n      Looking for: the moon\n" in text_view
