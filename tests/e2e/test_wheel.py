"""The wheel carries everything the CLI needs: installed into a fresh venv and run from a folder
outside the repository, `--help`, `generate --schema`, `diff`, `diff --rules` and `replay` work,
and `generate` refuses to overwrite what it did not make."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO, mirror_dir
from tests.e2e.conftest import user_env

ALPHA1 = "schema-v2.0.0-alpha.1/v2/schema.json"
ALPHA3 = "schema-v2.0.0-alpha.3/v2/schema.json"
NPM = "npm-sdk-2.4.0/v2/schema.json"  # the default release: its package has the toolkit
UPDATE = {
    "jsonrpc": "2.0",
    "method": "session/update",
    "params": {
        "sessionId": "s1",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m1",
            "content": {"type": "text", "text": "hello"},
        },
    },
}
REPLAYED = (
    "session s1: 1 update(s) applied\n\nagent (m1):\n  hello\n\nusage: none reported\nstate: idle\n"
)


def tool(
    bin_dir: Path, *args: str | Path, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bin_dir / "acp-codegen"), *map(str, args)],
        cwd=cwd,
        env=env or user_env(bin_dir),
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=lambda: os.umask(0o022),
    )


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """An empty working folder that is not in (or under) the repository."""
    folder = tmp_path / "work"
    folder.mkdir()
    assert REPO not in folder.parents
    return folder


@pytest.fixture
def schemas() -> Path:
    mirror = mirror_dir()
    if not (mirror / ALPHA3).is_file():
        pytest.skip(f"no schema mirror at {mirror}")
    return mirror


def test_the_installed_tool_is_the_wheel_not_this_checkout(installed: Path, outside: Path) -> None:
    where = subprocess.run(
        [
            str(installed / "python"),
            "-c",
            "import codegen.config as c; print(c.default_templates())",
        ],
        cwd=outside,
        env=user_env(installed),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where) == Path(where).parents[1] / "codegen" / "templates"
    assert REPO not in Path(where).parents and "site-packages" in where


def test_help(installed: Path, outside: Path) -> None:
    done = tool(installed, "--help", cwd=outside)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("usage: acp-codegen [-h] [--version] COMMAND ...\n")
    commands = [
        line.split()[0]
        for line in done.stdout.splitlines()
        if line[:4] == "    " and line[4:5].isalpha()
    ]
    assert commands == ["generate", "schema", "diff", "replay"]
    assert "3 a bug of acp-codegen's" in " ".join(done.stdout.split())


def test_generate_a_package_and_import_it(installed: Path, outside: Path, schemas: Path) -> None:
    done = tool(
        installed,
        "generate",
        "--schema",
        schemas / NPM,
        "--out",
        "src",
        "--package",
        "myacp",
        cwd=outside,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    package = outside / "src" / "myacp"
    paths = [package, *package.rglob("*")]
    assert {stat.S_IMODE(p.stat().st_mode) for p in paths if p.is_dir()} == {0o755}
    assert {stat.S_IMODE(p.stat().st_mode) for p in paths if p.is_file()} == {0o644}
    assert {p.name for p in package.iterdir() if p.is_dir()} == {"runtime", "toolkit", "v2"}
    script = (
        "import json, myacp\n"
        "note = myacp.decode(myacp.UpdateSessionNotification, json.loads(input())['params'])\n"
        "print(type(note.update).__name__, note.update.content.text, myacp.SCHEMA_REF)\n"
        "print(myacp.__file__, myacp.Agent.__module__)\n"
    )
    imported = subprocess.run(
        [str(installed / "python"), "-c", script],
        cwd=outside / "src",
        env=user_env(installed),
        input=json.dumps(UPDATE),
        capture_output=True,
        text=True,
        check=True,
    )
    assert (
        imported.stdout == f"SessionUpdateAgentMessageChunk hello local\n{package / '__init__.py'}"
        " myacp.toolkit.agent\n"
    )


def test_diff_as_json_and_the_rules(installed: Path, outside: Path, schemas: Path) -> None:
    done = tool(
        installed, "diff", schemas / ALPHA1, schemas / ALPHA3, "--format", "json", cwd=outside
    )
    assert (done.returncode, done.stderr) == (0, "")
    report = json.loads(done.stdout)
    assert report["summary"] == {"breaking": 0, "warning": 1, "info": 37, "python_breaking": 0}
    assert [f["path"] for f in report["findings"] if f["severity"] == "warning"] == [
        "method:elicitation/create"
    ]
    rules = tool(installed, "diff", "--rules", cwd=outside)
    assert rules.returncode == 0
    assert rules.stdout.startswith("| change | client → agent | agent → client | both |")


def test_replay_with_the_shipped_bindings_and_with_a_generated_package(
    installed: Path, outside: Path, schemas: Path
) -> None:
    transcript = outside / "session.jsonl"
    transcript.write_text(json.dumps(UPDATE) + "\n", encoding="utf-8")
    shipped = tool(installed, "replay", transcript, cwd=outside)
    assert (shipped.returncode, shipped.stdout, shipped.stderr) == (0, REPLAYED, "")
    assert (
        tool(
            installed,
            "generate",
            "--schema",
            schemas / NPM,
            "--out",
            "v",
            "--package",
            "acp",
            cwd=outside,
        ).returncode
        == 0
    )
    vendored = tool(
        installed, "replay", transcript, "--bindings", outside / "v" / "acp", cwd=outside
    )
    assert (vendored.returncode, vendored.stdout, vendored.stderr) == (0, REPLAYED, "")


def test_replay_refuses_what_is_not_a_transcript(installed: Path, outside: Path) -> None:
    (outside / "binary").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00")
    (outside / "empty").write_bytes(b"")
    (outside / "one.jsonl").write_text(json.dumps(UPDATE) + "\n", encoding="utf-8")
    for args, message in [
        (["binary"], "binary:1: a NUL byte: this is not a JSON-lines transcript"),
        (["empty"], "empty is empty: nothing to replay"),
        (
            ["one.jsonl", "--session", "nope"],
            "one.jsonl has no JSON-RPC session/update notification of session 'nope'"
            " (sessions in it: s1)",
        ),
    ]:
        done = tool(installed, "replay", *args, cwd=outside)
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        assert done.stderr.splitlines()[-1] == f"acp-codegen: error: {message}"


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_generate_refuses_what_it_did_not_make(
    installed: Path, outside: Path, schemas: Path
) -> None:
    src = outside / "src"
    (src / "mine").mkdir(parents=True)
    (src / "mine" / "__init__.py").write_text("ANSWER = 42\n", encoding="utf-8")
    (src / "notes").write_text("a plain file\n", encoding="utf-8")
    assert (
        tool(
            installed,
            "generate",
            "--schema",
            schemas / ALPHA3,
            "--out",
            src,
            "--package",
            "ours",
            cwd=outside,
        ).returncode
        == 0
    )
    (src / "ours" / "helpers.py").write_text("def mine() -> None: ...\n", encoding="utf-8")
    before = files(outside)
    for package, reason in [
        (
            "mine",
            "it has no .acp-codegen-manifest.json, so nothing shows acp-codegen made it"
            " (move it away to generate there)",
        ),
        ("notes", "it is a file, not a package acp-codegen generated"),
        ("ours", f"{src / 'ours' / 'helpers.py'} was not written by acp-codegen"),
    ]:
        done = tool(
            installed,
            "generate",
            "--schema",
            schemas / ALPHA1,
            "--out",
            src,
            "--package",
            package,
            cwd=outside,
        )
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == f"acp-codegen: error: refusing to replace {src / package}: {reason}\n"
    assert files(outside) == before
