"""`codegen.pins`: refs and paths that could leave the cache are refused, a broken lock is one
line naming it, flat releases are lane v1, and `pin_ref` creates a lock or changes nothing."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from codegen.diagnostics import InputError
from codegen.pins import (
    MIRROR_ENV,
    Lock,
    NotPinned,
    Pin,
    check_ref,
    missing_in_mirror,
    pin_ref,
    read_lock,
)

SHA = "ab" * 32


def pin(ref: str, path: str, sha: str = SHA) -> dict[str, str]:
    return {"ref": ref, "path": path, "sha256": sha, "url": f"https://example.org/{ref}/{path}"}


@pytest.mark.parametrize(
    "ref", ["schema-v2.0.0-alpha.3", "v0.12.2", "npm-sdk-2.4.0", "main", "a+b_c"]
)
def test_plain_refs_are_accepted(ref: str) -> None:
    assert check_ref(ref) == ref


@pytest.mark.parametrize(
    ("ref", "reason"),
    [
        ("", "it is empty"),
        ("../../evil", "a ref cannot contain a path separator"),
        ("/etc", "a ref cannot contain a path separator"),
        ("a/b", "a ref cannot contain a path separator"),
        ("a\\b", "a ref cannot contain a path separator"),
        ("..", "it would leave the schema cache"),
        (".", "it would leave the schema cache"),
        (".hidden", "use letters, digits and . _ + - only, starting with a letter or digit"),
        ("-rf", "use letters, digits and . _ + - only, starting with a letter or digit"),
        ("v1 beta", "use letters, digits and . _ + - only, starting with a letter or digit"),
        ("v1?x=1", "use letters, digits and . _ + - only, starting with a letter or digit"),
    ],
)
def test_refs_that_are_not_one_plain_name_are_refused(ref: str, reason: str) -> None:
    with pytest.raises(InputError) as info:
        check_ref(ref)
    assert str(info.value) == f"error: invalid ref {ref!r}: {reason}"


def write_lock(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "pins.lock.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ([], 'expected an object with exactly the keys "default" and "pins"'),
        ({"pins": []}, 'expected an object with exactly the keys "default" and "pins"'),
        ({"default": None, "pins": {}}, '"pins" must be a list'),
        (
            {"default": None, "pins": [1]},
            "pins[0] must be an object with the keys ref, path, sha256, url",
        ),
        (
            {"default": None, "pins": [{**pin("r", "schema.json"), "extra": 1}]},
            "pins[0] must be an object with the keys ref, path, sha256, url",
        ),
        (
            {"default": None, "pins": [{**pin("r", "schema.json"), "sha256": 5}]},
            "pins[0]: every value must be a string",
        ),
        (
            {"default": None, "pins": [pin("../x", "schema.json")]},
            "pins[0]: error: invalid ref '../x': a ref cannot contain a path separator",
        ),
        (
            {"default": None, "pins": [pin("r", "../../etc/passwd")]},
            "pins[0]: path '../../etc/passwd' is not a plain relative path",
        ),
        (
            {"default": None, "pins": [pin("r", "/etc/passwd")]},
            "pins[0]: path '/etc/passwd' is not a relative path",
        ),
        (
            {"default": None, "pins": [pin("r", "v2//schema.json")]},
            "pins[0]: path 'v2//schema.json' is not a plain relative path",
        ),
        (
            {"default": None, "pins": [pin("r", "schema.json", "XYZ")]},
            "pins[0]: sha256 must be 64 lowercase hex digits",
        ),
        (
            {"default": None, "pins": [{**pin("r", "schema.json"), "url": "file:///etc/passwd"}]},
            "pins[0]: url must be an http(s) URL",
        ),
        (
            {"default": None, "pins": [pin("r", "schema.json"), pin("r", "schema.json")]},
            "r/schema.json is pinned twice",
        ),
        (
            {
                "default": None,
                "pins": [{**pin("r", "v2/schema.json"), "url": "https://x.org/a.tgz#p/../../x"}],
            },
            "pins[0]: tarball member 'p/../../x' is not a plain relative path",
        ),
        (
            {
                "default": None,
                "pins": [{**pin("r", "v2/schema.json"), "url": "https://x.org/a.tgz#/etc/x"}],
            },
            "pins[0]: tarball member '/etc/x' is not a relative path",
        ),
        ({"default": 3, "pins": []}, '"default" 3 is not a ref name'),
        (
            {"default": "../x", "pins": []},
            "\"default\": error: invalid ref '../x': a ref cannot contain a path separator",
        ),
    ],
)
def test_a_malformed_lock_is_one_line_naming_it(tmp_path: Path, data: Any, problem: str) -> None:
    path = write_lock(tmp_path, data)
    with pytest.raises(InputError) as info:
        read_lock(path)
    assert str(info.value) == f"error: lock file {path} is malformed: {problem}"


def test_a_default_that_is_not_pinned_says_which_pin_to_run(tmp_path: Path) -> None:
    path = write_lock(tmp_path, {"default": "npm-sdk-2.5.0", "pins": [pin("r", "schema.json")]})
    with pytest.raises(InputError) as info:
        read_lock(path)
    assert str(info.value) == (
        f"error: lock file {path}: its default ref npm-sdk-2.5.0 is not pinned:"
        " run `acp-codegen schema pin npm-sdk-2.5.0`"
    )
    lock = read_lock(path, unpinned_default_ok=True)  # what `schema pin` reads, to mend it
    assert (lock.default_ref, lock.refs()) == ("npm-sdk-2.5.0", ["r"])


def test_a_lock_that_is_not_json_or_not_readable(tmp_path: Path) -> None:
    path = write_lock(tmp_path, '{"default": ')
    with pytest.raises(InputError) as info:
        read_lock(path)
    assert str(info.value) == (
        f"error: lock file {path} is not valid JSON: Expecting value: line 1 column 13 (char 12)"
    )
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(InputError) as info:
        read_lock(path)
    assert str(info.value) == f"error: cannot read lock file {path}: not UTF-8 text"
    with pytest.raises(InputError) as info:
        read_lock(tmp_path)
    assert str(info.value) == f"error: cannot read lock file {tmp_path}: Is a directory"


def test_a_missing_lock(tmp_path: Path) -> None:
    path = tmp_path / "schema" / "pins.lock.json"
    with pytest.raises(InputError) as info:
        read_lock(path)
    assert str(info.value) == (
        f"error: no lock file {path}: run `acp-codegen schema pin REF` to create it"
    )
    assert read_lock(path, missing_ok=True) == Lock(path, None, [])
    assert not path.parent.exists()


def test_find_maps_lane_v1_onto_a_flat_release(tmp_path: Path) -> None:
    lock = Lock(
        tmp_path / "l.json",
        "flat",
        [Pin(**pin("flat", "schema.json")), Pin(**pin("lanes", "v1/schema.json"))],
    )
    assert lock.find("flat", "v1/schema.json").path == "schema.json"
    assert lock.find("lanes", "v1/schema.json").path == "v1/schema.json"
    with pytest.raises(InputError) as info:
        lock.find("flat", "v2/schema.json")
    assert str(info.value) == (
        "error: flat has no v2/schema.json (a flat release before v2: protocol v1 only);"
        " its pinned files: schema.json"
    )
    with pytest.raises(InputError) as info:
        lock.find("lanes", "schema.json")
    assert str(info.value) == "error: lanes has no schema.json; its pinned files: v1/schema.json"
    with pytest.raises(NotPinned) as not_pinned:
        lock.find("nope", "v1/schema.json")
    assert str(not_pinned.value) == (
        f"error: nope is not pinned in {tmp_path / 'l.json'}:"
        " run `acp-codegen schema pin nope --no-default` first"
    )


def fake_mirror(tmp_path: Path) -> Path:
    mirror = tmp_path / "mirror"
    for rel, text in {
        "rel-2/v2/schema.json": '{"$defs": {}}',
        "rel-2/v2/meta.json": "{}",
        "rel-1/schema.json": '{"$defs": {"A": {}}}',
    }.items():
        (mirror / rel).parent.mkdir(parents=True, exist_ok=True)
        (mirror / rel).write_text(text, encoding="utf-8")
    return mirror


def test_pin_creates_the_lock_and_fills_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mirror = fake_mirror(tmp_path)
    monkeypatch.setenv(MIRROR_ENV, str(mirror))
    old_mask = os.umask(0o022)
    try:
        lock = read_lock(tmp_path / "p" / "schema" / "pins.lock.json", missing_ok=True)
        done = pin_ref(lock, "rel-2")
    finally:
        os.umask(old_mask)
    assert sorted(d.pin.path for d in done) == ["v2/meta.json", "v2/schema.json"]
    assert {d.previous_sha256 for d in done} == {None}
    saved = json.loads(lock.path.read_text(encoding="utf-8"))
    digest = hashlib.sha256(b'{"$defs": {}}').hexdigest()
    assert saved["default"] == "rel-2"
    assert saved["pins"][1] == {
        "ref": "rel-2",
        "path": "v2/schema.json",
        "sha256": digest,
        "url": "https://raw.githubusercontent.com/agentclientprotocol/agent-client-protocol/"
        "rel-2/schema/v2/schema.json",
    }
    cache = tmp_path / "p" / "schema" / "cache"
    assert (cache / "rel-2" / "v2" / "schema.json").read_bytes() == b'{"$defs": {}}'
    assert stat.S_IMODE(lock.path.stat().st_mode) == 0o644
    assert stat.S_IMODE((cache / "rel-2" / "v2" / "meta.json").stat().st_mode) == 0o644


def test_pin_without_default_into_a_new_lock_leaves_no_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MIRROR_ENV, str(fake_mirror(tmp_path)))
    lock = read_lock(tmp_path / "pins.lock.json", missing_ok=True)
    pin_ref(lock, "rel-1", make_default=False)
    assert read_lock(lock.path).default_ref is None


def test_a_refused_or_missing_ref_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MIRROR_ENV, str(fake_mirror(tmp_path)))
    project = tmp_path / "p"
    lock = read_lock(project / "pins.lock.json", missing_ok=True)
    for ref, message in [
        ("../rel-1", "invalid ref '../rel-1': a ref cannot contain a path separator"),
        ("nope", f"no schema files found for ref 'nope' in {tmp_path / 'mirror'}/nope"),
    ]:
        with pytest.raises(InputError) as info:
            pin_ref(lock, ref)
        assert str(info.value) == f"error: {message}"
    assert not project.exists()


def test_missing_in_mirror_says_why_pinning_cannot_help(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mirror = fake_mirror(tmp_path)
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    assert missing_in_mirror("rel-1", ["v2/schema.json"]) is None  # no mirror: nothing known
    monkeypatch.setenv(MIRROR_ENV, str(mirror))
    assert missing_in_mirror("rel-1", ["v1/schema.json"]) is None
    assert missing_in_mirror("rel-2", ["v2/schema.json"]) is None
    assert missing_in_mirror("rel-1", ["v1/schema.json", "v2/schema.json"]) == (
        "rel-1 has no v2/schema.json (a flat release before v2: protocol v1 only);"
        " its files in the mirror: schema.json"
    )
    assert missing_in_mirror("rel-3", ["v2/schema.json"]) == (
        f"rel-3 is not pinned, and the mirror {mirror} has no release rel-3"
    )
