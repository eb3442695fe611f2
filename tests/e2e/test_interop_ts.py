"""Interop with the official TypeScript SDK (@agentclientprotocol/sdk, experimental/v2):
its client drives examples/echo_agent.py, and examples/client.py drives its agent, for a full
turn and a cancelled one. `make setup` installs the SDK (`npm ci --prefix interop`)."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import acp_v2 as acp
import pytest

from tests.support.rpc_wire import FULL_TURN

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


def result_of(argv: list[str]) -> dict[str, object]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    result: dict[str, object] = json.loads(lines[0])
    return result


def test_sdk_client_runs_a_full_turn_with_our_agent() -> None:
    # ts_client.mjs is strict: it fails if the SDK refuses our session/prompt answer or drops
    # any session/update our agent sent.
    assert result_of([*SDK_CLIENT, *OUR_AGENT]) == {"stopReason": "end_turn", "updates": FULL_TURN}


def test_sdk_client_cancels_a_turn_of_our_agent() -> None:
    assert_cancelled_turn(
        result_of([*SDK_CLIENT, "--cancel", "--prompt", "slow hello", *OUR_AGENT])
    )


def test_our_client_runs_a_full_turn_with_the_sdk_agent() -> None:
    assert result_of([*OUR_CLIENT, *SDK_AGENT]) == {"stopReason": "end_turn", "updates": FULL_TURN}


def test_our_client_cancels_a_turn_of_the_sdk_agent() -> None:
    assert_cancelled_turn(
        result_of([*OUR_CLIENT, "--cancel", "--prompt", "slow hello", *SDK_AGENT])
    )


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


def test_the_sdk_agent_cancels_its_permission_request_with_cancel_request() -> None:
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
        assert answer.extra == {"messageId": "msg_user_1"}  # the draft's field, kept
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
