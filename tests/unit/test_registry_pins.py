"""`schema pin npm-sdk-X.Y.Z`: the SDK's tarball from the registry, its schema files pinned as
`TARBALL#MEMBER` so any clone fetches them again without a mirror; one download per tarball;
every bad answer is one line, exit 2, nothing written.

The registry is a local stand-in (tests/support/standin.py) serving tarballs built here; the
last tests also run against the real registry, skipped when it cannot be reached.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from codegen.pins import ensure_with_meta, read_lock
from tests.conftest import REPO
from tests.support.cli import Cli, Run, one_error, run_main
from tests.support.standin import (
    PACKAGE,
    REAL_REGISTRY,
    Registry,
    needs_registry,
    sri,
    standin,
    tarball,
)

__all__ = ["standin"]  # the fixture

V1 = b'{"title": "v1 stable"}\n'
V1U = b'{"title": "v1 unstable"}\n'
V2 = b'{"title": "v2 stable"}\n'
V2U = b'{"title": "v2 unstable"}\n'
# What SDK 2.x ships, with files that are not schemas beside them.
LANES = {
    "package/package.json": b'{"name": "@agentclientprotocol/sdk"}',
    "package/dist/v1/schema/index.js": b"export {};\n",
    "package/schema/v1/schema.json": V1,
    "package/schema/v2/schema.json": V2,
    "package/schema/v1/schema.unstable.json": V1U,
    "package/schema/v2/schema.unstable.json": V2U,
    "package/schema/v2/notes.json": b"{}",
}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[tool.acp-codegen]\nout = "src/app"\n'
        '[[tool.acp-codegen.packages]]\npackage = "acp"\nschema = "v2/schema.json"\n',
        encoding="utf-8",
    )
    return root


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    def run(*args: str, cwd: Path) -> Run:
        return run_main(capsys, monkeypatch, args, cwd)

    return run


def files_under(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_pin_records_each_schema_file_as_a_member_of_the_tarball(
    standin: Registry, project: Path, cli
) -> None:
    url = standin.publish("2.9.0", tarball(LANES))

    run = cli("schema", "pin", "npm-sdk-2.9.0", cwd=project)

    assert run.code == 0, run.err
    assert run.out.splitlines() == [
        f"npm-sdk-2.9.0/v1/schema.json {sha(V1)}",
        f"npm-sdk-2.9.0/v1/schema.unstable.json {sha(V1U)}",
        f"npm-sdk-2.9.0/v2/schema.json {sha(V2)}",
        f"npm-sdk-2.9.0/v2/schema.unstable.json {sha(V2U)}",
    ]
    lock = json.loads((project / "schema" / "pins.lock.json").read_text(encoding="utf-8"))
    assert lock == {
        "default": "npm-sdk-2.9.0",
        "pins": [
            {
                "ref": "npm-sdk-2.9.0",
                "path": path,
                "sha256": sha(data),
                "url": f"{url}#package/schema/{path}",
            }
            for path, data in [
                ("v1/schema.json", V1),
                ("v1/schema.unstable.json", V1U),
                ("v2/schema.json", V2),
                ("v2/schema.unstable.json", V2U),
            ]
        ],
    }
    assert files_under(project / "schema" / "cache") == {
        "npm-sdk-2.9.0/v1/schema.json": V1,
        "npm-sdk-2.9.0/v1/schema.unstable.json": V1U,
        "npm-sdk-2.9.0/v2/schema.json": V2,
        "npm-sdk-2.9.0/v2/schema.unstable.json": V2U,
    }
    # the version's document, then its tarball: nothing else was asked for
    assert standin.server.hits == [f"/npm/{PACKAGE}/2.9.0", url.removeprefix(standin.server.url)]


def test_sync_and_generate_download_each_tarball_once(
    standin: Registry, project: Path, cli
) -> None:
    url = standin.publish("2.9.0", tarball(LANES))
    assert cli("schema", "pin", "npm-sdk-2.9.0", cwd=project).code == 0
    cache = project / "schema" / "cache"

    shutil.rmtree(cache)
    run = cli("schema", "sync", cwd=project)
    assert (run.code, run.err) == (0, "acp-codegen: 4 pinned file(s) verified, 4 fetched\n")
    assert len(files_under(cache)) == 4
    assert standin.tarball_hits() == [url.removeprefix(standin.server.url)] * 2  # pin, sync

    # What `generate` calls for one package: the whole tarball's pins are filled at once.
    shutil.rmtree(cache)
    lock = read_lock(project / "schema" / "pins.lock.json")
    path = ensure_with_meta(lock, lock.find("npm-sdk-2.9.0", "v2/schema.json"))
    assert path.read_bytes() == V2
    assert len(files_under(cache)) == 4
    for pin in lock.pins:
        ensure_with_meta(lock, pin)
    assert len(standin.tarball_hits()) == 3


@pytest.mark.parametrize(
    ("members", "pinned"),
    [
        # SDK before 1.6: one flat file, like the flat upstream releases (lane v1)
        ({"package/schema/schema.json": V1U}, {"schema.json": "package/schema/schema.json"}),
        # SDK 1.6 to 1.9: the flat file beside a v2 folder is lane v1's
        (
            {"package/schema/schema.json": V1U, "package/schema/v2/schema.unstable.json": V2U},
            {
                "v1/schema.json": "package/schema/schema.json",
                "v2/schema.unstable.json": "package/schema/v2/schema.unstable.json",
            },
        ),
        # meta files are pinned when a version ships them; another top folder is kept as is
        (
            {"sdk/schema/v2/schema.json": V2, "sdk/schema/v2/meta.json": b"{}"},
            {
                "v2/meta.json": "sdk/schema/v2/meta.json",
                "v2/schema.json": "sdk/schema/v2/schema.json",
            },
        ),
    ],
)
def test_what_each_layout_pins(
    standin: Registry, project: Path, cli: Cli, members: dict[str, bytes], pinned: dict[str, str]
) -> None:
    url = standin.publish("1.6.0", tarball({"package/package.json": b"{}", **members}))
    assert cli("schema", "pin", "npm-sdk-1.6.0", cwd=project).code == 0
    lock = read_lock(project / "schema" / "pins.lock.json")
    assert {p.path: p.url for p in lock.pins} == {
        path: f"{url}#{member}" for path, member in pinned.items()
    }
    assert all(p.sha256 == sha(members[p.url.partition("#")[2]]) for p in lock.pins)


GOOD = tarball({"package/schema/v2/schema.json": V2})
TRUNCATED = GOOD[: len(GOOD) // 2]
NOT_GZIP = b"PK\x03\x04 a zip file, not a tarball"


@pytest.mark.parametrize(
    ("data", "dist", "message"),
    [
        (tarball({"package/package.json": b"{}"}), {},
         "@agentclientprotocol/sdk@1.0.0 ships no schema files: {url} has no"
         " schema/[vN/](schema|meta)[.unstable].json"),
        (GOOD, {"integrity": sri(b"other bytes")},
         f"integrity mismatch for {{url}}: sha512 is {sri(GOOD)[7:]}, the registry says"
         f" {sri(b'other bytes')[7:]}; nothing written"),
        (GOOD, {"integrity": None, "shasum": "0" * 40},
         f"integrity mismatch for {{url}}: sha1 is {hashlib.sha1(GOOD).hexdigest()}, the registry"
         f" says {'0' * 40}; nothing written"),
        (GOOD, {"integrity": None, "shasum": None},
         "the registry gives no sha512 or sha1 for {url}: refused"),
        (TRUNCATED, {}, "{url} is truncated (the gzip stream ends early)"),
        (NOT_GZIP, {}, "{url} is not a gzip'd tarball: Not a gzipped file (b'PK')"),
        (tarball({"package/../evil.json": b"{}", "package/schema/v2/schema.json": V2}),
         {}, "{url} has an unsafe member path 'package/../evil.json': refused"),
        (tarball({"/etc/schema/v2/schema.json": V2}), {},
         "{url} has an unsafe member path '/etc/schema/v2/schema.json': refused"),
        (tarball({}, symlinks={"package/schema/v2/schema.json": "/etc/passwd"}), {},
         "{url}: package/schema/v2/schema.json is not a regular file"),
        (GOOD, {"tarball": "file:///etc/passwd"},
         "{base}/@agentclientprotocol/sdk/1.0.0: dist.tarball 'file:///etc/passwd' is not an"
         " http(s) URL"),
    ],
    ids=[
        "no-schemas",
        "sha512-mismatch",
        "sha1-mismatch",
        "no-digest",
        "truncated",
        "not-gzip",
        "dotdot-member",
        "absolute-member",
        "symlink-member",
        "tarball-not-http",
    ],
)  # fmt: skip
def test_a_bad_answer_is_one_line_and_writes_nothing(
    standin: Registry,
    project: Path,
    cli: Cli,
    data: bytes,
    dist: dict[str, str],
    message: str,
) -> None:
    url = standin.publish("1.0.0", data, **dist)
    before = files_under(project)
    run = cli("schema", "pin", "npm-sdk-1.0.0", cwd=project)
    assert one_error(run) == message.format(url=url, base=standin.base)
    assert files_under(project) == before


def test_a_version_the_registry_lacks(standin: Registry, project: Path, cli: Cli) -> None:
    standin.publish("2.4.0", GOOD)
    run = cli("schema", "pin", "npm-sdk-9.9.9", cwd=project)
    assert one_error(run) == f"{PACKAGE} has no version 9.9.9 on {standin.base}"
    assert one_error(cli("schema", "pin", "npm-sdk-latest", cwd=project)) == (
        "invalid ref 'npm-sdk-latest': an SDK release is npm-sdk-X.Y.Z, with a version of"
        f" {PACKAGE} on the registry"
    )
    assert files_under(project) == {"pyproject.toml": (project / "pyproject.toml").read_bytes()}


def test_a_tarball_that_changed_since_it_was_pinned_is_refused_whole(
    standin: Registry, project: Path, cli
) -> None:
    url = standin.publish("2.9.0", tarball(LANES))
    assert cli("schema", "pin", "npm-sdk-2.9.0", cwd=project).code == 0
    shutil.rmtree(project / "schema" / "cache")
    changed = {**LANES, "package/schema/v2/schema.json": b'{"title": "swapped"}\n'}
    standin.publish("2.9.0", tarball(changed))

    message = one_error(cli("schema", "sync", cwd=project))

    assert message == (
        f"sha256 mismatch for {url}#package/schema/v2/schema.json:"
        f" got {sha(changed['package/schema/v2/schema.json'])}, pinned {sha(V2)}; nothing written"
    )
    assert not (project / "schema" / "cache").exists()  # not even the intact members


def test_a_lock_whose_tarball_lacks_a_member(standin: Registry, project: Path, cli: Cli) -> None:
    url = standin.publish("2.9.0", tarball(LANES))
    assert cli("schema", "pin", "npm-sdk-2.9.0", cwd=project).code == 0
    shutil.rmtree(project / "schema" / "cache")
    standin.publish("2.9.0", tarball({"package/schema/v1/schema.json": V1}))
    assert one_error(cli("schema", "sync", "npm-sdk-2.9.0", cwd=project)) == (
        f"{url} has no member package/schema/v1/schema.unstable.json"
    )


def test_the_mirror_still_comes_first(
    standin: Registry, project: Path, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mirror = tmp_path / "mirror"
    (mirror / "npm-sdk-2.9.0" / "v2").mkdir(parents=True)
    (mirror / "npm-sdk-2.9.0" / "v2" / "schema.json").write_bytes(V2)
    monkeypatch.setenv("ACP_SCHEMA_MIRROR", str(mirror))

    assert cli("schema", "pin", "npm-sdk-2.9.0", cwd=project).code == 0
    lock = read_lock(project / "schema" / "pins.lock.json")
    assert [(p.path, p.url) for p in lock.pins] == [
        ("v2/schema.json", f"{standin.tarball_url('2.9.0')}#package/schema/v2/schema.json")
    ]
    shutil.rmtree(project / "schema" / "cache")
    assert cli("schema", "sync", cwd=project).code == 0
    assert standin.server.hits == []  # the mirror had it all

    # A release the mirror lacks comes from the registry.
    url = standin.publish("2.10.0", tarball(LANES))
    assert cli("schema", "pin", "npm-sdk-2.10.0", "--no-default", cwd=project).code == 0
    assert standin.tarball_hits() == [url.removeprefix(standin.server.url)]
    shutil.rmtree(project / "schema" / "cache")
    assert cli("schema", "sync", cwd=project).code == 0
    assert len(standin.tarball_hits()) == 2


def test_an_unpinned_default_says_which_pin_to_run(
    standin: Registry, project: Path, cli: Cli
) -> None:
    standin.publish("2.9.0", tarball(LANES))
    lock_path = project / "schema" / "pins.lock.json"
    assert cli("schema", "pin", "npm-sdk-2.9.0", cwd=project).code == 0
    data = json.loads(lock_path.read_text(encoding="utf-8"))
    lock_path.write_text(json.dumps({**data, "default": "npm-sdk-2.10.0"}), encoding="utf-8")

    for command in (["generate"], ["schema", "sync"], ["schema", "list"]):
        assert one_error(cli(*command, cwd=project)) == (
            f"lock file {lock_path}: its default ref npm-sdk-2.10.0 is not pinned:"
            " run `acp-codegen schema pin npm-sdk-2.10.0`"
        )
    standin.publish("2.10.0", tarball(LANES))
    assert cli("schema", "pin", "npm-sdk-2.10.0", cwd=project).code == 0  # the advice works
    assert read_lock(lock_path).default_ref == "npm-sdk-2.10.0"


def test_a_clone_without_the_mirror_generates_the_same_package(
    standin: Registry, project: Path, cli: Cli, mirror: Path, tmp_path: Path
) -> None:
    """The held-out flow on a stand-in: pin the real 2.4.0 bytes from the registry, generate,
    then a clone with no cache and no mirror gets the same package (`generate --check`)."""
    real = mirror / "npm-sdk-2.4.0"
    members = {
        f"package/schema/{f.relative_to(real).as_posix()}": f.read_bytes()
        for f in sorted(real.rglob("*.json"))
    }
    standin.publish("2.4.0", tarball({"package/package.json": b"{}", **members}))
    assert cli("schema", "pin", "npm-sdk-2.4.0", cwd=project).code == 0
    assert cli("generate", cwd=project).code == 0

    clone = tmp_path / "clone"
    shutil.copytree(project, clone, ignore=shutil.ignore_patterns("cache"))
    run = cli("generate", "--check", cwd=clone)
    assert (run.code, run.out) == (0, ""), run.err
    assert len(standin.tarball_hits()) == 2  # one for the pin, one for the clone
    assert files_under(clone / "schema" / "cache") == {
        f"npm-sdk-2.4.0/{path.removeprefix('package/schema/')}": data
        for path, data in members.items()
    }


# -- the real registry -------------------------------------------------------------------------
def test_pinning_2_4_0_from_the_real_registry_gives_this_projects_lock_entries(
    project: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    needs_registry()
    monkeypatch.delenv("ACP_SCHEMA_MIRROR", raising=False)
    monkeypatch.delenv("ACP_CODEGEN_NPM_REGISTRY", raising=False)
    run = cli("schema", "pin", "npm-sdk-2.4.0", cwd=project)
    assert run.code == 0, run.err
    ours = read_lock(REPO / "schema" / "pins.lock.json")
    theirs = read_lock(project / "schema" / "pins.lock.json")
    assert theirs.pins == [p for p in ours.pins if p.ref == "npm-sdk-2.4.0"]
    assert all(p.url.startswith(f"{REAL_REGISTRY}/{PACKAGE}/-/sdk-2.4.0.tgz#") for p in theirs.pins)


def test_a_version_the_real_registry_lacks(
    project: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    needs_registry()
    monkeypatch.delenv("ACP_SCHEMA_MIRROR", raising=False)
    monkeypatch.delenv("ACP_CODEGEN_NPM_REGISTRY", raising=False)
    assert one_error(cli("schema", "pin", "npm-sdk-0.0.1", cwd=project)) == (
        f"{PACKAGE} has no version 0.0.1 on {REAL_REGISTRY}"
    )
    assert not (project / "schema").exists()
