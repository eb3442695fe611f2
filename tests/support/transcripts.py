"""Transcripts for the tests of `acp-codegen replay`: JSON-RPC lines as a recorder writes them,
and the CLI run in-process on them (its exit status, stdout and stderr)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codegen.cli import main


def message(**fields: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", **fields})


def rpc(update: dict[str, Any], session: str = "s1") -> str:
    """A `session/update` line."""
    return message(method="session/update", params={"sessionId": session, "update": update})


def upd(tag: str, /, session: str = "s1", **fields: Any) -> str:
    """A `session/update` line of kind `tag`."""
    return rpc({"sessionUpdate": tag, **fields}, session)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def initialize(version: int) -> str:
    return message(id=0, method="initialize", params={"protocolVersion": version})


def initialized(version: int) -> str:
    return message(id=0, result={"protocolVersion": version})


def prompt(request_id: Any, session: str = "s1") -> str:
    params = {"sessionId": session, "prompt": [text("Fix the bug")]}
    return message(id=request_id, method="session/prompt", params=params)


def answer(request_id: Any, stop_reason: str) -> str:
    return message(id=request_id, result={"stopReason": stop_reason})


def write(tmp_path: Path, lines: list[str], name: str = "t.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def replay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`acp-codegen replay ARGS`: its exit status, stdout and stderr."""
    code = main(["replay", *args])
    out, err = capsys.readouterr()
    return code, out, err


def mid_turn(path: Path | str, state: str = "running") -> str:
    """The warning of a replay whose transcript ends mid-turn (it exits 1)."""
    return (
        f"acp-codegen: {path}: warning: the transcript ends mid-turn (state: {state}): the"
        " turn's last updates are missing\n"
    )


def snapshot_of(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    """The `--json` snapshot of a replay that must succeed silently: exit 0, or 1 with the
    mid-turn warning alone when the session is not idle at the end (the last argument is the
    transcript)."""
    code, out, err = replay(capsys, "--json", *args)
    result: dict[str, Any] = json.loads(out)
    if result["state"] == "idle":
        assert (code, err) == (0, "")
    else:
        assert (code, err) == (1, mid_turn(args[-1], result["state"]))
    return result


def refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The one error line of a replay that exits 2 and prints nothing on stdout."""
    code, out, err = replay(capsys, *args)
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1, err
    return err.removeprefix("acp-codegen: error: ").removesuffix("\n")
