"""The README's "Write an agent" and "Write a client" walkthroughs run as they are written: the
client (which spawns the agent) prints exactly the output the README shows, and the official
TypeScript SDK's client runs a turn with the agent without a warning."""

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
SDK_CLIENT = REPO / "interop" / "ts_client.mjs"


def section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : len(README) if end < 0 else end]


def block(text: str, language: str) -> str:
    """The first fenced block of `language` in `text`."""
    fence = f"\n```{language}\n"
    start = text.index(fence) + len(fence)
    return text[start : text.index("\n```", start) + 1]


@pytest.fixture(scope="module")
def walkthrough(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("walkthrough")
    (folder / "my_agent.py").write_text(block(section("Write an agent"), "python"))
    (folder / "my_client.py").write_text(block(section("Write a client"), "python"))
    return folder


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO / "generated")}


def test_the_files_are_where_the_prose_says(walkthrough: Path) -> None:
    assert "Save this\nas `my_agent.py`" in section("Write an agent")
    assert "Save this as\n`my_client.py`" in section("Write a client")
    assert 'spawn_agent(sys.executable, "my_agent.py"' in (walkthrough / "my_client.py").read_text()


def test_the_client_walkthrough_prints_what_the_readme_shows(walkthrough: Path) -> None:
    done = subprocess.run(
        [sys.executable, "my_client.py"],
        cwd=walkthrough,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == block(section("Write a client"), "text")
    assert done.stderr == ""


@pytest.mark.skipif(shutil.which("node") is None, reason="interop: `node` is not on PATH")
def test_the_sdk_client_runs_a_turn_with_the_agent_walkthrough(walkthrough: Path) -> None:
    if not (REPO / "interop" / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        pytest.skip("interop: the TypeScript SDK is not installed (run `npm ci --prefix interop`)")
    done = subprocess.run(
        ["node", str(SDK_CLIENT), "--prompt", "one two three", sys.executable, "my_agent.py"],
        cwd=walkthrough,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "SDK console." not in done.stderr
    result = json.loads(done.stdout)
    assert result["stopReason"] == "end_turn"
    assert result["updates"].count("tool_call_content_chunk") == 3  # one per word
