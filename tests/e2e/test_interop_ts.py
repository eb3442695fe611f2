"""Interop with the official TypeScript SDK (@agentclientprotocol/sdk 2.4.0, experimental/v2):
its v2 client drives examples/echo_agent.py, and examples/client.py drives its v2 agent, for a
full turn and a cancelled one, with no leniency anywhere (the SDK's v1 peers against the same
programs: test_interop_v1.py). `make setup` installs the SDK
(`npm ci --prefix interop`).

Strict means: interop/ts_client.mjs fails when the SDK refuses our session/prompt answer, drops
one of our session/updates, or prints anything on the console; and both SDK sides copy whatever
the SDK prints (its only report of messages it refuses or ignores) to stderr as
`... SDK console.<level>: ...` lines, of which every run here must have none. The harness tests
at the end prove those checks fail on deliberately bad messages."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp_kit import v2 as acp

from tests.support.echo_turn import FULL_TURN, TS_AGENT_TURN

REPO = Path(__file__).resolve().parents[2]
INTEROP = REPO / "interop"
SDK = INTEROP / "node_modules" / "@agentclientprotocol" / "sdk"
NODE = shutil.which("node")

if NODE is None:
    pytest.skip("interop: `node` is not on PATH", allow_module_level=True)
if not SDK.is_dir():
    pytest.skip(
        "interop: the TypeScript SDK is not installed (run `npm ci --prefix interop`)",
        allow_module_level=True,
    )


def assert_cancelled_turn(result: dict[str, object]) -> None:
    """A turn cancelled after its first message chunk. How many more chunks come before the
    cancel lands depends on timing (200 ms apart), so only the shape is checked."""
    assert result["stopReason"] == "cancelled"
    updates = result["updates"]
    assert isinstance(updates, list)
    assert updates[:4] == ["user_message", "state_update", "plan_update", "agent_message_chunk"]
    assert updates[-1] == "state_update"
    assert "usage_update" not in updates and "tool_call_content_chunk" not in updates


OUR_AGENT = [sys.executable, str(REPO / "examples" / "echo_agent.py")]
OUR_CLIENT = [sys.executable, str(REPO / "examples" / "client.py")]
SDK_AGENT = [str(NODE), str(INTEROP / "ts_agent.mjs")]
SDK_CLIENT = [str(NODE), str(INTEROP / "ts_client.mjs")]
SCRIPTED_AGENT = [sys.executable, str(REPO / "tests" / "support" / "scripted_agent.py")]


def sdk_console(stderr: str) -> list[str]:
    """The lines in which ts_client.mjs or ts_agent.mjs copied what the SDK printed."""
    return [line for line in stderr.splitlines() if "SDK console." in line]


def run_program(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=REPO)


def result_of(argv: list[str]) -> dict[str, object]:
    """The result line of a run that must succeed with the SDK silent on both sides (the SDK
    agent's stderr reaches us through our client, which passes it through)."""
    done = run_program(argv)
    assert done.returncode == 0, done.stderr
    assert sdk_console(done.stderr) == []
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    result: dict[str, object] = json.loads(lines[0])
    return result


def test_sdk_client_runs_a_full_turn_with_our_agent() -> None:
    assert result_of([*SDK_CLIENT, *OUR_AGENT]) == {"stopReason": "end_turn", "updates": FULL_TURN}


def test_sdk_client_lists_resumes_and_closes_our_session() -> None:
    """What `capabilities.session: {}` promises the SDK client, beyond the prompt turn."""
    assert result_of([*SDK_CLIENT, "--sessions", *OUR_AGENT]) == {
        "stopReason": "end_turn",
        "updates": FULL_TURN,
        "sessions": {
            "listed": ["this"],
            "replayed": [
                "user_message",
                "plan_update",
                "agent_message",
                "tool_call_update",
                "state_update",
            ],  # each message whole, the plan and the tool call as they are, the state
            "afterClose": [],
        },
    }


FULL_TURN_AGENT = [sys.executable, str(REPO / "examples" / "full_turn_agent.py")]


def test_sdk_client_runs_the_full_turn_agent(tmp_path: Path) -> None:
    """examples/full_turn_agent.py (the newcomer's agent on the toolkit) lists the directory
    the SDK client's session is in: three files here."""
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / name).write_text(name)
    done = subprocess.run(
        [*SDK_CLIENT, *FULL_TURN_AGENT], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert sdk_console(done.stderr) == []
    assert json.loads(done.stdout) == {
        "stopReason": "end_turn",
        "updates": [
            "user_message", "state_update", "agent_thought_chunk", "plan_update",
            "agent_message_chunk", "tool_call_update", "state_update", "state_update",
            "plan_update", "plan_update", "tool_call_update", "tool_call_content_chunk",
            "tool_call_content_chunk", "tool_call_content_chunk", "tool_call_update",
            "plan_update", "agent_message_chunk", "plan_update", "usage_update", "state_update",
        ],
    }  # fmt: skip


def test_sdk_client_cancels_the_full_turn_agent() -> None:
    """Cancelled after its first message chunk: its permission request is withdrawn, the tool
    call cancelled, the turn ends `cancelled`."""
    result = result_of([*SDK_CLIENT, "--cancel", *FULL_TURN_AGENT])
    assert result["stopReason"] == "cancelled"
    updates = result["updates"]
    assert isinstance(updates, list)
    assert updates[:5] == [
        "user_message", "state_update", "agent_thought_chunk", "plan_update", "agent_message_chunk"
    ]  # fmt: skip
    assert updates[-2:] == ["tool_call_update", "state_update"]
    assert "usage_update" not in updates


def test_sdk_client_cancels_a_turn_of_our_agent() -> None:
    assert_cancelled_turn(
        result_of([*SDK_CLIENT, "--cancel", "--prompt", "slow hello", *OUR_AGENT])
    )


def ours(result: dict[str, Any]) -> dict[str, object]:
    """What examples/client.py printed, as ts_client.mjs prints it (the updates' kinds), once
    its protocol version is checked: 2, the SDK agent's."""
    assert result.pop("protocol") == 2
    result.pop("permissions")
    return {**result, "updates": [u["sessionUpdate"] for u in result["updates"]]}


def test_our_client_runs_a_full_turn_with_the_sdk_agent() -> None:
    result: Any = result_of([*OUR_CLIENT, *SDK_AGENT])
    assert result["permissions"] == [
        {"toolCall": {"toolCallId": "call_001", "title": "Echo tool", "kind": "other",
                      "status": "pending"},  # what ts_agent.mjs puts in the subject
         "outcome": {"outcome": "selected", "optionId": "allow-once"}}
    ]  # fmt: skip
    assert ours(result) == {"stopReason": "end_turn", "updates": TS_AGENT_TURN}


def test_our_client_cancels_a_turn_of_the_sdk_agent() -> None:
    result: Any = result_of([*OUR_CLIENT, "--cancel", "--prompt", "slow hello", *SDK_AGENT])
    assert_cancelled_turn(ours(result))


class WaitingClient(acp.ClientBase):
    """Answers no permission request by itself: it cancels the turn instead, and waits."""

    def __init__(self) -> None:
        self.updates: list[dict[str, object]] = []
        self.idle = asyncio.Event()
        self.permission_cancelled = asyncio.Event()

    async def session_update(self, params: acp.UpdateSessionNotification) -> None:
        body = acp.encode(params.update)
        self.updates.append(body)
        if body.get("state") == "idle":
            self.idle.set()

    async def session_request_permission(
        self, params: acp.RequestPermissionRequest
    ) -> acp.RequestPermissionResponse:
        try:
            cancel = acp.CancelSessionNotification(session_id=params.session_id)
            await self.agent.session_cancel(cancel)
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            self.permission_cancelled.set()
            raise
        raise AssertionError("the SDK agent did not cancel its permission request")


def test_the_sdk_agent_cancels_its_permission_request_with_cancel_request(
    capfd: pytest.CaptureFixture[str],
) -> None:
    async def scenario() -> WaitingClient:
        client = WaitingClient()
        connection = await acp.connect_process(client, *SDK_AGENT)
        agent = client.agent
        info = acp.Implementation(name="interop-test", version="1")
        await agent.initialize(acp.InitializeRequest(protocol_version=2, info=info))
        session = await agent.session_new(acp.NewSessionRequest(cwd=str(REPO), mcp_servers=[]))
        prompt: list[acp.ContentBlock] = [acp.ContentBlockText(text="hi")]
        answer = await agent.session_prompt(
            acp.PromptRequest(session_id=session.session_id, prompt=prompt)
        )
        assert (answer.message_id, answer.extra) == ("msg_user_1", {})
        await client.idle.wait()
        await client.permission_cancelled.wait()
        await connection.close()  # closes its stdin, reaps it
        assert connection.returncode is not None
        return client

    client = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert client.updates[-4:] == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "title": "Echo tool",
         "kind": "other", "status": "pending", "rawInput": {"text": "hi"}},
        {"sessionUpdate": "state_update", "state": "requires_action"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "status": "cancelled"},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"},
    ]  # fmt: skip
    assert sdk_console(capfd.readouterr().err) == []  # the SDK agent's stderr is inherited


# -- the harness itself: each check fails on a deliberately bad message ------------------------
def test_the_sdk_client_passes_the_scripted_agent_when_nothing_is_wrong() -> None:
    done = run_program([*SDK_CLIENT, *SCRIPTED_AGENT, "clean"])
    assert (done.returncode, sdk_console(done.stderr)) == (0, [])
    assert json.loads(done.stdout) == {
        "stopReason": "end_turn",
        "updates": ["user_message", "state_update", "agent_message_chunk", "state_update"],
    }


@pytest.mark.parametrize(
    ("scenario", "printed", "error"),
    [
        (
            "unknown-response-id",
            ["ts_client: SDK console.error: Got response to unknown request 999"],
            "ts_client: error: the SDK printed 1 message(s) about the agent's messages, first:"
            " console.error: Got response to unknown request 999",
        ),
        (
            "broken-update",
            [
                "ts_client: SDK console.error: Error handling notification"
                " { method: 'session/update', code: -32602, message: 'Invalid params' }"
            ],
            "ts_client: error: the SDK rejected 1 session/update notification(s) of kind"
            ' ["plan_update"]',
        ),
        (
            "empty-prompt-response",
            [],
            "ts_client: error: session/prompt: SDK validation failed:"
            " messageId: Invalid input: expected string, received undefined",
        ),
    ],
)
def test_the_sdk_client_fails_on_a_bad_message(
    scenario: str, printed: list[str], error: str
) -> None:
    done = run_program([*SDK_CLIENT, *SCRIPTED_AGENT, scenario])
    assert (done.returncode, done.stdout) == (1, "")
    assert sdk_console(done.stderr) == printed
    assert done.stderr.splitlines()[-1] == error


async def talk_to_the_sdk_agent(notification: dict[str, Any]) -> str:
    """Initialize the SDK agent, send `notification`, make a request to be sure it was handled,
    close; returns the agent's stderr."""
    process = await asyncio.create_subprocess_exec(
        *SDK_AGENT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None

    async def call(message: dict[str, Any]) -> Any:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(message).encode() + b"\n")
        return json.loads(await process.stdout.readline())

    init = {"protocolVersion": 2, "info": {"name": "harness-test", "version": "1"}}
    answer = await call({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
    assert answer["result"]["protocolVersion"] == 2
    process.stdin.write(json.dumps(notification).encode() + b"\n")
    new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}}
    assert "result" in await call(new)
    process.stdin.close()
    _, stderr = await process.communicate()
    return stderr.decode()


@pytest.mark.parametrize(
    ("session_id", "printed"),
    [
        ("sess_1", []),
        (
            1,
            [
                "[ts_agent] SDK console.error: Error handling notification"
                " { method: 'session/cancel', code: -32602, message: 'Invalid params' }"
            ],
        ),
    ],
    ids=["valid", "invalid"],
)
def test_the_sdk_agent_reports_a_bad_notification_on_stderr(
    session_id: object, printed: list[str]
) -> None:
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}
    stderr = asyncio.run(asyncio.wait_for(talk_to_the_sdk_agent(cancel), 30))
    assert sdk_console(stderr) == printed
