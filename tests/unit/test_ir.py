"""The IR's node semantics, the one schema walk, and the one rule for the meta files."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from codegen.ir import Alias, EnumMember, EnumType, Field, Model, ObjectType, Shape
from codegen.parse.load import meta_names
from codegen.parse.walk import iter_keys, pointer, ref_graph, refs_in


# -- nodes -------------------------------------------------------------------------------------
def test_nodes_are_equal_only_to_nodes_of_their_own_type() -> None:
    assert Shape("str") == Shape("str") and hash(Shape("str")) == hash(Shape("str"))
    assert Shape("str") != ("str",)
    assert Shape("str") != Shape("str", nullable=True)
    member = EnumMember("a", None, "")
    assert member != ("a", None, "")
    # Two node types with the same fields are still different things.
    assert Alias("A", "", Shape("any"), "#") != ObjectType("A", "", (), "#")  # type: ignore[comparison-overlap]


def test_nodes_are_frozen_and_neither_indexable_nor_iterable() -> None:
    shape = Shape("list", item=Shape("int"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        shape.kind = "map"  # type: ignore[misc]
    with pytest.raises(TypeError):
        shape[0]  # type: ignore[index]
    with pytest.raises(TypeError):
        iter(shape)  # type: ignore[call-overload]
    assert not hasattr(shape, "__dict__")  # slotted


def test_copies_with_a_change_and_their_repr() -> None:
    field = Field("a", Shape("str"), False, "", "#/a")
    assert dataclasses.replace(field, required=True) == Field("a", Shape("str"), True, "", "#/a")
    assert Shape("int").with_nullable(True) == Shape("int", nullable=True)
    assert repr(Shape("ref", ref="X")) == (
        "Shape(kind='ref', ref='X', item=None, nullable=False, minimum=None, maximum=None,"
        " min_items=None, format=None, min_length=None,"
        " options=())"
    )


def test_the_model_derives_its_index() -> None:
    a = Alias("A", "", Shape("str"), "#/$defs/A")
    model = Model("t", 2, (a,), ())
    assert model.get("A") is a and dict(model.index) == {"A": a}
    assert model == Model("t", 2, (a,), ())  # the index takes no part in equality
    assert "index" not in repr(model)


def test_looking_through_aliases_and_open_enums() -> None:
    enum = EnumType("E", "", "str", (EnumMember("x", None, ""),), True, "", "#/$defs/E")
    model = Model(
        "t",
        None,
        (
            Alias("Id", "", Shape("str"), "#/$defs/Id"),
            Alias("MaybeId", "", Shape("ref", ref="Id", nullable=True), "#/$defs/MaybeId"),
            enum,
        ),
        (),
    )
    assert model.look_through(Shape("ref", ref="MaybeId")) == Shape("str", nullable=True)
    assert model.step_through(Shape("ref", ref="MaybeId")) == Shape("ref", ref="Id", nullable=True)
    assert model.look_through(Shape("ref", ref="E")) == Shape("ref", ref="E")
    assert model.look_through(Shape("ref", ref="E"), open_enums=True) == Shape("str")
    assert model.step_through(Shape("int")) is None


# -- the walk ----------------------------------------------------------------------------------
SCHEMA: dict[str, Any] = {
    "$defs": {
        "A": {
            "properties": {"b": {"$ref": "#/$defs/B"}, "c": {"items": [{"$ref": "#/$defs/a~1b"}]}}
        },
        "B": {"type": "string"},
        "a/b": {"anyOf": [{"$ref": "#/$defs/B"}, {"$ref": "https://elsewhere"}]},
    }
}


def test_every_key_with_the_pointer_of_its_object() -> None:
    found = {(pointer("#", path), key) for path, key, _ in iter_keys(SCHEMA)}
    assert ("#/$defs/A/properties/c/items/0", "$ref") in found
    assert ("#/$defs/a~1b/anyOf/1", "$ref") in found
    assert len(found) == 14  # every key of every object, lists looked into


def test_references_and_the_reference_graph() -> None:
    assert sorted(refs_in(SCHEMA["$defs"]["A"])) == ["B", "a/b"]
    assert {name: sorted(refs) for name, refs in ref_graph(SCHEMA).items()} == {
        "A": ["B", "a/b"],
        "B": [],
        "a/b": ["B"],  # only local references name definitions
    }


# -- meta files --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("schema", "metas"),
    [
        ("schema.json", ("meta.json",)),
        ("schema.unstable.json", ("meta.unstable.json", "meta.json")),
        ("custom.json", ("meta.json",)),
    ],
)
def test_the_meta_files_a_schema_reads(schema: str, metas: tuple[str, ...]) -> None:
    assert meta_names(schema) == metas
