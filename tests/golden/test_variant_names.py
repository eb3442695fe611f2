"""The variant naming rule on the real schemas: no variant class is a bare word, and a
(union, tag) has one class name in every release and in both protocol lanes.

The names come from the naming step run on each schema; every one of them must be exported by
the package generated from that schema (the committed `acp_v1`/`acp_v2` of the default ref, and
the seed's alpha.3 lanes generated from the pins), with the tag it names.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from types import ModuleType

import pytest
from acp_kit import v1 as acp_v1
from acp_kit import v2 as acp_v2

from codegen.diagnostics import Diagnostics
from codegen.ir import TaggedUnion
from codegen.pipeline import analyse
from tests.support.lanes import SEED_REF, seed_lane

# (union, tag) → class name. A default branch (v1's stdio `McpServer`) is keyed by its title,
# the tag its variant has in v2; the catch-all by "*".
VariantNames = dict[tuple[str, str], str]
A_BARE_WORD = re.compile(r"[A-Z][a-z0-9]*_?|[A-Z0-9]+_?")


def variant_names(schema: Path) -> VariantNames:
    model, names = analyse(schema, Diagnostics())[1:]
    out: VariantNames = {}
    for u in model.types:
        if isinstance(u, TaggedUnion):
            out.update({(u.name, v.tag): names.variants[(u.name, v.tag)] for v in u.variants})
            if u.open is not None:
                out[(u.name, "*")] = names.open_variants[u.name]
            if u.fallback is not None:
                out[(u.name, u.fallback.title)] = names.fallback_variants[u.name]
    return out


def exported(pkg: ModuleType, names: VariantNames) -> VariantNames:
    """`names`, after checking that `pkg` exports each class, with its tag when it has one."""
    for (_, tag), py in names.items():
        assert py in pkg.__all__, py
        cls = getattr(pkg, py)
        assert getattr(cls, "TAG", tag) in (tag, "*"), (py, tag)
    return names


def own_schema(mirror: Path, pkg: ModuleType, lane: str) -> Path:
    return mirror / pkg.SCHEMA_REF / lane / "schema.json"


@pytest.fixture(scope="module")
def lanes(mirror: Path) -> dict[str, VariantNames]:
    """The names of the committed default lane and of the seed's alpha.3 lane, v1 and v2."""
    seed_v1, seed_v2 = seed_lane("v1"), seed_lane("v2")
    assert acp_v2.SCHEMA_REF == "npm-sdk-2.4.0" and seed_v2.SCHEMA_REF == SEED_REF
    return {
        "acp_v1": exported(acp_v1, variant_names(own_schema(mirror, acp_v1, "v1"))),
        "acp_v2": exported(acp_v2, variant_names(own_schema(mirror, acp_v2, "v2"))),
        "alpha.3 v1": exported(seed_v1, variant_names(own_schema(mirror, seed_v1, "v1"))),
        "alpha.3 v2": exported(seed_v2, variant_names(own_schema(mirror, seed_v2, "v2"))),
    }


def test_no_variant_class_of_acp_v1_or_acp_v2_is_a_bare_word(
    lanes: dict[str, VariantNames],
) -> None:
    for package, names in lanes.items():
        assert len(names) > 40, package
        assert [py for py in names.values() if A_BARE_WORD.fullmatch(py)] == [], package


def test_shared_union_tags_have_one_class_name_in_v1_v2_and_both_releases(
    lanes: dict[str, VariantNames],
) -> None:
    for (a, old), (b, new) in itertools.combinations(lanes.items(), 2):
        shared = old.keys() & new.keys()
        assert len(shared) > 30, (a, b)
        assert {k: (old[k], new[k]) for k in shared if old[k] != new[k]} == {}, (a, b)
    # The classes the first rule named differently across these releases.
    assert lanes["alpha.3 v1"][("ContentBlock", "text")] == "ContentBlockText"
    assert lanes["alpha.3 v1"][("McpServer", "stdio")] == "McpServerStdio"  # a default branch
    assert lanes["acp_v2"][("RequestPermissionSubject", "tool_call")] == (
        "RequestPermissionSubjectToolCall"
    )
    assert lanes["alpha.3 v2"][("RequestPermissionSubject", "command")] == (
        "RequestPermissionSubjectCommand"
    )


def test_every_union_tag_has_one_class_name_across_the_whole_mirror(mirror: Path) -> None:
    by_key: dict[tuple[str, str], set[str]] = {}
    schemas = sorted(mirror.rglob("schema*.json"))
    for schema in schemas:
        for key, py in variant_names(schema).items():
            by_key.setdefault(key, set()).add(py)
    assert len(schemas) >= 20 and len(by_key) > 80
    assert {key: names for key, names in by_key.items() if len(names) > 1} == {}
    assert all(not A_BARE_WORD.fullmatch(py) for names in by_key.values() for py in names)
