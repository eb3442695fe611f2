"""`acp-codegen replay`: the text view, the JSON snapshot, how bad lines are reported, which
inputs are refused (exit 2), and which generated package it decodes with; a turn of the echo
agent captured on each protocol version. v1 transcripts in detail: test_replay_v1.py."""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import acp_kit as kit
import pytest

from tests.support.lanes import pinned_lane
from tests.support.toolkit_wire import WireLane
from tests.support.transcripts import (
    initialize,
    message,
    mid_turn,
    refused,
    rpc,
    snapshot_of,
    text,
    upd,
    write,
)
from tests.support.transcripts import replay as run

ROOT = Path(__file__).resolve().parents[2]
NPM_SDK = "npm-sdk-2.4.0"  # the lock file's default ref, which the committed package follows


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
    message(id=2, method="session/prompt", params={}),
    message(id=2, result={}),
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
        "notices": [],
        "compactions": {},
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
    assert code == 1  # it ends mid-turn
    assert err.splitlines() == [
        *(f"acp-codegen: {path}:{number}: {reason}; skipped"
        for number, reason in [
            (2, "not JSON (Expecting property name enclosed in double quotes at column 2)"),
            (4, "not a JSON-RPC message (a JSON array)"),
            (5, "not a JSON-RPC message (a JSON string)"),
            (6, "bad update: $.params.update.content.text: expected a string, got an integer"),
            (7, "session/update without params.update"),
            (8, "bad update: terminal output is not valid base64: '@@@'"),
        ]),
        mid_turn(path).rstrip("\n"),
    ]  # fmt: skip
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
    assert (code, json.loads(out)["sessionInfo"]) == (1, {"title": "A"})  # a: mid-turn
    assert err == (
        "acp-codegen: 1 update(s) of other sessions ignored (choose one with --session)\n"
        + mid_turn(path)
    )
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
    assert (done.returncode, done.stderr) == (1, mid_turn(path))
    assert done.stdout.endswith("\nusage: none reported\nstate: running\n")


def test_files_that_are_not_transcripts_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    binary = tmp_path / "core"
    binary.write_bytes(upd("state_update", state="running").encode() + b"\n\x7fELF\0\0\1\n")
    assert refused(capsys, str(binary)) == (
        f"{binary}:2: a NUL byte: this is not a JSON-lines transcript"
    )
    latin1 = tmp_path / "latin1.jsonl"
    latin1.write_bytes(b'{"jsonrpc": "2.0", "method": "caf\xe9"}\n')
    assert refused(capsys, str(latin1)) == (
        f"{latin1}:1: not UTF-8 text: this is not a JSON-lines transcript"
    )
    for name, content in [("empty.jsonl", b""), ("blank.jsonl", b"\n  \n\r\n")]:
        path = tmp_path / name
        path.write_bytes(content)
        assert refused(capsys, str(path)) == f"{path} is empty: nothing to replay"


def test_dev_zero_is_refused_without_reading_it_all(capsys: pytest.CaptureFixture[str]) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    assert refused(capsys, "/dev/zero") == (
        "/dev/zero:1: a NUL byte: this is not a JSON-lines transcript"
    )


def test_a_transcript_without_session_updates_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, TRANSCRIPT[:2] + ['{"method": "session/update"}', "[]"])
    code, out, err = run(capsys, str(path))
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f'acp-codegen: {path}:3: session/update without "jsonrpc": "2.0"; skipped',
        f"acp-codegen: {path}:4: not a JSON-RPC message (a JSON array); skipped",
        f"acp-codegen: error: {path} has no JSON-RPC session/update notification",
    ]


def test_an_unknown_session_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [
        rpc({"sessionUpdate": "state_update", "state": "running"}, session="a"),
        rpc({"sessionUpdate": "state_update", "state": "running"}, session="b"),
    ]
    path = write(tmp_path, lines)
    code, out, err = run(capsys, "--session", "c", str(path))
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        "acp-codegen: 2 update(s) of other sessions ignored (choose one with --session)",
        f"acp-codegen: error: {path} has no JSON-RPC session/update notification"
        " of session 'c' (sessions in it: a, b)",
    ]


def test_when_no_update_could_be_applied_it_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, [upd("state_update", state=7), rpc({"nope": 1})])
    code, out, err = run(capsys, str(path))
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"acp-codegen: {path}:1: bad update: $.params.update.state: expected a string tag,"
        " got an integer; skipped",
        f"acp-codegen: {path}:2: bad update: $.params.update.sessionUpdate: missing tag; skipped",
        f"acp-codegen: error: {path}: none of its 2 session/update notification(s)"
        " of session 's1' could be applied",
    ]


def test_the_first_20_bad_lines_are_reported_then_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = ["{bad"] * 25 + [upd("state_update", state="running")]
    path = write(tmp_path, lines)
    code, out, err = run(capsys, str(path))
    assert code == 1 and out.endswith("state: running\n")
    reason = "not JSON (Expecting property name enclosed in double quotes at column 2)"
    assert err.splitlines() == [
        *(f"acp-codegen: {path}:{n}: {reason}; skipped" for n in range(1, 21)),
        f"acp-codegen: {path}: 5 more bad line(s) skipped",
        mid_turn(path).rstrip("\n"),
    ]


def test_an_overlong_line_is_skipped_and_the_next_one_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long_line = upd("agent_message_chunk", messageId="m", content=text("x" * 5000))
    path = write(tmp_path, [long_line, upd("state_update", state="running")])
    code, out, err = run(capsys, "--max-line", "1000", str(path))
    assert (code, err) == (
        1,
        f"acp-codegen: {path}:1: longer than 1000 bytes; skipped\n" + mid_turn(path),
    )
    assert out.startswith("session s1: 1 update(s) applied\n")
    path.write_bytes(b"x" * 3000 + b"\0\n")  # a NUL far into an overlong line still stops it
    assert refused(capsys, "--max-line", "1000", str(path)) == (
        f"{path}:1: a NUL byte: this is not a JSON-lines transcript"
    )


def test_updates_need_a_session_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    no_id = {"jsonrpc": "2.0", "method": "session/update", "params": {"update": {}}}
    path = write(tmp_path, [json.dumps(no_id), upd("state_update", state="running")])
    code, _, err = run(capsys, str(path))
    assert (code, err) == (
        1,
        f"acp-codegen: {path}:1: session/update without a string params.sessionId; skipped\n"
        + mid_turn(path),
    )


def test_reads_standard_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = (upd("state_update", state="running") + "\n").encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, out, err = run(capsys, "-")
    assert (code, err) == (1, mid_turn("<stdin>"))
    assert out.endswith("state: running\n")


# -- the generated package it decodes with -----------------------------------------------------


def test_bindings_are_loaded_from_the_folder_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "vendored" / "acp"
    shutil.copytree(
        ROOT / "generated" / "acp_kit", copy, ignore=shutil.ignore_patterns("__pycache__")
    )
    path = write(tmp_path, [upd("state_update", state="idle", stopReason="end_turn")])
    before = set(sys.modules)
    code, out, err = run(capsys, "--bindings", str(copy), str(path))
    assert (code, err) == (0, "")
    assert out.endswith("state: idle (end_turn)\n")
    loaded = {m for m in set(sys.modules) - before if m.endswith("._runtime")}
    [runtime] = loaded  # imported under a private name, from that folder
    assert sys.modules[runtime].__file__ == str(copy / "runtime" / "_runtime.py")
    assert str(copy.parent) not in sys.path and str(copy) not in sys.path


def test_a_package_of_both_lanes_replays_in_the_transcripts_lane(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--bindings` naming a package of several lanes: the transcript's `initialize` picks
    the lane, as it does without `--bindings`."""
    package = tmp_path / "both"  # a folder of its own: imported afresh under a private name
    shutil.copytree(
        ROOT / "generated" / "acp_kit", package, ignore=shutil.ignore_patterns("__pycache__")
    )
    v1 = write(tmp_path, [initialize(1), upd("usage_update", used=1, size=2)])
    for chosen, lane in (((), "v1"), (("--lane", "v2"), "v2")):
        before = set(sys.modules)
        code, out, err = run(capsys, "--bindings", str(package), *chosen, str(v1))
        assert (code, err) == (0, "") and out.endswith("usage: 1 / 2 tokens\nstate: idle\n")
        states = [m for m in set(sys.modules) - before if m.endswith(".session_state")]
        assert [m.split(".")[-2] for m in states] == [lane]


def test_bindings_that_cannot_replay_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, [upd("state_update", state="running")])
    empty = tmp_path / "empty"
    empty.mkdir()
    assert refused(capsys, "--bindings", str(empty), str(path)) == (
        f"{empty} is not a generated package (no __init__.py): pass --bindings with the folder"
        " of a package acp-codegen generated from a v1 or v2 schema"
    )
    models_only = tmp_path / "models_only"
    models_only.mkdir()
    (models_only / "__init__.py").write_text("decode = encode = None\n", encoding="utf-8")
    assert refused(capsys, "--bindings", str(models_only), str(path)) == (
        f"{models_only} has no lanes (no folder with models.py): pass --bindings with the folder"
        " of a package acp-codegen generated from a v1 or v2 schema"
    )
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "__init__.py").write_text("from .missing import x\n", encoding="utf-8")
    (broken / "v2").mkdir()
    (broken / "v2" / "models.py").write_text("", encoding="utf-8")  # a lane, in a broken package
    message = refused(capsys, "--bindings", str(broken), str(path))
    assert message.startswith(f"cannot import {broken.resolve()}: ModuleNotFoundError: ")


def test_the_projects_package_of_the_lane_is_the_default(
    lane: WireLane,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A project that configures one package per lane: the transcript's lane picks it (a v1
    transcript: its `initialize`)."""
    package = f"acp_{lane.name}_project"
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.acp-codegen]\nout = "src"\n[[tool.acp-codegen.packages]]\n'
        f'package = "{package}"\nschema = "{lane.name}/schema.json"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    first = [initialize(1)] if lane.v1 else []
    path = write(tmp_path, [*first, upd("usage_update", used=1, size=2)])
    where = tmp_path / "src" / package
    made = pinned_lane(NPM_SDK, lane.name, f"acp_{lane.name}_one_lane")  # as `generate` writes it
    shutil.copytree(Path(made.__file__ or "").parent.parent, where)  # the whole package
    before = set(sys.modules)
    code, out, err = run(capsys, str(path))
    assert (code, err) == (0, "") and out.endswith("usage: 1 / 2 tokens\nstate: idle\n")
    loaded = [sys.modules[m].__file__ or "" for m in set(sys.modules) - before]
    assert loaded and all(name.startswith(str(where)) for name in loaded if name)


def test_a_captured_turn_of_the_echo_agent_replays_to_the_clients_state(
    lane: WireLane, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Our client runs a turn of examples/echo_agent.py on the lane's version with a recorder
    tapped in; `replay` reads the lane from the transcript and rebuilds the client's state."""
    agent = [sys.executable, str(ROOT / "examples" / "echo_agent.py")]
    path = tmp_path / "capture.jsonl"

    async def capture() -> dict[str, Any]:
        with kit.TranscriptRecorder(path) as recorder:
            async with kit.spawn_agent(
                *agent, permissions=kit.allow, protocol=lane.version, tap=recorder
            ) as peer:
                session = await peer.new_session()
                await session.prompt("replay me")
                snapshot: dict[str, Any] = session.state.snapshot()
        return snapshot

    seen = asyncio.run(asyncio.wait_for(capture(), 30))
    assert (seen["state"], seen["stopReason"]) == ("idle", "end_turn")
    assert snapshot_of(capsys, str(path)) == seen
