"""The `acp-codegen` CLI: exit codes (0 ok, 1 `--check` difference, 2 bad input), one-line errors
without a traceback, names overrides, `--unstable`, and `schema sync|pin|list` on tmp projects.

Most cases call `codegen.cli.main` in this process (fast); a few run the real command.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, mirror_dir, write_schema
from tests.support.cli import Cli, Run, one_error, run_main


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    def run(*args: str | Path, cwd: Path = REPO, mirror: Path | None = None) -> Run:
        env = {"ACP_SCHEMA_MIRROR": str(mirror or mirror_dir())}
        return run_main(capsys, monkeypatch, args, cwd, env)

    return run


SMALL = {
    "$defs": {
        "Kind": {"type": "string", "enum": ["a", "b"]},
        "Part": {
            "anyOf": [
                {"type": "object", "properties": {"t": {"const": "x"}}, "required": ["t"]},
                {"type": "object", "properties": {"t": {"const": "y"}}, "required": ["t"]},
            ]
        },
    }
}


# -- generate --schema: exit codes and errors ------------------------------------------------------
def test_generate_exits_0_and_check_exits_1_on_a_difference(cli: Cli, tmp_path: Path) -> None:
    schema = write_schema(tmp_path / "src", SMALL)
    run = cli("generate", "--schema", schema, "--out", tmp_path / "out", "--package", "small")
    assert (run.code, run.out, run.err) == (0, "", "")
    written = {p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*")}
    lane = {"small/v1/__init__.py", "small/v1/methods.py", "small/v1/models.py", "small/py.typed"}
    assert lane | {"small/__init__.py", "small/runtime/_runtime.py"} <= written
    check = (
        "generate",
        "--check",
        "--schema",
        schema,
        "--out",
        tmp_path / "out",
        "--package",
        "small",
    )
    clean = cli(*check)
    assert (clean.code, clean.out) == (0, "")
    models = tmp_path / "out" / "small" / "v1" / "models.py"
    models.write_text(models.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    changed = cli(*check)
    assert changed.code == 1
    assert changed.out.startswith("--- a/small/v1/models.py\n+++ b/small/v1/models.py\n")
    assert changed.out.endswith("\n-# edited\n")


def test_unstable_lane_beside_the_schema(cli: Cli, tmp_path: Path) -> None:
    schema = write_schema(tmp_path / "src", SMALL)
    shutil.copy(schema, schema.with_name("schema.unstable.json"))
    run = cli(
        "generate",
        "--schema",
        schema,
        "--out",
        tmp_path / "out",
        "--package",
        "small",
        "--unstable",
    )
    assert run.code == 0, run.err
    assert (tmp_path / "out" / "small" / "v1" / "models.py").is_file()
    assert (tmp_path / "out" / "small_unstable" / "v1_unstable" / "models.py").is_file()


def test_missing_schema_file(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    run = cli("generate", "--schema", path, "--out", tmp_path / "out", "--package", "p")
    assert one_error(run) == f"schema not found: {path}"
    assert not (tmp_path / "out").exists()


def test_invalid_json(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "schema.json"
    path.write_text('{"$defs": {', encoding="utf-8")
    run = cli("generate", "--schema", path, "--out", tmp_path / "out", "--package", "p")
    assert one_error(run).startswith(f"schema {path} is not valid JSON: Expecting property name")


@pytest.mark.parametrize(
    ("content", "message"),
    [({"title": "no defs"}, "has no `$defs` object"), ([1, 2], "must be a JSON object")],
)
def test_schema_without_defs(cli: Cli, tmp_path: Path, content: Any, message: str) -> None:
    path = write_schema(tmp_path, content)
    run = cli("generate", "--schema", path, "--out", tmp_path / "out", "--package", "p")
    assert one_error(run) == f"schema {path} {message}"


def test_invalid_meta_json(cli: Cli, tmp_path: Path) -> None:
    path = write_schema(tmp_path, SMALL)
    (tmp_path / "meta.json").write_text("{oops", encoding="utf-8")
    run = cli("generate", "--schema", path, "--out", tmp_path / "out", "--package", "p")
    assert one_error(run).startswith(f"meta file {tmp_path / 'meta.json'} is not valid JSON: ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--schema", "s.json"], "--schema needs --out and --package"),
        (["--schema", "s.json", "--out", "o"], "--schema needs --out and --package"),
        (["--out", "o"], "--out and --package go with --schema"),
    ],
)
def test_flags_that_go_together(cli: Cli, args: list[str], message: str) -> None:
    assert one_error(cli("generate", *args)) == message


def test_output_folder_that_cannot_be_written(cli: Cli, tmp_path: Path) -> None:
    schema = write_schema(tmp_path / "src", SMALL)
    afile = tmp_path / "afile"
    afile.write_text("", encoding="utf-8")
    run = cli("generate", "--schema", schema, "--out", afile, "--package", "p")
    assert one_error(run) == f"output folder {afile} is a file"
    run = cli("generate", "--schema", schema, "--out", afile / "sub", "--package", "p")
    assert one_error(run) == f"cannot write {afile / 'sub'}: Not a directory"


def test_package_name_must_be_an_identifier(cli: Cli, tmp_path: Path) -> None:
    path = write_schema(tmp_path, SMALL)
    run = cli("generate", "--schema", path, "--out", tmp_path / "out", "--package", "1-bad")
    assert one_error(run) == "package name '1-bad' is not a Python identifier"


def test_unknown_subcommand_and_flag(cli: Cli) -> None:
    assert one_error(cli("frobnicate")) == (
        "argument COMMAND: invalid choice: 'frobnicate' (choose from 'generate', 'schema',"
        " 'diff', 'replay') (see acp-codegen --help)"
    )
    assert one_error(cli("generate", "--frob")) == (
        "unrecognized arguments: --frob (see acp-codegen generate --help)"
    )
    assert one_error(cli("schema", "pin")) == (
        "the following arguments are required: ref (see acp-codegen schema pin --help)"
    )


def test_an_unknown_flag_is_named_wherever_it_stands(cli: Cli) -> None:
    """Before the command, after it, or with none: the flag itself, and the help to read."""
    for args, where in [
        (("--bogus",), "acp-codegen"),
        (("--bogus", "generate"), "acp-codegen"),
        (("schema", "--bogus"), "acp-codegen schema"),
        (("schema", "list", "--bogus"), "acp-codegen schema list"),
        (("diff", "a", "b", "--bogus"), "acp-codegen diff"),
        (("replay", "t.jsonl", "--bogus"), "acp-codegen replay"),
    ]:
        assert one_error(cli(*args)) == f"unrecognized arguments: --bogus (see {where} --help)"
    assert one_error(cli()) == (
        "a command is required: generate, schema, diff, replay (see acp-codegen --help)"
    )
    assert one_error(cli("schema")) == (
        "schema needs a command: sync, pin or list (see acp-codegen schema --help)"
    )


def test_every_help_ends_with_its_exit_status(cli: Cli) -> None:
    helps = [(), ("generate",), ("schema",), ("schema", "sync"), ("schema", "pin")]
    helps += [("schema", "list"), ("schema", "outdated"), ("diff",), ("replay",)]
    for args in helps:
        run = cli(*args, "--help")
        assert (run.code, run.err) == (0, ""), args
        last = run.out.rstrip("\n").split("\n\n")[-1]
        assert last.startswith("exit status: 0 "), (args, last)
        assert "3 a bug of acp-codegen's (please report it)" in " ".join(last.split()), args
        assert all(len(line) <= 80 for line in run.out.splitlines()), args


def test_json_output_is_spelled_the_same_by_every_command(cli: Cli, tmp_path: Path) -> None:
    """`--format json` and its short `--json`, which `diff` and `replay` both take; the two
    together are refused."""
    schema = write_schema(tmp_path, SMALL)
    long, short = (
        cli("diff", schema, schema, "--format", "json"),
        cli("diff", schema, schema, "--json"),
    )
    assert (long.code, short.code) == (0, 0)
    assert json.loads(long.out) == json.loads(short.out)
    assert one_error(cli("diff", schema, schema, "--json", "--format", "text")) == (
        "argument --format: not allowed with argument --json (see acp-codegen diff --help)"
    )
    assert one_error(cli("replay", "t.jsonl", "--json", "--format", "text")) == (
        "argument --format: not allowed with argument --json (see acp-codegen replay --help)"
    )


def test_unknown_ref(cli: Cli, tmp_path: Path, mirror: Path) -> None:
    lock = REPO / "schema" / "pins.lock.json"
    empty = tmp_path / "mirror"
    empty.mkdir()
    assert one_error(cli("generate", "--check", "--ref", "nope", mirror=empty)) == (
        f"nope is not pinned, and the mirror {empty} has no release nope"
    )
    # A release the mirror has and the lock does not (every real one is pinned).
    local = tmp_path / "full"
    shutil.copytree(mirror / "schema-v2.0.0-alpha.8", local / "schema-v2.0.0-alpha.99")
    assert one_error(
        cli("generate", "--check", "--ref", "schema-v2.0.0-alpha.99", mirror=local)
    ) == (
        f"schema-v2.0.0-alpha.99 is not pinned in {lock}:"
        " run `acp-codegen schema pin schema-v2.0.0-alpha.99 --no-default` first"
    )
    assert one_error(cli("generate", "--check", "--ref", "v0.12.2", mirror=mirror)) == (
        "v0.12.2 has no v2/schema.json (a flat release before v2: protocol v1 only);"
        " its pinned files: meta.json, meta.unstable.json, schema.json, schema.unstable.json"
    )
    assert one_error(cli("generate", "--check", "--ref", "../x")) == (
        "invalid ref '../x': a ref cannot contain a path separator"
    )


def test_a_relative_schema_path_is_read_from_where_the_command_runs(
    cli: Cli, tmp_path: Path, mirror: Path
) -> None:
    """Outside any checkout: a relative `--schema` resolves against the working folder, and
    one that is not there says which folder it was looked for in."""
    (tmp_path / "specs").mkdir()
    shutil.copy(mirror / "npm-sdk-2.4.0" / "v2" / "schema.json", tmp_path / "specs" / "schema.json")
    run = cli(
        "generate", "--schema", "specs/schema.json", "--out", "out", "--package", "p", cwd=tmp_path
    )
    assert (run.code, run.err) == (0, "")
    assert (tmp_path / "out" / "p" / "v1" / "models.py").is_file()
    run = cli("diff", "specs/schema.json", "specs", cwd=tmp_path)
    assert (run.code, run.err) == (0, "")


def test_a_relative_path_not_in_the_working_folder_is_not_looked_for_elsewhere(
    cli: Cli, tmp_path: Path, mirror: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file exists relative to `$PWD`, to `$OLDPWD` and in `$ACP_SCHEMA_MIRROR`, but not
    relative to the working folder: `generate --schema` and `diff` refuse it with the folder
    they looked in, and write nothing (a typo never reads another schema)."""
    home, work = tmp_path / "a" / "home", tmp_path / "b" / "work"
    (home / "specs").mkdir(parents=True)
    work.mkdir(parents=True)
    shutil.copy(mirror / "npm-sdk-2.4.0" / "v2" / "schema.json", home / "specs" / "schema.json")
    (tmp_path / "a" / "shared").symlink_to(mirror)  # beside home, not beside work
    monkeypatch.setenv("PWD", str(home))
    monkeypatch.setenv("OLDPWD", str(home))
    for given in ("specs/schema.json", "../shared/schema-v2.0.0-alpha.3/v2/schema.json"):
        assert (home / given).is_file()
        run = cli("generate", "--schema", given, "--out", "out", "--package", "p", cwd=work)
        assert one_error(run) == f"schema not found: {given} (relative to {work})"
        assert one_error(cli("diff", given, given, cwd=work)) == (
            f"schema not found: {given} (relative to {work})"
        )
    assert list(work.iterdir()) == []


def test_no_project_here_or_above(cli: Cli, tmp_path: Path) -> None:
    assert one_error(cli("generate", cwd=tmp_path)) == (
        "no pyproject.toml with [tool.acp-codegen] here or above; pass --schema and --out"
    )


def test_each_diagnostic_is_printed_once_warnings_first(cli: Cli, tmp_path: Path) -> None:
    """One unknown leniency keyword is one error line, and the warning precedes the failure."""
    schema = {
        "$defs": {
            "A": {"type": "object", "properties": {"v": {"x-deserialize-foo": True}}},
            "Broken": 42,
        }
    }
    path = write_schema(tmp_path, schema)
    run = cli("generate", "--schema", path, "--out", tmp_path / "out", "--package", "p")
    assert (run.code, run.err) == (
        2,
        "acp-codegen: warning at #/$defs/Broken: definition is not an object schema; "
        "kept as raw JSON\n"
        "acp-codegen: error at #/$defs/A/properties/v: unknown leniency rule 'x-deserialize-foo': "
        "the generator cannot honour it\n",
    )


def test_warnings_are_printed_and_do_not_fail(cli: Cli, tmp_path: Path) -> None:
    schema = {
        "$defs": {
            "Broken": 42,
            "U": {
                "type": "object",
                "properties": {"v": {"anyOf": [{"type": "string"}, {"type": "array"}]}},
            },
        }
    }
    path = write_schema(tmp_path, schema)
    args = ("generate", "--schema", path, "--out", tmp_path / "out", "--package", "p")
    run = cli(*args)
    assert (run.code, run.err) == (
        0,
        "acp-codegen: warning at #/$defs/Broken: definition is not an object schema; "
        "kept as raw JSON\n",
    )
    verbose = cli(*args, "-v")
    assert (
        "acp-codegen: info at #/$defs/U/properties/v: inline union without a tag is kept as "
        "raw JSON\n" in verbose.err
    )


def test_real_process_refuses_in_one_line(run_cli: Any, tmp_path: Path) -> None:
    for args in (
        ["generate", "--schema", tmp_path / "nope.json", "--out", tmp_path, "--package", "p"],
        ["generate", "--frob"],
    ):
        result = run_cli(*args, cwd=tmp_path)
        assert result.returncode == 2
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
        assert result.stderr.startswith("acp-codegen: error: ")


# -- names overrides -------------------------------------------------------------------------------
def overrides_file(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "names.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_names_overrides_pin_variant_names(cli: Cli, tmp_path: Path) -> None:
    schema = write_schema(tmp_path / "src", SMALL)
    names = overrides_file(tmp_path, {"Part": {"x": "PartX", "y": "Why"}})
    out = tmp_path / "out"
    run = cli("generate", "--schema", schema, "--out", out, "--package", "p", "--names", names)
    assert run.code == 0, run.err
    models = (out / "p" / "v1" / "models.py").read_text(encoding="utf-8")
    assert "class PartX(_PartBase):" in models and "class Why(_PartBase):" in models


def test_names_overrides_with_unknown_union_or_tag(cli: Cli, tmp_path: Path) -> None:
    schema = write_schema(tmp_path / "src", SMALL)
    names = overrides_file(tmp_path, {"Nope": {"x": "A"}, "Part": {"z": "B"}})
    run = cli(
        "generate",
        "--schema",
        schema,
        "--out",
        tmp_path / "out",
        "--package",
        "p",
        "--names",
        names,
    )
    assert (run.code, run.err) == (
        2,
        "acp-codegen: error at overrides/Nope: override names 'Nope', which is not a tagged union\n"
        "acp-codegen: error at overrides/Part/z: override names tag 'z', "
        "which Part does not have\n",
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("text", "message"), [("{", "cannot read names overrides"), ("[]", "names overrides")]
)
def test_names_overrides_file_must_be_a_json_object(
    cli: Cli, tmp_path: Path, text: str, message: str
) -> None:
    schema = write_schema(tmp_path / "src", SMALL)
    names = tmp_path / "names.json"
    names.write_text(text, encoding="utf-8")
    run = cli(
        "generate",
        "--schema",
        schema,
        "--out",
        tmp_path / "out",
        "--package",
        "p",
        "--names",
        names,
    )
    assert one_error(run).startswith(f"{message} {names}")


# -- schema sync / pin / list ----------------------------------------------------------------------
def copy_ref(mirror: Path, ref: str, dest: Path) -> Path:
    shutil.copytree(mirror / ref, dest / ref)
    return dest


def cached_files(root: Path) -> list[str]:
    cache = root / "schema" / "cache"
    return (
        sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*") if p.is_file())
        if cache.exists()
        else []
    )


def test_sync_fills_the_cache_and_verifies_it(cli: Cli, make_project: Any, mirror: Path) -> None:
    root = make_project(refs=["v0.2.0"])
    first = cli("schema", "sync", cwd=root, mirror=mirror)
    assert (first.code, first.err) == (0, "acp-codegen: 2 pinned file(s) verified, 2 fetched\n")
    assert cached_files(root) == ["v0.2.0/meta.json", "v0.2.0/schema.json"]
    again = cli("schema", "sync", "v0.2.0", cwd=root, mirror=mirror)
    assert (again.code, again.err) == (0, "acp-codegen: 2 pinned file(s) verified, 0 fetched\n")
    lock = root / "schema" / "pins.lock.json"
    assert one_error(cli("schema", "sync", "v9", cwd=root, mirror=mirror)) == (
        f"not pinned in {lock}: v9"
    )


def test_sync_into_an_unwritable_cache(cli: Cli, make_project: Any, mirror: Path) -> None:
    root = make_project(refs=["v0.2.0"])
    (root / "schema" / "cache").write_text("a file where the cache folder goes", encoding="utf-8")
    message = one_error(cli("schema", "sync", cwd=root, mirror=mirror))
    assert message.startswith(f"cannot write {root / 'schema' / 'cache' / 'v0.2.0'}/")


def test_sync_with_a_corrupted_mirror_writes_nothing(
    cli: Cli, make_project: Any, mirror: Path, tmp_path: Path
) -> None:
    root = make_project(refs=["v0.2.0"])
    bad = copy_ref(mirror, "v0.2.0", tmp_path / "mirror")
    schema = bad / "v0.2.0" / "schema.json"
    data = bytearray(schema.read_bytes())
    data[100] ^= 0x01  # one byte changed
    schema.write_bytes(bytes(data))
    pinned = next(
        p["sha256"]
        for p in json.loads((root / "schema" / "pins.lock.json").read_text())["pins"]
        if p["path"] == "schema.json"
    )

    message = one_error(cli("schema", "sync", cwd=root, mirror=bad))

    got = hashlib.sha256(data).hexdigest()
    assert (
        message == f"sha256 mismatch for {bad}/v0.2.0/schema.json: got {got}, pinned {pinned}; "
        "nothing written"
    )
    assert cached_files(root) == []  # not even the intact meta.json


def test_pin_adds_a_release_and_makes_it_the_default_then_generate_bumps(
    cli: Cli, make_project: Any, mirror: Path, tmp_path: Path
) -> None:
    root = make_project(refs=["schema-v2.0.0-alpha.3"])
    local = copy_ref(mirror, "schema-v2.0.0-alpha.1", tmp_path / "mirror")

    run = cli("schema", "pin", "schema-v2.0.0-alpha.1", cwd=root, mirror=local)

    assert run.code == 0, run.err
    files = sorted((local / "schema-v2.0.0-alpha.1").rglob("*.json"))
    expected = {
        f"schema-v2.0.0-alpha.1/{p.relative_to(local / 'schema-v2.0.0-alpha.1').as_posix()} "
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}"
        for p in files
    }
    assert set(run.out.splitlines()) == expected and len(expected) == 8
    lock = json.loads((root / "schema" / "pins.lock.json").read_text(encoding="utf-8"))
    assert lock["default"] == "schema-v2.0.0-alpha.1"
    assert sorted({p["ref"] for p in lock["pins"]}) == [
        "schema-v2.0.0-alpha.1",
        "schema-v2.0.0-alpha.3",
    ]
    v2 = next(
        p
        for p in lock["pins"]
        if p == {**p, "ref": "schema-v2.0.0-alpha.1", "path": "v2/schema.json"}
    )
    assert v2["url"] == (
        "https://raw.githubusercontent.com/agentclientprotocol/agent-client-protocol/"
        "schema-v2.0.0-alpha.1/schema/v2/schema.json"
    )
    listing = cli("schema", "list", cwd=root, mirror=local).out.splitlines()
    assert f"* schema-v2.0.0-alpha.1/v2/schema.json {v2['sha256']}" in listing
    assert any(line.startswith("  schema-v2.0.0-alpha.3/") for line in listing)

    # A spec bump is pin + generate: the packages now come from the new default.
    assert cli("generate", "--unstable", cwd=root, mirror=local).code == 0
    for lane in ("v1", "v2", "v1_unstable", "v2_unstable"):
        init = (root / "generated" / "acp_kit" / lane / "__init__.py").read_text(encoding="utf-8")
        assert 'SCHEMA_REF = "schema-v2.0.0-alpha.1"' in init, lane
    methods = (root / "generated" / "acp_kit" / "v2_unstable" / "methods.py").read_text("utf-8")
    assert "unstable=True" in methods and "unstable=False" in methods
    assert cli("generate", "--check", "--unstable", cwd=root, mirror=local).code == 0


def test_pin_without_making_it_the_default(
    cli: Cli, make_project: Any, mirror: Path, tmp_path: Path
) -> None:
    root = make_project(refs=["schema-v2.0.0-alpha.3"])
    local = copy_ref(mirror, "v0.2.0", tmp_path / "mirror")
    run = cli("schema", "pin", "v0.2.0", "--no-default", cwd=root, mirror=local)
    assert run.code == 0, run.err
    lock = json.loads((root / "schema" / "pins.lock.json").read_text(encoding="utf-8"))
    assert lock["default"] == "schema-v2.0.0-alpha.3"
    assert {p["path"] for p in lock["pins"] if p["ref"] == "v0.2.0"} == {"schema.json", "meta.json"}


def test_pin_an_unknown_ref(cli: Cli, make_project: Any, tmp_path: Path) -> None:
    root = make_project(refs=["schema-v2.0.0-alpha.3"])
    (tmp_path / "mirror").mkdir()
    before = (root / "schema" / "pins.lock.json").read_text(encoding="utf-8")
    run = cli("schema", "pin", "nope", cwd=root, mirror=tmp_path / "mirror")
    assert one_error(run) == f"no schema files found for ref 'nope' in {tmp_path / 'mirror'}/nope"
    assert (root / "schema" / "pins.lock.json").read_text(encoding="utf-8") == before


# -- refs and lock files that could leave the cache ------------------------------------------------
def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root` and its bytes (Python's caches left out)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.mark.parametrize(
    ("ref", "reason"),
    [
        ("../../evil", "a ref cannot contain a path separator"),
        ("..", "it would leave the schema cache"),
        ("/tmp/evil", "a ref cannot contain a path separator"),
        ("sub/ref", "a ref cannot contain a path separator"),
        ("", "it is empty"),
    ],
)
def test_pin_and_sync_refuse_refs_that_leave_the_cache(
    cli: Cli, make_project: Any, mirror: Path, tmp_path: Path, ref: str, reason: str
) -> None:
    root = make_project(refs=["v0.2.0"])
    # A mirror where `../../evil` would find files: nothing may be read from there either.
    evil_mirror = tmp_path / "m" / "a" / "b"
    evil_mirror.mkdir(parents=True)
    shutil.copytree(mirror / "v0.2.0", tmp_path / "m" / "evil")
    before = snapshot(tmp_path)
    for command in ("pin", "sync"):
        run = cli("schema", command, ref, cwd=root, mirror=evil_mirror)
        assert one_error(run) == f"invalid ref {ref!r}: {reason}"
    assert snapshot(tmp_path) == before


def test_a_broken_lock_is_one_line_naming_it(cli: Cli, make_project: Any) -> None:
    root = make_project(refs=["v0.2.0"])
    lock = root / "schema" / "pins.lock.json"
    lock.write_text('{"default": "v0.2.0", "pins": [{"ref": "../x"}]}', encoding="utf-8")
    expected = (
        f"lock file {lock} is malformed: pins[0] must be an object with the keys"
        " ref, path, sha256, url"
    )
    for args in (["generate"], ["schema", "sync"], ["schema", "list"], ["schema", "pin", "v0.2.0"]):
        assert one_error(cli(*args, cwd=root)) == expected
    lock.write_text("{", encoding="utf-8")
    assert one_error(cli("generate", cwd=root)).startswith(f"lock file {lock} is not valid JSON: ")


def test_generate_in_a_project_without_a_lock_says_how_to_make_one(
    cli: Cli, tmp_path: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.acp-codegen]\n[[tool.acp-codegen.packages]]\npackage = "a"\n'
        'schema = "v2/schema.json"\n',
        encoding="utf-8",
    )
    lock = tmp_path / "schema" / "pins.lock.json"
    assert one_error(cli("generate", cwd=tmp_path)) == (
        f"no lock file {lock}: run `acp-codegen schema pin REF` to create it"
    )
    (tmp_path / "pyproject.toml").write_text("[tool.acp-codegen]\n", encoding="utf-8")
    assert one_error(cli("generate", cwd=tmp_path)) == (
        f"no packages configured in {tmp_path / 'pyproject.toml'}: add"
        " [[tool.acp-codegen.packages]] tables (package, schema or lanes)"
    )


# -- what the banner records -----------------------------------------------------------------------
def test_a_pinned_cache_entry_given_as_schema_keeps_its_ref(cli: Cli, tmp_path: Path) -> None:
    cached = REPO / "schema" / "cache" / "npm-sdk-2.4.0" / "v2" / "schema.json"
    run = cli("generate", "--schema", cached, "--out", tmp_path, "--package", "acp_v2")
    assert (run.code, run.err) == (0, "")
    # The same lane as the committed one's, generated from the lock.
    assert snapshot(tmp_path / "acp_v2" / "v2") == snapshot(REPO / "generated" / "acp_kit" / "v2")


def test_a_local_schema_records_its_sha256(cli: Cli, tmp_path: Path) -> None:
    schema = write_schema(tmp_path / "src", SMALL)
    digest = hashlib.sha256(schema.read_bytes()).hexdigest()
    assert cli("generate", "--schema", schema, "--out", tmp_path / "o", "--package", "p").code == 0
    init = (tmp_path / "o" / "p" / "__init__.py").read_text(encoding="utf-8")
    assert init.startswith(
        "# Generated by acp-codegen 0.1.0 from the ACP schema local (schema.json),\n"
        f"# sha256 {digest}. Do not edit: regenerate instead.\n"
    )
    assert f'SCHEMA_REF = "local"\nSCHEMA_SHA256 = "{digest}"\n' in init
    assert one_error(
        cli("generate", "--schema", schema, "--out", tmp_path / "o", "--package", "p", "--ref", "x")
    ) == ("--ref picks a pinned schema: it does not go with --schema")


# -- generating over what is not ours --------------------------------------------------------------
def test_generate_over_a_hand_written_package_is_refused(cli: Cli, tmp_path: Path) -> None:
    schema = write_schema(tmp_path / "src", SMALL)
    mine = tmp_path / "out" / "mine"
    mine.mkdir(parents=True)
    (mine / "__init__.py").write_text("ANSWER = 42\n", encoding="utf-8")
    (tmp_path / "out" / "notes").write_text("keep me\n", encoding="utf-8")
    before = snapshot(tmp_path)
    for package in ("mine", "notes"):
        run = cli("generate", "--schema", schema, "--out", tmp_path / "out", "--package", package)
        assert one_error(run).startswith(f"refusing to replace {tmp_path / 'out' / package}: ")
    assert snapshot(tmp_path) == before


# -- exit status 3 and the help texts --------------------------------------------------------------
def test_a_ruff_failure_on_our_output_is_exit_3(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import codegen.pipeline

    # The runtime modules are copied as they are; what ruff formats is rendered from templates
    # (models.py in a ruff of its own, the rest in a second one beside it).
    real = codegen.pipeline.Formatting

    def broken(files: dict[str, str]) -> Any:
        return real(
            {**files, "p/v1/methods.py": "def broken(:\n"} if "p/v1/methods.py" in files else files
        )

    monkeypatch.setattr(codegen.pipeline, "Formatting", broken)
    schema = write_schema(tmp_path / "src", SMALL)
    run = cli("generate", "--schema", schema, "--out", tmp_path / "out", "--package", "p")
    assert (run.code, run.out) == (3, "")
    assert run.err == (
        "acp-codegen: internal error (please report it): ruff failed on the generated code:"
        " error: Failed to parse p/v1/methods.py:1:12: Expected a parameter or the end of the"
        " parameter list\n"
    )
    assert not (tmp_path / "out").exists()


def test_a_ruff_failure_from_the_projects_own_templates_is_bad_input(
    cli: Cli, make_project: Any, mirror: Path
) -> None:
    root = make_project(refs=["schema-v2.0.0-alpha.3"])
    templates = root / "tpl"
    shutil.copytree(REPO / "templates", templates)
    (templates / "methods.py.j2").write_text("{{ banner }}\nx = (\n", encoding="utf-8")
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.startswith("templates =")]
    lines.insert(1, 'templates = "tpl"')
    (root / "pyproject.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    message = one_error(cli("generate", cwd=root, mirror=mirror))
    assert message.startswith(
        f"the templates in {templates} make code ruff rejects: ruff failed on the generated"
        " code: error: Failed to parse acp_kit/v1/methods.py:"
    )
    assert not (root / "generated").exists()


@pytest.mark.parametrize(
    ("args", "status"),
    [
        (["generate"], "exit status: 0 written (with --check: current), 1 --check found a"),
        (["schema", "pin"], "exit status: 0 ok, 2 bad input, 3 a bug of acp-codegen's"),
        (["diff"], "exit status: 0 nothing at the --fail-on severity, 1 something is, 2 bad"),
        (["replay"], "exit status: 0 replayed (bad lines are reported and skipped), 2 bad"),
        ([], "exit status: 0 ok, 1 --check differs or diff found breaking changes, 2 bad"),
    ],
)
def test_each_help_names_the_exit_status(cli: Cli, args: list[str], status: str) -> None:
    run = cli(*args, "--help")
    assert run.code == 0
    assert status in " ".join(run.out.split()), run.out
    assert "3 a bug of acp-codegen's" in " ".join(run.out.split())


def test_a_projects_own_templates_folder_must_be_complete(
    cli: Cli, make_project: Any, mirror: Path
) -> None:
    root = make_project(refs=["schema-v2.0.0-alpha.3"])
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.startswith("templates =")]
    lines.insert(1, 'templates = "tpl"')
    (root / "pyproject.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert one_error(cli("generate", cwd=root, mirror=mirror)) == (
        f"the templates folder {root / 'tpl'} (templates under [tool.acp-codegen]) has no"
        " __init__.py.j2: copy the whole templates/ folder of acp-codegen to start from"
    )
    shutil.copytree(REPO / "templates", root / "tpl")
    (root / "tpl" / "runtime" / "_runtime.py").unlink()
    assert one_error(cli("generate", cwd=root, mirror=mirror)).endswith(
        " has no runtime/_runtime.py: copy the whole templates/ folder of acp-codegen to start from"
    )
    (root / "tpl" / "runtime" / "_runtime.py").write_text("", encoding="utf-8")
    (root / "tpl" / "methods.py.j2").write_text("{{ banner }}\n{{ nope }}\n", encoding="utf-8")
    assert one_error(cli("generate", cwd=root, mirror=mirror)) == (
        f"the templates in {root / 'tpl'} do not render: UndefinedError: 'nope' is undefined"
    )
