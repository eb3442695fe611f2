"""The official SDK clients on sessions of a restarted agent: the TypeScript SDK's v2 client
resumes (replay from the start) and its v1 client loads, and the PyPI Python SDK's v1 client
loads, a session that another process of examples/echo_agent.py --store made and prompted;
each lists it first. The replays are exact, and the SDKs drop or complain about nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.stored_echo import expected_replay
from tests.support.toolkit_wire import V1, V2

REPO = Path(__file__).resolve().parents[2]
SDK = REPO / "interop" / "node_modules" / "@agentclientprotocol" / "sdk"
NODE = shutil.which("node")
TS = [str(NODE), str(REPO / "interop" / "ts_reload.mjs")]
PYPI = [sys.executable, "-m", "tests.support.pypi_v1_reload"]

CLIENTS = {
    "typescript v2": (V2, [*TS, "--lane", "v2"]),
    "typescript v1": (V1, [*TS, "--lane", "v1"]),
    "pypi v1": (V1, PYPI),
}


def client_run(command: list[str], cwd: Path) -> dict[str, Any]:
    env = {"PYTHONPATH": str(REPO), "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=90, cwd=cwd, env=env)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    result: dict[str, Any] = json.loads(lines[0])
    return result


@pytest.mark.parametrize("name", list(CLIENTS))
def test_an_sdk_client_lists_and_replays_the_session_of_a_restarted_agent(
    name: str, tmp_path: Path
) -> None:
    lane, client = CLIENTS[name]
    if client[0] == str(NODE) and (NODE is None or not SDK.is_dir()):
        pytest.skip("interop: node and the TypeScript SDK (npm ci --prefix interop) are needed")
    agent = [sys.executable, str(REPO / "examples" / "echo_agent.py"), "--store", "sessions.db"]
    made = client_run([*client, "--", *agent], tmp_path)
    sid = made["sessionId"]
    again = client_run([*client, "--session", sid, "--", *agent], tmp_path)
    assert [s["sessionId"] for s in again["listed"]] == [sid]
    assert again["listed"][0]["cwd"] == str(tmp_path)
    assert again["replayed"] == expected_replay(lane)
