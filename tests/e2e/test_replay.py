"""`acp-codegen replay`: the text view, the JSON snapshot, and how bad lines are reported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codegen.cli import main

ROOT = Path(__file__).resolve().parents[2]


def rpc(update: dict[str, Any], session: str = "s1") -> str:
    params = {"sessionId": session, "update": update}
    return json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params})


def upd(tag: str, /, **fields: Any) -> str:
    return rpc({"sessionUpdate": tag, **fields})


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def entry(content: str, priority: str, status: str) -> dict[str, Any]:
    return {"content": content, "priority": priority, "status": status}


LINK = {"type": "resource_link", "uri": "file:///p/main.py", "name": "main.py"}
DIFF = {"type": "diff", "path": "/p/main.py", "changes": []}
TOOL_TEXT = {"type": "content", "content": text("1 line changed\nall good")}
PLAN = {
    "type": "items",
    "planId": "p1",
    "entries": [entry("Read the code", "high", "completed"), entry("Fix it", "low", "in_progress")],
}
COST = {"amount": 0.01, "currency": "USD"}
ASK = {"sessionId": "s1", "title": "Edit?", "options": []}

TRANSCRIPT = [
    json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {}}),
    json.dumps({"jsonrpc": "2.0", "id": 2, "result": {}}),
    upd("user_message", messageId="u1", content=[text("Fix the bug"), LINK]),
    upd("state_update", state="running"),
    upd("session_info_update", title="Bug hunt"),
    upd("agent_thought_chunk", messageId="t1", content=text("Look at main.py")),
    upd("plan_update", plan=PLAN),
    upd("tool_call_update", toolCallId="c1", title="Edit main.py", kind="edit", status="pending"),
    upd("state_update", state="requires_action"),
    json.dumps({"jsonrpc": "2.0", "id": 0, "method": "session/request_permission", "params": ASK}),
    upd("state_update", state="running"),
    upd("tool_call_content_chunk", toolCallId="c1", content=DIFF),
    upd("tool_call_content_chunk", toolCallId="c1", content=TOOL_TEXT),
    upd("tool_call_update", toolCallId="c1", status="completed"),
    upd(
        "terminal_update",
        terminalId="term1",
        command="pytest",
        output={"data": "b2sK"},
        exitStatus={"exitCode": 0},
    ),
    upd("agent_message_chunk", messageId="a1", content=text("Fixed ")),
    upd("agent_message_chunk", messageId="a1", content=text("it.\nDone.")),
    upd("_vendor_note", note="hi"),
    upd("usage_update", used=1200, size=200000, cost=COST),
    json.dumps({"jsonrpc": "2.0", "method": "_vendor/ping", "params": {}}),
    upd("state_update", state="idle", stopReason="end_turn"),
]

TEXT_VIEW = """\
session s1: 17 update(s) applied
title: Bug hunt

user (u1):
  Fix the bug
  [link file:///p/main.py]
thought (t1):
  Look at main.py
agent (a1):
  Fixed it.
  Done.

tool calls:
  c1 Edit main.py (edit): completed
    [diff /p/main.py]
    1 line changed
    all good

plans:
  p1 (items):
    [completed] Read the code (high)
    [in_progress] Fix it (low)

terminals:
  term1: pytest, exited with 0, 3 byte(s) of output

unknown updates: _vendor_note

usage: 1200 / 200000 tokens, cost 0.01 USD
state: idle (end_turn)
"""


def write(tmp_path: Path, lines: list[str], name: str = "t.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["replay", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_text_view_shows_the_conversation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, str(write(tmp_path, TRANSCRIPT))) == (0, TEXT_VIEW, "")


def test_json_prints_the_snapshot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--json", str(write(tmp_path, TRANSCRIPT)))
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "messages": [
            {
                "messageId": "u1",
                "role": "user",
                "content": [text("Fix the bug"), LINK],
                "meta": None,
            },
            {
                "messageId": "t1",
                "role": "thought",
                "content": [text("Look at main.py")],
                "meta": None,
            },
            {
                "messageId": "a1",
                "role": "agent",
                "content": [text("Fixed "), text("it.\nDone.")],
                "meta": None,
            },
        ],
        "toolCalls": {
            "c1": {
                "toolCallId": "c1",
                "title": "Edit main.py",
                "kind": "edit",
                "status": "completed",
                "content": [DIFF, TOOL_TEXT],
            },
        },
        "plans": {"p1": PLAN},
        "availableCommands": None,
        "configOptions": None,
        "sessionInfo": {"title": "Bug hunt"},
        "usage": {"used": 1200, "size": 200000, "cost": COST},
        "terminals": {
            "term1": {
                "terminalId": "term1",
                "command": "pytest",
                "exitStatus": {"exitCode": 0},
                "output": "b2sK",
            },
        },
        "state": "idle",
        "stopReason": "end_turn",
        "unknown": [{"sessionUpdate": "_vendor_note", "note": "hi"}],
    }


def test_bad_lines_are_reported_with_their_number_and_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        rpc({"sessionUpdate": "state_update", "state": "running"}),
        "{not json",
        "",
        "[1, 2]",
        '"just a string"',
        upd("agent_message_chunk", messageId="a", content={"type": "text", "text": 5}),
        json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1"}}),
        rpc({"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "@@@"}),
        rpc({"sessionUpdate": "agent_message_chunk", "messageId": "a", "content": text("ok")}),
    ]
    path = write(tmp_path, lines)
    code, out, err = run(capsys, "--json", str(path))
    assert code == 0
    assert err.splitlines() == [
        f"acp-codegen: {path}:{number}: {reason}; skipped"
        for number, reason in [
            (2, "not JSON (Expecting property name enclosed in double quotes at column 2)"),
            (4, "not a JSON-RPC message (a JSON array)"),
            (5, "not a JSON-RPC message (a JSON string)"),
            (6, "bad update: $.params.update.content.text: expected a string, got an integer"),
            (7, "session/update without params.update"),
            (8, "bad update: terminal output is not valid base64: '@@@'"),
        ]
    ]
    snapshot = json.loads(out)
    assert snapshot["state"] == "running"
    assert snapshot["messages"] == [
        {"messageId": "a", "role": "agent", "content": [text("ok")], "meta": None}
    ]
    assert snapshot["terminals"] == {}


def test_missing_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.jsonl"
    assert run(capsys, str(missing)) == (
        2,
        "",
        f"acp-codegen: error: cannot read {missing}: No such file or directory\n",
    )
    assert run(capsys, str(tmp_path)) == (
        2,
        "",
        f"acp-codegen: error: cannot read {tmp_path}: Is a directory\n",
    )


def test_empty_transcript_is_an_empty_idle_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, [])
    assert run(capsys, str(path)) == (
        0,
        "session (unknown): 0 update(s) applied\n\nusage: none reported\nstate: idle\n",
        "",
    )


def test_one_session_is_replayed_and_others_are_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        rpc({"sessionUpdate": "state_update", "state": "running"}, session="a"),
        rpc({"sessionUpdate": "session_info_update", "title": "B"}, session="b"),
        rpc({"sessionUpdate": "session_info_update", "title": "A"}, session="a"),
    ]
    path = write(tmp_path, lines)
    code, out, err = run(capsys, "--json", str(path))
    assert (code, json.loads(out)["sessionInfo"]) == (0, {"title": "A"})
    assert err == "acp-codegen: 1 update(s) of other sessions ignored (choose one with --session)\n"
    code, out, err = run(capsys, "--json", "--session", "b", str(path))
    assert (code, json.loads(out)["sessionInfo"], json.loads(out)["state"]) == (
        0,
        {"title": "B"},
        "idle",
    )


def test_lines_split_on_newline_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # U+2028 and U+0085 may appear raw inside a JSON string; they do not end a line.
    odd = "a\u2028b\u0085c"
    path = write(
        tmp_path,
        [rpc({"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text(odd)})],
    )
    code, out, _ = run(capsys, "--json", str(path))
    assert (code, json.loads(out)["messages"][0]["content"]) == (0, [text(odd)])


def test_finds_the_generated_package_outside_the_project(tmp_path: Path) -> None:
    path = write(tmp_path, [rpc({"sessionUpdate": "state_update", "state": "running"})])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "codegen", "replay", str(path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.endswith("\nusage: none reported\nstate: running\n")
