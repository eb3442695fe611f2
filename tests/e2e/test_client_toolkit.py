"""The client toolkit (`acp_kit.Client`, `RemoteAgent`, `RemoteSession`, `spawn_agent`) on each
protocol version: our client against our agent over in-memory pipes (an agent serving the
`lane` only, so every v1 case also proves the fallback: the client asks for the newest version
and speaks the one answered), against raw agents that answer wrong, and against the example
agent spawned as a real process. The same `RemoteSession` API on both; `features` says what
differs."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

import acp_kit as kit
import pytest
from acp_kit.runtime.connection import RoleBase
from acp_kit.runtime.jsonrpc import Route

from tests.support.rpc_wire import pipe, run
from tests.support.toolkit_wire import V1, V2, ScriptAgent, WireLane, not_found
from tests.support.toolkit_wire import text as text_block

REPO = Path(__file__).resolve().parents[2]
ECHO_AGENT = [sys.executable, str(REPO / "examples" / "echo_agent.py")]


def only(lane: WireLane, agent: kit.Agent) -> kit.Agent:
    """`agent`, serving `lane` only."""
    agent.lanes = (lane.name,)  # type: ignore[misc]  # an instance's own choice, for tests
    return agent


async def connected(
    agent: Any,
    client: kit.Client | None = None,
    *,
    protocol: int | None = None,
    taps: list[Any] | None = None,
    pipes: list[Any] | None = None,
) -> tuple[kit.RemoteAgent, kit.Connection]:
    """Our client joined to `agent` (an Agent, served behind the router, or a raw handler) by
    in-memory pipes, initialized. `taps` gets what the agent's connection reads and writes,
    `pipes` the agent's output pipe."""
    from acp_kit.toolkit.router import AgentRouter

    to_agent, client_out = pipe()
    to_client, agent_out = pipe()
    handler = AgentRouter(agent) if isinstance(agent, kit.Agent) else agent
    if pipes is not None:
        pipes.append(agent_out)
    agent_conn = kit.Connection(handler, to_agent, agent_out)
    if taps is not None:
        agent_conn.add_tap(lambda direction, line: taps.append((direction, line)))
    agent_conn.start()
    client = kit.Client(permissions=kit.allow) if client is None else client
    connection = kit.Connection(RoleBase(), to_client, client_out)
    return await kit.connect_agent(client, connection, protocol=protocol), agent_conn


def kinds(updates: list[Any]) -> list[str]:
    return [str(kit.encode(u)["sessionUpdate"]) for u in updates]


async def tool_script(turn: kit.Turn) -> kit.TurnStopReason:
    await turn.say("Hello")
    tool = await turn.tool_call("Tool")
    if await turn.ask_permission(tool):
        await tool.complete("done")
    else:
        await tool.fail("refused")
    await turn.say(" again")
    return "end_turn"


TOOL_TURN = {
    "v1": ["agent_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"],
    "v2": ["user_message", "state_update", "agent_message_chunk", "tool_call_update",
           "state_update", "state_update", "tool_call_update", "agent_message_chunk",
           "state_update"],
}  # fmt: skip


# -- a turn --------------------------------------------------------------------------------------
def test_a_prompt_returns_once_the_turn_ended_with_its_updates(lane: WireLane) -> None:
    async def scenario() -> tuple[kit.TurnResult, kit.RemoteAgent, dict[str, Any]]:
        remote, _ = await connected(only(lane, ScriptAgent(tool_script)))
        session = await remote.new_session("/w")
        result = await session.prompt("hi")
        return result, remote, session.state.snapshot()

    result, remote, snapshot = run(scenario())
    assert (remote.features.version, remote.lane.name, session_lane(remote)) == (
        lane.version,
        lane.name,
        lane.name,
    )
    assert (result.stop_reason, result.error, result.text) == ("end_turn", None, "Hello again")
    assert result.message_id == lane.pick(v1=None, v2="msg_user_1")
    assert kinds(result.updates) == TOOL_TURN[lane.name]
    info = remote.info.agent_info if lane.v1 else remote.info.info
    assert info.name == "script-agent"
    assert (snapshot["state"], snapshot["stopReason"]) == ("idle", "end_turn")
    assert snapshot["toolCalls"]["call_001"]["status"] == "completed"
    agent_message = [text_block("Hello"), text_block(" again")]
    messages = [(m["messageId"], m["role"], m["content"]) for m in snapshot["messages"]]
    assert messages == lane.pick(
        v1=[("msg_agent_1", "agent", agent_message)],  # v1 does not echo the prompt
        v2=[("msg_user_1", "user", [text_block("hi")]), ("msg_agent_1", "agent", agent_message)],
    )


def session_lane(remote: kit.RemoteAgent) -> str:
    return remote.client.lane.name if remote.client.lane is not None else ""


def test_every_update_before_the_turns_end_is_applied_when_the_prompt_returns(
    lane: WireLane,
) -> None:
    async def script(turn: kit.Turn) -> None:
        for n in range(500):
            await turn.say(f"{n} ")

    async def scenario() -> tuple[int, str, str]:
        remote, _ = await connected(only(lane, ScriptAgent(script)))
        session = await remote.new_session()
        result = await session.prompt("count")
        said = [
            u for u in result.updates if kit.encode(u)["sessionUpdate"] == "agent_message_chunk"
        ]
        return len(said), result.text, session.state.message_text("msg_agent_1")

    count, text, state_text = run(scenario())
    expected = "".join(f"{n} " for n in range(500))
    assert (count, text, state_text) == (500, expected, expected)


def test_a_failed_turn_is_an_error_answer_on_v1_and_an_error_stop_reason_on_v2(
    lane: WireLane,
) -> None:
    async def script(turn: kit.Turn) -> None:
        raise kit.RpcError(-32000, "Authentication required")

    async def scenario() -> tuple[Any, Any]:
        remote, _ = await connected(only(lane, ScriptAgent(script)))
        session = await remote.new_session()
        try:
            result = await session.prompt("hi")
        except kit.RpcError as exc:
            return exc.to_json(), (session.state.state, session.state.stop_reason)
        return (result.stop_reason, kit.encode(result.error)), (
            session.state.state,
            session.state.stop_reason,
        )

    outcome, state = run(scenario())
    error = {"code": -32000, "message": "Authentication required"}
    assert outcome == lane.pick(v1=error, v2=("error", error))
    assert state == lane.pick(v1=("idle", None), v2=("idle", "error"))


def test_subscribers_and_streams_see_every_update_once_it_is_applied(lane: WireLane) -> None:
    async def scenario() -> tuple[list[Any], list[str], list[str], int]:
        remote, _ = await connected(only(lane, ScriptAgent(tool_script)))
        session = await remote.new_session()
        states: list[Any] = []
        seen: list[Any] = []

        async def slow(update: Any) -> None:
            await asyncio.sleep(0)
            seen.append(update)

        session.subscribe(lambda update: states.append(session.state.tool_call_status("call_001")))
        session.subscribe(slow)
        stream = session.updates()

        async def read_all() -> list[Any]:
            return [update async for update in stream]

        reader = asyncio.ensure_future(read_all())
        result = await session.prompt("hi")
        await session.close()
        streamed = await asyncio.wait_for(reader, 5)
        return states, kinds(seen), kinds(streamed), len(result.updates)

    states, seen, streamed, count = run(scenario())
    assert seen == streamed == TOOL_TURN[lane.name]
    assert count == len(seen)
    # each callback saw the state with its update applied: the tool call appears with it
    assert states == lane.pick(
        v1=[None, "pending", "completed", "completed"],
        v2=[None, None, None, "pending", "pending", "pending", "completed", "completed",
            "completed"],
    )  # fmt: skip


@pytest.mark.parametrize(
    ("policy", "v1", "v2"),
    [
        ("allow", ("completed", "end_turn"), ("completed", "end_turn")),
        ("deny", ("failed", "end_turn"), ("failed", "end_turn")),
        ("dismiss", ("pending", "cancelled"), ("cancelled", "cancelled")),
        ("broken", ("pending", "cancelled"), ("cancelled", "cancelled")),
        ("alien", ("pending", "cancelled"), ("cancelled", "cancelled")),
    ],
)
def test_the_permission_policy_answers_the_agent(
    lane: WireLane, policy: str, v1: Any, v2: Any
) -> None:
    """A policy's None, an exception in it, or an option that was not offered all dismiss the
    request (answered `cancelled`): the turn ends `cancelled`. v2's agent closes the tool
    call; on v1 it stays as the agent left it."""
    acp = lane.acp

    async def dismiss(request: Any) -> Any:
        return None

    async def broken(request: Any) -> Any:
        raise RuntimeError("the UI crashed")

    async def alien(request: Any) -> Any:
        option = acp.PermissionOption(option_id="not-offered", name="?", kind="allow_once")
        return option

    policies = {"allow": kit.allow, "deny": kit.deny, "dismiss": dismiss, "broken": broken,
                "alien": alien}  # fmt: skip

    async def scenario() -> tuple[str | None, str | None]:
        client = kit.Client(permissions=policies[policy])
        remote, _ = await connected(only(lane, ScriptAgent(tool_script)), client)
        session = await remote.new_session()
        result = await session.prompt("hi")
        return session.state.tool_call_status("call_001"), result.stop_reason

    assert run(scenario()) == lane.pick(v1=v1, v2=v2)


def test_cancel_answers_the_pending_permission_request_and_the_turn_ends_cancelled(
    lane: WireLane,
) -> None:
    asked = asyncio.Event()

    async def never(request: Any) -> Any:
        asked.set()
        await asyncio.sleep(60)
        return None

    async def scenario() -> tuple[kit.TurnResult, bool, list[bytes]]:
        taps: list[Any] = []  # what the agent's connection reads
        client = kit.Client(permissions=never)
        remote, _ = await connected(only(lane, ScriptAgent(tool_script)), client, taps=taps)
        session = await remote.new_session()
        turn = asyncio.ensure_future(session.prompt("hi"))
        await asked.wait()
        await session.cancel()
        result = await asyncio.wait_for(turn, 5)
        await asyncio.sleep(0.05)  # the permission answer reaches the agent
        incoming = [line for direction, line in taps if direction == "in"]
        return result, session.cancelling, incoming[-2:]

    result, cancelling, last_in = run(scenario())
    assert (result.stop_reason, cancelling) == ("cancelled", True)
    # v1 requires the cancelling client to answer the request `cancelled`; a v2 agent withdraws
    # it too ($/cancel_request), and the answer is the same
    answered = b'{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"cancelled"}}}'
    assert answered in last_in
    assert any(b'"method":"session/cancel"' in line for line in last_in)


def test_updates_that_precede_the_session_new_answer_are_kept(lane: WireLane) -> None:
    class Early(ScriptAgent):
        async def on_new_session(self, session: kit.AgentSession) -> None:
            await session.set_title("Early bird")

    async def scenario() -> Any:
        remote, _ = await connected(only(lane, Early()))
        session = await remote.new_session()
        return session.state.snapshot()["sessionInfo"]["title"]

    assert run(scenario()) == "Early bird"


def test_two_prompts_at_once_each_end_with_their_own_turn(lane: WireLane) -> None:
    async def script(turn: kit.Turn) -> None:
        await asyncio.sleep(0.02)
        await turn.say(f"echo {turn.text}")

    async def scenario() -> list[tuple[str | None, str | None, str, int]]:
        remote, _ = await connected(only(lane, ScriptAgent(script)))
        session = await remote.new_session()
        # The agent holds the second prompt until the first turn ended.
        results = await asyncio.gather(session.prompt("one"), session.prompt("two"))
        return [(r.message_id, r.stop_reason, r.text, len(r.updates)) for r in results]

    assert run(scenario()) == lane.pick(
        v1=[(None, "end_turn", "echo one", 1), (None, "end_turn", "echo two", 1)],
        v2=[("msg_user_1", "end_turn", "echo one", 4), ("msg_user_2", "end_turn", "echo two", 4)],
    )


# -- sessions ------------------------------------------------------------------------------------
def test_list_sessions_follows_every_page(lane: WireLane) -> None:
    class Paged(ScriptAgent):
        sessions_per_page = 2

    async def scenario() -> tuple[list[str], list[str], list[str]]:
        remote, _ = await connected(only(lane, Paged()))
        made = [(await remote.new_session(cwd)).id for cwd in ("/a", "/b", "/a", "/a", "/c")]
        listed = [s.session_id for s in await remote.list_sessions()]
        in_a = [s.session_id for s in await remote.list_sessions("/a")]
        return made, listed, in_a

    made, listed, in_a = run(scenario())
    assert listed == made
    assert in_a == [made[0], made[2], made[3]]


def test_load_session_rebuilds_the_state_from_the_agents_replay(lane: WireLane) -> None:
    """v1's `session/load`, v2's `session/resume` from the start: the same call."""

    async def scenario() -> tuple[dict[str, Any], dict[str, Any], bool]:
        remote, _ = await connected(only(lane, ScriptAgent(tool_script)))
        session = await remote.new_session("/w")
        await session.prompt("hi")
        before = session.state.snapshot()
        session.state.apply_json({"sessionUpdate": "session_info_update", "title": "stale"})
        loaded = await remote.load_session(session.id, "/w")
        return before, loaded.state.snapshot(), loaded is session

    before, after, same = run(scenario())
    assert same
    assert after["sessionInfo"] == {}  # rebuilt: the stale title is gone
    whole = [text_block("Hello again")]
    assert [(m["messageId"], m["role"], m["content"]) for m in after["messages"]] == [
        ("msg_user_1", "user", [text_block("hi")]),
        ("msg_agent_1", "agent", whole),  # replayed whole
    ]
    assert after["toolCalls"] == before["toolCalls"]
    assert (after["state"], after["stopReason"]) == lane.pick(
        v1=("idle", None), v2=("idle", "end_turn")
    )


def test_resume_delete_and_close(lane: WireLane) -> None:
    async def scenario() -> list[Any]:
        agent = only(lane, ScriptAgent())
        remote, _ = await connected(agent)
        first, second = await remote.new_session("/w"), await remote.new_session("/v")
        resumed = await remote.resume_session(second.id, "/v", replay=False)
        await remote.delete_session(second.id)
        after_delete = [s.session_id for s in await remote.list_sessions()]
        agent.sessions.remove(first.id)  # the agent lost it (evicted): closing it is fine
        await first.close()
        return [resumed is second, after_delete, [first.id], remote.client.sessions]

    same, after_delete, ids, sessions = run(scenario())
    assert (same, after_delete, sessions) == (True, ids, {})


def test_a_closed_sessions_stream_ends(lane: WireLane) -> None:
    async def scenario() -> tuple[bool, list[Any]]:
        remote, _ = await connected(only(lane, ScriptAgent()))
        session = await remote.new_session()
        await session.close()
        return session.id in remote.client.sessions, [u async for u in session.updates()]

    assert run(scenario()) == (False, [])


def test_a_refused_prompt_raises_the_agents_error(lane: WireLane) -> None:
    async def scenario() -> Any:
        remote, _ = await connected(only(lane, ScriptAgent()))
        session = kit.RemoteSession(remote.client, "no-such-session", remote.lane)
        with pytest.raises(kit.RpcError) as caught:
            await session.prompt("hi")
        return caught.value.to_json()

    assert run(scenario()) == not_found("no-such-session")


def test_an_agent_that_goes_away_mid_turn_fails_the_prompt(lane: WireLane) -> None:
    async def script(turn: kit.Turn) -> None:
        await turn.say("bye")
        await asyncio.sleep(60)

    async def scenario() -> None:
        pipes: list[Any] = []
        remote, _ = await connected(only(lane, ScriptAgent(script)), pipes=pipes)
        session = await remote.new_session()
        turn = asyncio.ensure_future(session.prompt("hi"))
        await asyncio.sleep(0.05)
        pipes[0].close()  # the agent's output ends: it died
        with pytest.raises(kit.ConnectionClosed):
            await asyncio.wait_for(turn, 5)

    run(scenario())


# -- versions: fallback, forcing, what differs ---------------------------------------------------
def test_the_client_asks_for_the_newest_version_and_speaks_what_the_agent_answers() -> None:
    async def scenario(agent: kit.Agent) -> tuple[list[Any], int, str]:
        taps: list[Any] = []
        remote, _ = await connected(agent, taps=taps)
        asked = [line for direction, line in taps if direction == "in"][0]
        session = await remote.new_session()
        result = await session.prompt("hi")
        return [asked], remote.features.version, str(result.stop_reason)

    both = run(scenario(ScriptAgent()))
    v1_only = run(scenario(only(V1, ScriptAgent())))
    request = (b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,'
               b'"info":{"name":"acp-client","version":"0.0.0"},"capabilities":{}}}')  # fmt: skip
    assert both == ([request], 2, "end_turn")
    assert v1_only == ([request], 1, "end_turn")  # the same request; v1 answered


@pytest.mark.parametrize("version", [1, 2])
def test_protocol_forces_a_version(version: int) -> None:
    async def scenario() -> tuple[int, str | None]:
        remote, _ = await connected(ScriptAgent(), protocol=version)
        result = await (await remote.new_session()).prompt("hi")
        return remote.features.version, result.stop_reason

    assert run(scenario()) == (version, "end_turn")


def test_forcing_a_version_the_agent_does_not_answer_is_incompatible() -> None:
    async def scenario() -> str:
        with pytest.raises(kit.IncompatibleAgent) as caught:
            await connected(only(V1, ScriptAgent()), protocol=2)
        return str(caught.value)

    assert run(scenario()) == (
        "the agent answered with protocol version 1; this client asked for 2 only"
    )


def test_an_agent_that_refuses_the_version_asked_for_is_incompatible_naming_both_sides() -> None:
    """-32022 from the agent (every version it serves is above the one asked for)."""

    async def scenario() -> str:
        with pytest.raises(kit.IncompatibleAgent) as caught:
            await connected(only(V2, ScriptAgent()), protocol=1)
        return str(caught.value)

    assert run(scenario()) == (
        "the agent speaks protocol version 2; this client speaks 1, 2 (it asked for 1)"
    )

    class Refusing(RoleBase):
        ROUTES = {("initialize", "request"): Route("initialize", "request", None, None)}

        async def initialize(self, params: Any) -> Any:
            raise kit.RpcError(-32022, "Unsupported protocol version", "no")

    async def odd() -> str:
        with pytest.raises(kit.IncompatibleAgent) as caught:
            await connected(Refusing())
        return str(caught.value)

    assert run(odd()) == "the agent speaks no protocol version up to 2; this client speaks 1, 2"


def test_forcing_a_version_the_client_does_not_have_is_a_value_error() -> None:
    async def scenario() -> str:
        with pytest.raises(ValueError) as caught:
            await connected(ScriptAgent(), protocol=3)
        return str(caught.value)

    assert run(scenario()) == "protocol version 3 is not one this client has (1, 2)"


class RawAgent(RoleBase):
    """An agent that answers `initialize` with `answer` and nothing else."""

    ROUTES = {("initialize", "request"): Route("initialize", "request", None, None)}

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    async def initialize(self, params: Any) -> Any:
        return self.answer


@pytest.mark.parametrize(
    ("answer", "lanes", "message"),
    [
        ({"protocolVersion": 3}, None,
         "the agent speaks protocol version 3; this client speaks 1, 2 (it asked for 2)"),
        ({"protocolVersion": 1, "agentCapabilities": {}}, ("v2",),
         "the agent speaks protocol version 1; this client speaks 2 (it asked for 2)"),
        ({"protocolVersion": "2"}, None,
         "the agent's initialize answer names no protocol version (this client speaks 1, 2)"),
        ({}, None,
         "the agent's initialize answer names no protocol version (this client speaks 1, 2)"),
        ({"protocolVersion": 2}, None,
         "the agent's initialize answer is not protocol version 2's: $.info: missing required"
         " field"),
    ],
    ids=["newer", "older", "string", "missing", "undecodable"],
)  # fmt: skip
def test_an_agent_of_no_shared_version_is_one_error_naming_both_sides_versions(
    answer: Any, lanes: Any, message: str
) -> None:
    async def scenario() -> str:
        client = kit.Client(lanes=lanes)
        with pytest.raises(kit.IncompatibleAgent) as caught:
            await connected(RawAgent(answer), client)
        return str(caught.value)

    assert run(scenario()) == message


def test_the_client_lane_and_features_say_what_differs(lane: WireLane) -> None:
    async def scenario() -> tuple[kit.ProtocolFeatures, kit.ProtocolFeatures]:
        remote, _ = await connected(only(lane, ScriptAgent()))
        session = await remote.new_session()
        return remote.features, session.features

    agent_features, session_features = run(scenario())
    assert agent_features is session_features
    assert (agent_features.version, agent_features.state_updates) == (lane.version, not lane.v1)


# -- sessions this client did not open -----------------------------------------------------------
def test_updates_for_sessions_the_client_did_not_open_are_dropped_and_logged_once(
    lane: WireLane, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> tuple[dict[str, Any], list[str]]:
        agent = only(lane, ScriptAgent())
        remote, agent_conn = await connected(agent)
        session = await remote.new_session()
        side = agent_conn.handler  # the agent's AgentSide: it may notify any session id
        m = lane.acp
        for n in range(3):
            for ghost in ("ghost_a", "ghost_b"):
                update = m.SessionUpdateAgentMessageChunk(
                    message_id="x", content=m.ContentBlockText(text=str(n))
                )
                await side.client.session_update(side.dialect.note(ghost, update))
        result = await session.prompt("hi")
        return session.state.snapshot(), [str(result.stop_reason), *remote.client.sessions]

    with caplog.at_level(logging.WARNING, logger="acp_kit.toolkit.client"):
        snapshot, (stop, *sessions) = run(scenario())
    assert stop == "end_turn" and len(sessions) == 1  # no session was made for the ghosts
    assert [m["content"] for m in snapshot["messages"] if m["role"] == "agent"] == [
        [text_block("ok")]
    ]
    assert [r.getMessage() for r in caplog.records] == [
        "dropped updates for session 'ghost_a', which this client did not open",
        "dropped updates for session 'ghost_b', which this client did not open",
    ]


def test_a_permission_request_for_a_session_the_client_did_not_open_is_not_found(
    lane: WireLane,
) -> None:
    asked: list[Any] = []

    async def policy(request: Any) -> Any:
        asked.append(request)
        return None

    async def scenario() -> Any:
        remote, agent_conn = await connected(
            only(lane, ScriptAgent()), kit.Client(permissions=policy)
        )
        await remote.new_session()
        m = lane.acp
        option = m.PermissionOption(option_id="a", name="A", kind="allow_once")
        subject = m.ToolCallUpdate(tool_call_id="c")
        if lane.v1:
            request = m.RequestPermissionRequest(session_id="ghost", tool_call=subject,
                                                 options=[option])  # fmt: skip
        else:
            request = m.RequestPermissionRequest(
                session_id="ghost", title="?", options=[option],
                subject=m.RequestPermissionSubjectToolCall(tool_call=subject),
            )  # fmt: skip
        with pytest.raises(kit.RpcError) as caught:
            await agent_conn.handler.client.session_request_permission(request)
        return caught.value.to_json()

    assert run(scenario()) == not_found("ghost")
    assert asked == []  # the policy never saw it


def test_a_stream_left_unread_is_dropped_after_the_stall_timeout_and_the_turn_goes_on(
    lane: WireLane, caplog: pytest.LogCaptureFixture
) -> None:
    async def script(turn: kit.Turn) -> None:
        for n in range(1500):  # more than a stream holds (1024)
            await turn.say(f"{n} ")

    async def scenario() -> tuple[str | None, int, int, Any]:
        client = kit.Client(permissions=kit.allow, stall_timeout=0.2)
        remote, _ = await connected(only(lane, ScriptAgent(script)), client)
        session = await remote.new_session()
        forgotten = session.updates()  # held, never read
        result = await session.prompt("go")
        buffered = forgotten.buffered
        after = await session.prompt("again")  # the connection carries on
        return result.stop_reason, len(result.updates), buffered, after.stop_reason

    with caplog.at_level(logging.WARNING):
        stop, count, buffered, again = run(scenario(), timeout=30)
    assert (stop, again) == ("end_turn", "end_turn")
    assert count == lane.pick(v1=1500, v2=1503)  # v2: the echo, running, ..., idle
    assert buffered == 1024  # what it held when dropped; nothing more was queued for it
    [warning] = [r.getMessage() for r in caplog.records if "not read" in r.getMessage()]
    assert warning.startswith("an updates() stream of session sess_")
    assert warning.endswith(
        "was not read for 0.2 s with 1024 items waiting: dropped (read it, or leave its"
        " `async for`)"
    )


# -- the ask_user policy, a real process ---------------------------------------------------------
def test_ask_user_dismisses_without_a_terminal(
    lane: WireLane, caplog: pytest.LogCaptureFixture
) -> None:
    m = lane.acp
    option = m.PermissionOption(option_id="a", name="A", kind="allow_once")
    subject = m.ToolCallUpdate(tool_call_id="c", title="Edit")
    if lane.v1:
        request = m.RequestPermissionRequest(session_id="s", tool_call=subject, options=[option])
    else:
        request = m.RequestPermissionRequest(
            session_id="s", title="Allow?", options=[option],
            subject=m.RequestPermissionSubjectToolCall(tool_call=subject),
        )  # fmt: skip
    assert not sys.stdin.isatty()  # pytest captures stdin
    assert run(kit.ask_user(request)) is None
    title = lane.pick(v1="\"Allow 'Edit'?\"", v2="'Allow?'")
    assert f"permission request {title} dismissed: stdin is not a terminal" in caplog.text


@pytest.mark.parametrize("version", [1, 2])
def test_spawn_agent_initializes_runs_a_turn_and_reaps_the_process(version: int) -> None:
    async def scenario() -> tuple[kit.TurnResult, str, int | None, int]:
        async with kit.spawn_agent(*ECHO_AGENT, permissions=kit.allow, protocol=version) as agent:
            process = agent.connection
            assert isinstance(process, kit.ProcessConnection)
            session = await agent.new_session()
            result = await session.prompt("hello there")
            info = agent.info.agent_info if version == 1 else agent.info.info
            spoken = agent.features.version
        return result, info.name, process.returncode, spoken

    result, name, returncode, spoken = run(scenario(), timeout=30)
    assert (name, spoken) == ("acp-codegen-echo-agent", version)
    assert (result.stop_reason, result.text) == ("end_turn", "You said: hello there.")
    assert returncode == 0  # it exited once its stdin closed


def test_spawn_agent_of_a_missing_program_raises_os_error() -> None:
    async def scenario() -> None:
        with pytest.raises(OSError):
            async with kit.spawn_agent("/no/such/agent"):
                pass

    run(scenario())


class LyingAgent(RoleBase):
    """A v2 agent that answers a prompt with one user message id and reports another."""

    ROUTES = {
        (name, "request"): Route(name.replace("session/", "session_"), "request", None, None)
        for name in ("initialize", "session/new", "session/prompt")
    }

    async def initialize(self, params: Any) -> Any:
        return {"protocolVersion": 2, "info": {"name": "liar", "version": "1"}, "capabilities": {}}

    async def session_new(self, params: Any) -> Any:
        return {"sessionId": "s"}

    async def session_prompt(self, params: Any) -> Any:
        asyncio.get_running_loop().call_later(0.01, lambda: asyncio.ensure_future(self._turn()))
        return {"messageId": "msg_other"}

    async def _turn(self) -> None:
        def note(update: dict[str, Any]) -> Any:
            return self.connection.notify("session/update", {"sessionId": "s", "update": update})

        await note({"sessionUpdate": "user_message", "messageId": "msg_user_1", "content": []})
        await note({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})


def test_a_prompt_answered_with_another_message_id_than_reported_is_refused() -> None:
    async def scenario() -> str:
        remote, _ = await connected(LyingAgent())
        session = await remote.new_session()
        with pytest.raises(kit.IncompatibleAgent) as caught:
            await session.prompt("hi")
        return str(caught.value)

    assert run(scenario()) == (
        "the agent answered session/prompt with messageId 'msg_other' but reported the user"
        " message 'msg_user_1' for it"
    )
