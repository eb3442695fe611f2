"""The agent toolkit (`acp_v2.Agent`, `Turn`) against the requirements the npm-sdk-2.4.0 v2
schema states, one test per requirement, with exact JSON on the wire (in-memory pipes).

The rules come from the schema's descriptions: the prompt lifecycle (PromptRequest,
StateUpdate, IdleStateUpdate, RequiresActionStateUpdate, CancelSessionNotification,
RequestPermissionOutcome), and the session methods `capabilities.session: {}` commits an
agent to (ListSessionsRequest, ResumeSessionRequest/Response, CloseSessionRequest)."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import acp_kit as kit
import pytest
from acp_kit import v2 as acp

from tests.support.rpc_wire import run
from tests.support.toolkit_wire import (
    ScriptAgent,
    Wire,
    is_idle,
    is_request,
    state,
    text,
    tool_text,
)

PERMISSION_OPTIONS = [
    {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
]


INTERNAL_ERROR = {"code": -32603, "message": "Internal error"}
MCP_STDIO = {"type": "stdio", "name": "fs", "command": "mcp-fs", "args": [], "env": []}


def chunk(kind: str, message_id: str, value: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "messageId": message_id, "content": text(value)}


def states(wire: Wire) -> list[Any]:
    return [u for u in wire.updates() if u["sessionUpdate"] == "state_update"]


def selected(option_id: str) -> dict[str, Any]:
    return {"outcome": {"outcome": "selected", "optionId": option_id}}


# -- initialize ----------------------------------------------------------------------------------
def test_initialize_advertises_the_baseline_session_methods() -> None:
    async def scenario() -> Any:
        return await Wire(ScriptAgent()).initialize()

    assert run(scenario())["result"] == {
        "protocolVersion": 2,
        "info": {"name": "script-agent", "version": "1.0"},
        "capabilities": {"session": {}},
    }


def test_initialize_advertises_the_prompt_content_and_mcp_transports_accepted() -> None:
    class Rich(ScriptAgent):
        title = "Rich agent"
        image_prompts = True
        embedded_context = True
        mcp_transports = frozenset({"stdio"})

    async def scenario() -> Any:
        wire = Wire(Rich())
        answer = await wire.initialize()
        return answer["result"], wire.agent.client_info

    result, client_info = run(scenario())
    assert result == {
        "protocolVersion": 2,
        "info": {"name": "script-agent", "version": "1.0", "title": "Rich agent"},
        "capabilities": {
            "session": {
                "prompt": {"image": {}, "embeddedContext": {}},
                "mcp": {"stdio": {}},
            }
        },
    }
    assert client_info.info.name == "test-client"


# -- a turn --------------------------------------------------------------------------------------
def test_a_turn_answers_with_the_message_id_then_echoes_reports_running_and_ends_idle() -> None:
    async def script(turn: kit.Turn) -> kit.TurnStopReason:
        await turn.say("Hello")
        await turn.think("hmm")
        await turn.say(" world")
        return "end_turn"

    async def scenario() -> tuple[Any, list[Any]]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        answer = await wire.prompt(sid, "hi there")
        await wire.idle()
        return answer, [(m["params"]["sessionId"] == sid, m["params"]["update"]) for m in wire.seen]

    answer, seen = run(scenario())
    assert answer == {"jsonrpc": "2.0", "id": 2, "result": {"messageId": "msg_user_1"}}
    assert all(mine for mine, _ in seen)
    assert [update for _, update in seen] == [
        {"sessionUpdate": "user_message", "messageId": "msg_user_1", "content": [text("hi there")]},
        state("running"),
        chunk("agent_message_chunk", "msg_agent_1", "Hello"),
        chunk("agent_thought_chunk", "msg_thought_1", "hmm"),
        chunk("agent_message_chunk", "msg_agent_1", " world"),
        state("idle", stopReason="end_turn"),
    ]  # fmt: skip


def test_the_answer_to_session_prompt_comes_before_the_turns_first_update() -> None:
    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent())
        sid = await wire.new_session()
        await wire.prompt(sid, "x")
        await wire.idle()
        return wire.wire[1:3]

    first, second = run(scenario())
    assert first == {"jsonrpc": "2.0", "id": 2, "result": {"messageId": "msg_user_1"}}
    assert second["params"]["update"]["sessionUpdate"] == "user_message"


def test_new_message_gives_the_next_chunks_a_new_message_id() -> None:
    async def script(turn: kit.Turn) -> None:
        await turn.say("one")
        turn.new_message()
        await turn.say("two")
        await turn.think("t")

    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        await wire.idle()
        return [(u["sessionUpdate"], u.get("messageId")) for u in wire.updates()[2:-1]]

    assert run(scenario()) == [
        ("agent_message_chunk", "msg_agent_1"),
        ("agent_message_chunk", "msg_agent_2"),
        ("agent_thought_chunk", "msg_thought_1"),
    ]


def test_message_ids_count_per_session_across_turns() -> None:
    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent())
        sid = await wire.new_session()
        answers = []
        for _ in range(2):
            answers.append((await wire.prompt(sid))["result"]["messageId"])
            await wire.idle()
            wire.take()
        other = await wire.new_session("/other")
        answers.append((await wire.prompt(other))["result"]["messageId"])
        return answers

    assert run(scenario()) == ["msg_user_1", "msg_user_2", "msg_user_1"]


def test_a_tool_call_reports_and_tracks_its_state() -> None:
    statuses: list[Any] = []

    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call(
            "Read file", kind="read", raw_input={"path": "/a"},
            locations=[acp.ToolCallLocation(path="/a", line=3)],
        )  # fmt: skip
        statuses.append(tool.status)
        await tool.stream("line 1")  # starts it
        statuses.append(tool.status)
        await tool.stream(acp.ContentBlockText(text="line 2"))
        await tool.update(title="Read /a")
        await tool.complete(["done", acp.ContentBlockText(text="!")], raw_output={"lines": 2})
        statuses.append((tool.status, tool.done, tool.title, len(tool.content)))
        with pytest.raises(kit.TurnEnded, match="call_001 is already completed"):
            await tool.stream("late")

    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        await wire.idle()
        return wire.updates()[2:-1]

    def patch(**fields: Any) -> dict[str, Any]:
        return {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", **fields}

    def chunk(value: str) -> dict[str, Any]:
        return {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "call_001",
                "content": tool_text(value)}  # fmt: skip

    assert run(scenario()) == [
        patch(title="Read file", kind="read", status="pending",
              locations=[{"path": "/a", "line": 3}], rawInput={"path": "/a"}),
        patch(status="in_progress"),
        chunk("line 1"),
        chunk("line 2"),
        patch(title="Read /a"),
        patch(status="completed", content=[tool_text("done"), tool_text("!")],
              rawOutput={"lines": 2}),
    ]  # fmt: skip
    assert statuses == ["pending", "in_progress", ("completed", True, "Read /a", 2)]


def test_a_plan_sends_the_whole_plan_on_each_change() -> None:
    async def script(turn: kit.Turn) -> None:
        plan = await turn.plan(
            "Look", acp.PlanEntry(content="Fix", priority="high", status="pending")
        )
        await plan.start(0)
        await plan.complete(0)
        await plan.replace("Only this")

    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        await wire.idle()
        return [u["plan"] for u in wire.updates()[2:-1]]

    def plan(*entries: tuple[str, str, str]) -> dict[str, Any]:
        rows = [{"content": c, "priority": p, "status": s} for c, p, s in entries]
        return {"type": "items", "planId": "plan_1", "entries": rows}

    assert run(scenario()) == [
        plan(("Look", "medium", "pending"), ("Fix", "high", "pending")),
        plan(("Look", "medium", "in_progress"), ("Fix", "high", "pending")),
        plan(("Look", "medium", "completed"), ("Fix", "high", "pending")),
        plan(("Only this", "medium", "pending")),
    ]


def test_usage_reports_tokens_and_an_optional_cost() -> None:
    async def script(turn: kit.Turn) -> None:
        await turn.usage(10, 100)
        await turn.usage(20, 100, cost=0.5, currency="EUR")
        await turn.usage(30, 100, cost=acp.Cost(amount=1, currency="USD"))

    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        await wire.idle()
        return wire.updates()[2:-1]

    assert run(scenario()) == [
        {"sessionUpdate": "usage_update", "used": 10, "size": 100},
        {"sessionUpdate": "usage_update", "used": 20, "size": 100,
         "cost": {"amount": 0.5, "currency": "EUR"}},
        {"sessionUpdate": "usage_update", "used": 30, "size": 100,
         "cost": {"amount": 1, "currency": "USD"}},
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("returned", "ending"),
    [
        (None, {"stopReason": "end_turn"}),
        ("refusal", {"stopReason": "refusal"}),
        ("max_tokens", {"stopReason": "max_tokens"}),
        (kit.CustomStopReason("_budget"), {"stopReason": "_budget"}),
        ("finished", {"stopReason": "error", "error": INTERNAL_ERROR}),
    ],
)  # fmt: skip
def test_the_returned_stop_reason_ends_the_turn(returned: Any, ending: dict[str, Any]) -> None:
    async def script(turn: kit.Turn) -> Any:
        return returned

    async def scenario() -> Any:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        return await wire.idle()

    assert run(scenario()) == state("idle", **ending)


def test_an_exception_fails_open_tool_calls_and_ends_the_turn_error_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def script(turn: kit.Turn) -> None:
        await turn.tool_call("Search")
        raise KeyError("index")

    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        await wire.idle()
        return wire.updates()[-2:] + await wire.quiet()

    with caplog.at_level(logging.ERROR, logger="acp_v2.agent"):
        tail = run(scenario())
    assert tail == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "status": "failed"},
        state("idle", stopReason="error", error={"code": -32603, "message": "Internal error"}),
    ]
    [record] = caplog.records
    assert record.getMessage().endswith("failed: KeyError: 'index'")
    assert record.exc_info is not None  # a bug in the agent: the traceback helps


def test_an_rpc_error_ends_the_turn_with_its_code_and_message_in_one_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def script(turn: kit.Turn) -> None:
        raise acp.RpcError(-32000, "Authentication required")

    async def scenario() -> Any:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        return await wire.idle()

    with caplog.at_level(logging.ERROR, logger="acp_v2.agent"):
        idle = run(scenario())
    assert idle == state(
        "idle", stopReason="error", error={"code": -32000, "message": "Authentication required"}
    )
    [record] = caplog.records
    assert record.exc_info is None


def test_tool_calls_left_open_by_a_turn_that_returns_are_failed_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call("Build")
        await tool.start()

    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        await wire.idle()
        return wire.updates()[-2:]

    with caplog.at_level(logging.WARNING, logger="acp_v2.agent"):
        tail = run(scenario())
    assert tail == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "status": "failed"},
        state("idle", stopReason="end_turn"),
    ]
    assert [r.getMessage() for r in caplog.records] == [
        "the turn ended with tool calls still open: ['call_001']"
    ]


def test_nothing_can_be_reported_for_a_turn_that_has_ended() -> None:
    kept: list[kit.Turn] = []

    async def script(turn: kit.Turn) -> None:
        kept.append(turn)

    async def scenario() -> None:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        await wire.idle()
        [turn] = kept
        assert turn.ended
        with pytest.raises(kit.TurnEnded, match="this turn has ended"):
            await turn.say("late")
        assert await wire.quiet() == []

    run(scenario())


# -- permission requests -------------------------------------------------------------------------
async def ask_and_answer(answer: Any, remember: bool = True) -> tuple[list[Any], list[Any]]:
    """A turn that asks permission for a tool call; the client answers `answer`."""
    got: list[Any] = []

    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call("Run tests", kind="execute")
        permission = await turn.ask_permission(tool, remember=remember)
        got.append((bool(permission), permission.option and permission.option.option_id))
        await (tool.complete("ok") if permission else tool.fail("not allowed"))

    wire = Wire(ScriptAgent(script))
    sid = await wire.new_session()
    await wire.prompt(sid)
    asked = await wire.until(is_request("session/request_permission"))
    wire.reply(asked["id"], answer)
    await wire.idle()
    return [
        m for m in wire.seen if m is asked or "method" in m and m["method"] == "session/update"
    ], got


def test_a_permission_request_reports_requires_action_then_running() -> None:
    seen, got = run(ask_and_answer(selected("allow-once")))
    assert [m.get("params", {}).get("update", m) for m in seen[3:]] == [
        state("requires_action"),
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "session/request_permission",
            "params": {
                "sessionId": seen[0]["params"]["sessionId"],
                "title": 'Allow "Run tests" to run?',
                "options": PERMISSION_OPTIONS,
                "subject": {
                    "type": "tool_call",
                    "toolCall": {"toolCallId": "call_001", "title": "Run tests"},
                },
            },
        },
        state("running"),
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "status": "completed",
         "content": [tool_text("ok")]},
        state("idle", stopReason="end_turn"),
    ]  # fmt: skip
    assert got == [(True, "allow-once")]


@pytest.mark.parametrize(
    "answer",
    [
        selected("reject-once"),
        selected("no-such-option"),  # "MUST treat the request as not approved"
        {"outcome": {"outcome": "_defer"}},  # an outcome it does not know: never approval
    ],
    ids=["rejected", "unknown-option", "unknown-outcome"],
)
def test_an_answer_that_is_not_an_allow_is_a_refusal(answer: Any) -> None:
    seen, got = run(ask_and_answer(answer))
    updates = [m["params"]["update"] for m in seen if m.get("method") == "session/update"]
    assert updates[-3:] == [
        state("running"),
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "status": "failed",
         "content": [tool_text("not allowed")]},
        state("idle", stopReason="end_turn"),
    ]  # fmt: skip
    picked = answer["outcome"].get("optionId")
    assert got == [(False, "reject-once" if picked == "reject-once" else None)]


def test_a_cancelled_answer_ends_the_turn_cancelled() -> None:
    seen, got = run(ask_and_answer({"outcome": {"outcome": "cancelled"}}))
    updates = [m["params"]["update"] for m in seen if m.get("method") == "session/update"]
    assert updates[-3:] == [
        state("requires_action"),
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "status": "cancelled"},
        state("idle", stopReason="cancelled"),
    ]
    assert got == []


def test_session_cancel_withdraws_the_pending_request_and_ignores_its_late_answer() -> None:
    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call("Deploy")
        await turn.ask_permission(tool)
        raise AssertionError("the turn went on after its cancel")

    async def scenario() -> tuple[list[Any], list[Any], str]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        asked = await wire.until(is_request("session/request_permission"))
        wire.take()
        wire.send("session/cancel", {"sessionId": sid})
        withdrawn = await wire.next_message()
        await wire.idle()
        rest = wire.take()[1:]
        wire.reply(asked["id"], selected("allow-once"))  # the late answer
        return [withdrawn, asked["id"]], rest + await wire.quiet(), sid

    (withdrawn, rid), rest, sid = run(scenario())
    assert withdrawn == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": rid},
    }
    assert rest == [
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": {
            "sessionUpdate": "tool_call_update", "toolCallId": "call_001", "status": "cancelled"}}},
        {"jsonrpc": "2.0", "method": "session/update",
         "params": {"sessionId": sid, "update": state("idle", stopReason="cancelled")}},
    ]  # fmt: skip


def test_an_always_answer_is_remembered_for_the_session() -> None:
    async def scenario() -> tuple[list[Any], int]:
        got: list[Any] = []

        async def script(turn: kit.Turn) -> None:
            tool = await turn.tool_call("Run tests")
            permission = await turn.ask_permission(tool)
            got.append((permission.allowed, permission.remembered))
            await tool.complete()

        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        asked = await wire.until(is_request("session/request_permission"))
        wire.reply(asked["id"], selected("allow-always"))
        await wire.idle()
        wire.take()
        await wire.prompt(sid)
        await wire.idle()
        requests = [m for m in wire.seen if "id" in m]
        return got, len(requests)

    got, requests = run(scenario())
    assert got == [(True, False), (True, True)]
    assert requests == 0  # the second turn did not ask


# -- cancellation and held prompts ---------------------------------------------------------------
def test_a_cancel_that_arrives_with_the_prompt_still_echoes_and_ends_cancelled() -> None:
    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent())
        sid = await wire.new_session()
        prompt = {"sessionId": sid, "prompt": [text("hi")]}
        lines = [
            {"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": prompt},
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}},
        ]
        wire.send_bytes(b"".join(json.dumps(m).encode() + b"\n" for m in lines))  # one read
        await wire.idle()
        await wire.quiet()
        return wire.wire[1:]

    answer, echo, idle = run(scenario())
    assert answer == {"jsonrpc": "2.0", "id": 7, "result": {"messageId": "msg_user_1"}}
    assert echo["params"]["update"]["sessionUpdate"] == "user_message"
    assert idle["params"]["update"] == state("idle", stopReason="cancelled")


def test_a_prompt_during_a_turn_is_held_then_inserted_when_the_turn_ends() -> None:
    release = asyncio.Event()

    async def script(turn: kit.Turn) -> None:
        if turn.user_message_id == "msg_user_1":
            await release.wait()
        await turn.say(turn.text)

    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid, "first")
        second = asyncio.ensure_future(wire.prompt(sid, "second"))
        await asyncio.sleep(0.05)
        assert not second.done()  # held: not inserted yet
        release.set()
        answer = await second
        await wire.until(lambda m: is_idle(m) and len(states(wire)) == 4)
        return [answer["result"]] + [
            (u["sessionUpdate"], u.get("messageId")) for u in wire.updates()
        ]

    assert run(scenario()) == [
        {"messageId": "msg_user_2"},
        ("user_message", "msg_user_1"),
        ("state_update", None),
        ("agent_message_chunk", "msg_agent_1"),
        ("state_update", None),
        ("user_message", "msg_user_2"),
        ("state_update", None),
        ("agent_message_chunk", "msg_agent_2"),
        ("state_update", None),
    ]


def test_session_cancel_answers_held_prompts_request_cancelled() -> None:
    async def script(turn: kit.Turn) -> None:
        await asyncio.sleep(60)

    async def scenario() -> tuple[Any, Any]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        held = asyncio.ensure_future(wire.prompt(sid, "held"))
        await asyncio.sleep(0.05)
        wire.send("session/cancel", {"sessionId": sid})
        answer = await held
        return answer, await wire.idle()

    answer, idle = run(scenario())
    assert answer["error"] == {"code": -32800, "message": "Request cancelled"}
    assert idle == state("idle", stopReason="cancelled")


def test_cancelling_an_idle_session_sends_nothing() -> None:
    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent())
        sid = await wire.new_session()
        wire.send("session/cancel", {"sessionId": sid})
        wire.send("session/cancel", {"sessionId": "unknown"})
        return await wire.quiet()

    assert run(scenario()) == []


def test_an_error_raised_by_aborting_work_is_reported_cancelled_not_error() -> None:
    async def script(turn: kit.Turn) -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            raise ConnectionResetError("the model stream was torn down") from None

    async def scenario() -> Any:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        await wire.until(lambda m: m["params"]["update"] == state("running"))
        wire.send("session/cancel", {"sessionId": sid})
        return await wire.idle()

    assert run(scenario()) == state("idle", stopReason="cancelled")


# -- what a prompt and a session may contain -----------------------------------------------------
@pytest.mark.parametrize(
    ("block", "accepts"),
    [
        ({"type": "image", "data": "AA==", "mimeType": "image/png"}, "image_prompts"),
        ({"type": "audio", "data": "AA==", "mimeType": "audio/wav"}, "audio_prompts"),
        ({"type": "resource", "resource": {"uri": "file:///a", "text": "x"}}, "embedded_context"),
    ],
    ids=["image", "audio", "resource"],
)
def test_prompt_content_beyond_the_baseline_needs_its_capability(
    block: dict[str, Any], accepts: str
) -> None:
    async def scenario(agent: kit.Agent) -> tuple[Any, list[Any]]:
        wire = Wire(agent)
        sid = await wire.new_session()
        prompt = [text("look"), {"type": "resource_link", "name": "a", "uri": "file:///a"}, block]
        answer = await wire.call("session/prompt", {"sessionId": sid, "prompt": prompt})
        return answer, await wire.quiet()

    answer, after = run(scenario(ScriptAgent()))
    kind = block["type"]
    assert answer["error"] == {
        "code": -32602,
        "message": "Invalid params",
        "data": {"path": "$.prompt[2]", "reason": f"this agent does not accept '{kind}' content"},
    }
    assert after == []  # nothing was inserted

    class Accepting(ScriptAgent):
        pass

    setattr(Accepting, accepts, True)
    answer, _ = run(scenario(Accepting()))
    assert answer["result"] == {"messageId": "msg_user_1"}


def test_an_unknown_content_block_type_is_refused() -> None:
    async def scenario() -> Any:
        wire = Wire(ScriptAgent())
        sid = await wire.new_session()
        prompt = [{"type": "_hologram", "x": 1}]
        return await wire.call("session/prompt", {"sessionId": sid, "prompt": prompt})

    assert run(scenario())["error"]["data"] == {
        "path": "$.prompt[0]",
        "reason": "this agent does not accept '_hologram' content",
    }


def test_a_prompt_for_an_unknown_session_is_resource_not_found() -> None:
    async def scenario() -> Any:
        return await Wire(ScriptAgent()).prompt("nope")

    assert run(scenario())["error"] == {
        "code": -32002,
        "message": "Resource not found",
        "data": {"sessionId": "nope"},
    }


@pytest.mark.parametrize(
    ("params", "data"),
    [
        (
            {"cwd": "relative/dir"},
            {"path": "$.cwd", "reason": "not an absolute path: 'relative/dir'"},
        ),
        (
            {"cwd": "/w", "mcpServers": [MCP_STDIO]},
            {"path": "$.mcpServers[0]", "reason": "this agent does not accept 'stdio' MCP servers"},
        ),
    ],
    ids=["relative-cwd", "mcp-stdio"],
)  # fmt: skip
def test_session_setup_is_checked(params: dict[str, Any], data: dict[str, Any]) -> None:
    async def scenario() -> Any:
        return await Wire(ScriptAgent()).call("session/new", params)

    assert run(scenario())["error"] == {"code": -32602, "message": "Invalid params", "data": data}


def test_mcp_servers_of_an_accepted_transport_are_kept() -> None:
    class WithMcp(ScriptAgent):
        mcp_transports = frozenset({"stdio"})

    async def scenario() -> list[Any]:
        agent = WithMcp()
        wire = Wire(agent)
        server = {"type": "stdio", "name": "fs", "command": "mcp-fs", "args": ["-v"], "env": []}
        sid = await wire.new_session(mcpServers=[server])
        return [acp.encode(s) for s in agent.session(sid).mcp_servers]

    assert run(scenario()) == [
        {"type": "stdio", "name": "fs", "command": "mcp-fs", "args": ["-v"], "env": []}
    ]


# -- session/list --------------------------------------------------------------------------------
def test_session_list_filters_by_directory_and_pages_with_a_cursor() -> None:
    class Paged(ScriptAgent):
        sessions_per_page = 2

    async def scenario() -> tuple[list[Any], list[str], Any]:
        wire = Wire(Paged())
        sids = [await wire.new_session(cwd) for cwd in ("/a", "/b", "/a/", "/a/sub", "/a")]
        await wire.agent.session(sids[0]).set_title("First")
        pages = []
        cursor = None
        while True:
            params = {"cwd": "/a"} if cursor is None else {"cwd": "/a", "cursor": cursor}
            result = (await wire.call("session/list", params))["result"]
            pages.append(result)
            cursor = result.get("nextCursor")
            if cursor is None:
                break
        everything = (await wire.call("session/list", {}))["result"]
        bad = await wire.call("session/list", {"cursor": "bogus"})
        return pages, sids, (everything, bad)

    pages, sids, (everything, bad) = run(scenario())
    listed = [[(s["sessionId"], s["cwd"], s.get("title")) for s in p["sessions"]] for p in pages]
    assert listed == [
        [(sids[0], "/a", "First"), (sids[2], "/a/", None)],
        [(sids[4], "/a", None)],
    ]
    assert pages[0]["nextCursor"] and all(
        s["updatedAt"].endswith("Z") for s in pages[0]["sessions"]
    )
    assert [s["sessionId"] for s in everything["sessions"]] == sids[:2]
    assert everything["nextCursor"]
    assert bad["error"] == {
        "code": -32602,
        "message": "Invalid params",
        "data": {"path": "$.cursor", "reason": "not a cursor this agent handed out: 'bogus'"},
    }


def test_a_title_is_reported_as_session_info() -> None:
    async def scenario() -> Any:
        wire = Wire(ScriptAgent())
        sid = await wire.new_session()
        await wire.agent.session(sid).set_title("Refactor")
        return await wire.next_message()

    update = run(scenario())["params"]["update"]
    assert update["sessionUpdate"] == "session_info_update" and update["title"] == "Refactor"
    assert update["updatedAt"].endswith("Z")


# -- session/resume ------------------------------------------------------------------------------
async def one_full_turn(wire: Wire) -> str:
    """A session with one turn of each kind of history: messages, a thought, a plan, a tool."""
    sid = await wire.new_session("/w")
    await wire.prompt(sid, "do it")
    asked = await wire.until(is_request("session/request_permission"))
    wire.reply(asked["id"], selected("allow-once"))
    await wire.idle()
    wire.take()
    return sid


async def full_script(turn: kit.Turn) -> kit.TurnStopReason:
    plan = await turn.plan("Step")
    await turn.think("Thinking ")
    await turn.think("hard")
    await turn.say("Hello ")
    await turn.say(acp.ContentBlockText(text="world"))
    tool = await turn.tool_call("Tool", kind="read", raw_input={"q": 1})
    if await turn.ask_permission(tool):
        await tool.stream("partial")
        await tool.complete("final")
    await plan.complete(0)
    await turn.usage(5, 10)
    return "end_turn"


def test_resume_without_replay_sends_only_the_current_state_before_its_answer() -> None:
    async def scenario() -> tuple[list[Any], Any]:
        wire = Wire(ScriptAgent(full_script))
        sid = await one_full_turn(wire)
        answer = await wire.call("session/resume", {"sessionId": sid, "cwd": "/w/"})
        return wire.updates(), answer["result"]

    updates, result = run(scenario())
    assert updates == [state("idle", stopReason="end_turn")]
    assert result == {}


def test_resume_replays_the_history_then_the_current_state_then_answers() -> None:
    async def scenario() -> tuple[list[Any], Any]:
        wire = Wire(ScriptAgent(full_script))
        sid = await one_full_turn(wire)
        params = {"sessionId": sid, "cwd": "/w", "replayFrom": {"type": "start"}}
        answer = await wire.call("session/resume", params)
        return wire.updates(), answer["result"]

    updates, result = run(scenario())
    assert updates == [
        {"sessionUpdate": "user_message", "messageId": "msg_user_1", "content": [text("do it")]},
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "plan_1",
         "entries": [{"content": "Step", "priority": "medium", "status": "completed"}]}},
        {"sessionUpdate": "agent_thought", "messageId": "msg_thought_1",
         "content": [text("Thinking hard")]},
        {"sessionUpdate": "agent_message", "messageId": "msg_agent_1",
         "content": [text("Hello world")]},
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "title": "Tool",
         "kind": "read", "status": "completed", "content": [tool_text("final")],
         "rawInput": {"q": 1}},
        state("idle", stopReason="end_turn"),
    ]  # fmt: skip
    assert result == {}


def test_resume_during_a_turn_reports_it_running() -> None:
    async def script(turn: kit.Turn) -> None:
        await turn.say("partial")
        await asyncio.sleep(60)

    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session("/w")
        await wire.prompt(sid)
        await wire.until(
            lambda m: m["params"]["update"].get("sessionUpdate") == "agent_message_chunk"
        )
        wire.take()
        await wire.call(
            "session/resume", {"sessionId": sid, "cwd": "/w", "replayFrom": {"type": "start"}}
        )
        return wire.updates()

    assert run(scenario()) == [
        {"sessionUpdate": "user_message", "messageId": "msg_user_1", "content": [text("hi")]},
        {"sessionUpdate": "agent_message", "messageId": "msg_agent_1",
         "content": [text("partial")]},
        state("running"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"sessionId": "nope", "cwd": "/w"},
         {"code": -32002, "message": "Resource not found", "data": {"sessionId": "nope"}}),
        ({"sessionId": "SID", "cwd": "/elsewhere"},
         {"code": -32602, "message": "Invalid params",
          "data": {"path": "$.cwd", "reason": "the session's working directory is /w"}}),
        ({"sessionId": "SID", "cwd": "/w", "replayFrom": {"type": "_checkpoint", "at": 3}},
         {"code": -32602, "message": "Invalid params",
          "data": {"path": "$.replayFrom", "reason": "unsupported replay cursor '_checkpoint'"}}),
    ],
    ids=["unknown-session", "other-cwd", "unsupported-cursor"],
)  # fmt: skip
def test_resume_errors(params: dict[str, Any], error: dict[str, Any]) -> None:
    async def scenario() -> tuple[Any, list[Any]]:
        wire = Wire(ScriptAgent())
        sid = await wire.new_session("/w")
        params["sessionId"] = params["sessionId"].replace("SID", sid)
        return await wire.call("session/resume", params), await wire.quiet()

    answer, after = run(scenario())
    assert answer["error"] == error
    assert after == []  # refused: no replay, no state


# -- session/close -------------------------------------------------------------------------------
def test_close_cancels_the_turn_sends_its_final_updates_then_answers_and_goes_quiet() -> None:
    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call("Long job")
        await tool.start()
        await asyncio.sleep(60)

    async def scenario() -> tuple[list[Any], Any, list[Any], Any, Any, str]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        await wire.until(lambda m: m["params"]["update"].get("status") == "in_progress")
        wire.take()
        answer = await wire.call("session/close", {"sessionId": sid})
        before = wire.take()
        listed = (await wire.call("session/list", {}))["result"]["sessions"]
        prompt = await wire.prompt(sid)
        return before, answer["result"], await wire.quiet(), listed, prompt["error"]["code"], sid

    before, result, after, listed, prompt_code, sid = run(scenario())
    assert before == [
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": {
            "sessionUpdate": "tool_call_update", "toolCallId": "call_001", "status": "cancelled"}}},
        {"jsonrpc": "2.0", "method": "session/update",
         "params": {"sessionId": sid, "update": state("idle", stopReason="cancelled")}},
    ]  # fmt: skip
    assert (result, after, listed, prompt_code) == ({}, [], [], -32002)


def test_closing_an_unknown_or_idle_session_succeeds_without_updates() -> None:
    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent())
        sid = await wire.new_session()
        answers = [await wire.call("session/close", {"sessionId": s}) for s in (sid, sid, "nope")]
        return [a["result"] for a in answers] + await wire.quiet()

    assert run(scenario()) == [{}, {}, {}]


def test_close_answers_held_prompts_request_cancelled() -> None:
    async def script(turn: kit.Turn) -> None:
        await asyncio.sleep(60)

    async def scenario() -> tuple[Any, Any]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        held = asyncio.ensure_future(wire.prompt(sid, "held"))
        await asyncio.sleep(0.05)
        closed = await wire.call("session/close", {"sessionId": sid})
        return (await held)["error"]["code"], closed["result"]

    assert run(scenario()) == (-32800, {})


def test_the_connection_going_away_mid_turn_ends_the_turn_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def script(turn: kit.Turn) -> None:
        await turn.say("working")
        await asyncio.sleep(0.05)
        await turn.say("more")  # the connection is gone by now

    async def scenario() -> bool:
        agent = ScriptAgent(script)
        wire = Wire(agent)
        sid = await wire.new_session()
        await wire.prompt(sid)
        await wire.until(
            lambda m: m["params"]["update"].get("sessionUpdate") == "agent_message_chunk"
        )
        await wire.peer.connection.close()
        session = agent.session(sid)
        await session.foreground.wait()  # its next say() finds the connection closed
        await agent.shutdown()
        return session.turn is None

    with caplog.at_level(logging.INFO, logger="acp_v2.agent"):
        assert run(scenario())
    assert [r.levelname for r in caplog.records] == ["INFO"]
    assert caplog.records[0].getMessage().startswith("the client went away during a turn")


# -- tool_call/cancel, terminal/cancel -----------------------------------------------------------
def test_cancelling_a_tool_call_or_terminal_that_is_not_cancellable_is_invalid_params() -> None:
    async def script(turn: kit.Turn) -> None:
        done = await turn.tool_call("Done")
        await done.complete()
        running = await turn.tool_call("Running")
        await running.start()
        await asyncio.sleep(60)

    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        await wire.until(lambda m: m["params"]["update"].get("status") == "in_progress")
        answers = [
            await wire.call("tool_call/cancel", {"sessionId": sid, "toolCallId": call_id})
            for call_id in ("call_001", "call_002", "call_999")
        ]
        answers.append(await wire.call("terminal/cancel", {"sessionId": sid, "terminalId": "t1"}))
        answers.append(await wire.call("tool_call/cancel", {"sessionId": "x", "toolCallId": "c"}))
        return [a["error"]["data"] if a["error"]["code"] == -32602 else a["error"] for a in answers]

    assert run(scenario()) == [
        {"path": "$.toolCallId", "reason": "tool call 'call_001' is already completed"},
        {"path": "$.toolCallId", "reason": "tool call 'call_002' is not cancellable"},
        {"path": "$.toolCallId", "reason": "tool call 'call_999' is unknown"},
        {"path": "$.terminalId", "reason": "terminal 't1' is unknown"},
        {"code": -32002, "message": "Resource not found", "data": {"sessionId": "x"}},
    ]


def test_a_cancellable_tool_call_is_cancelled_by_the_client_and_the_turn_goes_on() -> None:
    work_cancelled: list[bool] = []

    async def build() -> str:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            work_cancelled.append(True)
            raise
        return "built"

    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call("Build", kind="execute", cancellable=True)
        try:
            await tool.run(build())
        except kit.ToolCallCancelled:
            await turn.say("Build skipped.")

    async def scenario() -> tuple[Any, list[Any]]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        await wire.until(lambda m: m["params"]["update"].get("status") == "in_progress")
        answer = await wire.call("tool_call/cancel", {"sessionId": sid, "toolCallId": "call_001"})
        await wire.idle()
        return answer["result"], wire.updates()[2:]

    result, updates = run(scenario())
    assert result == {}
    assert updates == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "title": "Build",
         "kind": "execute", "status": "pending", "capabilities": {"cancel": {}}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "status": "in_progress"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "status": "cancelled",
         "capabilities": None},
        chunk("agent_message_chunk", "msg_agent_1", "Build skipped."),
        state("idle", stopReason="end_turn"),
    ]  # fmt: skip
    assert work_cancelled == [True]


def test_a_cancellable_tool_call_stops_advertising_cancel_once_final() -> None:
    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call("Build", cancellable=True)
        assert await tool.run(asyncio.sleep(0, result="built")) == "built"
        await tool.complete("built")

    async def scenario() -> tuple[list[Any], Any]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        await wire.idle()
        late = await wire.call("tool_call/cancel", {"sessionId": sid, "toolCallId": "call_001"})
        return wire.updates()[-2], late["error"]["data"]

    final, late = run(scenario())
    assert final == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_001",
        "status": "completed",
        "content": [tool_text("built")],
        "capabilities": None,
    }
    assert late == {"path": "$.toolCallId", "reason": "tool call 'call_001' is already completed"}


def test_a_tool_cancel_left_uncaught_ends_the_turn_cancelled() -> None:
    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call("Build", cancellable=True)
        await tool.run(asyncio.sleep(60))

    async def scenario() -> Any:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        await wire.until(lambda m: m["params"]["update"].get("status") == "in_progress")
        await wire.call("tool_call/cancel", {"sessionId": sid, "toolCallId": "call_001"})
        return await wire.idle()

    assert run(scenario()) == state("idle", stopReason="cancelled")


def test_cancelling_the_turn_cancels_the_work_a_tool_call_runs() -> None:
    work_cancelled: list[bool] = []

    async def work() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            work_cancelled.append(True)
            raise

    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call("Build", cancellable=True)
        await tool.run(work())

    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        await wire.prompt(sid)
        await wire.until(lambda m: m["params"]["update"].get("status") == "in_progress")
        wire.send("session/cancel", {"sessionId": sid})
        await wire.idle()
        return wire.updates()[-2:]

    assert run(scenario()) == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "status": "cancelled",
         "capabilities": None},
        state("idle", stopReason="cancelled"),
    ]  # fmt: skip
    assert work_cancelled == [True]
