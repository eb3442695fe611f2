"""The README's "On the v1 lane" walkthrough runs as it is written: the client (which spawns
the agent) prints exactly the output shown, and the official TypeScript SDK's v1 client runs a
turn with the agent with nothing on stderr."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
SDK = REPO / "interop" / "node_modules" / "@agentclientprotocol" / "sdk"


def subsection(title: str) -> str:
    start = README.index(f"\n### {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : len(README) if end < 0 else end]


def blocks(text: str, language: str) -> list[str]:
    """The fenced blocks of `language` in `text`, in order."""
    fence, found, pos = f"\n```{language}\n", [], 0
    while (start := text.find(fence, pos)) >= 0:
        end = text.index("\n```", start + len(fence))
        found.append(text[start + len(fence) : end + 1])
        pos = end + 4
    return found


SECTION = subsection("On the v1 lane")


@pytest.fixture(scope="module")
def walkthrough(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("walkthrough_v1")
    agent, client = blocks(SECTION, "python")
    (folder / "my_v1_agent.py").write_text(agent)
    (folder / "my_v1_client.py").write_text(client)
    return folder


def run(argv: list[str], folder: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "generated")}
    return subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=60)


def test_the_prose_names_the_files_the_client_spawns(walkthrough: Path) -> None:
    assert "Save these as `my_v1_agent.py` and `my_v1_client.py`" in " ".join(SECTION.split())
    client = (walkthrough / "my_v1_client.py").read_text()
    assert 'spawn_agent(sys.executable, "my_v1_agent.py"' in client


def test_the_v1_client_prints_what_the_readme_shows(walkthrough: Path) -> None:
    done = run([sys.executable, "my_v1_client.py"], walkthrough)
    assert (done.returncode, done.stderr) == (0, "")
    [shown] = blocks(SECTION, "text")
    assert done.stdout == shown


@pytest.mark.skipif(
    shutil.which("node") is None or not SDK.is_dir(),
    reason="interop: node and the TypeScript SDK (npm ci --prefix interop) are needed",
)
def test_the_sdk_v1_client_runs_a_turn_with_the_v1_agent(walkthrough: Path) -> None:
    client = str(REPO / "interop" / "v1_client.mjs")
    done = run(["node", client, "--", sys.executable, "my_v1_agent.py"], walkthrough)
    assert (done.returncode, done.stderr) == (0, "")
    result = json.loads(done.stdout)
    assert result["stopReason"] == "end_turn"
    assert [u["sessionUpdate"] for u in result["updates"]] == [
        "plan", "tool_call", "tool_call_update", "agent_message_chunk", "plan",
    ]  # fmt: skip
