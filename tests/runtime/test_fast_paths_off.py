"""Every fast path of the runtime gives the general way's outcome: the runtime's tests run once
more, in a fresh interpreter with `ACP_RUNTIME_FAST_PATHS=0` (the compact notification branch
of the reading step, the scanner-only parse, the per-class writers and the envelopes made once
per method all off), and must pass the same. A probe shows the switch really turns them off."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.hostile import REPO, python_env

NESTED = "ACP_RUNTIME_TESTS_NESTED"

# Breaks each fast path, then runs a little of everything they serve: a compact notification
# stream in, a request and notifications out. Exit 0 only if no fast path was taken.
PROBE = """
import asyncio, sys
from acp_kit import v2 as acp
from acp_kit.runtime import _outgoing, _reading, jsonrpc

def taken(*_):
    raise SystemExit("a fast path was taken")

_reading._compact_params = taken
_outgoing.to_text = taken
jsonrpc._scan = taken

class Client(acp.ClientBase):
    def __init__(self):
        self.seen = 0
    async def session_update(self, params):
        self.seen += 1

async def main():
    client = Client()
    mine, theirs = acp.memory_pair()
    connection = acp.Connection(client, theirs)
    connection.start()
    line = (b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
            b'{"sessionUpdate":"agent_message_chunk","messageId":"m","content":'
            b'{"type":"text","text":"x"}}}}\\n')
    mine.feed(line * 3)
    note = acp.UpdateSessionNotification(
        session_id="s", update=acp.SessionUpdateAgentMessageChunk(
            message_id="m", content=acp.ContentBlockText(text="y")))
    for _ in range(3):
        await client.agent.session_cancel(acp.CancelSessionNotification(session_id="s"))
        await connection.notify("session/update", note)
    asking = asyncio.ensure_future(client.agent.session_new(acp.NewSessionRequest(cwd="/")))
    await asyncio.sleep(0.05)
    asking.cancel()
    await connection.notifications_handled()
    assert client.seen == 3, client.seen
    await connection.close()

asyncio.run(main())
"""


def probe(fast: str) -> subprocess.CompletedProcess[str]:
    env = {**python_env(), "ACP_RUNTIME_FAST_PATHS": fast}
    return subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=60,
        cwd=REPO, check=False,
    )  # fmt: skip


def test_the_switch_turns_every_fast_path_off() -> None:
    off, on = probe("0"), probe("1")
    assert off.returncode == 0, off.stderr
    assert on.returncode != 0 and "a fast path was taken" in on.stderr


@pytest.mark.skipif(bool(os.environ.get(NESTED)), reason="this is the nested run")
def test_the_runtime_tests_pass_with_every_fast_path_off() -> None:
    here = str(Path(__file__).resolve().parent)
    env = {**python_env(), "ACP_RUNTIME_FAST_PATHS": "0", NESTED: "1"}
    pytest_args = [sys.executable, "-m", "pytest", here, "-p", "no:cacheprovider"]  # -q: addopts
    collected = subprocess.run(
        [*pytest_args, "--collect-only"], capture_output=True, text=True, env=env, timeout=300,
        cwd=REPO, check=False,
    )  # fmt: skip
    total = sum("::" in line for line in collected.stdout.splitlines())
    done = subprocess.run(
        pytest_args, capture_output=True, text=True, env=env, timeout=900, cwd=REPO, check=False
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    counts = {kind: int(n) for n, kind in re.findall(r"(\d+) (\w+)", summary)}
    # The same results as this run: everything passes but this test, skipped there.
    assert counts == {"passed": total - 1, "skipped": 1}, summary
