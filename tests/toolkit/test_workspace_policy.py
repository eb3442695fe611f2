"""What a workspace grants: deny by default, the capabilities it advertises, the methods it
answers -32601, the ready-made approvals (asking on a real pty, refusing without one)."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from templates.toolkit.workspace import (
    Capabilities,
    ProposedCommand,
    ProposedWrite,
    Workspace,
    approve_always,
    approve_never,
)
from tests.toolkit.workspace_support import invalid, refusal, run

REPO = Path(__file__).resolve().parents[2]


def test_the_capabilities_say_exactly_what_is_served() -> None:
    assert Workspace().capabilities() == Capabilities(True, False, False)
    assert Workspace(write=True).capabilities() == Capabilities(True, True, False)
    assert Workspace(terminals=True).capabilities() == Capabilities(True, False, True)
    assert Workspace(read=False).capabilities() == Capabilities(False, False, False)


def test_what_is_not_served_is_method_not_found(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n", encoding="utf-8")
    default, closed = Workspace(), Workspace(read=False)
    roots, path = [str(tmp_path)], str(tmp_path / "a.txt")

    async def scenario() -> list[dict[str, Any]]:
        return [
            await refusal(default.write_text_file("s1", roots, path, "pwned")),
            await refusal(default.create_terminal("s1", roots, "sh", ["-c", "echo pwned"])),
            await refusal(default.terminal_output("s1", "term_1")),
            await refusal(default.wait_for_exit("s1", "term_1")),
            await refusal(default.kill_terminal("s1", "term_1")),
            await refusal(default.release_terminal("s1", "term_1")),
            await refusal(closed.read_text_file("s1", roots, path)),
        ]

    methods = ["fs/write_text_file", "terminal/create", "terminal/output"]
    methods += ["terminal/wait_for_exit", "terminal/kill", "terminal/release", "fs/read_text_file"]
    assert run(scenario()) == [
        {"code": -32601, "message": "Method not found", "data": method} for method in methods
    ]
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "a\n"


def test_the_ready_made_approvals_answer_always_and_never(tmp_path: Path) -> None:
    proposal = ProposedWrite("s1", str(tmp_path / "a"), 1, False)
    assert approve_always(proposal) is True and approve_never(proposal) is False
    workspace = Workspace(write=True, approve=approve_never)
    call = workspace.write_text_file("s1", [str(tmp_path)], str(tmp_path / "a"), "x")
    reason = f"the user did not approve writing {str(tmp_path / 'a')!r}"
    assert run(refusal(call)) == invalid("$.path", reason)


def test_bad_settings_are_refused_when_the_workspace_is_made() -> None:
    with pytest.raises(ValueError, match="output_limit must be 0 or more, not -1"):
        Workspace(output_limit=-1)
    with pytest.raises(ValueError, match="contains a NUL byte"):
        Workspace(env={"A": "\0"})


# -- asking on the terminal ----------------------------------------------------------------------
ASKING = textwrap.dedent(
    """
    import asyncio, sys
    from templates.toolkit.workspace import Workspace

    async def main(root):
        workspace = Workspace(write=True, terminals=True)    # the default approval: ask
        try:
            await workspace.write_text_file("s1", [root], root + "/f\\x1b[2J.txt", "hi")
            print("written", flush=True)
        except Exception as exc:
            print("refused:", exc.data["reason"], flush=True)

    asyncio.run(main(sys.argv[1]))
    """
)


@contextlib.contextmanager
def on_a_pty(script: str, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """`script` run with stdin a pty, and the pty's other end (to type on)."""
    leader, follower = pty.openpty()
    try:
        with subprocess.Popen(
            [sys.executable, "-c", script, str(tmp_path)],
            cwd=REPO, stdin=follower, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        ) as process:  # fmt: skip
            yield process, leader
    finally:
        os.close(leader)
        os.close(follower)


def asking(tmp_path: Path, answer: bytes | None) -> tuple[str, str]:
    """Run ASKING with stdin a pty fed `answer` (None: stdin is /dev/null, not a terminal)."""
    if answer is None:
        done = subprocess.run(
            [sys.executable, "-c", ASKING, str(tmp_path)],
            cwd=REPO, stdin=subprocess.DEVNULL, capture_output=True, timeout=20,
        )  # fmt: skip
        return done.stdout.decode(), done.stderr.decode()
    with on_a_pty(ASKING, tmp_path) as (process, keyboard):
        os.write(keyboard, answer)
        out, err = process.communicate(timeout=20)
    return out.decode(), err.decode()


def test_asking_on_a_terminal_writes_only_after_yes(tmp_path: Path) -> None:
    target = tmp_path / "f\x1b[2J.txt"
    out, err = asking(tmp_path, b"n\n")
    assert out == f"refused: the user did not approve writing {str(target)!r}\n"
    assert not target.exists()
    out, err = asking(tmp_path, b"y\n")
    assert out == "written\n" and target.read_text(encoding="utf-8") == "hi"
    assert err == (
        f"The agent (session 's1') asks to write 2 bytes to {str(target)!r} (a new file).\n"
        "Allow? [y/N] "
    )
    assert "\x1b" not in err  # the agent's escape sequence is shown, not played


def test_asking_without_a_terminal_refuses_and_says_so(tmp_path: Path) -> None:
    out, err = asking(tmp_path, None)
    target = tmp_path / "f\x1b[2J.txt"
    assert out == f"refused: the user did not approve writing {str(target)!r}\n"
    assert "refused, stdin is not a terminal: The agent (session 's1') asks to write" in err
    assert not target.exists()


def test_a_command_proposal_describes_everything_it_will_get() -> None:
    proposal = ProposedCommand(
        "s1", ("sh", "-c", "echo $X"), "/bin/sh", "/work", {"PATH": "/bin", "X": "1"}, {"X": "1"}
    )
    assert proposal.describe() == (
        "The agent (session 's1') asks to run:\n"
        "  command: \"sh -c 'echo $X'\"\n"
        "  program: '/bin/sh'\n"
        "  in: '/work'\n"
        "  environment:\n"
        "    'PATH'='/bin'\n"
        "    'X'='1' (asked by the agent)"
    )


WITHDRAWN = textwrap.dedent(
    """
    import asyncio, sys
    from templates.toolkit.workspace import Workspace

    async def main(root):
        workspace = Workspace(write=True)
        first = workspace.write_text_file("s1", [root], root + "/first.txt", "1")
        try:
            await asyncio.wait_for(first, 0.5)
        except TimeoutError:
            print("first withdrawn", flush=True)
        try:
            await workspace.write_text_file("s1", [root], root + "/second.txt", "2")
            print("second written", flush=True)
        except Exception as exc:
            print("second refused", flush=True)

    asyncio.run(main(sys.argv[1]))
    """
)


def read_until(fd: int, text: bytes, seen: bytearray, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while text not in seen:
        assert time.monotonic() < deadline, seen
        if select.select([fd], [], [], 0.1)[0]:
            seen += os.read(fd, 4096)


def test_the_answer_typed_for_a_withdrawn_question_does_not_answer_the_next(
    tmp_path: Path,
) -> None:
    with on_a_pty(WITHDRAWN, tmp_path) as (process, keyboard):
        assert process.stderr is not None
        seen = bytearray()
        read_until(process.stderr.fileno(), b"(withdrawn: the answer will be ignored)", seen)
        time.sleep(0.3)
        if select.select([process.stderr.fileno()], [], [], 0)[0]:
            seen += os.read(process.stderr.fileno(), 4096)
        assert b"second.txt" not in seen  # not asked while a line is still owed to the first
        os.write(keyboard, b"y\n")  # typed for the first question, already withdrawn
        read_until(process.stderr.fileno(), b"second.txt", seen)
        os.write(keyboard, b"n\n")
        out, err = process.communicate(timeout=20)
    assert out.decode() == "first withdrawn\nsecond refused\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == []
