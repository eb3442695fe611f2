"""`acp-codegen replay` on v1 transcripts: the lane is picked from the transcript (its
`initialize`, else an update kind only one lane has, else v2) or by `--lane`, decoded with the
lane's package, and the v1 model follows the session's prompts for the turn's end."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from tests.support.transcripts import (
    answer,
    initialize,
    initialized,
    message,
    prompt,
    snapshot_of,
    text,
    upd,
    write,
)
from tests.support.transcripts import replay as run

ROOT = Path(__file__).resolve().parents[2]


ENTRIES = [
    {"content": "Read the code", "priority": "high", "status": "completed"},
    {"content": "Fix it", "priority": "low", "status": "in_progress"},
]
ASK = {"sessionId": "s1", "toolCall": {"toolCallId": "c1"}, "options": []}

TRANSCRIPT = [
    initialize(1),
    initialized(1),
    message(id=1, method="session/new", params={"cwd": "/p", "mcpServers": []}),
    message(id=1, result={"sessionId": "s1"}),
    prompt(2),
    upd("user_message_chunk", content=text("Fix the bug")),
    upd("agent_thought_chunk", content=text("Look at ")),
    upd("agent_thought_chunk", content=text("main.py")),
    upd("plan", entries=ENTRIES),
    upd("tool_call", toolCallId="c1", title="Edit main.py", kind="edit", status="pending"),
    message(id=0, method="session/request_permission", params=ASK),
    message(id=0, result={"outcome": {"outcome": "selected", "optionId": "allow"}}),
    upd("tool_call_update", toolCallId="c1", status="completed", title=None),
    upd("agent_message_chunk", messageId="a1", content=text("Fixed ")),
    upd("agent_message_chunk", messageId="a1", content=text("it.")),
    upd("current_mode_update", currentModeId="code"),
    upd("usage_update", used=1200, size=200000),
    answer(2, "end_turn"),
]

TEXT_VIEW = """\
session s1: 10 update(s) applied

user:
  Fix the bug
thought:
  Look at main.py
agent (a1):
  Fixed it.

tool calls:
  c1 Edit main.py (edit): completed

plan:
  [completed] Read the code (high)
  [in_progress] Fix it (low)

mode: code

usage: 1200 / 200000 tokens
state: idle (end_turn)
"""


def test_a_v1_transcript_is_replayed_with_the_v1_package(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, str(write(tmp_path, TRANSCRIPT))) == (0, TEXT_VIEW, "")


def test_json_is_the_v1_snapshot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    view = snapshot_of(capsys, str(write(tmp_path, TRANSCRIPT)))
    assert view["timeline"] == [
        {"message": 0},
        {"message": 1},
        {"toolCall": "c1"},
        {"message": 2},
    ]
    assert view["toolCalls"] == {
        "c1": {
            "toolCallId": "c1",
            "title": "Edit main.py",
            "kind": "edit",
            "status": "completed",
            "content": [],
        }
    }
    assert (view["state"], view["stopReason"], view["currentModeId"]) == (
        "idle",
        "end_turn",
        "code",
    )


def test_the_agents_initialize_answer_decides_the_lane(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The client asked for 2; the agent answered 1: the session speaks v1.
    lines = [initialize(2), initialized(1), upd("agent_message_chunk", content=text("hi"))]
    view = snapshot_of(capsys, str(write(tmp_path, lines)))
    assert view["messages"] == [{"messageId": None, "role": "agent", "content": [text("hi")]}]


def test_the_clients_initialize_decides_when_the_answer_is_not_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [initialize(1), upd("agent_message_chunk", content=text("hi"))]
    assert snapshot_of(capsys, str(write(tmp_path, lines)))["messages"][0]["content"] == [
        text("hi")
    ]
    lines = [initialize(2), upd("state_update", state="running")]
    assert snapshot_of(capsys, str(write(tmp_path, lines)))["state"] == "running"


def test_without_initialize_a_kind_only_v1_has_decides_and_earlier_lines_are_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        upd("agent_message_chunk", messageId="m", content=text("shared kind: ")),
        upd("usage_update", used=1, size=2),
        upd("tool_call", toolCallId="c", title="Read"),  # only v1 has tool_call
    ]
    view = snapshot_of(capsys, str(write(tmp_path, lines)))
    assert view["messages"] == [
        {"messageId": "m", "role": "agent", "content": [text("shared kind: ")]}
    ]
    assert (view["usage"], list(view["toolCalls"])) == ({"used": 1, "size": 2}, ["c"])


def test_a_transcript_that_tells_nothing_is_v2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [upd("usage_update", used=1, size=2)]
    assert "plans" in snapshot_of(capsys, str(write(tmp_path, lines)))  # the v2 snapshot


def test_lane_overrides_what_the_transcript_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, [initialize(2), upd("plan", entries=[])])
    assert snapshot_of(capsys, "--lane", "v1", str(path))["plan"] == {"entries": []}
    v2 = snapshot_of(capsys, str(path))  # v2's union is open: `plan` is an unknown kind there
    assert v2["unknown"] == [{"sessionUpdate": "plan", "entries": []}]


def test_detection_reads_standard_input_and_gives_the_lines_back(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ("\n".join(TRANSCRIPT) + "\n").encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert run(capsys, "-") == (0, TEXT_VIEW, "")


def test_an_overlong_first_line_stops_detection_and_is_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long_line = upd("agent_message_chunk", content=text("x" * 5000))
    path = write(tmp_path, [long_line, initialize(1), upd("plan", entries=[])])
    code, out, err = run(capsys, "--max-line", "1000", "--lane", "v1", str(path))
    assert (code, err) == (0, f"acp-codegen: {path}:1: longer than 1000 bytes; skipped\n")
    assert out.startswith("session s1: 1 update(s) applied\n")


# -- the turn's end comes with the prompt's answer ---------------------------------------------
def test_an_unanswered_prompt_is_running_and_an_error_answer_ends_it_without_a_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [initialize(1), prompt(5), upd("agent_message_chunk", content=text("…"))]
    view = snapshot_of(capsys, str(write(tmp_path, lines)))
    assert (view["state"], view["stopReason"]) == ("running", None)
    error = message(id=5, error={"code": -32603, "message": "Internal error"})
    view = snapshot_of(capsys, str(write(tmp_path, [*lines, error])))
    assert (view["state"], view["stopReason"]) == ("idle", None)


def test_the_other_peers_request_of_the_same_id_is_not_taken_for_the_prompt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ask = message(id=3, method="session/request_permission", params=ASK)
    refusal = message(id=3, error={"code": -32603, "message": "no"})
    lines = [initialize(1), prompt(3), upd("plan", entries=[]), ask, refusal]
    view = snapshot_of(capsys, str(write(tmp_path, lines)))
    assert view["state"] == "running"  # the error answered the permission request
    view = snapshot_of(capsys, str(write(tmp_path, [*lines, answer(3, "cancelled")])))
    assert (view["state"], view["stopReason"]) == ("idle", "cancelled")


def test_ids_pair_by_type_and_prompts_of_other_sessions_are_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        initialize(1),
        prompt(7),
        upd("plan", entries=[]),
        answer("7", "refusal"),  # a string id: not the answer to request 7
        prompt(8, session="other"),
        answer(8, "max_tokens"),
    ]
    view = snapshot_of(capsys, str(write(tmp_path, lines)))
    assert (view["state"], view["stopReason"]) == ("running", None)
    view = snapshot_of(capsys, str(write(tmp_path, [*lines, answer(7, "end_turn")])))
    assert (view["state"], view["stopReason"]) == ("idle", "end_turn")


def test_the_session_of_the_first_prompt_is_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        initialize(1),
        prompt(1, session="first"),
        upd("plan", session="second", entries=[]),
        upd("plan", session="first", entries=[]),
        answer(1, "end_turn"),
    ]
    code, out, err = run(capsys, str(write(tmp_path, lines)))
    assert code == 0
    assert out.startswith("session first: 1 update(s) applied\n")
    assert err == (
        "acp-codegen: 1 update(s) of other sessions ignored (choose one with --session)\n"
    )


# -- the package it decodes with ---------------------------------------------------------------
