"""Every JSON example of the upstream protocol docs, decoded by its type and re-encoded exactly.

The examples are read in place from ../shared/acp-examples (never copied into the repo); the
manifest says which `$defs` type each one was checked against and whether it passed, against
the schema-v2.0.0-alpha.3 schemas: so the packages under test are alpha.3's v1 and v2 lanes,
generated from the pins (tests/support/lanes.py), not the committed default lane.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.lanes import SEED_REF, seed_lane

EXAMPLES = Path(__file__).resolve().parents[3] / "shared" / "acp-examples"
PACKAGES = {"v1": seed_lane("v1"), "v2": seed_lane("v2")}


def _manifest() -> list[dict[str, Any]]:
    path = EXAMPLES / "manifest.json"
    if not path.exists():
        return []
    files: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["files"]
    return files


def _payload(entry: dict[str, Any], message: Any) -> Any:
    if entry["kind"] == "fragment":
        return message
    return message[
        {"request": "params", "notification": "params", "response": "result", "error": "error"}[
            entry["kind"]
        ]
    ]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


VALID = [
    e
    for e in _manifest()
    if e["valid_stable"]
    and e["typed_def"]
    and not e["partial_of"]
    and e["schema_family"] in PACKAGES
]
INVALID = [
    e
    for e in _manifest()
    if not e["valid_stable"] and e["typed_def"] and e["schema_family"] in PACKAGES
]


def test_corpus_is_there() -> None:
    assert len(VALID) > 250, "the docs examples corpus is missing from ../shared/acp-examples"


def test_the_corpus_was_checked_against_the_packages_release() -> None:
    manifest = json.loads((EXAMPLES / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["schemas"] == f"../acp-schema/{SEED_REF}"
    assert {pkg.SCHEMA_REF for pkg in PACKAGES.values()} == {SEED_REF}


@pytest.mark.parametrize("entry", VALID, ids=[e["file"] for e in VALID])
def test_valid_example_round_trips(entry: dict[str, Any]) -> None:
    pkg = PACKAGES[entry["schema_family"]]
    message = json.loads((EXAMPLES / entry["file"]).read_text(encoding="utf-8"))
    payload = _payload(entry, message)
    tp = getattr(pkg, entry["typed_def"])
    value = pkg.decode(tp, payload)
    assert _canonical(pkg.encode(value)) == _canonical(payload)
    if (
        entry.get("sessionUpdate")
        and entry["sessionUpdate_known"] == "stable"
        and entry["kind"] != "fragment"
    ):
        update = value.update
        assert isinstance(update, pkg.SessionUpdate)
        assert getattr(update, "TAG", None) == entry["sessionUpdate"], (
            "a known kind must not fall into the open variant"
        )


# What the stable decoder does with the examples the stable schema rejects, and why.
MISSING_INFO = "missing required field"


@pytest.mark.parametrize("entry", INVALID, ids=[e["file"] for e in INVALID])
def test_invalid_example_is_refused_for_the_schemas_reason(entry: dict[str, Any]) -> None:
    pkg = PACKAGES[entry["schema_family"]]
    message = json.loads((EXAMPLES / entry["file"]).read_text(encoding="utf-8"))
    payload = _payload(entry, message)
    tp = getattr(pkg, entry["typed_def"], None)
    if tp is None:  # a method of the unstable lane only: the stable package has no such type
        assert entry["validated_by"] == "unstable"
        return
    error = entry["first_error"] or ""
    if entry["lenient_valid"] == "stable":
        # Only invalid where the schema's own leniency rules apply: the decoder accepts it.
        pkg.decode(tp, payload)
        return
    with pytest.raises(pkg.DecodeError) as caught:
        pkg.decode(tp, payload)
    if "is a required property" in error:
        missing = error.split("'")[1]
        assert caught.value.reason == MISSING_INFO
        assert caught.value.path.endswith("." + missing)
    elif "was expected" in error and ".type" in error:
        # v2-draft plans of type file/markdown: reserved tags with no variant in stable v2.
        assert "reserved" in caught.value.reason
        assert caught.value.path.endswith(".type")
