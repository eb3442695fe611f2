"""examples/echo_agent.py and examples/client.py: one agent and one client for both protocol
versions. A whole prompt turn between them in one process (exact wire messages, each version),
the agent against a raw client that answers its permission request every way there is, and both
as real programs over stdio."""

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
from acp_kit.runtime.connection import RoleBase

from tests.support import echo_turn
from tests.support.rpc_wire import MemoryWriter, RawPeer, pipe, request, run
from tests.support.toolkit_wire import Wire, WireLane, is_request, is_update, not_found, state

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
OPTIONS = [
    {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
]


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


def test_a_full_turn_on_the_wire(lane: WireLane) -> None:
    """Our client and the echo agent, the client asking for `lane`'s version: every line the
    agent writes, exactly."""
    from acp_kit.toolkit.router import AgentRouter

    async def scenario() -> list[Any]:
        to_agent, client_out = pipe()
        to_client = asyncio.StreamReader()
        agent_out = Recorder(to_client)
        kit.Connection(AgentRouter(echo.EchoAgent()), to_agent, agent_out).start()
        client = kit.Client(permissions=kit.allow)
        connection = kit.Connection(RoleBase(), to_client, client_out)
        remote = await kit.connect_agent(client, connection, protocol=lane.version)
        result = await (await remote.new_session()).prompt("hi there")
        assert [kit.encode(u) for u in result.updates] == echo_turn.updates(
            lane.version, "hi there"
        )
        await remote.close()
        return agent_out.lines

    lines = run(scenario())
    sid = lines[1]["result"]["sessionId"]
    assert sid.startswith("sess_")
    lines = json.loads(json.dumps(lines).replace(sid, "SID"))

    def update(body: dict[str, Any]) -> dict[str, Any]:
        params = {"sessionId": "SID", "update": body}
        return {"jsonrpc": "2.0", "method": "session/update", "params": params}

    updates = [update(u) for u in echo_turn.updates(lane.version, "hi there")]
    subject = {"toolCallId": "call_001", "title": "Echo tool"}
    if lane.v1:
        info = {"name": "acp-codegen-echo-agent", "version": "0.1.0"}
        assert lines[0]["result"]["agentInfo"] == info
        asked = {"sessionId": "SID", "toolCall": subject, "options": OPTIONS}
        at = echo_turn.kinds(echo_turn.updates(1, "hi there")).index("tool_call") + 1
        answer = {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}
        turn = [*updates[:at], None, *updates[at:], answer]
    else:
        assert lines[0]["result"] == {
            "protocolVersion": 2,
            "info": {"name": "acp-codegen-echo-agent", "version": "0.1.0"},
            "capabilities": {"session": {"delete": {}, "additionalDirectories": {}}},
        }
        asked = {"sessionId": "SID", "title": 'Allow "Echo tool" to run?', "options": OPTIONS,
                 "subject": {"type": "tool_call", "toolCall": subject}}  # fmt: skip
        at = [u.get("state") for u in echo_turn.updates(2, "hi there")].index("requires_action") + 1
        answer = {"jsonrpc": "2.0", "id": 2, "result": {"messageId": "msg_user_1"}}
        turn = [answer, *updates[:at], None, *updates[at:]]  # the answer comes first
    request_line = {"jsonrpc": "2.0", "id": 0,  # the agent's own first request: ids per sender
                    "method": "session/request_permission", "params": asked}  # fmt: skip
    turn[turn.index(None)] = request_line
    assert lines[1:] == [{"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "SID"}}, *turn]


# -- the echo agent against a raw client -------------------------------------------------------
async def echo_turn_with(lane: WireLane, on_permission: str, text: str = "hello") -> Wire:
    """A turn of the echo agent whose permission request the raw client answers as told:
    `cancel` (session/cancel, never answered), `cancelled`, `reject` or `fail` (an error)."""
    wire = await Wire.open(echo.EchoAgent(), lane)
    sid = await wire.new_session("/")
    pending = wire.prompt_later(sid, text)
    asked = await wire.until(is_request("session/request_permission"))
    if on_permission == "cancel":
        wire.send("session/cancel", {"sessionId": sid})
    elif on_permission == "cancelled":
        wire.reply(asked["id"], {"outcome": {"outcome": "cancelled"}})
    elif on_permission == "reject":
        wire.reply(asked["id"], {"outcome": {"outcome": "selected", "optionId": "reject-once"}})
    else:
        error = {"code": -32603, "message": "Internal error", "data": "no permission UI"}
        wire.send_message({"jsonrpc": "2.0", "id": asked["id"], "error": error})
    await wire.ended(pending)
    wire.answer = await pending  # type: ignore[attr-defined]
    return wire


@pytest.mark.parametrize(
    ("on_permission", "outcome"),
    [("cancel", "cancelled"), ("cancelled", "cancelled"), ("reject", "refused")],
)
def test_each_answer_to_the_permission_request_ends_the_turn_as_its_version_says(
    lane: WireLane, on_permission: str, outcome: echo_turn.Outcome
) -> None:
    wire = run(echo_turn_with(lane, on_permission))
    assert wire.updates() == echo_turn.updates(lane.version, outcome=outcome)
    reason = "cancelled" if outcome == "cancelled" else "end_turn"
    if lane.v1:
        assert wire.answer["result"] == {"stopReason": reason}  # type: ignore[attr-defined]
    if on_permission == "cancel" and not lane.v1:  # v2 withdraws the request
        withdrawn = [m for m in wire.seen if m.get("method") == "$/cancel_request"]
        assert [m["params"] for m in withdrawn] == [{"requestId": 0}]


def test_an_error_answer_to_the_permission_request_fails_the_turn(
    lane: WireLane, caplog: pytest.LogCaptureFixture
) -> None:
    wire = run(echo_turn_with(lane, "fail"))
    error = {"code": -32603, "message": "Internal error", "data": "no permission UI"}
    failed = echo_turn.tool(status="failed")
    if lane.v1:
        assert wire.updates()[-1] == failed
        assert wire.answer["error"] == error  # type: ignore[attr-defined]
    else:
        ended = state(
            "idle", stopReason="error", error={"code": -32603, "message": "Internal error"}
        )
        assert wire.updates()[-2:] == [failed, ended]
    [record] = [r for r in caplog.records if r.levelname == "ERROR"]
    assert record.getMessage().endswith('failed: error Internal error (-32603): "no permission UI"')


def test_a_slow_prompt_cancelled_after_the_first_chunk(lane: WireLane) -> None:
    from acp_kit.toolkit.router import AgentRouter

    async def scenario() -> kit.TurnResult:
        to_agent, client_out = pipe()
        to_client, agent_out = pipe()
        kit.Connection(AgentRouter(echo.EchoAgent()), to_agent, agent_out).start()
        client = kit.Client(permissions=kit.allow)
        connection = kit.Connection(RoleBase(), to_client, client_out)
        remote = await kit.connect_agent(client, connection, protocol=lane.version)
        session = await remote.new_session()

        async def cancel_on_the_first_chunk(update: Any) -> None:
            chunked = kit.encode(update)["sessionUpdate"] == "agent_message_chunk"
            if chunked and not session.cancelling:
                await session.cancel()

        session.subscribe(cancel_on_the_first_chunk)
        return await session.prompt("slow hello world")

    result = run(scenario())
    full = echo_turn.updates(lane.version, "slow hello world")
    first_chunk = echo_turn.kinds(full).index("agent_message_chunk") + 1
    ending = [] if lane.v1 else [state("idle", stopReason="cancelled")]
    assert [kit.encode(u) for u in result.updates] == full[:first_chunk] + ending
    assert result.stop_reason == "cancelled"


def test_prompts_the_agent_refuses_or_holds(lane: WireLane) -> None:
    async def scenario() -> tuple[Any, Any, Any, Any]:
        wire = await Wire.open(echo.EchoAgent(), lane)
        unknown = await wire.prompt("nope")
        sid = await wire.new_session("/")
        first = wire.prompt_later(sid, "slow")
        await wire.until(is_request("session/request_permission"))
        held = wire.prompt_later(sid, "held")  # the first turn still runs: held, not inserted
        await asyncio.sleep(0.05)
        assert not held.done()
        wire.send("session/cancel", {"sessionId": sid})  # cancels held prompts too
        return unknown["error"], await held, await wire.ended(first), sid

    unknown, held, first, _ = run(scenario())
    assert unknown == not_found("nope")
    if lane.v1:
        assert (held["result"], first["result"]) == ({"stopReason": "cancelled"},) * 2
    else:
        assert held["error"] == {"code": -32800, "message": "Request cancelled"}


def test_sessions_are_listed_and_closing_one_cancels_its_turn(lane: WireLane) -> None:
    async def scenario() -> tuple[list[Any], list[Any], list[Any], str, str]:
        wire = await Wire.open(echo.EchoAgent(), lane)
        first, second = await wire.new_session("/a"), await wire.new_session("/b")
        listed = (await wire.call("session/list", {}))["result"]["sessions"]
        pending = wire.prompt_later(first, "slow one")
        await wire.until(is_update("agent_message_chunk"))
        closed = await wire.call("session/close", {"sessionId": first})
        answered = await pending
        after = (await wire.call("session/list", {}))["result"]["sessions"]
        return (
            [(s["sessionId"], s["cwd"]) for s in listed],
            [closed, answered],
            ([s["sessionId"] for s in after]),
            first,
            second,
        )

    listed, (closed, answered), after, first, second = run(scenario())
    assert listed == [(first, "/a"), (second, "/b")]
    assert closed["result"] == {}
    if lane.v1:  # the prompt's answer came before close's; the session stays listed
        assert answered["result"] == {"stopReason": "cancelled"} and answered["id"] < closed["id"]
        assert after == [first, second]
    else:
        assert after == [second]


def test_a_replay_of_the_echo_agents_turn(lane: WireLane) -> None:
    async def scenario() -> list[Any]:
        wire = run_turn = await echo_turn_with(lane, "reject", "hi")
        sid = wire.seen[0]["params"]["sessionId"]
        wire.take()
        if lane.v1:
            await run_turn.call("session/load", {"sessionId": sid, "cwd": "/", "mcpServers": []})
        else:
            params = {"sessionId": sid, "cwd": "/", "replayFrom": {"type": "start"}}
            await run_turn.call("session/resume", params)
        return wire.updates()

    denied = [echo_turn.tool_text("Permission was not granted.")]
    said = {"messageId": "msg_agent_1"}
    call = {"toolCallId": "call_001", "title": "Echo tool", "kind": "other", "status": "failed",
            "content": denied, "rawInput": {"text": "hi"}}  # fmt: skip
    if lane.v1:
        expected = [
            {"sessionUpdate": "user_message_chunk", "messageId": "msg_user_1",
             "content": echo_turn.text("hi")},
            echo_turn.plan(1, "completed"),
            {"sessionUpdate": "agent_message_chunk", **said,
             "content": echo_turn.text("You said: hi.")},
            {"sessionUpdate": "tool_call", **call},
        ]  # fmt: skip
    else:
        expected = [
            {"sessionUpdate": "user_message", "messageId": "msg_user_1",
             "content": [echo_turn.text("hi")]},
            echo_turn.plan(2, "completed"),
            {"sessionUpdate": "agent_message", **said,
             "content": [echo_turn.text("You said: hi.")]},
            {"sessionUpdate": "tool_call_update", **call},
            state("idle", stopReason="end_turn"),
        ]  # fmt: skip
    assert run(scenario()) == expected


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


# -- the examples as programs --------------------------------------------------------------------
AGENT = [sys.executable, str(EXAMPLES / "echo_agent.py")]


def run_client(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / "client.py"), *args, *AGENT],
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.mark.parametrize("flags", [[], ["--protocol", "1"], ["--protocol", "2"]],
                         ids=["newest", "v1", "v2"])  # fmt: skip
def test_the_client_program_drives_the_agent_program(flags: list[str]) -> None:
    done = run_client("--prompt", "hi there", *flags)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    version = int(flags[1]) if flags else 2
    assert json.loads(done.stdout) == {
        "protocol": version,
        "stopReason": "end_turn",
        "updates": echo_turn.updates(version, "hi there"),
        "permissions": echo_turn.permissions("allowed"),
    }
    assert done.stdout.count("\n") == 1


@pytest.mark.parametrize(
    ("flags", "outcome"), [(["--reject"], "refused"), (["--cancel", "permission"], "cancelled")]
)
@pytest.mark.parametrize("version", [1, 2])  # fmt: skip
def test_the_client_program_refuses_or_cancels_at_the_permission_request(
    version: int, flags: list[str], outcome: echo_turn.Outcome
) -> None:
    done = run_client("--protocol", str(version), *flags)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert json.loads(done.stdout) == {
        "protocol": version,
        "stopReason": "cancelled" if outcome == "cancelled" else "end_turn",
        "updates": echo_turn.updates(version, outcome=outcome),
        "permissions": echo_turn.permissions(outcome),
    }


@pytest.mark.parametrize("version", [1, 2])
def test_the_client_program_cancels_a_slow_turn_and_prints_updates_when_verbose(
    version: int,
) -> None:
    done = run_client("--protocol", str(version), "--verbose", "--cancel", "--prompt", "slow hi")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    # The cancel lands within 200 ms of the first chunk unless the machine is very busy: then
    # more chunks may come first, but the turn still ends cancelled, before the tool runs.
    assert (result["stopReason"], result["permissions"]) == ("cancelled", [])
    kinds = echo_turn.kinds(result["updates"])
    start = echo_turn.kinds(echo_turn.updates(version, "slow hi"))
    first = start.index("agent_message_chunk") + 1
    assert kinds[:first] == start[:first]
    assert "tool_call" not in kinds and "usage_update" not in kinds
    assert kinds[-1] == ("agent_message_chunk" if version == 1 else "state_update")
    printed = [line for line in done.stderr.splitlines() if line.startswith("update: ")]
    assert [json.loads(line.removeprefix("update: ")) for line in printed] == result["updates"]


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        ([], 2, "client.py: error: missing AGENT_CMD"),
        (["--timeout", "x", "a"], 2, "client.py: error: --timeout needs a number of seconds"),
        (["--protocol", "3", "a"], 2, "client.py: error: --protocol needs a protocol version"),
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


@pytest.mark.parametrize(
    ("init", "second"),
    [
        ({"protocolVersion": 2, "info": {"name": "file", "version": "1"}},
         {"code": -32601, "message": "Method not found", "data": "session/load"}),
        ({"protocolVersion": 1},
         {"code": -32602, "message": "Invalid params",
          "data": {"path": "$.mcpServers", "reason": "missing required field"}}),
    ],
    ids=["v2", "v1"],
)  # fmt: skip
def test_the_agent_program_reads_a_regular_file_and_answers_in_order(
    tmp_path: Path, init: dict[str, Any], second: dict[str, Any]
) -> None:
    requests = tmp_path / "in.jsonl"
    requests.write_text(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        + "\n"
        + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/load"})
        + "\n"
    )
    with requests.open("rb") as stdin:
        done = subprocess.run(AGENT, stdin=stdin, capture_output=True, timeout=30)
    assert (done.returncode, done.stderr) == (0, b"")
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2]
    assert answers[0]["result"]["protocolVersion"] == init["protocolVersion"]
    assert answers[1]["error"] == second


@pytest.mark.parametrize(
    ("how", "logged"),
    [
        ("error", 'error Internal error (-32603): "the UI is gone"'),
        ("invalid",
         "the client sent an invalid answer: $.outcome: expected an object, got a string"),
    ],
)  # fmt: skip
def test_the_agent_program_logs_a_clients_error_in_one_line(
    lane: WireLane, how: str, logged: str, tmp_path: Path
) -> None:
    async def scenario(stderr: Any) -> list[Any]:
        process = await asyncio.create_subprocess_exec(
            *AGENT, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr
        )
        from tests.support.toolkit_wire import ProcessWire

        wire = ProcessWire(process, lane)
        await wire.initialize()
        sid = await wire.new_session("/")
        pending = wire.prompt_later(sid)
        asked = await wire.until(is_request("session/request_permission"))
        if how == "error":
            error = {"code": -32603, "message": "Internal error", "data": "the UI is gone"}
            wire.send_message({"jsonrpc": "2.0", "id": asked["id"], "error": error})
        else:
            wire.reply(asked["id"], {"outcome": "yes please"})  # not a RequestPermissionResponse
        await wire.ended(pending)
        wire._stdin.close()
        await process.wait()
        return wire.updates()

    log = tmp_path / "stderr.txt"
    with log.open("wb") as stderr:
        run(scenario(stderr), timeout=30)
    lines = log.read_text().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("[acp-codegen-echo-agent] turn of session sess_")
    assert lines[0].endswith(f" failed: {logged}")
