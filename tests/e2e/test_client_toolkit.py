"""The client toolkit (`acp_v2.Client`, `RemoteAgent`, `RemoteSession`, `spawn_agent`): our
client against our agent toolkit over in-memory pipes, and against the example agent spawned
as a real process."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import acp_kit as kit
import pytest
from acp_kit import v2 as acp

from tests.support.rpc_wire import pipe, run
from tests.support.toolkit_wire import ScriptAgent

REPO = Path(__file__).resolve().parents[2]
ECHO_AGENT = [sys.executable, str(REPO / "examples" / "echo_agent.py")]


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


def test_a_prompt_returns_once_the_turn_is_idle() -> None:
    async def scenario() -> tuple[kit.TurnResult, kit.RemoteAgent, dict[str, Any]]:
        remote, _ = await connected(ScriptAgent(tool_script))
        session = await remote.new_session("/w")
        result = await session.prompt("hi")
        return result, remote, session.state.snapshot()

    result, remote, snapshot = run(scenario())
    assert (result.message_id, result.stop_reason, result.error) == ("msg_user_1", "end_turn", None)
    assert result.text == "Hello again"
    assert kinds(result.updates) == [
        "user_message", "state_update", "agent_message_chunk", "tool_call_update",
        "state_update", "state_update", "tool_call_update", "agent_message_chunk", "state_update",
    ]  # fmt: skip
    assert remote.info.info.name == "script-agent"
    assert snapshot["state"] == "idle" and snapshot["stopReason"] == "end_turn"
    assert snapshot["toolCalls"]["call_001"]["status"] == "completed"
    assert [m["role"] for m in snapshot["messages"]] == ["user", "agent"]


def test_a_failed_turn_carries_its_error() -> None:
    async def script(turn: kit.Turn) -> None:
        raise acp.RpcError(-32000, "Authentication required")

    async def scenario() -> kit.TurnResult:
        remote, _ = await connected(ScriptAgent(script))
        return await (await remote.new_session()).prompt("hi")

    result = run(scenario())
    assert result.stop_reason == "error"
    assert result.error is not None
    assert acp.encode(result.error) == {"code": -32000, "message": "Authentication required"}


def test_subscribers_see_every_update_once_it_is_applied() -> None:
    async def scenario() -> tuple[list[Any], list[Any], list[Any]]:
        remote, _ = await connected(ScriptAgent(tool_script))
        session = await remote.new_session()
        states: list[Any] = []
        seen: list[Any] = []

        async def slow(update: acp.SessionUpdate) -> None:
            await asyncio.sleep(0)
            seen.append(update)

        session.subscribe(lambda update: states.append(session.state.state))
        session.subscribe(slow)
        stream = session.updates()

        async def read_all() -> list[Any]:
            return [update async for update in stream]

        reader = asyncio.ensure_future(read_all())
        result = await session.prompt("hi")
        await session.close()
        streamed = await asyncio.wait_for(reader, 5)
        assert len(result.updates) == len(seen) == len(streamed)
        return states, kinds(seen), kinds(streamed)

    states, seen, streamed = run(scenario())
    assert seen == streamed
    assert states == [
        "idle", "running", "running", "running", "requires_action", "running", "running",
        "running", "idle",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("policy", "tool_status", "stop_reason"),
    [
        ("allow", "completed", "end_turn"),
        ("deny", "failed", "end_turn"),
        ("dismiss", "cancelled", "cancelled"),
        ("broken", "cancelled", "cancelled"),
    ],
)
def test_the_permission_policy_answers_the_agent(
    policy: str, tool_status: str, stop_reason: str
) -> None:
    async def dismiss(request: acp.RequestPermissionRequest) -> acp.PermissionOption | None:
        return None

    async def broken(request: acp.RequestPermissionRequest) -> acp.PermissionOption | None:
        raise RuntimeError("the UI crashed")

    policies = {"allow": kit.allow, "deny": kit.deny, "dismiss": dismiss, "broken": broken}

    async def scenario() -> tuple[kit.TurnResult, str | None]:
        client = kit.Client(permissions=policies[policy])
        remote, _ = await connected(ScriptAgent(tool_script), client)
        session = await remote.new_session()
        result = await session.prompt("hi")
        return result, session.state.tool_call_status("call_001")

    result, status = run(scenario())
    assert (status, result.stop_reason) == (tool_status, stop_reason)


def test_a_policy_picking_an_option_not_offered_is_a_dismissal() -> None:
    async def alien(request: acp.RequestPermissionRequest) -> acp.PermissionOption | None:
        return acp.PermissionOption(option_id="not-offered", name="?", kind="allow_once")

    async def scenario() -> str | None:
        remote, _ = await connected(ScriptAgent(tool_script), kit.Client(permissions=alien))
        return (await (await remote.new_session()).prompt("hi")).stop_reason

    assert run(scenario()) == "cancelled"


def test_cancel_answers_the_pending_permission_request_and_the_turn_ends_cancelled() -> None:
    asked = asyncio.Event()

    async def never(request: acp.RequestPermissionRequest) -> acp.PermissionOption | None:
        asked.set()
        await asyncio.sleep(60)
        return None

    async def scenario() -> tuple[kit.TurnResult, Any]:
        remote, _ = await connected(ScriptAgent(tool_script), kit.Client(permissions=never))
        session = await remote.new_session()
        turn = asyncio.ensure_future(session.prompt("hi"))
        await asked.wait()
        await session.cancel()
        assert session.cancelling
        result = await asyncio.wait_for(turn, 5)
        return result, session.state.tool_call_status("call_001")

    result, status = run(scenario())
    assert (result.stop_reason, status) == ("cancelled", "cancelled")


def test_updates_that_precede_the_session_new_answer_are_kept() -> None:
    class Early(ScriptAgent):
        async def on_new_session(self, session: kit.AgentSession) -> None:
            await session.set_title("Early bird")

    async def scenario() -> dict[str, Any]:
        remote, _ = await connected(Early())
        session = await remote.new_session()
        return session.state.snapshot()["sessionInfo"]

    info = run(scenario())
    assert info["title"] == "Early bird"


def test_list_sessions_follows_every_page() -> None:
    class Paged(ScriptAgent):
        sessions_per_page = 2

    async def scenario() -> tuple[list[str], list[str], list[str]]:
        remote, _ = await connected(Paged())
        made = [(await remote.new_session(cwd)).id for cwd in ("/a", "/b", "/a", "/a", "/c")]
        listed = [s.session_id for s in await remote.list_sessions()]
        in_a = [s.session_id for s in await remote.list_sessions("/a")]
        return made, listed, in_a

    made, listed, in_a = run(scenario())
    assert listed == made
    assert in_a == [made[0], made[2], made[3]]


def test_resume_with_replay_rebuilds_the_session_state() -> None:
    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        remote, _ = await connected(ScriptAgent(tool_script))
        session = await remote.new_session("/w")
        await session.prompt("hi")
        before = session.state.snapshot()
        resumed = await remote.resume_session(session.id, "/w")
        assert resumed is session
        return before, resumed.state.snapshot()

    before, after = run(scenario())
    assert after["messages"] == [
        {"messageId": "msg_user_1", "role": "user", "content": [{"type": "text", "text": "hi"}],
         "meta": None},
        {"messageId": "msg_agent_1", "role": "agent",
         "content": [{"type": "text", "text": "Hello again"}], "meta": None},
    ]  # fmt: skip
    assert [m["messageId"] for m in before["messages"]] == ["msg_user_1", "msg_agent_1"]
    assert after["toolCalls"] == before["toolCalls"]
    assert (after["state"], after["stopReason"]) == ("idle", "end_turn")


def test_close_forgets_the_session_and_an_agent_that_lost_it_is_fine() -> None:
    class Forgetful(ScriptAgent):
        async def session_close(self, params: acp.CloseSessionRequest) -> acp.CloseSessionResponse:
            raise acp.RpcError(-32002, "Resource not found")

    async def scenario() -> tuple[bool, bool]:
        remote, _ = await connected(Forgetful())
        session = await remote.new_session()
        await session.close()
        return session.id in remote.client.sessions, [u async for u in session.updates()] == []

    assert run(scenario()) == (False, True)


def test_a_refused_prompt_raises_the_agents_error() -> None:
    async def scenario() -> Any:
        remote, _ = await connected(ScriptAgent())
        session = remote.client.session("no-such-session")
        with pytest.raises(acp.RpcError) as caught:
            await session.prompt("hi")
        return caught.value.to_json()

    assert run(scenario()) == {
        "code": -32002,
        "message": "Resource not found",
        "data": {"sessionId": "no-such-session"},
    }


def test_an_agent_that_goes_away_mid_turn_fails_the_prompt() -> None:
    async def script(turn: kit.Turn) -> None:
        await turn.say("bye")
        await asyncio.sleep(60)

    async def scenario() -> None:
        remote, agent_conn = await connected(ScriptAgent(script))
        session = await remote.new_session()
        turn = asyncio.ensure_future(session.prompt("hi"))
        await asyncio.sleep(0.05)
        await agent_conn.close()
        with pytest.raises(acp.ConnectionClosed, match="went away before the turn ended"):
            await asyncio.wait_for(turn, 5)

    run(scenario())


def test_an_agent_speaking_another_protocol_version_is_refused() -> None:
    class Old(ScriptAgent):
        async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
            answer = await super().initialize(params)
            answer.protocol_version = 1
            return answer

    async def scenario() -> None:
        with pytest.raises(kit.IncompatibleAgent, match="speaks protocol version 1, this client 2"):
            await connected(Old())

    run(scenario())


def test_ask_user_dismisses_without_a_terminal(caplog: pytest.LogCaptureFixture) -> None:
    request = acp.RequestPermissionRequest(
        session_id="s", title="Allow?",
        options=[acp.PermissionOption(option_id="a", name="A", kind="allow_once")],
    )  # fmt: skip
    assert not sys.stdin.isatty()  # pytest captures stdin
    assert run(kit.ask_user(request)) is None
    assert "dismissed: stdin is not a terminal" in caplog.text


# -- a real process ------------------------------------------------------------------------------
def test_spawn_agent_initializes_runs_a_turn_and_reaps_the_process() -> None:
    async def scenario() -> tuple[kit.TurnResult, str, int | None]:
        async with kit.spawn_agent(*ECHO_AGENT, permissions=kit.allow) as agent:
            process = agent.connection
            assert isinstance(process, acp.ProcessConnection)
            session = await agent.new_session()
            result = await session.prompt("hello there")
            name = agent.info.info.name
        return result, name, process.returncode

    result, name, returncode = run(scenario(), timeout=30)
    assert name == "acp-codegen-echo-agent"
    assert (result.stop_reason, result.text) == ("end_turn", "You said: hello there.")
    assert returncode == 0  # it exited once its stdin closed


def test_spawn_agent_of_a_missing_program_raises_os_error() -> None:
    async def scenario() -> None:
        with pytest.raises(OSError):
            async with kit.spawn_agent("/no/such/agent"):
                pass

    run(scenario())


def test_a_prompt_answered_with_another_message_id_than_reported_is_refused() -> None:
    class Inconsistent(ScriptAgent):
        async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
            answer = await super().session_prompt(params)
            answer.message_id = "msg_other"
            return answer

    async def scenario() -> None:
        remote, _ = await connected(Inconsistent())
        session = await remote.new_session()
        with pytest.raises(kit.IncompatibleAgent) as caught:
            await session.prompt("hi")
        assert str(caught.value) == (
            "the agent answered session/prompt with messageId 'msg_other' but reported the user"
            " message 'msg_user_1' for it"
        )

    run(scenario())


def test_two_prompts_at_once_each_end_with_their_own_turn() -> None:
    async def script(turn: kit.Turn) -> None:
        await asyncio.sleep(0.02)
        await turn.say(f"echo {turn.text}")

    async def scenario() -> list[tuple[str, str | None, str]]:
        remote, _ = await connected(ScriptAgent(script))
        session = await remote.new_session()
        # The agent holds the second prompt until the first turn ended: its answer, and its
        # user message, come after the first turn's idle state.
        results = await asyncio.gather(session.prompt("one"), session.prompt("two"))
        return [(r.message_id, r.stop_reason, r.text) for r in results]

    assert run(scenario()) == [
        ("msg_user_1", "end_turn", "echo one"),
        ("msg_user_2", "end_turn", "echo two"),
    ]
