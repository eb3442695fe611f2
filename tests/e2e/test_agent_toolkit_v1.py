"""The v1 agent toolkit (`acp_v1.Agent`, `Turn`) against the requirements the npm-sdk-2.4.0 v1
schema states, one test per requirement, with exact JSON on the wire (in-memory pipes); the
v1 example agent against the same requirements over stdio.

The rules come from the schema's descriptions: InitializeRequest/Response (the protocol
version), AgentCapabilities and SessionCapabilities (what `loadSession`, `list`, `resume`,
`close`, `delete`, `additionalDirectories` commit an agent to), AuthenticateRequest,
NewSessionRequest (absolute paths), PromptRequest and PromptCapabilities (the baseline
content), PromptResponse and StopReason (`cancelled` after session/cancel),
RequestPermissionOutcome (the cancelling client answers `cancelled`), LoadSessionRequest (the
whole conversation replayed first), ResumeSessionRequest (no replay), ListSessionsRequest
(the `cwd` filter, cursors), CloseSessionRequest (cancel, then free the session),
DeleteSessionRequest."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import acp_kit as kit
import pytest
from acp_kit import v1 as acp

from tests.support.rpc_wire import run
from tests.support.toolkit_wire import is_request
from tests.support.toolkit_wire_v1 import ScriptAgent, Wire, chunk, text

REPO = Path(__file__).resolve().parents[2]
ECHO_AGENT = REPO / "examples" / "v1" / "echo_agent.py"
OPTIONS = [
    {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
]
MCP_STDIO = {"name": "fs", "command": "mcp-fs", "args": [], "env": []}


def invalid(path: str, reason: str) -> dict[str, Any]:
    return {"code": -32602, "message": "Invalid params", "data": {"path": path, "reason": reason}}


def not_found(session_id: str) -> dict[str, Any]:
    return {"code": -32002, "message": "Resource not found", "data": {"sessionId": session_id}}


def selected(option_id: str) -> dict[str, Any]:
    return {"outcome": {"outcome": "selected", "optionId": option_id}}


async def permission_script(turn: kit.Turn) -> kit.TurnStopReason:
    await turn.say("Working")
    tool = await turn.tool_call("Edit", kind="edit", raw_input={"path": "/a"})
    if await turn.ask_permission(tool):
        await tool.start()
        await tool.complete("done")
    else:
        await tool.fail("refused")
    return "end_turn"


# -- initialize ----------------------------------------------------------------------------------
def test_initialize_answers_protocol_1_and_advertises_what_the_toolkit_implements() -> None:
    async def scenario() -> Any:
        return await Wire(ScriptAgent()).initialize()

    assert run(scenario())["result"] == {
        "protocolVersion": 1,
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": False},
            "mcpCapabilities": {"http": False, "sse": False},
            "sessionCapabilities": {
                "list": {},
                "delete": {},
                "additionalDirectories": {},
                "resume": {},
                "close": {},
            },
        },
        "authMethods": [],
        "agentInfo": {"name": "script-agent", "version": "1.0"},
    }


def test_a_client_asking_for_a_later_version_is_answered_with_1() -> None:
    # "The protocol version the client specified if supported by the agent, or the latest
    # protocol version supported by the agent."
    async def scenario() -> Any:
        wire = Wire(ScriptAgent())
        return await wire.call("initialize", {"protocolVersion": 7})

    assert run(scenario())["result"]["protocolVersion"] == 1


def test_authenticate_names_a_method_never_advertised() -> None:
    async def scenario() -> Any:
        return await Wire(ScriptAgent()).call("authenticate", {"methodId": "oauth"})

    assert run(scenario())["error"] == invalid(
        "$.methodId", "this agent advertises no authentication method"
    )


# -- session/new -------------------------------------------------------------------------------
def test_session_new_needs_absolute_paths_and_accepts_stdio_mcp_servers() -> None:
    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent())
        ok = await wire.call(
            "session/new",
            {"cwd": "/w", "mcpServers": [MCP_STDIO], "additionalDirectories": ["/x"]},
        )
        relative = await wire.call("session/new", {"cwd": "w", "mcpServers": []})
        root = await wire.call(
            "session/new", {"cwd": "/w", "mcpServers": [], "additionalDirectories": ["/x", "y"]}
        )
        http = {"type": "http", "name": "web", "url": "https://x", "headers": []}
        mcp = await wire.call("session/new", {"cwd": "/w", "mcpServers": [http]})
        return [ok["result"]["sessionId"].startswith("sess_"), relative, root, mcp]

    ok, relative, root, mcp = run(scenario())
    assert ok
    assert relative["error"] == invalid("$.cwd", "not an absolute path: 'w'")
    assert root["error"] == invalid("$.additionalDirectories[1]", "not an absolute path: 'y'")
    assert mcp["error"] == invalid(
        "$.mcpServers[0]", "this agent does not accept 'http' MCP servers"
    )


# -- session/prompt ------------------------------------------------------------------------------
def test_a_full_turn_is_answered_with_its_stop_reason_after_its_updates() -> None:
    async def scenario() -> Wire:
        wire = Wire(ScriptAgent(permission_script))
        sid = await wire.new_session()
        pending = wire.prompt_later(sid)
        ask = await wire.until(is_request("session/request_permission"))
        assert ask["params"] == {
            "sessionId": sid,
            "toolCall": {"toolCallId": "call_001", "title": "Edit"},
            "options": OPTIONS,
        }
        wire.reply(ask["id"], selected("allow-once"))
        await pending
        return wire

    wire = run(scenario())
    bodies = [m for m in wire.wire if m.get("method") != "session/request_permission"]
    assert [m.get("params", {}).get("update") or m.get("result") for m in bodies] == [
        {"sessionId": bodies[0]["result"]["sessionId"]},
        chunk("agent_message_chunk", "msg_agent_1", "Working"),
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "call_001",
            "title": "Edit",
            "kind": "edit",
            "status": "pending",
            "rawInput": {"path": "/a"},
        },
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "status": "in_progress"},
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call_001",
            "status": "completed",
            "content": [{"type": "content", "content": text("done")}],
        },
        {"stopReason": "end_turn"},
    ]


def test_a_refused_permission_fails_the_tool_and_the_turn_goes_on() -> None:
    async def scenario() -> tuple[Any, list[Any]]:
        wire = Wire(ScriptAgent(permission_script))
        sid = await wire.new_session()
        pending = wire.prompt_later(sid)
        ask = await wire.until(is_request("session/request_permission"))
        wire.reply(ask["id"], selected("reject-once"))
        return await pending, wire.updates(sid)

    answer, updates = run(scenario())
    assert answer["result"] == {"stopReason": "end_turn"}
    assert updates[-1] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_001",
        "status": "failed",
        "content": [{"type": "content", "content": text("refused")}],
    }


def test_prompts_for_unknown_sessions_and_unadvertised_content_are_refused() -> None:
    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent())
        sid = await wire.new_session()
        unknown = await wire.prompt("sess_nope")
        image = {"type": "image", "data": "AA==", "mimeType": "image/png"}
        params = {"sessionId": sid, "prompt": [text("look"), image]}
        return [unknown, await wire.call("session/prompt", params)]

    unknown, image = run(scenario())
    assert unknown["error"] == not_found("sess_nope")
    assert image["error"] == invalid("$.prompt[1]", "this agent does not accept 'image' content")


def test_the_baseline_content_text_and_resource_links_is_accepted() -> None:
    async def scenario() -> Any:
        wire = Wire(ScriptAgent())
        sid = await wire.new_session()
        link = {"type": "resource_link", "uri": "file:///a.py", "name": "a.py"}
        return await wire.call("session/prompt", {"sessionId": sid, "prompt": [text("x"), link]})

    assert run(scenario())["result"] == {"stopReason": "end_turn"}


def test_each_stop_reason_a_turn_returns_is_the_answer_and_none_is_end_turn() -> None:
    async def scenario() -> list[Any]:
        reasons = iter([None, "max_tokens", "max_turn_requests", "refusal"])

        async def script(turn: kit.Turn) -> Any:
            return next(reasons)

        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        return [(await wire.prompt(sid))["result"] for _ in range(4)]

    assert run(scenario()) == [
        {"stopReason": "end_turn"},
        {"stopReason": "max_tokens"},
        {"stopReason": "max_turn_requests"},
        {"stopReason": "refusal"},
    ]


def test_a_stop_reason_v1_does_not_have_is_an_error_answer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def script(turn: kit.Turn) -> Any:
        return "_mine"

    async def scenario() -> Any:
        wire = Wire(ScriptAgent(script))
        return await wire.prompt(await wire.new_session())

    with caplog.at_level(logging.ERROR):
        answer = run(scenario())
    assert answer["error"] == {
        "code": -32603,
        "message": "Internal error",
        "data": "ValueError: prompt() returned '_mine', not one of v1's stop reasons",
    }
    assert [r.getMessage().split(": ", 1)[1] for r in caplog.records] == [
        "ValueError: prompt() returned '_mine', not one of v1's stop reasons"
    ]


def test_a_failed_turn_reports_its_open_tool_calls_failed_then_answers_the_error() -> None:
    async def script(turn: kit.Turn) -> Any:
        await turn.tool_call("Read")
        raise acp.RpcError(-32000, "Authentication required")

    async def scenario() -> tuple[Any, list[Any]]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        return await wire.prompt(sid), wire.updates(sid)

    answer, updates = run(scenario())
    assert answer["error"] == {"code": -32000, "message": "Authentication required"}
    assert updates[-1] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_001",
        "status": "failed",
    }


def test_nothing_is_reported_for_a_turn_that_ended() -> None:
    kept: list[kit.Turn] = []

    async def script(turn: kit.Turn) -> Any:
        kept.append(turn)
        return None

    async def scenario() -> str:
        wire = Wire(ScriptAgent(script))
        await wire.prompt(await wire.new_session())
        try:
            await kept[0].say("late")
        except kit.TurnEnded as exc:
            return str(exc)
        return "sent"

    assert run(scenario()) == "this turn has ended"


# -- session/cancel ------------------------------------------------------------------------------
def test_cancel_ends_the_turn_cancelled_without_waiting_for_the_permission_answer() -> None:
    # "When a client sends a session/cancel notification ... it MUST respond to all pending
    # session/request_permission requests with this Cancelled outcome": the agent does not
    # wait for that answer, nor withdraw the request (no $/cancel_request).
    async def scenario() -> tuple[Any, list[Any], list[Any]]:
        wire = Wire(ScriptAgent(permission_script))
        sid = await wire.new_session()
        pending = wire.prompt_later(sid)
        ask = await wire.until(is_request("session/request_permission"))
        wire.send("session/cancel", {"sessionId": sid})
        answer = await pending  # before the permission request is answered
        wire.reply(ask["id"], {"outcome": {"outcome": "cancelled"}})
        later = await wire.quiet()
        return answer, wire.updates(sid), later

    answer, updates, later = run(scenario())
    assert answer["result"] == {"stopReason": "cancelled"}
    assert [u["sessionUpdate"] for u in updates] == ["agent_message_chunk", "tool_call"]
    assert later == []


def test_a_cancelled_permission_answer_ends_the_turn_cancelled() -> None:
    async def scenario() -> Any:
        wire = Wire(ScriptAgent(permission_script))
        sid = await wire.new_session()
        pending = wire.prompt_later(sid)
        ask = await wire.until(is_request("session/request_permission"))
        wire.reply(ask["id"], {"outcome": {"outcome": "cancelled"}})
        return await pending

    assert run(scenario())["result"] == {"stopReason": "cancelled"}


def test_cancel_is_answered_cancelled_even_when_the_work_fails_on_it() -> None:
    # "This stop reason MUST be returned when the client sends a session/cancel notification,
    # even if the cancellation causes exceptions in underlying operations."
    async def script(turn: kit.Turn) -> Any:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            raise RuntimeError("the tool crashed while stopping") from None

    async def scenario() -> Any:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        pending = wire.prompt_later(sid)
        await asyncio.sleep(0.05)
        wire.send("session/cancel", {"sessionId": sid})
        return await pending

    assert run(scenario())["result"] == {"stopReason": "cancelled"}


def test_updates_sent_while_cancelling_precede_the_answer() -> None:
    async def script(turn: kit.Turn) -> Any:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await turn.say("stopped")
            raise

    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        pending = wire.prompt_later(sid)
        await asyncio.sleep(0.05)
        wire.send("session/cancel", {"sessionId": sid})
        await pending
        return [m.get("params", {}).get("update") or m.get("result") for m in wire.wire[1:]]

    assert run(scenario()) == [
        chunk("agent_message_chunk", "msg_agent_1", "stopped"),
        {"stopReason": "cancelled"},
    ]


def test_a_prompt_held_behind_a_running_turn_runs_after_it_or_ends_cancelled() -> None:
    started: list[str] = []

    async def script(turn: kit.Turn) -> Any:
        started.append(turn.text)
        if turn.text == "slow":
            await asyncio.sleep(0.2)
        return None

    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        first = wire.prompt_later(sid, "slow")
        second = wire.prompt_later(sid, "next")
        answers = [(await first)["result"], (await second)["result"]]
        third = wire.prompt_later(sid, "slow")
        fourth = wire.prompt_later(sid, "held")
        await asyncio.sleep(0.05)
        wire.send("session/cancel", {"sessionId": sid})
        return answers + [(await third)["result"], (await fourth)["result"]]

    assert run(scenario()) == [{"stopReason": "end_turn"}] * 2 + [{"stopReason": "cancelled"}] * 2
    assert started == ["slow", "next", "slow"]  # the held prompt never ran


def test_cancel_request_for_the_prompt_is_a_cancel_answered_cancelled() -> None:
    async def script(turn: kit.Turn) -> Any:
        await asyncio.sleep(30)

    async def scenario() -> Any:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        pending = wire.prompt_later(sid)
        await asyncio.sleep(0.05)
        wire.send("$/cancel_request", {"requestId": 2})  # the prompt is request 2
        return await pending

    assert run(scenario())["result"] == {"stopReason": "cancelled"}


# -- session/load, session/resume --------------------------------------------------------------
async def two_turns(wire: Wire) -> str:
    """A session with two finished turns: a plan, messages, a thought, a tool call."""
    sid = await wire.new_session()
    await wire.prompt(sid, "first")
    pending = wire.prompt_later(sid, "second")
    ask = await wire.until(is_request("session/request_permission"))
    wire.reply(ask["id"], selected("allow-once"))
    await pending
    wire.take()
    return sid


async def history_script(turn: kit.Turn) -> Any:
    if turn.text == "first":
        plan = await turn.plan("Look", "Answer")
        await turn.think("Hmm")
        await turn.say("Hel")
        await turn.say("lo")
        await plan.complete(0)
        return None
    tool = await turn.tool_call("Read", kind="read")
    if await turn.ask_permission(tool):
        await tool.complete("read it")
    await turn.say("Done")
    return None


def test_load_replays_the_whole_conversation_before_answering() -> None:
    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent(history_script))
        sid = await two_turns(wire)
        await wire.call("session/load", {"sessionId": sid, "cwd": "/work", "mcpServers": []})
        return [m.get("params", {}).get("update") or m.get("result") for m in wire.wire[-8:]]

    tail = run(scenario())
    entries = [
        {"content": "Look", "priority": "medium", "status": "completed"},
        {"content": "Answer", "priority": "medium", "status": "pending"},
    ]
    assert tail == [
        chunk("user_message_chunk", "msg_user_1", "first"),
        {"sessionUpdate": "plan", "entries": entries},
        chunk("agent_thought_chunk", "msg_thought_1", "Hmm"),
        chunk("agent_message_chunk", "msg_agent_1", "Hello"),  # its chunks replayed as one
        chunk("user_message_chunk", "msg_user_2", "second"),
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "call_001",
            "title": "Read",
            "kind": "read",
            "status": "completed",
            "content": [{"type": "content", "content": text("read it")}],
        },
        chunk("agent_message_chunk", "msg_agent_2", "Done"),
        {},  # the answer comes last
    ]


def test_load_and_resume_need_a_known_session_in_its_own_directory() -> None:
    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent())
        sid = await wire.new_session("/work")
        load = {"cwd": "/work", "mcpServers": []}
        return [
            await wire.call("session/load", {"sessionId": "sess_nope", **load}),
            await wire.call("session/resume", {"sessionId": "sess_nope", "cwd": "/work"}),
            await wire.call("session/load", {"sessionId": sid, "cwd": "/other", "mcpServers": []}),
            await wire.call("session/resume", {"sessionId": sid, "cwd": "/other"}),
        ]

    unknown_load, unknown_resume, load_elsewhere, resume_elsewhere = run(scenario())
    assert unknown_load["error"] == unknown_resume["error"] == not_found("sess_nope")
    elsewhere = invalid("$.cwd", "the session's working directory is /work")
    assert load_elsewhere["error"] == resume_elsewhere["error"] == elsewhere


def test_resume_answers_without_replaying_anything() -> None:
    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent(history_script))
        sid = await two_turns(wire)
        answer = await wire.call("session/resume", {"sessionId": sid, "cwd": "/work"})
        return [answer["result"], wire.take()]

    assert run(scenario()) == [{}, []]


# -- session/list --------------------------------------------------------------------------------
def test_list_filters_by_cwd_and_pages_behind_an_opaque_cursor() -> None:
    class Paged(ScriptAgent):
        sessions_per_page = 2

    async def scenario() -> list[Any]:
        wire = Wire(Paged())
        ids = [await wire.new_session(cwd) for cwd in ("/a", "/b", "/a", "/a/", "/a")]
        first = (await wire.call("session/list", {"cwd": "/a"}))["result"]
        cursor = first["nextCursor"]
        second = (await wire.call("session/list", {"cwd": "/a", "cursor": cursor}))["result"]
        every = (await wire.call("session/list", {}))["result"]
        bad = await wire.call("session/list", {"cursor": "nope"})
        return [ids, first, second, every, bad]

    ids, first, second, every, bad = run(scenario())
    assert [s["sessionId"] for s in first["sessions"]] == [ids[0], ids[2]]
    assert [s["sessionId"] for s in second["sessions"]] == [ids[3], ids[4]]
    assert "nextCursor" not in second
    assert [s["sessionId"] for s in every["sessions"]] == ids[:2]
    assert set(first["sessions"][0]) == {"sessionId", "cwd", "updatedAt"}
    assert bad["error"] == invalid("$.cursor", "not a cursor this agent handed out: 'nope'")


def test_list_shows_the_title_and_the_extra_roots() -> None:
    async def script(turn: kit.Turn) -> Any:
        await turn.session.set_title("Bug hunt")
        return None

    async def scenario() -> tuple[list[Any], Any]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session("/w", additionalDirectories=["/x", "/y"])
        await wire.prompt(sid)
        listed = (await wire.call("session/list", {}))["result"]["sessions"]
        return listed, wire.updates(sid)

    listed, updates = run(scenario())
    [info] = listed
    assert (info["title"], info["additionalDirectories"], info["cwd"]) == (
        "Bug hunt",
        ["/x", "/y"],
        "/w",
    )
    assert updates == [
        {
            "sessionUpdate": "session_info_update",
            "title": "Bug hunt",
            "updatedAt": updates[0]["updatedAt"],
        }
    ]


# -- session/close, session/delete ---------------------------------------------------------------
def test_close_cancels_the_turn_and_the_session_stays_listed_and_loadable() -> None:
    async def script(turn: kit.Turn) -> Any:
        await turn.say("working")
        await asyncio.sleep(30)

    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent(script))
        sid = await wire.new_session()
        pending = wire.prompt_later(sid)
        await wire.until(lambda m: m.get("method") == "session/update")
        closed = await wire.call("session/close", {"sessionId": sid})
        answer = await pending
        again = await wire.prompt(sid)
        close_again = await wire.call("session/close", {"sessionId": sid})
        listed = (await wire.call("session/list", {}))["result"]["sessions"]
        load = {"sessionId": sid, "cwd": "/work", "mcpServers": []}
        loaded = await wire.call("session/load", load)
        return [closed, answer, again, close_again, [s["sessionId"] for s in listed], loaded, sid]

    closed, answer, again, close_again, listed, loaded, sid = run(scenario())
    assert (closed["result"], answer["result"]) == ({}, {"stopReason": "cancelled"})
    assert again["error"] == close_again["error"] == not_found(sid)
    assert (listed, loaded["result"]) == ([sid], {})


def test_delete_closes_and_forgets_the_session() -> None:
    async def scenario() -> list[Any]:
        wire = Wire(ScriptAgent())
        sid = await wire.new_session()
        deleted = await wire.call("session/delete", {"sessionId": sid})
        listed = (await wire.call("session/list", {}))["result"]["sessions"]
        load = {"sessionId": sid, "cwd": "/work", "mcpServers": []}
        return [deleted["result"], listed, await wire.call("session/load", load), sid]

    deleted, listed, load, sid = run(scenario())
    assert (deleted, listed, load["error"]) == ({}, [], not_found(sid))


# -- the example agent over stdio ---------------------------------------------------------------
def test_the_example_agent_speaks_v1_over_stdio(tmp_path: Path) -> None:
    """initialize, a session in this folder, a prompt answered `cancelled` once cancelled at
    the permission request, the session listed, loaded (replayed) and closed; nothing on
    stderr."""
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 1, "method": "session/new",
         "params": {"cwd": str(tmp_path), "mcpServers": []}},
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO / "generated")}
    agent = subprocess.Popen(
        [sys.executable, str(ECHO_AGENT)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert agent.stdin is not None and agent.stdout is not None

    def send(message: Any) -> None:
        assert agent.stdin is not None
        agent.stdin.write(json.dumps(message).encode() + b"\n")
        agent.stdin.flush()

    def receive() -> Any:
        assert agent.stdout is not None
        return json.loads(agent.stdout.readline())

    try:
        for line in lines:
            send(line)
        assert receive()["result"]["protocolVersion"] == 1
        sid = receive()["result"]["sessionId"]
        prompt = {"sessionId": sid, "prompt": [text("hi")]}
        send({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt})
        seen = []
        while (message := receive()).get("method") != "session/request_permission":
            seen.append(message["params"]["update"]["sessionUpdate"])
        send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
        assert receive() == {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "cancelled"}}
        cancelled = {"outcome": {"outcome": "cancelled"}}
        send({"jsonrpc": "2.0", "id": message["id"], "result": cancelled})
        send({"jsonrpc": "2.0", "id": 3, "method": "session/list", "params": {}})
        [listed] = receive()["result"]["sessions"]
        load = {"sessionId": sid, "cwd": str(tmp_path), "mcpServers": []}
        send({"jsonrpc": "2.0", "id": 4, "method": "session/load", "params": load})
        replayed = []
        while "id" not in (message := receive()):
            replayed.append(message["params"]["update"]["sessionUpdate"])
        send({"jsonrpc": "2.0", "id": 5, "method": "session/close", "params": {"sessionId": sid}})
        closed = receive()
    finally:
        agent.stdin.close()
        code = agent.wait(10)
        stderr = agent.stderr.read() if agent.stderr else b""
        agent.stdout.close()
        if agent.stderr:
            agent.stderr.close()
    assert seen == ["plan", *["agent_message_chunk"] * 3, "plan", "tool_call"]
    assert (listed["sessionId"], listed["cwd"]) == (sid, str(tmp_path))
    assert replayed == ["user_message_chunk", "plan", "agent_message_chunk", "tool_call"]
    assert (message["id"], message["result"], closed["result"]) == (4, {}, {})
    assert (code, stderr) == (0, b"")
