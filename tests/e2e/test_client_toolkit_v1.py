"""The v1 client toolkit (`acp_v1.Client`, `RemoteAgent`, `RemoteSession`, `spawn_agent`): our
client against our v1 agent toolkit over in-memory pipes, and against the v1 example agent
spawned as a real process."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import acp_kit as kit
from acp_kit import v1 as acp

from tests.support.rpc_wire import pipe, run
from tests.support.toolkit_wire_v1 import ScriptAgent

REPO = Path(__file__).resolve().parents[2]
ECHO_AGENT = [sys.executable, str(REPO / "examples" / "v1" / "echo_agent.py")]


async def connected(
    agent: kit.Agent, client: kit.Client | None = None
) -> tuple[kit.RemoteAgent, acp.Connection]:
    """Our client joined to `agent` by in-memory pipes, initialized."""
    to_agent, client_out = pipe()
    to_client, agent_out = pipe()
    agent_conn = acp.Connection(agent, to_agent, agent_out)
    agent_conn.start()
    client = kit.Client(permissions=kit.allow) if client is None else client
    remote = await kit.connect_agent(client, acp.Connection(client, to_client, client_out))
    return remote, agent_conn


def kinds(updates: list[Any]) -> list[str]:
    return [str(acp.encode(u)["sessionUpdate"]) for u in updates]


async def tool_script(turn: kit.Turn) -> kit.TurnStopReason:
    await turn.say("Hello")
    tool = await turn.tool_call("Tool")
    if await turn.ask_permission(tool):
        await tool.complete("done")
    else:
        await tool.fail("refused")
    await turn.say(" again")
    return "end_turn"


def test_a_prompt_returns_the_stop_reason_with_the_turns_updates() -> None:
    async def scenario() -> tuple[kit.TurnResult, kit.RemoteAgent, dict[str, Any]]:
        remote, _ = await connected(ScriptAgent(tool_script))
        session = await remote.new_session("/w")
        result = await session.prompt("hi")
        return result, remote, session.state.snapshot()

    result, remote, snapshot = run(scenario())
    assert (result.stop_reason, result.text) == ("end_turn", "Hello again")
    assert kinds(result.updates) == [
        "agent_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk",
    ]  # fmt: skip
    assert remote.info.agent_info is not acp.UNSET
    assert (snapshot["state"], snapshot["stopReason"]) == ("idle", "end_turn")
    assert snapshot["toolCalls"]["call_001"]["status"] == "completed"
    assert snapshot["messages"] == [
        {
            "messageId": "msg_agent_1",
            "role": "agent",
            "content": [{"type": "text", "text": "Hello"}, {"type": "text", "text": " again"}],
        }
    ]


def test_every_update_before_the_answer_is_applied_when_the_prompt_returns() -> None:
    async def script(turn: kit.Turn) -> None:
        for n in range(500):
            await turn.say(f"{n} ")

    async def scenario() -> tuple[int, str]:
        remote, _ = await connected(ScriptAgent(script))
        session = await remote.new_session()
        result = await session.prompt("count")
        return len(result.updates), session.state.last_text()

    count, text = run(scenario())
    assert count == 500
    assert text == "".join(f"{n} " for n in range(500))


def test_a_refusing_policy_and_an_error_answer() -> None:
    async def failing(turn: kit.Turn) -> None:
        raise acp.RpcError(-32000, "Authentication required")

    async def scenario() -> tuple[kit.TurnResult, str, str | None, str]:
        remote, _ = await connected(ScriptAgent(tool_script), kit.Client(permissions=kit.deny))
        refused = await (await remote.new_session()).prompt("hi")
        remote2, _ = await connected(ScriptAgent(failing))
        session = await remote2.new_session()
        try:
            await session.prompt("hi")
        except acp.RpcError as exc:
            error = str(exc)
        return refused, session.state.state, session.state.stop_reason, error

    refused, state, stop, error = run(scenario())
    assert (refused.stop_reason, refused.text) == ("end_turn", "Hello again")
    assert acp.encode(refused.updates[2])["status"] == "failed"
    assert (state, stop) == ("idle", None)
    assert error == str(acp.RpcError(-32000, "Authentication required"))


def test_cancel_answers_the_pending_permission_request_cancelled() -> None:
    asked = asyncio.Event()

    async def never(request: acp.RequestPermissionRequest) -> acp.PermissionOption | None:
        asked.set()
        await asyncio.sleep(30)
        return None

    async def scenario() -> tuple[kit.TurnResult, Any]:
        client = kit.Client(permissions=never)
        remote, agent_conn = await connected(ScriptAgent(tool_script), client)
        answers: list[Any] = []
        agent_conn.add_tap(lambda direction, line: answers.append((direction, line)))
        session = await remote.new_session()
        pending = asyncio.ensure_future(session.prompt("hi"))
        await asked.wait()
        await session.cancel()
        result = await pending
        await asyncio.sleep(0.05)  # the permission answer reaches the agent
        incoming = [line for direction, line in answers if direction == "in"]
        return result, incoming

    result, incoming = run(scenario())
    assert result.stop_reason == "cancelled"
    assert b'{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"cancelled"}}}' in incoming


def test_subscriptions_see_each_update_once_applied() -> None:
    async def scenario() -> tuple[list[str], list[str]]:
        remote, _ = await connected(ScriptAgent(tool_script))
        session = await remote.new_session()
        seen: list[str] = []
        session.subscribe(lambda u: seen.append(str(acp.encode(u)["sessionUpdate"])))
        streamed: list[str] = []

        async def read() -> None:
            async for update in session.updates():
                streamed.append(str(acp.encode(update)["sessionUpdate"]))

        reader = asyncio.ensure_future(read())
        await asyncio.sleep(0)
        await session.prompt("hi")
        await session.close()
        await reader
        return seen, streamed

    seen, streamed = run(scenario())
    expected = ["agent_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]
    assert seen == streamed == expected


def test_load_rebuilds_the_state_list_pages_resume_and_delete() -> None:
    class Paged(ScriptAgent):
        sessions_per_page = 1

    async def scenario() -> list[Any]:
        remote, _ = await connected(Paged(tool_script))
        first = await remote.new_session("/w")
        await first.prompt("hi")
        second = await remote.new_session("/v")
        listed = [s.session_id for s in await remote.list_sessions()]
        only_w = [s.session_id for s in await remote.list_sessions("/w")]
        first.state.apply_json({"sessionUpdate": "current_mode_update", "currentModeId": "x"})
        loaded = await remote.load_session(first.id, "/w")
        snapshot = loaded.state.snapshot()
        resumed = await remote.resume_session(second.id, "/v")
        await remote.delete_session(second.id)
        after = [s.session_id for s in await remote.list_sessions()]
        return [listed, only_w, [first.id, second.id], snapshot, resumed is second, after]

    listed, only_w, ids, snapshot, same, after = run(scenario())
    assert (listed, only_w, after) == (ids, ids[:1], ids[:1])
    assert same
    assert snapshot["currentModeId"] is None  # the state was rebuilt from the replay
    assert [m["role"] for m in snapshot["messages"]] == ["user", "agent"]
    assert snapshot["toolCalls"]["call_001"]["status"] == "completed"


def test_an_agent_of_another_protocol_version_is_refused() -> None:
    class Later(ScriptAgent):
        async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
            return acp.InitializeResponse(protocol_version=2)

    async def scenario() -> str:
        try:
            await connected(Later())
        except kit.IncompatibleAgent as exc:
            return str(exc)
        return "accepted"

    assert run(scenario()) == "the agent speaks protocol version 2, this client 1"


def test_spawn_agent_runs_the_example_agent_and_reaps_it() -> None:
    async def scenario() -> tuple[kit.TurnResult, int | None]:
        async with kit.spawn_agent(*ECHO_AGENT, permissions=kit.allow) as agent:
            session = await agent.new_session()
            result = await session.prompt("hello there")
            connection = agent.connection
        assert isinstance(connection, acp.ProcessConnection)
        return result, connection.returncode

    result, code = run(scenario(), timeout=30)
    assert (result.stop_reason, result.text, code) == ("end_turn", "You said: hello there.", 0)
