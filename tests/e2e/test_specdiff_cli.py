"""`acp-codegen diff` as a command: inputs, formats, exit codes, bad input."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codegen.cli import main
from tests.conftest import REPO, write_schema
from tests.unit.test_specdiff_rules import META, base, props

Capture = pytest.CaptureFixture[str]


def pair(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> tuple[str, str]:
    new = base()
    edit(new)
    old_path = write_schema(tmp_path / "old", base(), META)
    new_path = write_schema(tmp_path / "new", new, META)
    return str(old_path), str(new_path)


def breaking(s: dict[str, Any]) -> None:  # a required field in what clients send
    props(s, "PromptRequest")["cwd"] = {"type": "string"}
    s["$defs"]["PromptRequest"]["required"].append("cwd")


def warning(s: dict[str, Any]) -> None:  # an optional field removed
    props(s, "PromptResponse").clear()


def info(s: dict[str, Any]) -> None:  # an optional field added
    props(s, "PromptResponse")["usage"] = {"type": "integer"}


def test_identical_inputs_exit_0_with_no_findings(tmp_path: Path, capsys: Capture) -> None:
    old, _ = pair(tmp_path, info)
    assert main(["diff", old, old]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1:] == [
        "wire: 0 breaking, 0 warning, 0 info; Python API: 0 breaking",
        "no differences",
    ]
    assert main(["diff", old, old, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["findings"] == []


def test_exit_1_when_something_breaks(tmp_path: Path, capsys: Capture) -> None:
    assert main(["diff", *pair(tmp_path, breaking)]) == 1
    out = capsys.readouterr().out
    assert "BREAKING (1)\n  PromptRequest.cwd  [field-added-required, client → agent]\n" in out
    assert "      Python API (breaking): PromptRequest.cwd added (a required keyword)\n" in out


def test_fail_on_warning_is_stricter(tmp_path: Path, capsys: Capture) -> None:
    inputs = pair(tmp_path, warning)
    assert main(["diff", *inputs]) == 0
    assert main(["diff", *inputs, "--fail-on", "warning"]) == 1
    assert main(["diff", *pair(tmp_path / "info", info), "--fail-on", "warning"]) == 0
    assert main(["diff", *pair(tmp_path / "info2", info), "--fail-on", "info"]) == 1
    capsys.readouterr()


def test_json_findings_have_the_documented_keys(tmp_path: Path, capsys: Capture) -> None:
    assert main(["diff", *pair(tmp_path, breaking), "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["summary"] == {"breaking": 1, "warning": 0, "info": 0, "python_breaking": 1}
    assert data["findings"] == [
        {
            "severity": "breaking",
            "kind": "field-added-required",
            "path": "PromptRequest.cwd",
            "direction": "client->agent",
            "message": "required field `cwd` (string) added: "
            "old clients do not send it; new agents require it",
            "breaks": "clients",
            "python": "PromptRequest.cwd added (a required keyword)",
            "python_severity": "breaking",
        }
    ]


def test_markdown_is_a_table_per_severity(tmp_path: Path, capsys: Capture) -> None:
    def both(s: dict[str, Any]) -> None:
        breaking(s)
        warning(s)

    assert main(["diff", *pair(tmp_path, both), "--format", "markdown"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("## ACP schema diff: `")
    assert lines[2] == "wire: 1 breaking, 1 warning, 0 info; Python API: 2 breaking."
    assert lines[4:7] == [
        "### Breaking (1)",
        "",
        "| where | change | sent | wire | Python API |",
    ]
    assert "### Warning (1)" in lines


def test_description_changes_are_folded_unless_verbose(tmp_path: Path, capsys: Capture) -> None:
    def describe(s: dict[str, Any]) -> None:
        props(s, "PromptResponse")["stopReason"]["description"] = "Why."

    inputs = pair(tmp_path, describe)
    assert main(["diff", *inputs]) == 0
    assert "(1 description-only changes not shown: --verbose lists them)" in capsys.readouterr().out
    assert main(["diff", *inputs, "--verbose"]) == 0
    assert "PromptResponse.stopReason  [description-changed, agent → client]" in (
        capsys.readouterr().out
    )


def test_folder_input_reads_its_schema_json(tmp_path: Path, capsys: Capture) -> None:
    old, new = pair(tmp_path, breaking)
    assert main(["diff", str(Path(old).parent), str(Path(new).parent)]) == 1
    assert capsys.readouterr().out.startswith(f"{old} → {new}\n")


def test_pinned_refs_with_a_lane(
    make_project: Callable[..., Path],
    mirror: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Capture,
) -> None:
    project = make_project(refs=["schema-v2.0.0-alpha.3", "schema-v2.0.0-alpha.1", "v0.12.2"])
    monkeypatch.chdir(project)
    monkeypatch.setenv("ACP_SCHEMA_MIRROR", str(mirror))
    old, new = "schema-v2.0.0-alpha.1:v2", "schema-v2.0.0-alpha.3:v2"
    assert main(["diff", old, new]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{old} → {new}\n")
    assert "  method:elicitation/create  [method-added-request, agent → client]\n" in out
    assert main(["diff", old, new, "--unstable"]) == 0
    assert capsys.readouterr().out.startswith(f"{old} (unstable) → {new} (unstable)\n")
    # a flat release before v2 is lane v1, which may be left out
    assert main(["diff", "v0.12.2", "schema-v2.0.0-alpha.3:v1", "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert (data["old"], data["new"]) == ("v0.12.2:v1", "schema-v2.0.0-alpha.3:v1")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.json", "x.json"], "schema not found: missing.json"),
        (
            ["no-such-ref:v2", "x.json"],
            "'no-such-ref:v2' is neither a schema file nor a pinned ref",
        ),
        (["schema-v2.0.0-alpha.3", "x.json"], "schema-v2.0.0-alpha.3 has lanes v1, v2"),
        (["schema-v2.0.0-alpha.3:v9", "x.json"], "schema-v2.0.0-alpha.3 has no lane 'v9'"),
        (["only-one.json"], "diff needs two inputs: OLD NEW"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str], message: str, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)  # refs resolve through this project's lock file
    assert main(["diff", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.splitlines()
    assert line.startswith(f"acp-codegen: error: {message}")


def test_invalid_json_is_one_line_without_traceback(
    tmp_path: Path, run_cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    broken = tmp_path / "schema.json"
    broken.write_text("{not json", encoding="utf-8")
    good = write_schema(tmp_path / "good", base(), META)
    result = run_cli("diff", broken, good)
    assert result.returncode == 2
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(f"acp-codegen: error: schema {broken} is not valid JSON:")


def test_rules_prints_the_severity_table(capsys: Capture) -> None:
    assert main(["diff", "--rules"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "| change | client → agent | agent → client | both | unreached | why | Python API |"
    )
    row = next(line for line in lines if line.startswith("| required field added |"))
    assert row.startswith(
        "| required field added | breaking (old clients) | breaking (old agents) "
        "| breaking (old clients and agents) | info |"
    )
