"""The README's quickstart agent, as written, passes the official TypeScript SDK's v2 client and
its v1 client alike, with nothing printed by the SDK."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SDK = REPO / "interop" / "node_modules" / "@agentclientprotocol" / "sdk"
pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not SDK.is_dir(),
    reason="interop: node and the TypeScript SDK (npm ci --prefix interop) are needed",
)


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    body = re.search(r"<!-- run: file my_agent.py -->\n```python\n(.*?)```", text, re.S)
    assert body is not None
    path = tmp_path_factory.mktemp("quickstart") / "my_agent.py"
    path.write_text(body.group(1), encoding="utf-8")
    return path


def sdk(script: str, *args: str) -> dict[str, object]:
    done = subprocess.run(
        ["node", str(REPO / "interop" / script), *args],
        env={**os.environ, "PYTHONPATH": str(REPO / "generated")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "SDK console." not in done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_the_sdk_v2_client_runs_a_turn_with_the_quickstart_agent(agent: Path) -> None:
    result = sdk("ts_client.mjs", "--prompt", "one two three", sys.executable, str(agent))
    assert result["stopReason"] == "end_turn"
    assert result["updates"] == [
        "user_message", "state_update", "agent_thought_chunk", "plan_update",
        "tool_call_update", "state_update", "state_update", "tool_call_update",
        "tool_call_content_chunk", "tool_call_content_chunk", "tool_call_content_chunk",
        "tool_call_update", "plan_update", "agent_message_chunk", "plan_update",
        "usage_update", "state_update",
    ]  # fmt: skip


def test_the_sdk_v1_client_runs_a_turn_with_the_quickstart_agent(agent: Path) -> None:
    result = sdk("v1_client.mjs", "--prompt", "one two", "--", sys.executable, str(agent))
    assert result["stopReason"] == "end_turn"
    kinds = [u["sessionUpdate"] for u in result["updates"]]  # type: ignore[attr-defined]
    assert kinds == [
        "agent_thought_chunk", "plan", "tool_call", "tool_call_update", "tool_call_update",
        "tool_call_update", "plan", "agent_message_chunk", "plan", "usage_update",
    ]  # fmt: skip
