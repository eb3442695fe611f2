"""Interop on the v1 lane with the two official SDKs, in both directions, with exact results:
the TypeScript SDK's default entry point (`@agentclientprotocol/sdk`, its v1 API:
interop/v1_client.mjs, interop/v1_agent.mjs) and the PyPI Python SDK (`agent-client-protocol`:
its `run_agent` agent and `spawn_agent_process` client, tests/support/pypi_v1_peers.py)
against examples/echo_agent.py (which answers a v1 client in v1) and examples/client.py (which
asks for v2 and speaks v1 with these agents).

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

from tests.support import echo_turn
from tests.support.echo_turn import Outcome

REPO = Path(__file__).resolve().parents[2]
SDK = REPO / "interop" / "node_modules" / "@agentclientprotocol" / "sdk"
NODE = shutil.which("node")
PY = sys.executable

OUR_AGENT = [PY, str(REPO / "examples" / "echo_agent.py")]
OUR_CLIENT = [PY, str(REPO / "examples" / "client.py")]
PYPI_AGENT = [PY, "-m", "tests.support.pypi_v1_peers", "agent"]
PYPI_CLIENT = [PY, "-m", "tests.support.pypi_v1_peers", "client"]
TS_AGENT = [str(NODE), str(REPO / "interop" / "v1_agent.mjs")]
TS_CLIENT = [str(NODE), str(REPO / "interop" / "v1_client.mjs")]

needs_node = pytest.mark.skipif(
    NODE is None or not SDK.is_dir(),
    reason="interop: node and the TypeScript SDK (npm ci --prefix interop) are needed",
)


SCENARIOS: dict[str, tuple[list[str], Outcome]] = {
    "full": ([], "allowed"),
    "refused": (["--reject"], "refused"),
    "cancelled at the permission request": (["--cancel", "permission"], "cancelled"),
}


def expected(outcome: Outcome) -> dict[str, Any]:
    """What every client prints of a turn of the echo agent for "hello there"."""
    return {
        "stopReason": "cancelled" if outcome == "cancelled" else "end_turn",
        "updates": echo_turn.updates(1, "hello there", outcome=outcome),
        "permissions": echo_turn.permissions(outcome),
    }


def result_of(client: list[str], flags: list[str], agent: list[str]) -> dict[str, Any]:
    """Run `client` against `agent`: its one line, and nothing on stderr from either. Our
    client (examples/client.py) also prints the protocol version spoken: 1 with these agents,
    though it asked for 2."""
    done = subprocess.run(
        [*client, *flags, "--", *agent], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    result: dict[str, Any] = json.loads(lines[0])
    if client == OUR_CLIENT:
        assert result.pop("protocol") == 1
    return result


def assert_cancelled_mid_stream(result: dict[str, Any]) -> None:
    """Cancelled after the first chunk: the next comes 200 ms later, so the cancel lands
    before it, or at worst a few chunks later; never a tool call or a permission request."""
    assert result["stopReason"] == "cancelled"
    updates = result["updates"]
    assert updates[:2] == echo_turn.updates(1, "slow hello")[:2]  # the plan, the first chunk
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
    flags, outcome = SCENARIOS[scenario]
    assert result_of(client, ["--prompt", "hello there", *flags], agent) == expected(outcome)


@pytest.mark.parametrize(("client", "agent"), pair_params())
def test_a_turn_cancelled_mid_stream_between_real_peers(
    client: list[str], agent: list[str]
) -> None:
    flags = ["--prompt", "slow hello", "--cancel", "chunk"]
    assert_cancelled_mid_stream(result_of(client, flags, agent))


def test_the_pypi_client_lists_loads_resumes_and_closes_our_session() -> None:
    """What our agent's v1 session capabilities promise the PyPI SDK's client, beyond the
    turn: a closed session stays listed (and loadable) in v1."""
    result = result_of(PYPI_CLIENT, ["--prompt", "hello there", "--sessions"], OUR_AGENT)
    assert result["sessions"] == {
        "listed": ["this"],
        "replayed": ["user_message_chunk", "plan", "agent_message_chunk", "tool_call"],
        "afterClose": ["this"],
    }
