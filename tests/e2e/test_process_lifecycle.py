# ruff: noqa: E501 - the scripts embedded here keep their long lines
"""`connect_process` over real pipes: an async context manager (and a plain awaitable) that
closes the transports and reaps the child on every way out, with nothing printed at exit.

Each scenario runs in a fresh interpreter, so that "Exception ignored" and tracebacks at
interpreter exit would show on its stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.hostile import REPO, python_env

AGENT = REPO / "examples" / "echo_agent.py"

PRELUDE = f"""
import asyncio, json, os, sys
from acp_kit import v2 as acp
AGENT = {str(AGENT)!r}
PY = sys.executable

class Client(acp.ClientBase):
    pass

def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True

def report(**values):
    print(json.dumps(values), flush=True)

async def init(agent):
    return await agent.request(
        "initialize", {{"protocolVersion": 2, "info": {{"name": "t", "version": "1"}}}}
    )
"""

SCENARIOS = {
    "with-block": """
async def main():
    async with acp.connect_process(Client(), PY, AGENT) as agent:
        answer = await init(agent)
        pid = agent.pid
    report(version=answer["protocolVersion"], code=agent.returncode, alive=alive(pid))
asyncio.run(main())
""",
    "exception-in-block": """
async def main():
    try:
        async with acp.connect_process(Client(), PY, AGENT) as agent:
            pid = agent.pid
            await init(agent)
            raise KeyError("boom")
    except KeyError:
        pass
    report(code=agent.returncode, alive=alive(pid))
asyncio.run(main())
""",
    "timeout-in-block": """
async def main():
    try:
        async with asyncio.timeout(0.3):
            async with acp.connect_process(Client(), PY, "-c", "import time; time.sleep(60)") as agent:
                pid = agent.pid
                await init(agent)
    except TimeoutError:
        pass
    report(code=agent.returncode, alive=alive(pid))
asyncio.run(main())
""",
    "ignores-sigterm": """
SCRIPT = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
async def main():
    agent = await acp.connect_process(Client(), PY, "-c", SCRIPT, exit_timeout=0.2)
    pid = agent.pid
    await asyncio.sleep(0.3)
    await agent.close()
    report(code=agent.returncode, alive=alive(pid))
asyncio.run(main())
""",
    "per-call-timeout": """
SCRIPT = "import sys; [sys.stderr.write(l) for l in sys.stdin]"
async def main():
    async with acp.connect_process(Client(), PY, "-c", SCRIPT) as agent:
        try:
            await agent.request("initialize", {}, timeout=0.2)
        except TimeoutError as exc:
            report(error=str(exc))
asyncio.run(main())
""",
    "child-exits-first": """
async def main():
    agent = await acp.connect_process(Client(), PY, "-c", "pass")
    await agent.wait_closed()
    code = await agent.wait()
    report(code=code)
    # never closed by hand: the pipes are released all the same
asyncio.run(main())
""",
    "left-open-at-exit": """
async def main():
    agent = await acp.connect_process(Client(), PY, AGENT)
    await init(agent)
    report(pid=agent.pid)
    # asyncio.run() cancels the connection's tasks: the child is killed, nothing dangles
asyncio.run(main())
""",
    "cannot-start": """
async def main():
    try:
        async with acp.connect_process(Client(), "/no/such/program"):
            pass
    except OSError as exc:
        report(error=type(exc).__name__)
asyncio.run(main())
""",
}


def run_scenario(name: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-X", "dev", "-c", PRELUDE + SCENARIOS[name]],
        capture_output=True,
        text=True,
        timeout=60,
        env=python_env(),
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    stderr = "\n".join(
        line for line in done.stderr.splitlines() if not line.startswith("initialize:")
    )
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    assert "ResourceWarning" not in stderr and "unclosed" not in stderr, stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_leaving_the_block_closes_and_reaps_the_child() -> None:
    assert run_scenario("with-block") == {"version": 2, "code": 0, "alive": False}


def test_an_exception_in_the_block_still_reaps_the_child() -> None:
    assert run_scenario("exception-in-block") == {"code": 0, "alive": False}


def test_a_timeout_around_the_block_reaps_a_child_that_never_answers() -> None:
    # The child sleeps and ignores its stdin: it is terminated.
    assert run_scenario("timeout-in-block") == {"code": -15, "alive": False}


def test_a_child_that_ignores_sigterm_is_killed() -> None:
    assert run_scenario("ignores-sigterm") == {"code": -9, "alive": False}


def test_a_stub_call_timeout_is_a_clear_timeout_error() -> None:
    assert run_scenario("per-call-timeout") == {
        "error": "initialize: no answer within 0.2 s (request id 0); "
        "the peer was asked to cancel it"
    }


def test_a_child_that_exits_first_needs_no_close() -> None:
    assert run_scenario("child-exits-first") == {"code": 0}


def test_a_connection_left_open_at_exit_prints_nothing() -> None:
    assert "pid" in run_scenario("left-open-at-exit")


def test_a_program_that_cannot_start_raises_oserror() -> None:
    assert run_scenario("cannot-start") == {"error": "FileNotFoundError"}


@pytest.mark.parametrize("flag", [[], ["--cancel", "--prompt", "slow hello"]])
def test_the_example_client_reaps_its_agent_and_prints_no_traceback(flag: list[str]) -> None:
    client = REPO / "examples" / "client.py"
    done = subprocess.run(
        [sys.executable, "-X", "dev", str(client), *flag, sys.executable, str(AGENT)],
        capture_output=True,
        text=True,
        timeout=60,
        env=python_env(),
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    assert "ResourceWarning" not in done.stderr


def test_the_recorder_writes_a_transcript_that_replay_reads(tmp_path: Path) -> None:
    transcript = tmp_path / "turn.jsonl"
    script = (
        PRELUDE
        + f"""
class TurnClient(acp.ClientBase):
    def __init__(self):
        self.idle = asyncio.Event()
    async def session_update(self, params):
        if acp.encode(params.update).get("state") == "idle":
            self.idle.set()
    async def session_request_permission(self, params):
        return acp.RequestPermissionResponse(outcome=acp.RequestPermissionOutcomeSelected(option_id="allow-once"))

async def main():
    client = TurnClient()
    with acp.TranscriptRecorder({str(transcript)!r}) as recorder:
        async with acp.connect_process(client, PY, AGENT, tap=recorder) as agent:
            await init(agent)
            session = await client.agent.session_new(acp.NewSessionRequest(cwd="/", mcp_servers=[]))
            text = acp.ContentBlockText(text="hello")
            await client.agent.session_prompt(
                acp.PromptRequest(session_id=session.session_id, prompt=[text])
            )
            await client.idle.wait()
    report(lines=recorder.count)
asyncio.run(main())
"""
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
        env=python_env(), cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = transcript.read_bytes().splitlines()
    assert json.loads(done.stdout)["lines"] == len(lines)
    first, second = json.loads(lines[0]), json.loads(lines[1])
    assert (first["method"], first["id"]) == ("initialize", 0)  # ours, out
    assert second["id"] == 0 and "result" in second  # the agent's answer, in
    replay = subprocess.run(
        [sys.executable, "-m", "codegen", "replay", str(transcript), "--json"],
        capture_output=True, text=True, timeout=60, cwd=REPO,
    )  # fmt: skip
    assert replay.returncode == 0, replay.stderr
    snapshot = json.loads(replay.stdout)
    assert (snapshot["state"], snapshot["stopReason"]) == ("idle", "end_turn")
    agent_text = [
        "".join(block["text"] for block in m["content"])
        for m in snapshot["messages"]
        if m["role"] == "agent"
    ]
    assert agent_text == ["You said: hello."]


# -- the child's environment -------------------------------------------------------------------
# The child reports the environment it got as its first message (an extension notification).
ENV_SCRIPT = """
CHILD = "import json, os, sys; print(json.dumps({'jsonrpc': '2.0', 'method': '_env', 'params': dict(os.environ)}), flush=True); sys.stdin.read()"

class EnvClient(acp.ClientBase):
    def __init__(self):
        self.env = asyncio.get_running_loop().create_future()
    async def ext_notification(self, method, params):
        self.env.set_result(params)

async def child_env(**kwargs):
    client = EnvClient()
    async with acp.connect_process(client, PY, "-c", CHILD, **kwargs):
        return await client.env

async def main():
    os.environ["ACP_TEST_SECRET"] = "s3cret"
    report(
        trimmed=await child_env(),
        added=await child_env(env={"EXTRA": "1", "HOME": "/elsewhere"}),
        inherited=await child_env(inherit_env=True),
        kept=[k for k in ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "PYTHONHOME",
                          "PYTHONPATH") if k in os.environ],
        home=os.environ.get("HOME"),
    )
asyncio.run(main())
"""
SCENARIOS["environment"] = ENV_SCRIPT


def test_a_child_gets_a_trimmed_environment_plus_what_it_is_given() -> None:
    result = run_scenario("environment")
    kept = set(result["kept"])  # type: ignore[arg-type]
    trimmed, added, inherited = (
        dict(result[k])  # type: ignore[call-overload]
        for k in ("trimmed", "added", "inherited")
    )
    # Python may add LC_CTYPE when it coerces a C locale (PEP 538): nothing else is added.
    assert set(trimmed) - {"LC_CTYPE"} == kept
    assert trimmed.get("HOME") == result["home"]
    assert set(added) - {"LC_CTYPE"} == kept | {"EXTRA", "HOME"}
    assert (added["EXTRA"], added["HOME"]) == ("1", "/elsewhere")
    assert "ACP_TEST_SECRET" not in trimmed and "ACP_TEST_SECRET" not in added
    assert "PYTHONPATH" in trimmed  # the scenario runs with it: its Python children need it
    assert inherited["ACP_TEST_SECRET"] == "s3cret"


# -- a recorder killed mid-stream ----------------------------------------------------------------
RECORDING_AGENT = """
import asyncio, sys
from acp_kit import v2 as acp

class Streamer(acp.AgentBase):
    async def ext_method(self, method, params):
        for n in range(1_000_000):
            await self.connection.notify("_tick", {"n": n})
        return None

async def main():
    connection = await acp.connect_stdio(Streamer(), tap=acp.TranscriptRecorder(sys.argv[1]))
    await connection.wait_closed()

asyncio.run(main())
"""


def test_a_recorder_killed_mid_stream_loses_nothing_that_was_sent(tmp_path: Path) -> None:
    from tests.support.hostile import Peer, line, request

    transcript = tmp_path / "stream.jsonl"
    peer = Peer([sys.executable, "-c", RECORDING_AGENT, str(transcript)])
    try:
        asked = line(request(1, "_stream"))
        peer.send_bytes(asked)
        received = []
        for _ in range(2000):
            got = peer.recv_line()
            assert got is not None
            received.append(got.rstrip(b"\n"))
        peer.process.kill()  # SIGKILL: no flush, no exit handler
        assert peer.process.wait(timeout=30) == -9
    finally:
        peer.kill()
    recorded = transcript.read_bytes().splitlines()
    assert recorded[0] == asked.rstrip(b"\n")
    assert recorded[1 : 1 + len(received)] == received  # every line the peer got, in order
    assert json.loads(received[-1]) == {"jsonrpc": "2.0", "method": "_tick", "params": {"n": 1999}}
