"""`codegen.refs`: which refs are releases, of which line, and their order by version."""

from __future__ import annotations

import random

import pytest

from codegen.refs import Release, Version, by_version, parse_ref


@pytest.mark.parametrize(
    ("ref", "kind", "line", "release", "pre"),
    [
        ("npm-sdk-2.4.0", "npm", "npm-sdk", (2, 4, 0), ()),
        ("npm-sdk-2.5.0-beta.1", "npm", "npm-sdk", (2, 5, 0), ("beta", 1)),
        ("schema-v2.0.0-alpha.10", "schema", "v2", (2, 0, 0), ("alpha", 10)),
        ("schema-v2.0.0-beta.3", "schema", "v2", (2, 0, 0), ("beta", 3)),
        ("schema-v1.25.0", "schema", "v1", (1, 25, 0), ()),
        ("schema-v3.0.0", "schema", "v3", (3, 0, 0), ()),
        ("v0.12.2", "flat", "v1", (0, 12, 2), ()),
        ("v1.0.0+build.7", "flat", "v1", (1, 0, 0), ()),
    ],
)
def test_release_forms(
    ref: str, kind: str, line: str, release: tuple[int, int, int], pre: tuple[object, ...]
) -> None:
    assert parse_ref(ref) == Release(ref, kind, Version(release, pre))  # type: ignore[arg-type]
    parsed = parse_ref(ref)
    assert parsed is not None and parsed.line == line


@pytest.mark.parametrize(
    "ref",
    ["main", "npm-sdk-latest", "npm-sdk-2.4", "schema-v2", "v01.2.3", "v1.2.3-", "vnext", "2.4.0"],
)
def test_other_names_are_not_releases(ref: str) -> None:
    assert parse_ref(ref) is None


def test_versions_order_as_semver_not_as_strings() -> None:
    ordered = [
        "schema-v2.0.0-alpha.1",
        "schema-v2.0.0-alpha.2",
        "schema-v2.0.0-alpha.9",
        "schema-v2.0.0-alpha.10",
        "schema-v2.0.0-alpha.17",
        "schema-v2.0.0-beta.1",
        "schema-v2.0.0-beta.2",
        "schema-v2.0.0-beta.10",
        "schema-v2.0.0-rc.1",
        "schema-v2.0.0",
        "schema-v2.0.1",
        "schema-v2.1.0",
        "schema-v2.10.0",
    ]
    shuffled = ordered[:]
    random.Random(7).shuffle(shuffled)
    assert by_version(shuffled) == ordered
    assert sorted(ordered) != ordered  # string order is another order


def test_identifiers_compare_one_by_one() -> None:
    # numbers before words, and a shorter list of equal identifiers first (semver 11.4)
    versions = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0"]
    keys = [Version.parse(v) for v in versions]
    assert all(k is not None for k in keys)
    assert sorted(keys, key=lambda k: k.key() if k else ()) == keys


def test_lines_sort_apart_and_other_names_last() -> None:
    refs = [
        "main",
        "schema-v2.0.0-alpha.3",
        "v0.10.8",
        "npm-sdk-2.4.0",
        "schema-v1.21.0",
        "v0.2.0",
        "npm-sdk-10.0.0",
        "npm-sdk-2.10.0",
        "feature-x",
    ]
    assert by_version(refs) == [
        "npm-sdk-2.4.0",
        "npm-sdk-2.10.0",
        "npm-sdk-10.0.0",
        "v0.2.0",
        "v0.10.8",
        "schema-v1.21.0",
        "schema-v2.0.0-alpha.3",
        "feature-x",
        "main",
    ]


def test_newer_than() -> None:
    a, b = parse_ref("schema-v2.0.0-alpha.9"), parse_ref("schema-v2.0.0-alpha.10")
    assert a is not None and b is not None
    assert b.newer_than(a) and not a.newer_than(b) and not a.newer_than(a)
