"""`schema outdated`: each release line the lock pins against what the registry and upstream's
tags list; exit 1 when something is newer, 0 when current, 2 with one line when no source
answers. Both sources are local stand-ins (tests/support/standin.py); the last test also asks
the real registry, skipped when it cannot be reached."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codegen.diagnostics import InputError
from codegen.outdated import Line, Seen, Source, report
from codegen.upstream import tag_names
from tests.support.cli import Cli, Run, run_main
from tests.support.standin import (
    PACKAGE,
    Registry,
    advertisement,
    needs_registry,
    standin,
    tarball,
)

__all__ = ["standin"]  # the fixture

CLOSED = "http://127.0.0.1:1"  # nothing listens there: refused at once
TAGS = [
    "v0.12.2",
    "v0.13.0",
    "schema-v1.21.0",
    "schema-v1.30.0",
    "schema-v1.31.0-rc.1",
    "schema-v2.0.0-alpha.9",
    "schema-v2.0.0-alpha.10",
    "schema-v2.0.0-beta.1",
    "schema-v2.0.0-beta.2",
    "schema-v3.0.0-alpha.1",
    "typescript-v0.4.5",
]


def seen(name: str, refs: list[str] | None, problem: str | None = None) -> Seen:
    return Seen(Source(name, f"https://{name}", lambda _: []), tuple(refs or ()), problem)


def test_each_line_compares_its_newest_pin_by_version() -> None:
    found = report(
        [
            "schema-v2.0.0-alpha.9",
            "schema-v2.0.0-alpha.10",
            "npm-sdk-2.3.0",
            "v0.12.2",
            "main",
        ],
        seen("npm registry", ["npm-sdk-2.3.0", "npm-sdk-2.4.0", "npm-sdk-2.5.0-beta.1"]),
        seen("upstream tags", TAGS),
    )
    assert found.lines == [
        Line("npm-sdk", "npm registry", ("npm-sdk-2.3.0",), ("npm-sdk-2.4.0",)),
        Line(
            "v1",
            "upstream tags",
            ("v0.12.2",),
            ("v0.13.0", "schema-v1.21.0", "schema-v1.30.0"),  # a release pin: no rc
        ),
        Line(
            "v2",
            "upstream tags",
            ("schema-v2.0.0-alpha.9", "schema-v2.0.0-alpha.10"),
            ("schema-v2.0.0-beta.1", "schema-v2.0.0-beta.2"),  # alpha.10 is newer than alpha.9
        ),
        Line("v3", "upstream tags", (), None, "schema-v3.0.0-alpha.1"),
    ]
    assert found.others == ["main"]
    assert found.outdated and not found.checked_nothing


def test_an_unreachable_source_leaves_its_lines_unknown() -> None:
    found = report(
        ["npm-sdk-2.4.0", "schema-v2.0.0-beta.2"],
        seen("npm registry", ["npm-sdk-2.4.0"]),
        seen("upstream tags", None, "cannot download x: refused"),
    )
    assert [(line.name, line.newer) for line in found.lines] == [
        ("npm-sdk", ()),
        ("v2", None),
    ]
    assert not found.outdated and not found.checked_nothing
    offline = report(
        ["npm-sdk-2.4.0"],
        seen("npm registry", None, "no network"),
        seen("upstream tags", None, "no network"),
    )
    assert offline.checked_nothing


def test_tags_are_read_from_a_ref_advertisement() -> None:
    assert tag_names(advertisement(["v0.2.0", "schema-v2.0.0-beta.1"]), "x") == [
        "v0.2.0",
        "schema-v2.0.0-beta.1",
    ]
    for body in (b"", b"<html>rate limited</html>", b"0010# not git\n0000"):
        with pytest.raises(InputError) as info:
            tag_names(body, "https://git.example/info/refs")
        assert str(info.value) == (
            "error: https://git.example/info/refs did not answer with a git ref advertisement"
        )


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    def run(*args: str, cwd: Path) -> Run:
        return run_main(capsys, monkeypatch, ["schema", "outdated", *args], cwd)

    return run


def project(tmp_path: Path, default: str | None, refs: list[str]) -> Path:
    """A project whose lock pins `refs` (one file each: `outdated` reads no file)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text("[tool.acp-codegen]\n", encoding="utf-8")
    pins = [
        {"ref": ref, "path": "v2/schema.json", "sha256": "ab" * 32, "url": f"https://x.org/{ref}"}
        for ref in refs
    ]
    (tmp_path / "schema").mkdir()
    lock = {"default": default, "pins": pins}
    (tmp_path / "schema" / "pins.lock.json").write_text(json.dumps(lock), encoding="utf-8")
    return tmp_path


def serve(standin: Registry, versions: list[str], tags: list[str]) -> None:
    for version in versions:
        standin.publish(version, tarball({"package/schema/v2/schema.json": b"{}"}))
    standin.server.add("/git/upstream/info/refs?service=git-upload-pack", advertisement(tags))


def test_newer_releases_are_listed_with_the_commands_to_move(
    standin: Registry, cli: Cli, tmp_path: Path
) -> None:
    serve(standin, ["2.3.0", "2.4.0", "2.5.0-beta.1"], TAGS)
    root = project(
        tmp_path,
        "npm-sdk-2.3.0",
        ["npm-sdk-2.3.0", "schema-v2.0.0-alpha.9", "schema-v2.0.0-alpha.10", "v0.12.2", "main"],
    )
    run = cli(cwd=root)
    assert run.code == 1, run.err
    assert run.out.splitlines() == [
        "npm-sdk  npm-sdk-2.3.0 (default)  1 newer (npm registry): npm-sdk-2.4.0",
        "v1       v0.12.2                  3 newer (upstream tags): v0.13.0, schema-v1.21.0,"
        " schema-v1.30.0",
        "v2       schema-v2.0.0-alpha.10   2 newer (upstream tags): schema-v2.0.0-beta.1,"
        " schema-v2.0.0-beta.2",
        "v3       (none pinned)            newest: schema-v3.0.0-alpha.1 (upstream tags)",
        "-        main                     not a release name: not checked",
    ]
    assert run.err == (
        "acp-codegen: newer releases exist; to move the default: `acp-codegen schema pin"
        " npm-sdk-2.4.0`, then `acp-codegen diff npm-sdk-2.3.0:v2 npm-sdk-2.4.0:v2`, then"
        " `acp-codegen generate`\n"
    )
    assert sorted(standin.server.hits) == [  # one request to each source
        "/git/upstream/info/refs?service=git-upload-pack",
        f"/npm/{PACKAGE}",
    ]

    as_json = cli("--json", cwd=root)
    assert as_json.code == 1
    assert json.loads(as_json.out) == {
        "default": "npm-sdk-2.3.0",
        "outdated": True,
        "lines": [
            {
                "line": "npm-sdk",
                "source": "npm registry",
                "pinned": ["npm-sdk-2.3.0"],
                "newer": ["npm-sdk-2.4.0"],
            },
            {
                "line": "v1",
                "source": "upstream tags",
                "pinned": ["v0.12.2"],
                "newer": ["v0.13.0", "schema-v1.21.0", "schema-v1.30.0"],
            },
            {
                "line": "v2",
                "source": "upstream tags",
                "pinned": ["schema-v2.0.0-alpha.9", "schema-v2.0.0-alpha.10"],
                "newer": ["schema-v2.0.0-beta.1", "schema-v2.0.0-beta.2"],
            },
            {
                "line": "v3",
                "source": "upstream tags",
                "pinned": [],
                "newer": None,
                "newest": "schema-v3.0.0-alpha.1",
            },
        ],
        "not_releases": ["main"],
        "unreachable": {},
    }


def test_current_pins_exit_0(standin: Registry, cli: Cli, tmp_path: Path) -> None:
    serve(standin, ["2.3.0", "2.4.0"], ["schema-v2.0.0-beta.1", "schema-v2.0.0-beta.2"])
    pins = ["npm-sdk-2.4.0", "schema-v2.0.0-beta.2", "schema-v2.0.0-beta.1"]
    root = project(tmp_path, "schema-v2.0.0-beta.2", pins)
    run = cli(cwd=root)
    assert (run.code, run.err) == (0, "")
    assert run.out.splitlines() == [
        "npm-sdk  npm-sdk-2.4.0                   current (npm registry)",
        "v2       schema-v2.0.0-beta.2 (default)  current (upstream tags)",
    ]
    # a default older than its line's newest pin is named beside it
    root = project(tmp_path / "older", "schema-v2.0.0-beta.1", pins)
    assert cli(cwd=root).out.splitlines()[1] == (
        "v2       schema-v2.0.0-beta.2 (default schema-v2.0.0-beta.1)  current (upstream tags)"
    )


def test_one_source_unreachable_is_one_note(
    standin: Registry, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve(standin, ["2.4.0"], [])
    monkeypatch.setenv("ACP_CODEGEN_UPSTREAM_GIT", f"{CLOSED}/upstream.git")
    root = project(tmp_path, "npm-sdk-2.4.0", ["npm-sdk-2.4.0", "schema-v2.0.0-alpha.8"])
    run = cli(cwd=root)
    assert run.code == 0
    assert run.out.splitlines() == [
        "npm-sdk  npm-sdk-2.4.0 (default)  current (npm registry)",
        "v2       schema-v2.0.0-alpha.8    not checked (upstream tags unreachable)",
    ]
    note = (
        "acp-codegen: note: upstream tags not checked: cannot download"
        f" {CLOSED}/upstream.git/info/refs?service=git-upload-pack: "
    )
    assert run.err.startswith(note) and run.err.count("\n") == 1, run.err


def test_fully_offline_is_one_line_and_exit_2(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACP_CODEGEN_NPM_REGISTRY", CLOSED)
    monkeypatch.setenv("ACP_CODEGEN_UPSTREAM_GIT", f"{CLOSED}/upstream.git")
    root = project(tmp_path, "npm-sdk-2.4.0", ["npm-sdk-2.4.0"])
    run = cli(cwd=root)
    assert (run.code, run.out, run.err.count("\n")) == (2, "", 1), run
    assert run.err.startswith(
        "acp-codegen: error: cannot check for newer releases, no source reachable (npm registry:"
        f" cannot download {CLOSED}/{PACKAGE}: "
    ), run.err
    assert f"; upstream tags: cannot download {CLOSED}/upstream.git/info/refs" in run.err


def test_a_lock_with_only_the_other_source_unreachable_still_exit_2(
    standin: Registry, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing the lock pins could be checked: not "current"."""
    serve(standin, [], ["schema-v2.0.0-beta.1"])
    monkeypatch.setenv("ACP_CODEGEN_NPM_REGISTRY", CLOSED)
    root = project(tmp_path, "npm-sdk-2.4.0", ["npm-sdk-2.4.0"])
    run = cli(cwd=root)
    assert run.code == 2
    assert run.err.startswith(
        "acp-codegen: error: cannot check for newer releases, no source reachable (npm registry:"
    )


def test_bad_settings(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path, None, [])
    monkeypatch.setenv("ACP_CODEGEN_NPM_REGISTRY", "file:///srv/npm")
    run = cli(cwd=root)
    assert (run.code, run.err) == (
        2,
        "acp-codegen: error: $ACP_CODEGEN_NPM_REGISTRY 'file:///srv/npm' is not an http(s) URL\n",
    )
    monkeypatch.delenv("ACP_CODEGEN_NPM_REGISTRY")
    run = cli("--timeout", "0", cwd=root)
    assert (run.code, run.err) == (
        2,
        "acp-codegen: error: --timeout must be a positive number of seconds, not 0.0\n",
    )


def test_with_no_lock_it_shows_what_there_is_to_pin(
    standin: Registry, cli: Cli, tmp_path: Path
) -> None:
    serve(standin, ["2.4.0"], ["schema-v1.30.0", "schema-v2.0.0-beta.2"])
    (tmp_path / "pyproject.toml").write_text("[tool.acp-codegen]\n", encoding="utf-8")
    run = cli(cwd=tmp_path)
    assert (run.code, run.err) == (0, "")
    assert run.out.splitlines() == [
        "npm-sdk  (none pinned)  newest: npm-sdk-2.4.0 (npm registry)",
        "v1       (none pinned)  newest: schema-v1.30.0 (upstream tags)",
        "v2       (none pinned)  newest: schema-v2.0.0-beta.2 (upstream tags)",
    ]
    assert not (tmp_path / "schema").exists()


def test_against_the_real_registry(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    needs_registry()
    monkeypatch.delenv("ACP_CODEGEN_NPM_REGISTRY", raising=False)
    monkeypatch.setenv("ACP_CODEGEN_UPSTREAM_GIT", f"{CLOSED}/upstream.git")  # registry only
    root = project(tmp_path, "npm-sdk-2.3.0", ["npm-sdk-2.3.0"])
    run = cli("--json", cwd=root)
    assert run.code == 1, run.err
    (line,) = json.loads(run.out)["lines"][:1]
    assert line["line"] == "npm-sdk" and line["pinned"] == ["npm-sdk-2.3.0"]
    assert "npm-sdk-2.4.0" in line["newer"]  # published 2026-11-02, after 2.3.0
