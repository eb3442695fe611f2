"""The workspace's terminals, called directly (asyncio) with real processes: the environment
they get, approvals, process groups and orphans, exit without waiting on the pipe, output
caps at character boundaries, the per-session cap, bad commands."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from templates.toolkit.terminals import ExitStatus, TerminalOutput
from templates.toolkit.workspace import (
    BASE_ENV,
    ProposedCommand,
    Workspace,
    approve_always,
)
from tests.toolkit.workspace_support import alive, gone_soon, invalid, not_found, refusal, run

ENV = "/usr/bin/env"


def terminals(**options: Any) -> Workspace:
    options.setdefault("approve", approve_always)
    return Workspace(terminals=True, **options)


class Recorder:
    def __init__(self, answer: object = True) -> None:
        self.answer = answer
        self.seen: list[Any] = []

    def __call__(self, proposal: Any) -> Any:
        self.seen.append(proposal)
        return self.answer


async def finished(workspace: Workspace, terminal_id: str, session: str = "s1") -> TerminalOutput:
    await workspace.wait_for_exit(session, terminal_id)
    return await workspace.terminal_output(session, terminal_id)


# -- environment and approval --------------------------------------------------------------------
def test_a_terminal_gets_the_trimmed_environment_the_approval_saw(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")
    monkeypatch.setenv("TERM", "xterm-test")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    approve = Recorder()
    workspace = terminals(approve=approve, env={"LANG": "C.UTF-8", "TERM": "dumb"})

    async def scenario() -> str:
        tid = await workspace.create_terminal(
            "s1", [str(tmp_path)], "env", [], env={"AGENT_VAR": "1", "LANG": "C"}
        )
        return (await finished(workspace, tid)).output

    lines = sorted(run(scenario()).splitlines())
    expected = {name: os.environ[name] for name in BASE_ENV if name in os.environ}
    expected |= {"TERM": "dumb", "LANG": "C", "AGENT_VAR": "1"}
    assert lines == sorted(f"{name}={value}" for name, value in expected.items())
    assert approve.seen == [
        ProposedCommand(
            "s1", ("env",), ENV, str(tmp_path), expected, {"AGENT_VAR": "1", "LANG": "C"}
        )
    ]
    assert "hunter2" not in approve.seen[0].describe()


def test_nothing_runs_unless_the_approval_returns_true(tmp_path: Path) -> None:
    marker = tmp_path / "ran"

    async def scenario(approve: Any) -> dict[str, Any]:
        workspace = terminals(approve=approve)
        call = workspace.create_terminal("s1", [str(tmp_path)], "touch", [str(marker)])
        return await refusal(call)

    reason = "the user did not approve running 'touch'"
    for answer in (False, "yes", 1, None):
        assert run(scenario(Recorder(answer))) == invalid("$.command", reason)
    assert not marker.exists()


def test_the_approval_sees_argv_program_and_cwd_exactly(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    script = tmp_path / "sub" / "tool.sh"
    script.write_text('#!/bin/sh\necho tool "$@" in "$(pwd)"\n', encoding="utf-8")
    script.chmod(0o755)
    approve = Recorder()
    workspace = terminals(approve=approve)

    async def scenario() -> str:
        tid = await workspace.create_terminal(
            "s1", [str(tmp_path)], "./tool.sh", ["a b", "$HOME"], cwd=str(tmp_path / "sub")
        )
        return (await finished(workspace, tid)).output

    assert run(scenario()) == f"tool a b $HOME in {tmp_path / 'sub'}\n"
    seen = approve.seen[0]
    assert (seen.argv, seen.executable, seen.cwd) == (
        ("./tool.sh", "a b", "$HOME"),
        str(script),
        str(tmp_path / "sub"),
    )
    assert "  command: \"./tool.sh 'a b' '$HOME'\"" in seen.describe()


def test_the_description_shows_control_characters_escaped(tmp_path: Path) -> None:
    approve = Recorder(False)
    workspace = terminals(approve=approve)
    call = workspace.create_terminal("s1", [str(tmp_path)], "echo", ["\x1b[2J\rok"])
    run(refusal(call))
    text = approve.seen[0].describe()
    assert "\x1b" not in text and "\r" not in text and "\\x1b[2J\\rok" in text


# -- exit, process groups, orphans ---------------------------------------------------------------
def test_a_background_child_holding_the_pipe_does_not_delay_the_exit_and_dies_with_release(
    tmp_path: Path,
) -> None:
    workspace = terminals()

    async def scenario() -> tuple[ExitStatus, int, bool]:
        tid = await workspace.create_terminal(
            "s1", [str(tmp_path)], "sh", ["-c", "sleep 30 & echo $!; exit 3"]
        )
        status = await workspace.wait_for_exit("s1", tid)  # sleep 30 holds the pipe
        orphan = int((await workspace.terminal_output("s1", tid)).output)
        running = alive(orphan)
        await workspace.release_terminal("s1", tid)
        return status, orphan, running

    status, orphan, running = run(scenario(), timeout=10)
    assert status == ExitStatus(3, None)
    assert running and gone_soon(orphan)


def test_without_pidfd_a_thread_watches_the_exit_just_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_pidfd(pid: int, flags: int = 0) -> int:
        raise OSError(38, "Function not implemented")  # a kernel before 5.3

    monkeypatch.setattr(os, "pidfd_open", no_pidfd)
    test_a_background_child_holding_the_pipe_does_not_delay_the_exit_and_dies_with_release(tmp_path)
    test_exit_codes_and_signals_are_reported(tmp_path)


def test_kill_ends_the_whole_group_and_keeps_output_and_status(tmp_path: Path) -> None:
    workspace = terminals()

    async def scenario() -> tuple[TerminalOutput, list[int]]:
        tid = await workspace.create_terminal(
            "s1", [str(tmp_path)], "sh", ["-c", "sleep 30 & echo $!; echo $$; sleep 30"]
        )
        while (await workspace.terminal_output("s1", tid)).output.count("\n") < 2:
            await asyncio.sleep(0.01)
        await workspace.kill_terminal("s1", tid)
        out = await workspace.terminal_output("s1", tid)
        return out, [int(pid) for pid in out.output.split()]

    out, pids = run(scenario(), timeout=10)
    assert out.exit_status == ExitStatus(None, "SIGKILL") and not out.truncated
    assert all(gone_soon(pid) for pid in pids)


def test_an_exited_command_stays_unreaped_until_release_so_its_group_id_stays_its_own(
    tmp_path: Path,
) -> None:
    workspace = terminals()

    async def scenario() -> tuple[str, bool]:
        tid = await workspace.create_terminal("s1", [str(tmp_path)], "sh", ["-c", "echo $$"])
        leader = int((await finished(workspace, tid)).output)
        with open(f"/proc/{leader}/stat", encoding="ascii") as file:
            state = file.read().rsplit(")", 1)[1].split()[0]
        await workspace.release_terminal("s1", tid)
        return state, os.path.exists(f"/proc/{leader}")

    assert run(scenario()) == ("Z", False)


def test_exit_codes_and_signals_are_reported(tmp_path: Path) -> None:
    workspace = terminals()

    async def scenario() -> list[ExitStatus]:
        statuses = []
        for script in ("exit 0", "exit 7", "kill -TERM $$"):
            tid = await workspace.create_terminal("s1", [str(tmp_path)], "sh", ["-c", script])
            statuses.append(await workspace.wait_for_exit("s1", tid))
        return statuses

    assert run(scenario()) == [
        ExitStatus(0, None),
        ExitStatus(7, None),
        ExitStatus(None, "SIGTERM"),
    ]


def test_the_output_written_just_before_exit_is_there_once_exited(tmp_path: Path) -> None:
    workspace = terminals()

    async def scenario() -> list[TerminalOutput]:
        outputs = []
        for n in range(20):
            tid = await workspace.create_terminal("s1", [str(tmp_path)], "printf", [f"done {n}"])
            outputs.append(await finished(workspace, tid))
            await workspace.release_terminal("s1", tid)
        return outputs

    expected = [TerminalOutput(f"done {n}", False, ExitStatus(0, None)) for n in range(20)]
    assert run(scenario()) == expected


def test_release_and_close_end_a_wait_and_every_group(tmp_path: Path) -> None:
    workspace = terminals()

    async def scenario() -> tuple[ExitStatus, list[int]]:
        roots = [str(tmp_path)]
        first = await workspace.create_terminal("s1", roots, "sh", ["-c", "echo $$; sleep 30"])
        waiting = asyncio.ensure_future(workspace.wait_for_exit("s1", first))
        others = [
            await workspace.create_terminal(session, roots, "sh", ["-c", "echo $$; sleep 30"])
            for session in ("s1", "s2")
        ]
        pids = []
        for session, tid in (("s1", first), ("s1", others[0]), ("s2", others[1])):
            while not (await workspace.terminal_output(session, tid)).output:
                await asyncio.sleep(0.01)
            pids.append(int((await workspace.terminal_output(session, tid)).output))
        await workspace.release_terminal("s1", first)
        status = await waiting
        await workspace.close_session("s2")
        assert alive(pids[1]) and gone_soon(pids[2])
        await workspace.close()
        return status, pids

    status, pids = run(scenario(), timeout=15)
    assert status == ExitStatus(None, "SIGKILL")
    assert all(gone_soon(pid) for pid in pids)


def test_terminals_are_killed_as_groups_when_the_client_exits(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import asyncio
        from templates.toolkit.workspace import Workspace, approve_always

        async def main():
            workspace = Workspace(terminals=True, approve=approve_always)
            tid = await workspace.create_terminal(
                "s1", [{str(tmp_path)!r}], "sh", ["-c", "sleep 60 & echo $! $$; sleep 60"]
            )
            while (await workspace.terminal_output("s1", tid)).output.count(" ") < 1:
                await asyncio.sleep(0.01)
            print((await workspace.terminal_output("s1", tid)).output, flush=True)

        asyncio.run(main())  # no close(): the interpreter's exit kills the group
        """
    )
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=repo, capture_output=True, text=True, timeout=20
    )
    assert done.returncode == 0, done.stderr
    pids = [int(pid) for pid in done.stdout.split()]
    assert len(pids) == 2 and all(gone_soon(pid) for pid in pids)


# -- output caps ---------------------------------------------------------------------------------
def test_the_output_kept_is_the_smaller_of_the_agents_limit_and_the_cap(tmp_path: Path) -> None:
    workspace = terminals(output_limit=1000)
    text = "".join(f"{n:05}\n" for n in range(1000))  # 6000 bytes

    async def kept(limit: int | None, written: str = text) -> TerminalOutput:
        tid = await workspace.create_terminal(
            "s1", [str(tmp_path)], "printf", ["%s", written], output_byte_limit=limit
        )
        return await finished(workspace, tid)

    done = ExitStatus(0, None)
    assert run(kept(2**40)) == TerminalOutput(text[-1000:], True, done)
    assert run(kept(None)) == TerminalOutput(text[-1000:], True, done)
    assert run(kept(6000)) == TerminalOutput(text[-1000:], True, done)
    assert run(kept(12)) == TerminalOutput(text[-12:], True, done)
    assert run(kept(0)) == TerminalOutput("", True, done)
    assert run(kept(None, text[:1000])) == TerminalOutput(text[:1000], False, done)
    assert run(kept(2**40, "")) == TerminalOutput("", False, done)


def test_a_cut_starts_at_the_next_whole_character(tmp_path: Path) -> None:
    workspace = terminals()

    async def kept(text: str, limit: int) -> str:
        tid = await workspace.create_terminal(
            "s1", [str(tmp_path)], "printf", ["%s", text], output_byte_limit=limit
        )
        return (await finished(workspace, tid)).output

    assert run(kept("é" * 50, 11)) == "é" * 5
    assert run(kept("€" * 50, 10)) == "€" * 3
    assert run(kept("𝄞" * 50, 13)) == "𝄞" * 3
    assert run(kept("a𝄞", 4)) == "𝄞"


def test_a_flood_of_output_keeps_memory_at_the_cap(tmp_path: Path) -> None:
    workspace = terminals(output_limit=65536)

    async def scenario() -> TerminalOutput:
        tid = await workspace.create_terminal(
            "s1", [str(tmp_path)], "head", ["-c", "50000000", "/dev/zero"]
        )
        return await finished(workspace, tid)

    tracemalloc.start()
    try:
        out = run(scenario(), timeout=60)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out == TerminalOutput("\0" * 65536, True, ExitStatus(0, None))
    assert peak < 4 * 1024 * 1024


# -- caps on terminals ---------------------------------------------------------------------------
def test_a_session_holds_at_most_max_terminals(tmp_path: Path) -> None:
    workspace = terminals(max_terminals=3)
    roots = [str(tmp_path)]

    async def scenario() -> list[Any]:
        held = [await workspace.create_terminal("s1", roots, "sleep", ["30"]) for _ in range(3)]
        over = await refusal(workspace.create_terminal("s1", roots, "sleep", ["30"]))
        other = await workspace.create_terminal("s2", roots, "true")
        await workspace.release_terminal("s1", held[0])
        again = await workspace.create_terminal("s1", roots, "true")
        await workspace.close()
        return [over, other, again]

    reason = "the session holds 3 terminals, the cap; release one first"
    assert run(scenario()) == [invalid("$.sessionId", reason), "term_4", "term_5"]


def test_creations_waiting_for_approval_count_against_the_cap(tmp_path: Path) -> None:
    async def slow_yes(proposal: object) -> bool:
        await asyncio.sleep(0.1)
        return True

    workspace = terminals(max_terminals=2, approve=slow_yes)

    async def scenario() -> list[str]:
        calls = [workspace.create_terminal("s1", [str(tmp_path)], "true") for _ in range(5)]
        answers = await asyncio.gather(*calls, return_exceptions=True)
        await workspace.close()
        return sorted(a if isinstance(a, str) else type(a).__name__ for a in answers)

    assert run(scenario()) == ["RpcError"] * 3 + ["term_1", "term_2"]


def test_a_close_while_an_approval_waits_refuses_the_terminal(tmp_path: Path) -> None:
    marker = tmp_path / "ran"

    async def scenario() -> dict[str, Any]:
        gate = asyncio.Event()

        async def held(proposal: object) -> bool:
            await gate.wait()
            return True

        workspace = terminals(approve=held)
        creating = asyncio.ensure_future(
            refusal(workspace.create_terminal("s1", [str(tmp_path)], "touch", [str(marker)]))
        )
        await asyncio.sleep(0.05)
        await workspace.close()
        gate.set()
        return await creating

    reason = "the workspace was closed while this waited for approval"
    data = {"path": "$.sessionId", "reason": reason}
    assert run(scenario()) == {"code": -32603, "message": "Internal error", "data": data}
    assert not marker.exists()


# -- bad input -----------------------------------------------------------------------------------
def test_bad_commands_arguments_environments_and_folders_are_refused(tmp_path: Path) -> None:
    (tmp_path / "plain.txt").write_text("x", encoding="utf-8")
    outside = tmp_path.parent
    workspace = terminals()
    root = str(tmp_path)
    cases: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({"command": "ec\0ho"}, invalid("$.command", "the command contains a NUL byte")),
        ({"command": ""}, invalid("$.command", "the command is empty")),
        ({"command": "echo", "args": ["ok", "a\0b"]},
         invalid("$.args[1]", "the argument contains a NUL byte")),
        ({"command": "echo", "args": ["\ud800"]},
         invalid("$.args[0]", "the argument is not valid Unicode (a lone surrogate)")),
        ({"command": "echo", "env": {"A\0": "1"}},
         invalid("$.env", "the name of the variable 'A\\x00' contains a NUL byte")),
        ({"command": "echo", "env": {"A": "1\0"}},
         invalid("$.env", "the value of 'A' contains a NUL byte")),
        ({"command": "echo", "env": {"A=B": "1"}}, invalid("$.env", "not a variable name: 'A=B'")),
        ({"command": "echo", "env": {"": "1"}}, invalid("$.env", "not a variable name: ''")),
        ({"command": "no-such-command-here"},
         invalid("$.command", "no command 'no-such-command-here' on the terminal's PATH")),
        ({"command": "./plain.txt"}, invalid("$.command", "not an executable file: './plain.txt'")),
        ({"command": "echo", "cwd": "sub"}, invalid("$.cwd", "not an absolute path: 'sub'")),
        ({"command": "echo", "cwd": str(outside)},
         invalid("$.cwd", f"outside the session's folders: {str(outside)!r}")),
        ({"command": "echo", "cwd": f"{root}/missing"},
         not_found("$.cwd", f"no such folder: '{root}/missing'")),
        ({"command": "echo", "output_byte_limit": -1},
         invalid("$.outputByteLimit", "a byte count is 0 or more: -1")),
        ({"command": "echo", "args": ["x" * 3_000_000]},
         invalid("$.args", "the command line and environment are too long to run")),
    ]  # fmt: skip

    async def scenario() -> list[dict[str, Any]]:
        return [await refusal(workspace.create_terminal("s1", [root], **call)) for call, _ in cases]

    assert run(scenario()) == [expected for _, expected in cases]


def test_unknown_terminals_and_other_sessions_terminals_are_not_found(tmp_path: Path) -> None:
    workspace = terminals()

    async def scenario() -> list[dict[str, Any]]:
        tid = await workspace.create_terminal("s1", [str(tmp_path)], "true")
        answers = [
            await refusal(workspace.terminal_output("s2", tid)),
            await refusal(workspace.wait_for_exit("s1", "term_99")),
            await refusal(workspace.kill_terminal("s2", tid)),
        ]
        await workspace.release_terminal("s1", tid)
        answers.append(await refusal(workspace.release_terminal("s1", tid)))
        answers.append(await refusal(workspace.create_terminal("ghost", [], "true")))
        return answers

    assert run(scenario()) == [
        not_found("$.terminalId", "no terminal 'term_1' in session 's2'"),
        not_found("$.terminalId", "no terminal 'term_99' in session 's1'"),
        not_found("$.terminalId", "no terminal 'term_1' in session 's2'"),
        not_found("$.terminalId", "no terminal 'term_1' in session 's1'"),
        not_found("$.sessionId", "no session 'ghost' on this client"),
    ]
