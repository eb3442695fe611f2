"""examples/echo_agent.py --store PATH across restarts, as real processes: a session made and
prompted in one agent process loads (v1) and resumes (v2) in the next with the very bytes the
first one replayed; `kill -9` during a turn loses nothing before the permission request it was
waiting on; two agent processes share one SQLite file (and one PostgreSQL database); a file
the store cannot use is one line on stderr and exit status 2, the file untouched."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support import echo_turn
from tests.support.rpc_wire import run
from tests.support.store_backends import postgres_fixture  # noqa: F401 (a fixture)
from tests.support.stored_echo import expected_replay
from tests.support.toolkit_wire import V1, V2, LineSource, ProcessWire, WireLane, selected

REPO = Path(__file__).resolve().parents[2]
ECHO = [sys.executable, str(REPO / "examples" / "echo_agent.py")]
CWD = str(REPO)


class Tee:
    """A line source that keeps every line it read, as bytes."""

    def __init__(self, source: LineSource) -> None:
        self.source = source
        self.lines: list[bytes] = []

    async def readline(self) -> bytes:
        line = await self.source.readline()
        self.lines.append(line)
        return line


class Agent(ProcessWire):
    """The echo agent as a process, every line it wrote kept raw (`tee.lines`)."""

    def _open(self, reader: LineSource, write: Callable[[bytes], object]) -> None:
        self.tee = Tee(reader)
        super()._open(self.tee, write)

    @classmethod
    async def start(cls, store: str, lane: WireLane) -> Agent:
        process = await asyncio.create_subprocess_exec(
            *ECHO,
            "--store",
            store,
            cwd=CWD,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        agent = cls(process, lane)
        answer = await agent.initialize()
        assert answer["result"]["protocolVersion"] == lane.version, answer
        return agent

    async def turn_allowed(self, sid: str, text: str = "hello") -> Any:
        pending = self.prompt_later(sid, text)
        asked = await self.until(lambda m: m.get("method") == "session/request_permission")
        self.reply(asked["id"], selected("allow-once"))
        return await self.ended(pending)

    async def replay(self, sid: str) -> list[bytes]:
        """The raw session/update lines a load (v1) or a resume from the start (v2) sends."""
        start = len(self.tee.lines)
        if self.lane.v1:
            answer = await self.call(
                "session/load", {"sessionId": sid, "cwd": CWD, "mcpServers": []}
            )
        else:
            params = {"sessionId": sid, "cwd": CWD, "replayFrom": {"type": "start"}}
            answer = await self.call("session/resume", params)
        assert answer.get("result") == {}, answer
        return [line for line in self.tee.lines[start:] if b'"session/update"' in line]

    async def stop(self) -> str:
        code, stderr = await self.finish()
        assert code == 0, stderr
        return stderr


def bodies(lines: list[bytes]) -> list[Any]:
    return [json.loads(line)["params"]["update"] for line in lines]


@pytest.mark.parametrize("lane", [V1, V2], ids=["v1", "v2"])
def test_a_restarted_agent_replays_the_bytes_the_first_one_replayed(
    lane: WireLane, tmp_path: Path
) -> None:
    db = str(tmp_path / "sessions.db")

    async def scenario() -> tuple[str, list[bytes], list[bytes], Any]:
        first = await Agent.start(db, lane)
        sid = await first.new_session(CWD)
        await first.turn_allowed(sid)
        live = await first.replay(sid)
        await first.stop()
        second = await Agent.start(db, lane)
        listed = await second.call("session/list", {"cwd": CWD})
        after = await second.replay(sid)
        await second.stop()
        return sid, live, after, listed["result"]

    sid, live, after, listed = run(scenario())
    assert after == live
    assert bodies(after) == expected_replay(lane)
    assert [s["sessionId"] for s in listed["sessions"]] == [sid]


@pytest.mark.parametrize("lane", [V1, V2], ids=["v1", "v2"])
def test_kill_9_mid_turn_keeps_everything_up_to_the_last_update_written(
    lane: WireLane, tmp_path: Path
) -> None:
    """The echo turn waits on its permission request: everything before it was durable."""
    db = str(tmp_path / "sessions.db")

    async def scenario() -> tuple[list[Any], list[Any], list[Any]]:
        first = await Agent.start(db, lane)
        sid = await first.new_session(CWD)
        first.take()
        first.prompt_later(sid, "hello")
        await first.until(lambda m: m.get("method") == "session/request_permission")
        sent = [u for u in first.updates(sid) if u.get("sessionUpdate") != "state_update"]
        first.process.send_signal(signal.SIGKILL)
        await first.process.wait()
        second = await Agent.start(db, lane)
        after = bodies(await second.replay(sid))
        second.take()
        await second.turn_allowed(sid, "again")  # the session goes on, ids after the stored
        ids = [u.get("messageId") for u in second.updates(sid) if "messageId" in u]
        await second.stop()
        return sent, after, ids

    sent, after, ids = run(scenario())
    assert after == expected_replay(lane, turn_ended=False)
    assert sent[-1] == after[-2 if not lane.v1 else -1]  # the live tool call, as written
    assert set(ids) == ({"msg_agent_2"} if lane.v1 else {"msg_user_2", "msg_agent_2"})


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def start_up(*args: str, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, *ECHO, *args], input="", capture_output=True, text=True, timeout=60, cwd=CWD
    )


def made_store(path: Path) -> str:
    """A store file with one session of one turn in it; the session's id."""

    async def scenario() -> str:
        agent = await Agent.start(str(path), V2)
        sid = await agent.new_session(CWD)
        await agent.turn_allowed(sid)
        await agent.stop()
        return sid

    return run(scenario())


def test_a_damaged_file_is_one_line_and_exit_2_and_stays_as_it_was(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all\n" * 100)
    damaged = tmp_path / "damaged.db"
    made_store(damaged)
    with damaged.open("r+b") as file:  # the schema's page, overwritten
        file.seek(100)
        file.write(b"\xff" * 3000)
    for path, reason in (
        (garbage, "not a SQLite database (no SQLite header)"),
        (damaged, "corrupted"),
        (tmp_path, "a folder, not a database file"),
    ):
        before = digest(path) if path.is_file() else None
        done = start_up("--store", str(path))
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        lines = done.stderr.splitlines()
        prefix = f"acp-codegen-echo-agent: the session store cannot be used: {path}: {reason}"
        assert len(lines) == 1 and lines[0].startswith(prefix), done.stderr
        assert before is None or digest(path) == before


def test_a_read_only_file_is_refused_at_start_up_and_nothing_is_lost(tmp_path: Path) -> None:
    prefix: tuple[str, ...] = ()
    if os.geteuid() == 0:  # root ignores file permissions; setpriv drops that power
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: file permissions do not apply")
        prefix = (setpriv, "--bounding-set", "-dac_override,-dac_read_search,-fowner")
    path = tmp_path / "sessions.db"
    sid = made_store(path)
    assert oct(path.stat().st_mode & 0o777) == "0o600"  # it holds prompts
    path.chmod(0o400)
    before = digest(path)
    done = start_up("--store", str(path), prefix=prefix)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "acp-codegen-echo-agent: the session store cannot be used: "
        f"{path}: read-only: the session store needs to write it\n"
    )
    assert digest(path) == before
    path.chmod(0o600)

    async def load() -> list[Any]:
        agent = await Agent.start(str(path), V1)
        replayed = bodies(await agent.replay(sid))
        await agent.stop()
        return replayed

    assert run(load()) == expected_replay(V1)


def two_agents_share_one_store(store: str) -> None:
    """A (v2) and B (v1) run at once on one store: B lists and loads A's session and goes on
    with it; a third agent resumes it with both turns."""

    async def scenario() -> tuple[list[Any], list[str], list[Any]]:
        a = await Agent.start(store, V2)
        b = await Agent.start(store, V1)
        sid = await a.new_session(CWD)
        await a.turn_allowed(sid)
        listed = (await b.call("session/list", {"cwd": CWD}))["result"]["sessions"]
        loaded = bodies(await b.replay(sid))
        await b.turn_allowed(sid, "again")
        await a.stop()
        await b.stop()
        c = await Agent.start(store, V2)
        both = bodies(await c.replay(sid))
        await c.stop()
        return loaded, [s["sessionId"] for s in listed] == [sid], both

    loaded, listed, both = run(scenario())
    assert listed and loaded == expected_replay(V1)
    kinds = [(u["sessionUpdate"], u.get("messageId")) for u in both]
    assert kinds == [
        ("user_message", "msg_user_1"), ("plan_update", None), ("agent_message", "msg_agent_1"),
        ("tool_call_update", None), ("user_message", "msg_user_2"), ("plan_update", None),
        ("agent_message", "msg_agent_2"), ("tool_call_update", None), ("state_update", None),
    ]  # fmt: skip
    assert both[6]["content"] == [echo_turn.text("You said: again.")]


def test_two_agent_processes_share_one_sqlite_file(tmp_path: Path) -> None:
    two_agents_share_one_store(str(tmp_path / "sessions.db"))


def test_two_agent_processes_share_one_postgresql_database(postgres_dsn: str) -> None:
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    name = f"agents_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        server = conninfo_to_dict(postgres_dsn)
        url = f"postgresql://{server['user']}@{server['host']}:{server['port']}/{name}"
        two_agents_share_one_store(url)
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
