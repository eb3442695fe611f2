"""examples/echo_agent.py and examples/client.py: a whole prompt turn between our own agent
and client, in one process (exact wire messages) and as real programs over stdio."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import acp_kit as kit
import pytest
from acp_kit import v2 as acp

from tests.support.rpc_wire import (
    FULL_TURN,
    MemoryWriter,
    RawPeer,
    connect_pair,
    notification,
    pipe,
    request,
    run,
)

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def load_example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


echo = load_example("echo_agent")
example_client = load_example("client")


class Recorder(MemoryWriter):
    """An in-memory pipe end that also keeps every line written."""

    def __init__(self, target: asyncio.StreamReader) -> None:
        super().__init__(target)
        self.lines: list[Any] = []

    def write(self, data: bytes) -> None:
        self.lines += [json.loads(line) for line in data.splitlines()]
        super().write(data)


def test_a_full_turn_on_the_wire() -> None:
    async def scenario() -> list[Any]:
        agent = echo.EchoAgent()
        client = kit.Client(permissions=kit.allow)
        to_agent, client_out = pipe()
        to_client = asyncio.StreamReader()
        agent_out = Recorder(to_client)
        acp.Connection(agent, to_agent, agent_out).start()
        remote = await kit.connect_agent(client, acp.Connection(client, to_client, client_out))
        result = await (await remote.new_session()).prompt("hi there")
        kinds = [acp.encode(u)["sessionUpdate"] for u in result.updates]
        assert kinds == FULL_TURN[:6] + ["agent_message_chunk"] + FULL_TURN[6:]
        assert result.stop_reason == "end_turn"
        await remote.close()
        return agent_out.lines

    lines = run(scenario())
    sid = lines[1]["result"]["sessionId"]
    assert sid.startswith("sess_")
    lines = json.loads(json.dumps(lines).replace(sid, "SID"))

    def update(body: dict[str, Any]) -> dict[str, Any]:
        params = {"sessionId": "SID", "update": body}
        return {"jsonrpc": "2.0", "method": "session/update", "params": params}

    def tool(**fields: Any) -> dict[str, Any]:
        return update({"sessionUpdate": "tool_call_update", "toolCallId": "call_001", **fields})

    def chunk(text: str) -> dict[str, Any]:
        content = {"type": "text", "text": text}
        return update(
            {"sessionUpdate": "agent_message_chunk", "messageId": "msg_agent_1", "content": content}
        )

    def state(name: str, **extra: Any) -> dict[str, Any]:
        return update({"sessionUpdate": "state_update", "state": name, **extra})

    def text_item(text: str) -> dict[str, Any]:
        return {"type": "content", "content": {"type": "text", "text": text}}

    options = [
        {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
        {"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
        {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
    ]
    plan_entries = [
        {"content": "Echo the prompt back", "priority": "high", "status": "in_progress"},
        {"content": "Run the echo tool", "priority": "medium", "status": "pending"},
        {"content": "Report usage", "priority": "low", "status": "pending"},
    ]
    assert lines == [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {
                "protocolVersion": 2,
                "info": {"name": "acp-codegen-echo-agent", "version": "0.1.0"},
                "capabilities": {"session": {}},
            },
        },
        {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "SID"}},
        # The answer to session/prompt comes before the turn's first update.
        {"jsonrpc": "2.0", "id": 2, "result": {"messageId": "msg_user_1"}},
        update(
            {
                "sessionUpdate": "user_message",
                "messageId": "msg_user_1",
                "content": [{"type": "text", "text": "hi there"}],
            }
        ),
        state("running"),
        update(
            {
                "sessionUpdate": "plan_update",
                "plan": {"type": "items", "planId": "plan_1", "entries": plan_entries},
            }
        ),
        chunk("You said: "),
        chunk("hi "),
        chunk("there"),
        chunk("."),
        tool(title="Echo tool", kind="other", status="pending", rawInput={"text": "hi there"}),
        state("requires_action"),
        {
            "jsonrpc": "2.0",
            "id": 0,  # the agent's own first request: ids are per sender
            "method": "session/request_permission",
            "params": {
                "sessionId": "SID",
                "title": 'Allow "Echo tool" to run?',
                "options": options,
                "subject": {
                    "type": "tool_call",
                    "toolCall": {"toolCallId": "call_001", "title": "Echo tool"},
                },
            },
        },
        state("running"),
        tool(status="in_progress"),
        update(
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "call_001",
                "content": text_item("Echoing..."),
            }
        ),
        tool(status="completed", content=[text_item("Echo: hi there")]),
        update(
            {
                "sessionUpdate": "usage_update",
                "used": 1008,
                "size": 200000,
                "cost": {"amount": 0.0042, "currency": "USD"},
            }
        ),
        state("idle", stopReason="end_turn"),
    ]


class ScriptedClient(acp.ClientBase):
    """Records updates; how it answers a permission request is set per test ("wait": send
    session/cancel and never answer; "fail": answer with an error)."""

    def __init__(self, *, on_permission: str) -> None:
        self.on_permission = on_permission
        self.updates: list[dict[str, Any]] = []
        self.idle = asyncio.Event()
        self.permission_cancelled = False

    async def session_update(self, params: acp.UpdateSessionNotification) -> None:
        body = acp.encode(params.update)
        self.updates.append(body)
        if body.get("state") == "idle":
            self.idle.set()

    async def session_request_permission(
        self, params: acp.RequestPermissionRequest
    ) -> acp.RequestPermissionResponse:
        if self.on_permission == "wait":
            try:
                cancel = acp.CancelSessionNotification(session_id=params.session_id)
                await self.agent.session_cancel(cancel)
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                self.permission_cancelled = True
                raise
        if self.on_permission == "fail":
            raise acp.RpcError(-32603, "Internal error", "no permission UI")
        if self.on_permission == "reject":
            outcome: acp.RequestPermissionOutcome = acp.RequestPermissionOutcomeSelected(
                option_id="reject-once"
            )
        else:
            outcome = acp.RequestPermissionOutcomeCancelled()
        return acp.RequestPermissionResponse(outcome=outcome)


async def prompt_turn(client: ScriptedClient, text: str = "hello") -> echo.EchoAgent:
    agent = echo.EchoAgent()
    connect_pair(agent, client)
    session = await client.agent.session_new(acp.NewSessionRequest(cwd="/"))
    prompt: list[acp.ContentBlock] = [acp.ContentBlockText(text=text)]
    await client.agent.session_prompt(
        acp.PromptRequest(session_id=session.session_id, prompt=prompt)
    )
    await client.idle.wait()
    return agent


def tail(updates: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    return [{k: v for k, v in u.items() if k != "toolCallId"} for u in updates[-n:]]


def test_session_cancel_while_the_permission_request_is_pending() -> None:
    async def scenario() -> ScriptedClient:
        client = ScriptedClient(on_permission="wait")
        await prompt_turn(client)
        return client

    client = run(scenario())
    # The agent stopped waiting: it sent $/cancel_request, which cancelled our handler.
    assert client.permission_cancelled
    assert tail(client.updates, 4) == [
        {"sessionUpdate": "tool_call_update", "title": "Echo tool", "kind": "other",
         "status": "pending", "rawInput": {"text": "hello"}},
        {"sessionUpdate": "state_update", "state": "requires_action"},
        {"sessionUpdate": "tool_call_update", "status": "cancelled"},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"},
    ]  # fmt: skip


def test_a_cancelled_permission_outcome_ends_the_turn_cancelled() -> None:
    client = ScriptedClient(on_permission="cancelled")
    run(prompt_turn(client))
    assert tail(client.updates, 2) == [
        {"sessionUpdate": "tool_call_update", "status": "cancelled"},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"},
    ]


def test_a_rejected_tool_fails_and_the_turn_still_ends() -> None:
    client = ScriptedClient(on_permission="reject")
    run(prompt_turn(client))
    denied = {"type": "content", "content": {"type": "text", "text": "Permission was not granted."}}
    assert [u["sessionUpdate"] for u in client.updates][-4:] == [
        "state_update",
        "tool_call_update",
        "usage_update",
        "state_update",
    ]
    assert tail(client.updates, 4)[1] == {
        "sessionUpdate": "tool_call_update",
        "status": "failed",
        "content": [denied],
    }
    assert client.updates[-1]["stopReason"] == "end_turn"


def test_a_failed_turn_ends_idle_with_the_error_stop_reason_and_the_error() -> None:
    client = ScriptedClient(on_permission="fail")
    run(prompt_turn(client))
    assert tail(client.updates, 2) == [
        {"sessionUpdate": "tool_call_update", "status": "failed"},
        {
            "sessionUpdate": "state_update",
            "state": "idle",
            "stopReason": "error",
            "error": {"code": -32603, "message": "Internal error"},
        },
    ]


def test_slow_prompt_cancelled_after_the_first_chunk() -> None:
    async def scenario() -> kit.TurnResult:
        client = kit.Client(permissions=kit.allow)
        _, client_conn = connect_pair(echo.EchoAgent(), client)
        session = await (await kit.connect_agent(client, client_conn)).new_session()

        async def cancel_on_the_first_chunk(update: acp.SessionUpdate) -> None:
            if isinstance(update, acp.SessionUpdateAgentMessageChunk) and not session.cancelling:
                await session.cancel()

        session.subscribe(cancel_on_the_first_chunk)
        return await session.prompt("slow hello world")

    result = run(scenario())
    assert [acp.encode(u)["sessionUpdate"] for u in result.updates] == [
        "user_message",
        "state_update",
        "plan_update",
        "agent_message_chunk",
        "state_update",
    ]
    assert result.stop_reason == "cancelled"


def test_prompt_errors() -> None:
    async def scenario() -> None:
        client = ScriptedClient(on_permission="wait")
        agent = echo.EchoAgent()
        connect_pair(agent, client)
        prompt: list[acp.ContentBlock] = [acp.ContentBlockText(text="slow")]
        with pytest.raises(acp.RpcError) as caught:
            await client.agent.session_prompt(acp.PromptRequest(session_id="nope", prompt=prompt))
        assert caught.value.to_json() == {
            "code": -32002,
            "message": "Resource not found",
            "data": {"sessionId": "nope"},
        }
        session = await client.agent.session_new(acp.NewSessionRequest(cwd="/"))
        request = acp.PromptRequest(session_id=session.session_id, prompt=prompt)
        answer = await client.agent.session_prompt(request)
        assert (answer.message_id, answer.extra) == ("msg_user_1", {})
        # The first turn is still running: the next prompt is held, not inserted...
        held = asyncio.ensure_future(client.agent.session_prompt(request))
        await asyncio.sleep(0.05)
        assert not held.done()
        # ...until the session is cancelled, which cancels held prompts too.
        await client.agent.session_cancel(
            acp.CancelSessionNotification(session_id=request.session_id)
        )
        with pytest.raises(acp.RpcError) as caught:
            await held
        assert caught.value.to_json() == {"code": -32800, "message": "Request cancelled"}
        with pytest.raises(acp.RpcError) as caught:
            await client.agent.session_delete(acp.DeleteSessionRequest(session_id="nope"))
        assert caught.value.to_json() == {
            "code": -32601,
            "message": "Method not found",
            "data": "session/delete",
        }
        await client.connection.close()

    run(scenario())


# -- the examples as programs --------------------------------------------------------------------
def run_client(*args: str) -> subprocess.CompletedProcess[str]:
    agent = [sys.executable, str(EXAMPLES / "echo_agent.py")]
    return subprocess.run(
        [sys.executable, str(EXAMPLES / "client.py"), *args, *agent],
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_client_program_drives_the_agent_program() -> None:
    done = run_client()
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"stopReason": "end_turn", "updates": FULL_TURN}
    assert done.stdout.count("\n") == 1
    assert '"sessionUpdate": "usage_update"' in done.stderr  # updates are printed as they come


def test_client_program_cancels_a_slow_turn() -> None:
    done = run_client("--cancel", "--prompt", "slow hello")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    # The cancel lands within 200 ms of the first chunk unless the machine is very busy: then
    # more chunks may come first, but the turn still ends cancelled, before the tool runs.
    assert result["stopReason"] == "cancelled"
    updates = result["updates"]
    assert updates[:4] == ["user_message", "state_update", "plan_update", "agent_message_chunk"]
    assert updates[-1] == "state_update"
    assert "usage_update" not in updates


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        ([], 2, "client.py: error: missing AGENT_CMD"),
        (["--timeout", "x", "a"], 2, "client.py: error: --timeout needs a number of seconds"),
        (["--bogus", "a"], 2, "client.py: error: unknown option --bogus"),
        (["/no/such/agent"], 1, "client.py: error: cannot start the agent '/no/such/agent'"),
        ([sys.executable, "-c", "pass"], 1, "client.py: error: the agent exited before"),
    ],
)
def test_client_program_errors_are_one_line(
    args: list[str], status: int, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert example_client.main(args) == status
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(message)
    assert "Traceback" not in err


def test_agent_program_reads_a_regular_file_and_answers_in_order(tmp_path: Path) -> None:
    requests = tmp_path / "in.jsonl"
    init = {"protocolVersion": 2, "info": {"name": "file", "version": "1"}}
    requests.write_text(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        + "\n"
        + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/load"})
        + "\n"
    )
    with requests.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, str(EXAMPLES / "echo_agent.py")],
            stdin=stdin,
            capture_output=True,
            timeout=30,
        )
    assert done.returncode == 0
    assert [json.loads(line) for line in done.stdout.splitlines()] == [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "protocolVersion": 2,
                "info": {"name": "acp-codegen-echo-agent", "version": "0.1.0"},
                "capabilities": {"session": {}},
            },
        },
        {
            "jsonrpc": "2.0",
            "id": 2,
            "error": {"code": -32601, "message": "Method not found", "data": "session/load"},
        },
    ]


def test_a_cancel_that_arrives_with_the_prompt_still_ends_the_turn() -> None:
    async def scenario() -> list[Any]:
        peer = RawPeer(echo.EchoAgent())
        sid = (await peer.call(request(1, "session/new", {"cwd": "/"})))["result"]["sessionId"]
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}
        lines = [
            request(2, "session/prompt", prompt),
            notification("session/cancel", {"sessionId": sid}),
        ]
        peer.send_bytes(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
        return [await peer.recv() for _ in range(3)]

    answer, user_message, idle = run(scenario())
    assert answer == {"jsonrpc": "2.0", "id": 2, "result": {"messageId": "msg_user_1"}}
    assert user_message["params"]["update"]["sessionUpdate"] == "user_message"
    assert idle["params"]["update"] == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "cancelled",
    }


def test_a_handler_may_close_its_own_connection() -> None:
    class Closer(acp.AgentBase):
        async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
            await self.connection.close()
            return acp.NewSessionResponse(session_id="never sent")

    async def scenario() -> bytes:
        peer = RawPeer(Closer())
        peer.send(request(1, "session/new", {"cwd": "/"}))
        await peer.connection.wait_closed()
        return await peer.rest()

    assert run(scenario()) == b""


def test_sessions_are_listed_and_closing_one_cancels_its_turn() -> None:
    async def scenario() -> ScriptedClient:
        client = ScriptedClient(on_permission="wait")
        connect_pair(echo.EchoAgent(), client)
        agent = client.agent
        first = await agent.session_new(acp.NewSessionRequest(cwd="/a"))
        second = await agent.session_new(acp.NewSessionRequest(cwd="/b"))
        listed = await agent.session_list(acp.ListSessionsRequest())
        assert [(i.session_id, i.cwd) for i in listed.sessions] == [
            (first.session_id, "/a"),
            (second.session_id, "/b"),
        ]
        prompt: list[acp.ContentBlock] = [acp.ContentBlockText(text="slow one")]
        await agent.session_prompt(acp.PromptRequest(session_id=first.session_id, prompt=prompt))
        closed = await agent.session_close(acp.CloseSessionRequest(session_id=first.session_id))
        assert acp.encode(closed) == {}
        # The turn's final idle came before the answer: nothing is sent after it.
        assert client.idle.is_set()
        listed = await agent.session_list(acp.ListSessionsRequest())
        assert [i.session_id for i in listed.sessions] == [second.session_id]
        # Closing a session that is gone succeeds, as the draft says it should.
        again = await agent.session_close(acp.CloseSessionRequest(session_id=first.session_id))
        assert acp.encode(again) == {}
        return client

    client = run(scenario())
    assert client.updates[-1] == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "cancelled",
    }


def test_resume_replays_the_retained_messages_then_reports_the_current_state() -> None:
    async def scenario() -> tuple[ScriptedClient, list[dict[str, Any]]]:
        client = ScriptedClient(on_permission="reject")
        await prompt_turn(client, "hi")
        agent = client.agent
        [info] = (await agent.session_list(acp.ListSessionsRequest())).sessions
        client.updates.clear()
        plain = acp.ResumeSessionRequest(session_id=info.session_id, cwd="/")
        assert acp.encode(await agent.session_resume(plain)) == {}
        without_replay = list(client.updates)
        client.updates.clear()
        start = acp.ResumeSessionRequest(
            session_id=info.session_id, cwd="/", replay_from=acp.ReplayFromStart()
        )
        assert acp.encode(await agent.session_resume(start)) == {}
        return client, without_replay

    client, without_replay = run(scenario())
    idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    assert without_replay == [idle]  # the current state, even without replay
    plan = [
        {"content": "Echo the prompt back", "priority": "high", "status": "in_progress"},
        {"content": "Run the echo tool", "priority": "medium", "status": "pending"},
        {"content": "Report usage", "priority": "low", "status": "pending"},
    ]
    denied = {"type": "content", "content": {"type": "text", "text": "Permission was not granted."}}
    # The history: each message whole, the plan and the tool call as they last were.
    assert client.updates == [
        {"sessionUpdate": "user_message", "messageId": "msg_user_1",
         "content": [{"type": "text", "text": "hi"}]},
        {"sessionUpdate": "plan_update",
         "plan": {"type": "items", "planId": "plan_1", "entries": plan}},
        {"sessionUpdate": "agent_message", "messageId": "msg_agent_1",
         "content": [{"type": "text", "text": "You said: hi."}]},
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "title": "Echo tool",
         "kind": "other", "status": "failed", "content": [denied], "rawInput": {"text": "hi"}},
        idle,
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("params", "error"),
    [
        (
            {"sessionId": "nope", "cwd": "/"},
            {"code": -32002, "message": "Resource not found", "data": {"sessionId": "nope"}},
        ),
        (
            {"sessionId": "SID", "cwd": "/elsewhere"},
            {"code": -32602, "message": "Invalid params",
             "data": {"path": "$.cwd", "reason": "the session's working directory is /"}},
        ),
        (
            {"sessionId": "SID", "cwd": "/", "replayFrom": {"type": "_checkpoint", "at": 3}},
            {"code": -32602, "message": "Invalid params",
             "data": {"path": "$.replayFrom", "reason": "unsupported replay cursor '_checkpoint'"}},
        ),
    ],
    ids=["unknown-session", "other-cwd", "unsupported-cursor"],
)  # fmt: skip
def test_resume_errors(params: dict[str, Any], error: dict[str, Any]) -> None:
    async def scenario() -> tuple[Any, Any]:
        peer = RawPeer(echo.EchoAgent())
        sid = (await peer.call(request(1, "session/new", {"cwd": "/"})))["result"]["sessionId"]
        raw = json.loads(json.dumps(params).replace("SID", sid))
        return await peer.call(request(2, "session/resume", raw)), sid

    got, sid = run(scenario())
    assert got == {"jsonrpc": "2.0", "id": 2, "error": error}


class ErringClient(acp.ClientBase):
    """Answers the permission request with an error, or with a result that is not one."""

    def __init__(self, how: str) -> None:
        self.how = how
        self.idle = asyncio.Event()
        self.updates: list[dict[str, Any]] = []

    async def session_update(self, params: acp.UpdateSessionNotification) -> None:
        self.updates.append(acp.encode(params.update))
        if self.updates[-1].get("state") == "idle":
            self.idle.set()

    async def session_request_permission(self, params: acp.RequestPermissionRequest) -> Any:
        if self.how == "error":
            raise acp.RpcError(-32603, "Internal error", "the UI is gone")
        return {"outcome": "yes please"}  # not a RequestPermissionResponse


@pytest.mark.parametrize(
    ("how", "logged"),
    [
        ("error", 'error Internal error (-32603): "the UI is gone"'),
        (
            "invalid",
            "the client sent an invalid answer: $.outcome: expected an object, got a string",
        ),
    ],
)
def test_the_agent_program_logs_a_clients_error_in_one_line(
    how: str, logged: str, tmp_path: Path
) -> None:
    async def scenario(stderr: Any) -> list[dict[str, Any]]:
        client = ErringClient(how)
        command = [sys.executable, str(EXAMPLES / "echo_agent.py")]
        async with acp.connect_process(client, *command, stderr=stderr):
            info = acp.Implementation(name="t", version="1")
            await client.agent.initialize(acp.InitializeRequest(protocol_version=2, info=info))
            new = await client.agent.session_new(acp.NewSessionRequest(cwd="/"))
            prompt: list[acp.ContentBlock] = [acp.ContentBlockText(text="hi")]
            request = acp.PromptRequest(session_id=new.session_id, prompt=prompt)
            await client.agent.session_prompt(request)
            await client.idle.wait()
        return client.updates

    log = tmp_path / "stderr.txt"
    with log.open("wb") as stderr:
        updates = run(scenario(stderr), timeout=30)
    assert updates[-1]["stopReason"] == "error"
    lines = log.read_text().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("[acp-codegen-echo-agent] turn of session sess_")
    assert lines[0].endswith(f" failed: {logged}")
