"""Golden files: small fixture schemas and the exact trees the generator must make from them.

Each folder of tests/fixtures/golden holds `schema.json` (and `meta.json` when the case has
one) and `expected/<case>/`, the whole package generated from it with the package name `<case>`.
After an intended change to the generator or its templates, refresh every expected tree with

    ACP_UPDATE_GOLDEN=1 .venv/bin/pytest tests/golden/test_golden.py

and review the diff of tests/fixtures/golden before committing it.
"""

from __future__ import annotations

import difflib
import importlib
import os
import shutil
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from codegen.config import default_templates
from codegen.diagnostics import Diagnostics
from codegen.pipeline import Target, generate

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "schema.json").is_file())
UPDATE = os.environ.get("ACP_UPDATE_GOLDEN") == "1"
REFRESH_HINT = (
    "if the change is intended: ACP_UPDATE_GOLDEN=1 .venv/bin/pytest tests/golden/test_golden.py"
)


def regenerate(case: str) -> dict[str, str]:
    target = Target(case, GOLDEN / case / "schema.json", "local", "schema.json")
    return generate(target, default_templates(), Diagnostics()).files


def expected_tree(case: str) -> dict[str, str]:
    root = GOLDEN / case / "expected"
    return {
        path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def write_tree(case: str, files: dict[str, str]) -> None:
    root = GOLDEN / case / "expected"
    shutil.rmtree(root, ignore_errors=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_there_are_golden_cases() -> None:
    assert CASES == ["nested_unions", "untagged_unions", "v1_discriminator", "v2_tagged"]


@pytest.mark.parametrize("case", CASES)
def test_generated_tree_is_the_expected_tree(case: str) -> None:
    files = regenerate(case)
    if UPDATE:
        write_tree(case, files)
    expected = expected_tree(case)
    added, gone = sorted(set(files) - set(expected)), sorted(set(expected) - set(files))
    assert not added and not gone, f"new files {added}, files gone {gone}; {REFRESH_HINT}"
    diffs = [
        "".join(
            difflib.unified_diff(
                expected[rel].splitlines(keepends=True),
                files[rel].splitlines(keepends=True),
                f"expected/{rel}",
                f"generated/{rel}",
            )
        )
        for rel in sorted(files)
        if files[rel] != expected[rel]
    ]
    if diffs:
        text = "".join(diffs)
        lines = text.splitlines()
        shown = "\n".join(lines[:80]) + (
            f"\n... {len(lines) - 80} more lines" if len(lines) > 80 else ""
        )
        pytest.fail(f"{len(diffs)} file(s) differ; {REFRESH_HINT}\n{shown}", pytrace=False)


# The expected trees are real packages: they import and convert their own examples.
@pytest.fixture
def golden_package(request: pytest.FixtureRequest) -> Iterator[ModuleType]:
    case: str = request.param
    folder = str(GOLDEN / case / "expected")
    sys.path.insert(0, folder)
    try:
        yield importlib.import_module(case)
    finally:
        sys.path.remove(folder)
        for name in [m for m in sys.modules if m == case or m.startswith(case + ".")]:
            del sys.modules[name]


@pytest.mark.parametrize("golden_package", ["v2_tagged"], indirect=True)
def test_v2_tagged_package_round_trips(golden_package: ModuleType) -> None:
    pkg = golden_package
    content = [
        {"type": "text", "text": "hi"},
        {"type": "_video", "x": 1},  # unknown: the open variant keeps it whole
        {"type": "audio", "x": 1},  # reserved by the catch-all's `not`: invalid, skipped
        {"type": 5},  # invalid, skipped
    ]
    update = {"sessionUpdate": "message", "messageId": "m1", "content": content}
    note = pkg.decode(pkg.UpdateNotification, {"sessionId": "s", "update": update})
    assert type(note.update) is pkg.UpdateMessage
    text, video = note.update.content
    assert (type(text), text.text) == (pkg.PartText, "hi")
    assert (type(video), video.type, video.extra) == (pkg.PartOther, "_video", {"x": 1})
    assert pkg.encode(note)["update"]["content"] == content[:2]
    end = pkg.decode(pkg.Update, {"sessionUpdate": "turn_end", "stopReason": "_custom"})
    assert (type(end), end.stop_reason) == (pkg.UpdateTurnEnd, "_custom")
    assert pkg.METHODS["session/prompt"].result is pkg.PromptResponse
    assert (pkg.PROTOCOL_VERSION, pkg.SCHEMA_REF) == (2, "local")


@pytest.mark.parametrize("golden_package", ["v1_discriminator"], indirect=True)
def test_v1_discriminator_package_round_trips(golden_package: ModuleType) -> None:
    pkg = golden_package
    block = pkg.decode(pkg.ContentBlock, {"type": "text", "text": "hi"})
    assert type(block) is pkg.ContentBlockText
    link = {"type": "resource_link", "uri": "file:///a"}
    assert type(pkg.decode(pkg.ContentBlock, link)) is pkg.ContentBlockResourceLink
    payload = pkg.decode(pkg.ContentBlockResourceLinkPayload, {"uri": "file:///a"})
    assert pkg.encode(payload) == {"uri": "file:///a"}
    assert pkg.ErrorCode.PARSE_ERROR == -32700
    error = pkg.decode(pkg.Error, {"code": -1, "message": "m", "data": [1]})
    assert (error.code, error.data) == (-1, [1])
    with pytest.raises(pkg.DecodeError) as caught:
        pkg.decode(pkg.ContentBlock, {"type": "audio"})
    assert caught.value.path == "$.type"


@pytest.mark.parametrize("golden_package", ["untagged_unions"], indirect=True)
def test_untagged_unions_package_round_trips(golden_package: ModuleType) -> None:
    pkg = golden_package
    data = {
        "id": None,
        "contents": {"uri": "u", "blob": "YQ=="},
        "choices": [{"group": "g", "options": [{"value": "v"}]}],
        "labels": {"a": "b"},
    }
    ping = pkg.decode(pkg.PingRequest, data)
    assert type(ping.contents) is pkg.BlobContents
    assert type(ping.choices[0]) is pkg.Group
    assert pkg.encode(ping) == data
    assert pkg.METHODS["ping"].side == "protocol"


@pytest.mark.parametrize("golden_package", ["nested_unions"], indirect=True)
def test_nested_unions_package_has_one_class_per_path_of_tags(golden_package: ModuleType) -> None:
    pkg = golden_package
    cases = [
        ({"event": "note", "text": "t"}, pkg.EventNote),
        ({"event": "status", "state": "busy", "progress": 5}, pkg.EventStatusBusy),
        ({"event": "status", "state": "done", "at": "x", "reason": "ok"}, pkg.EventStatusDoneOk),
        (
            {"event": "status", "state": "done", "at": "x", "reason": "failed", "message": "m"},
            pkg.EventStatusDoneFailed,
        ),
        (
            {"event": "status", "state": "done", "at": "x", "reason": "_z", "k": 1},
            pkg.EventStatusDoneOther,
        ),
        ({"event": "status", "state": "done", "at": "x", "reason": None}, pkg.EventStatusDoneNone),
        ({"event": "status", "state": "done", "at": "x"}, pkg.EventStatusDoneNone),
        ({"event": "_custom", "n": 1}, pkg.EventOther),
    ]
    for data, cls in cases:
        value = pkg.decode(pkg.Event, data)
        assert type(value) is cls and pkg.encode(value) == data, data
        assert isinstance(value, pkg.Event)
    failed = pkg.decode(pkg.Event, cases[3][0])
    assert failed.TAGS == {"event": "status", "state": "done", "reason": "failed"}
    assert (failed.at, failed.message, failed.TAG) == ("x", "m", "status")
    # a malformed optional tag is dropped before the variant is chosen
    dropped = pkg.decode(pkg.Event, {"event": "status", "state": "done", "at": "x", "reason": 7})
    assert type(dropped) is pkg.EventStatusDoneNone
    assert pkg.encode(dropped) == {"event": "status", "state": "done", "at": "x"}
    other = pkg.EventStatusDoneOther(other_reason="_late", at="y")
    assert other.to_json() == {"event": "status", "state": "done", "reason": "_late", "at": "y"}
    for data, error in [
        ({"event": "status"}, "$.state: missing tag"),
        (
            {"event": "status", "state": "idle"},
            '$.state: unknown tag "idle"; expected one of busy, done',
        ),
        ({"event": "status", "state": "done", "reason": "ok"}, "$.at: missing required field"),
        (
            {"event": "status", "state": "done", "at": "x", "reason": "failed"},
            "$.message: missing required field",
        ),
        ({"event": "status", "state": "busy", "progress": 101}, None),
    ]:
        with pytest.raises(pkg.DecodeError) as caught:
            pkg.decode(pkg.Event, data)
        if error is not None:
            assert str(caught.value) == error
    assert [c.__name__ for c in typing.get_args(pkg.Event)] == [
        "EventNote",
        "EventStatusBusy",
        "EventStatusDoneOk",
        "EventStatusDoneFailed",
        "EventStatusDoneOther",
        "EventStatusDoneNone",
        "EventOther",
    ]
    # standalone, the inner unions have classes of their own, without the outer tags
    done = pkg.decode(pkg.JobStatus, {"state": "done", "at": "x"})
    assert type(done) is pkg.JobStatusDoneNone and pkg.encode(done) == {"state": "done", "at": "x"}


@pytest.mark.parametrize("golden_package", ["nested_unions"], indirect=True)
def test_a_catch_all_beside_a_branch_without_the_tag(golden_package: ModuleType) -> None:
    pkg = golden_package
    for data, cls in [
        ({"kind": "circle", "r": 1}, pkg.ShapeCircle),
        ({"kind": "_blob", "z": 1}, pkg.ShapeOther),
        ({"points": [1, 2]}, pkg.ShapePoints),
        ({"kind": "circle", "points": [1]}, pkg.ShapePoints),  # the circle rejects it
        ({"kind": None, "points": [1]}, pkg.ShapePoints),
    ]:
        value = pkg.decode(pkg.Shape, data)
        assert type(value) is cls, data
        assert pkg.encode(value) == data
    with pytest.raises(pkg.DecodeError) as caught:
        pkg.decode(pkg.Shape, {"kind": "circle"})
    assert str(caught.value) == "$.r: missing required field"  # the variant's error
