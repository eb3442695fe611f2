"""Interop on the v1 lane with the two official SDKs, in both directions, with exact results:
the TypeScript SDK's default entry point (`@agentclientprotocol/sdk`, its v1 API:
interop/v1_client.mjs, interop/v1_agent.mjs) and the PyPI Python SDK (`agent-client-protocol`:
its `run_agent` agent and `spawn_agent_process` client, tests/support/pypi_v1_peers.py)
against examples/v1/echo_agent.py and examples/v1/client.py.

Every client prints one line: the stop reason, the updates as it decoded them, and each
permission request with its answer. A full turn, one refused at the permission request, one
cancelled there (the client answers the request `cancelled`, as v1 requires), and one
cancelled mid-stream; the SDK peers played against each other give the same lines, and no
run prints anything on stderr (the SDK's warnings and errors included)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SDK = REPO / "interop" / "node_modules" / "@agentclientprotocol" / "sdk"
NODE = shutil.which("node")
PY = sys.executable

OUR_AGENT = [PY, str(REPO / "examples" / "v1" / "echo_agent.py")]
OUR_CLIENT = [PY, str(REPO / "examples" / "v1" / "client.py")]
PYPI_AGENT = [PY, "-m", "tests.support.pypi_v1_peers", "agent"]
PYPI_CLIENT = [PY, "-m", "tests.support.pypi_v1_peers", "client"]
TS_AGENT = [str(NODE), str(REPO / "interop" / "v1_agent.mjs")]
TS_CLIENT = [str(NODE), str(REPO / "interop" / "v1_client.mjs")]

needs_node = pytest.mark.skipif(
    NODE is None or not SDK.is_dir(),
    reason="interop: node and the TypeScript SDK (npm ci --prefix interop) are needed",
)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def plan(first: str) -> dict[str, Any]:
    entries = ["Echo the prompt back", "Run the echo tool", "Report usage"]
    statuses = [first, "pending", "pending"]
    return {
        "sessionUpdate": "plan",
        "entries": [
            {"content": c, "priority": "medium", "status": s}
            for c, s in zip(entries, statuses, strict=True)
        ],
    }


def chunk(value: str) -> dict[str, Any]:
    return {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "msg_agent_1",
        "content": text(value),
    }


TOOL_CALL = {
    "sessionUpdate": "tool_call",
    "toolCallId": "call_001",
    "title": "Echo tool",
    "kind": "other",
    "status": "pending",
    "rawInput": {"text": "hello there"},
}
ASKED = {"toolCallId": "call_001", "title": "Echo tool"}
BEFORE_PERMISSION = [plan("pending"), chunk("You said: "), chunk("hello "), chunk("there"),
                     chunk("."), plan("completed"), TOOL_CALL]  # fmt: skip


def tool_update(status: str, content: str | None = None) -> dict[str, Any]:
    update: dict[str, Any] = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_001",
        "status": status,
    }
    if content is not None:
        update["content"] = [{"type": "content", "content": text(content)}]
    return update


USAGE = {"sessionUpdate": "usage_update", "used": 1011, "size": 200000}
FULL_TURN = {
    "stopReason": "end_turn",
    "updates": [
        *BEFORE_PERMISSION,
        tool_update("in_progress"),
        tool_update("completed", "Echo: hello there"),
        USAGE,
    ],
    "permissions": [
        {"toolCall": ASKED, "outcome": {"outcome": "selected", "optionId": "allow-once"}}
    ],
}
REFUSED = {
    "stopReason": "end_turn",
    "updates": [*BEFORE_PERMISSION, tool_update("failed", "Permission was not granted."), USAGE],
    "permissions": [
        {"toolCall": ASKED, "outcome": {"outcome": "selected", "optionId": "reject-once"}}
    ],
}
CANCELLED_AT_PERMISSION = {
    "stopReason": "cancelled",
    "updates": BEFORE_PERMISSION,
    "permissions": [{"toolCall": ASKED, "outcome": {"outcome": "cancelled"}}],
}
SCENARIOS = {
    "full": ([], FULL_TURN),
    "refused": (["--reject"], REFUSED),
    "cancelled at the permission request": (["--cancel", "permission"], CANCELLED_AT_PERMISSION),
}


def result_of(client: list[str], flags: list[str], agent: list[str]) -> dict[str, Any]:
    """Run `client` against `agent`: its one line, and nothing on stderr from either."""
    done = subprocess.run(
        [*client, *flags, "--", *agent], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    result: dict[str, Any] = json.loads(lines[0])
    return result


def assert_cancelled_mid_stream(result: dict[str, Any]) -> None:
    """Cancelled after the first chunk: the next comes 200 ms later, so the cancel lands
    before it, or at worst a few chunks later; never a tool call or a permission request."""
    assert result["stopReason"] == "cancelled"
    updates = result["updates"]
    assert updates[:2] == [plan("pending"), chunk("You said: ")]
    assert all(u["sessionUpdate"] == "agent_message_chunk" for u in updates[2:]), updates
    assert result["permissions"] == []


PAIRS = {
    "TS client → our agent": (TS_CLIENT, OUR_AGENT),
    "our client → TS agent": (OUR_CLIENT, TS_AGENT),
    "PyPI client → our agent": (PYPI_CLIENT, OUR_AGENT),
    "our client → PyPI agent": (OUR_CLIENT, PYPI_AGENT),
    # The references: the SDKs' own peers give the same lines.
    "TS client → TS agent": (TS_CLIENT, TS_AGENT),
    "PyPI client → PyPI agent": (PYPI_CLIENT, PYPI_AGENT),
}


def pair_params() -> list[Any]:
    params = []
    for name, (client, agent) in PAIRS.items():
        marks = [needs_node] if "TS" in name else []
        params.append(pytest.param(client, agent, id=name, marks=marks))
    return params


@pytest.mark.parametrize(("client", "agent"), pair_params())
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_a_turn_between_real_peers(client: list[str], agent: list[str], scenario: str) -> None:
    flags, expected = SCENARIOS[scenario]
    assert result_of(client, ["--prompt", "hello there", *flags], agent) == expected


@pytest.mark.parametrize(("client", "agent"), pair_params())
def test_a_turn_cancelled_mid_stream_between_real_peers(
    client: list[str], agent: list[str]
) -> None:
    flags = ["--prompt", "slow hello", "--cancel", "chunk"]
    assert_cancelled_mid_stream(result_of(client, flags, agent))
