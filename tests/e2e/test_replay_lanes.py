"""`acp-codegen replay` on transcripts of both lanes: the default (npm-sdk-2.4.0, the project's
`acp_v2`) with the kinds that draft adds, and the seed's alpha.3 (through `--bindings`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codegen.cli import main
from tests.e2e.test_replay import TRANSCRIPT, text, upd, write
from tests.support.lanes import seed_lane

NOTICE = {"sessionUpdate": "notice", "severity": "warning", "title": "Rate limited"}
COMPACTION = [
    upd("compaction_update", compactionId="k1", status="in_progress"),
    upd("compaction_summary_chunk", compactionId="k1", content=text("Summary")),
    upd("compaction_update", compactionId="k1", status="completed"),
]


def replay_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code = main(["replay", "--json", *args])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    result: dict[str, Any] = json.loads(out)
    return result


def test_default_lane_transcript_with_notices_and_compactions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [*TRANSCRIPT, upd("notice", severity="warning", title="Rate limited"), *COMPACTION]
    snap = replay_json(capsys, str(write(tmp_path, lines)))
    assert snap["notices"] == [{"severity": "warning", "title": "Rate limited"}]
    assert snap["compactions"] == {
        "k1": {"compactionId": "k1", "status": "completed", "summary": [text("Summary")]}
    }
    assert snap["state"] == "idle" and snap["stopReason"] == "end_turn"
    assert [m["messageId"] for m in snap["messages"]] == ["u1", "t1", "a1"]


def test_seed_lane_transcript_keeps_the_newer_kinds_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bindings = Path(seed_lane("v2").__file__ or "").parent
    lines = [*TRANSCRIPT, upd("notice", severity="warning", title="Rate limited")]
    snap = replay_json(capsys, "--bindings", str(bindings), str(write(tmp_path, lines)))
    assert "notices" not in snap and "compactions" not in snap
    assert snap["unknown"][-1] == NOTICE
    assert snap["state"] == "idle" and snap["stopReason"] == "end_turn"
    assert [m["messageId"] for m in snap["messages"]] == ["u1", "t1", "a1"]
