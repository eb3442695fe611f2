"""The README's "Use it in your project" block (`<!-- run: project -->`), run exactly as written in
an empty folder with the installed wheel, printing what the README shows; then what follows from
it: `--check` after a change, the banner of a `--schema` cache entry, `replay` with the
project's package, and refused pins."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e.conftest import user_env

MARKER = "<!-- run: project -->\n```sh\n"


def readme_block() -> tuple[str, str]:
    """The README's project block, and the output block after it."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index(MARKER) + len(MARKER)
    block = text[start : text.index("\n```\n", start) + 1]
    fence = "<!-- run: output -->\n```text\n"
    out = text.index(fence, start) + len(fence)
    return block, text[out : text.index("```\n", out)]


def test_the_block_is_the_documented_flow() -> None:
    commands = [line.split("  #")[0].strip() for line in readme_block()[0].splitlines()]
    assert [c for c in commands if c.startswith("acp-codegen")] == [
        "acp-codegen schema pin npm-sdk-2.4.0",
        "acp-codegen generate",
        "acp-codegen generate --check",
    ]


def shell(
    bin_dir: Path, script: str, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=user_env(bin_dir, **env),
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture
def project(
    installed: Path, mirror_env: dict[str, str], tmp_path: Path
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    root = tmp_path / "myagent"
    root.mkdir()
    return root, shell(installed, readme_block()[0], root, mirror_env)


def test_the_readme_block_runs_in_an_empty_project(
    project: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    root, done = project
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1:] == readme_block()[1].splitlines()
    lock = json.loads((root / "schema" / "pins.lock.json").read_text(encoding="utf-8"))
    assert lock["default"] == "npm-sdk-2.4.0"
    assert sorted({p["ref"] for p in lock["pins"]}) == ["npm-sdk-2.4.0"]
    assert all(p["url"].startswith("https://registry.npmjs.org/") for p in lock["pins"])
    package = root / "src" / "myagent" / "acp"
    # the block imports the package, so Python may have left its bytecode cache beside it
    listed = sorted(p.name for p in package.iterdir() if p.name != "__pycache__")
    assert listed == [
        ".acp-codegen-manifest.json",
        "REFERENCE.md",
        "__init__.py",
        "_lanes.py",
        "py.typed",
        "runtime",
        "toolkit",
        "transports",
        "v1",
        "v2",
        "vocab.py",
    ]
    # The templates shipped with the tool make what this repository's templates make from the
    # same pin: the committed package (whose shared files' banner also names its unstable lane).
    ours = REPO / "generated" / "acp_kit"
    for name in ("v2/models.py", "v1/session_state.py"):
        assert (package / name).read_bytes() == (ours / name).read_bytes(), name
    for name in ("runtime/_runtime.py", "toolkit/agent.py", "transports/server.py"):
        assert _body(package / name) == _body(ours / name), name
    assert (root / ".gitignore").read_text(encoding="utf-8") == "schema/cache/\n"


def _body(path: Path) -> bytes:
    """A shared file after its banner (which lists the package's lanes)."""
    end = b"# Do not edit: regenerate instead.\n"
    text = path.read_bytes()
    return text[text.index(end) + len(end) :]


def test_check_exits_1_after_a_change_and_generate_catches_up(
    installed: Path,
    mirror_env: dict[str, str],
    project: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    root, done = project
    assert done.returncode == 0, done.stderr
    steps = [
        ("acp-codegen schema pin schema-v2.0.0-alpha.8 >/dev/null", 0),
        ("acp-codegen generate --check >/dev/null", 1),
        ("acp-codegen generate", 0),
        ("acp-codegen generate --check", 0),
    ]
    for command, code in steps:
        result = shell(installed, command, root, mirror_env)
        assert result.returncode == code, (command, result.stderr)
    init = (root / "src" / "myagent" / "acp" / "v2" / "__init__.py").read_text(encoding="utf-8")
    assert 'SCHEMA_REF = "schema-v2.0.0-alpha.8"' in init


def test_a_cache_entry_as_schema_records_its_ref_and_replay_uses_the_project_package(
    installed: Path,
    mirror_env: dict[str, str],
    project: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    root, done = project
    assert done.returncode == 0, done.stderr
    script = (
        "acp-codegen schema pin schema-v2.0.0-alpha.1 --no-default >/dev/null 2>&1\n"
        "acp-codegen generate --schema schema/cache/schema-v2.0.0-alpha.1/v2/schema.json"
        " --out other --package acp1 2>/dev/null\n"
        "head -2 other/acp1/v2/models.py\n"
    )
    result = shell(installed, script, root, mirror_env)
    lock = json.loads((root / "schema" / "pins.lock.json").read_text(encoding="utf-8"))
    sha = next(
        p["sha256"]
        for p in lock["pins"]
        if (p["ref"], p["path"]) == ("schema-v2.0.0-alpha.1", "v2/schema.json")
    )
    assert (result.returncode, result.stdout) == (
        0,
        "# Generated by acp-codegen 0.1.0 from the ACP schema schema-v2.0.0-alpha.1"
        f" (v2/schema.json),\n# sha256 {sha}. Do not edit: regenerate instead.\n",
    ), result.stderr
    running = {"sessionUpdate": "state_update", "state": "running"}
    idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    lines = [
        json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params})
        for params in ({"sessionId": "s", "update": running}, {"sessionId": "s", "update": idle})
    ]
    (root / "t.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    replayed = shell(installed, "acp-codegen replay t.jsonl --json", root, mirror_env)
    assert (replayed.returncode, json.loads(replayed.stdout)["state"]) == (0, "idle")
    (root / "cut.jsonl").write_text(lines[0] + "\n", encoding="utf-8")  # a crash mid-turn
    cut = shell(installed, "acp-codegen replay cut.jsonl --json", root, mirror_env)
    assert (cut.returncode, json.loads(cut.stdout)["state"]) == (1, "running")
    assert cut.stderr == (
        "acp-codegen: cut.jsonl: warning: the transcript ends mid-turn (state: running):"
        " the turn's last updates are missing\n"
    )


def test_refs_that_leave_the_cache_are_refused(
    installed: Path,
    mirror_env: dict[str, str],
    project: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    root, done = project
    assert done.returncode == 0, done.stderr
    lock = (root / "schema" / "pins.lock.json").read_bytes()
    result = shell(installed, "acp-codegen schema pin ../../evil", root, mirror_env)
    assert (result.returncode, result.stderr) == (
        2,
        "acp-codegen: error: invalid ref '../../evil': a ref cannot contain a path separator\n",
    )
    assert (root / "schema" / "pins.lock.json").read_bytes() == lock
    assert not (root.parent / "evil").exists()
