"""Every `$defs` name of the default ref's v1 and v2 is exported, under its own name, from acp_v1 /
acp_v2 (and alpha.3's from the seed's lane, generated from the pins); no generated name is
numbered (`Foo2`) unless its `$defs` name itself ends with a digit."""

from __future__ import annotations

import dataclasses
import inspect
import json
import typing
from pathlib import Path
from types import ModuleType

import pytest
from acp_kit import v1 as acp_v1
from acp_kit import v2 as acp_v2

from tests.support.lanes import SEED_REF, seed_lane

REF = "npm-sdk-2.4.0"  # the lock file's default
PACKAGES = {
    "v1": acp_v1,
    "v2": acp_v2,
    "v1-alpha.3": seed_lane("v1"),
    "v2-alpha.3": seed_lane("v2"),
}


def defs_of(mirror: Path, lane: str) -> dict[str, object]:
    pkg, folder = PACKAGES[lane], lane.partition("-")[0]
    path = mirror / pkg.SCHEMA_REF / folder / "schema.json"
    defs: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))["$defs"]
    return defs


@pytest.mark.parametrize(
    ("lane", "ref"),
    [("v1", REF), ("v2", REF), ("v1-alpha.3", SEED_REF), ("v2-alpha.3", SEED_REF)],
)
def test_the_packages_are_generated_from_their_ref(lane: str, ref: str) -> None:
    assert PACKAGES[lane].SCHEMA_REF == ref


@pytest.mark.parametrize(
    ("lane", "count"), [("v1", 178), ("v2", 197), ("v1-alpha.3", 170), ("v2-alpha.3", 175)]
)
def test_every_defs_name_is_exported_under_its_own_name(
    mirror: Path, lane: str, count: int
) -> None:
    pkg = PACKAGES[lane]
    names = list(defs_of(mirror, lane))
    assert len(names) == count
    assert [n for n in names if n not in pkg.__all__ or not hasattr(pkg, n)] == []
    assert [n for n in names if n not in pkg.models.__all__] == []


@pytest.mark.parametrize("lane", sorted(PACKAGES))
def test_no_generated_name_is_numbered(mirror: Path, lane: str) -> None:
    pkg: ModuleType = PACKAGES[lane]
    defs = defs_of(mirror, lane)
    numbered = [n for n in pkg.models.__all__ if n[-1].isdigit() and n not in defs]
    assert numbered == []


@pytest.mark.parametrize("lane", sorted(PACKAGES))
def test_every_variant_class_is_exported(lane: str) -> None:
    pkg = PACKAGES[lane]
    values = [getattr(pkg, n) for n in pkg.models.__all__]  # the toolkit's aliases are not unions
    classes = [c for c in values if isinstance(c, type)]
    unions = [u for u in values if typing.get_origin(u) is typing.Union]
    variants = [c for c in classes if "TAG" in vars(c)]
    assert len(unions) > 5 and len(variants) > 20
    assert all(u.__name__ in pkg.__all__ and isinstance(u.__doc__, str) for u in unions)
    for variant in variants:
        assert variant.__name__ in pkg.__all__
        assert any(variant in typing.get_args(u) for u in unions), variant
        assert "TAG_FIELD" in vars(variant.__mro__[1]), variant  # the union's private base


def test_v2_variant_names_follow_the_rule() -> None:
    """The tag's own name when free, else `{Union}{Tag}`; the open variant is `{Union}Other`."""
    assert acp_v2.SessionUpdateAgentMessageChunk.TAG == "agent_message_chunk"
    assert issubclass(acp_v2.SessionUpdateAgentMessageChunk, acp_v2.SessionUpdate)
    assert (
        acp_v2.SessionUpdateToolCallUpdate.TAG == "tool_call_update"
    )  # `ToolCallUpdate` is a $def
    # `state_update` is StateUpdate's classes, each after the path of its tags
    assert acp_v2.SessionUpdateStateUpdateRunning.TAG == "state_update"
    assert acp_v2.SessionUpdateStateUpdateIdleEndTurn.TAGS == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "end_turn",
    }
    assert issubclass(acp_v2.SessionUpdateOther, acp_v2.SessionUpdate)
    assert acp_v2.ContentBlockText.TAG == "text"  # `text` is a tag of other unions too


def test_generated_classes_are_dataclasses_on_first_use() -> None:
    """`dataclasses` sees every class as a dataclass, whichever it asks about first, though
    the package does not run `@dataclass` at import."""
    base = acp_v2.models._ContentBlockBase
    assert "__dataclass_fields__" not in vars(acp_v2.ContentBlockImage)  # not made yet
    assert not dataclasses.is_dataclass(base)  # a union's private base has no fields
    image = acp_v2.ContentBlockImage(data="AA==", mime_type="image/png")
    assert [f.name for f in dataclasses.fields(image)] == [
        "data",
        "mime_type",
        "uri",
        "annotations",
        "meta",
        "extra",
    ]
    moved = dataclasses.replace(image, uri="file:///a.png")
    assert moved.to_json() == {
        "type": "image",
        "data": "AA==",
        "mimeType": "image/png",
        "uri": "file:///a.png",
    }
    assert dataclasses.asdict(acp_v2.ContentBlockText(text="hi"))["text"] == "hi"
    assert repr(acp_v2.ContentBlockText(text="hi")) == (
        "ContentBlockText(text='hi', annotations=UNSET, meta=UNSET, extra={})"
    )


@pytest.mark.parametrize("lane", ["default", "seed"])
def test_no_session_update_class_takes_a_state_keyword(lane: str) -> None:
    """`state_update` is StateUpdate's classes: the state is the class, never a free string."""
    pkg = acp_v2 if lane == "default" else seed_lane("v2")
    classes = typing.get_args(pkg.SessionUpdate)
    states = [c for c in classes if getattr(c, "TAG", "") == "state_update"]
    assert len(states) == (11 if lane == "default" else 4), [c.__name__ for c in states]
    for cls in classes:
        assert "state" not in inspect.signature(cls).parameters, cls.__name__
    assert {c.TAGS["state"] for c in states if "state" in c.TAGS} == {
        "running",
        "idle",
        "requires_action",
    }
