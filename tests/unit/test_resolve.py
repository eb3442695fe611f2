"""The resolver on tiny inline schemas: `$ref`s, shapes, `allOf` merges, fields and leniency."""

from __future__ import annotations

from typing import Any

import pytest

from codegen.diagnostics import Diagnostics
from codegen.ir import Field, Leniency, Shape
from codegen.parse.resolve import Resolver
from tests.conftest import BuildIR


def resolver(defs: dict[str, Any]) -> tuple[Resolver, Diagnostics]:
    diags = Diagnostics()
    return Resolver(defs, diags), diags


def fields(defs: dict[str, Any], name: str) -> dict[str, Field]:
    r, diags = resolver(defs)
    found = r.fields(defs[name], f"#/$defs/{name}")
    assert not diags.items, [str(d) for d in diags.items]
    return {f.wire: f for f in found}


def errors(diags: Diagnostics) -> list[str]:
    return [str(d) for d in diags.items if d.level == "error"]


# -- references ------------------------------------------------------------------------------------
def test_ref_and_single_ref_allof_name_the_definition() -> None:
    r, diags = resolver({"Id": {"type": "string"}})
    assert r.ref_name({"$ref": "#/$defs/Id"}, "#/x") == "Id"
    assert r.ref_name({"allOf": [{"$ref": "#/$defs/Id"}]}, "#/x") == "Id"
    assert r.ref_name({"allOf": [{"$ref": "#/$defs/Id"}, {"type": "object"}]}, "#/x") is None
    assert r.ref_name({"type": "string"}, "#/x") is None
    assert not diags.items


def test_ref_tokens_are_unescaped() -> None:
    r, diags = resolver({"a/b~c": {"type": "string"}})
    assert r.ref_name({"$ref": "#/$defs/a~1b~0c"}, "#/x") == "a/b~c"
    assert not diags.items


def test_remote_ref_is_an_error_at_its_pointer() -> None:
    r, diags = resolver({})
    assert r.ref_name({"$ref": "other.json#/$defs/Id"}, "#/$defs/A/properties/id") is None
    assert errors(diags) == [
        "error at #/$defs/A/properties/id: unsupported $ref 'other.json#/$defs/Id': "
        "only '#/$defs/<name>' is allowed"
    ]


def test_ref_to_a_missing_definition_is_an_error() -> None:
    r, diags = resolver({})
    assert r.ref_name({"$ref": "#/$defs/Nope"}, "#/$defs/A") is None
    assert errors(diags) == ["error at #/$defs/A: $ref to missing definition 'Nope'"]


# -- shapes ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("node", "shape"),
    [
        ({"type": "string"}, Shape("str")),
        ({"type": "string", "format": "uri"}, Shape("str", format="uri")),
        ({"type": "boolean"}, Shape("bool")),
        ({"type": "null"}, Shape("null")),
        ({"type": "number"}, Shape("float")),
        ({"type": "integer"}, Shape("int")),
        (
            {"type": "integer", "format": "uint64", "minimum": 0},
            Shape("int", minimum=0, maximum=2**64 - 1, format="uint64"),
        ),
        (
            {"type": "integer", "format": "int32", "maximum": 10},
            Shape("int", minimum=-(2**31), maximum=10, format="int32"),
        ),
        ({"type": ["string", "null"]}, Shape("str", nullable=True)),
        (
            {"anyOf": [{"$ref": "#/$defs/Id"}, {"type": "null"}]},
            Shape("ref", ref="Id", nullable=True),
        ),
        ({"$ref": "#/$defs/Id"}, Shape("ref", ref="Id")),
        ({"const": "fixed"}, Shape("str")),
        ({"const": 3}, Shape("int")),
        (
            {"type": "array", "items": {"type": "string"}, "minItems": 1},
            Shape("list", item=Shape("str"), min_items=1),
        ),
        ({"type": "array"}, Shape("list", item=Shape("any"))),
        (
            {"type": "object", "additionalProperties": {"type": "integer"}},
            Shape("map", item=Shape("int")),
        ),
        ({"type": "object", "properties": {"a": {}}}, Shape("object")),
        ({"type": ["object", "null"]}, Shape("object", nullable=True)),
        (True, Shape("any")),
        ({}, Shape("any")),
    ],
)
def test_shape_of(node: Any, shape: Shape) -> None:
    r, diags = resolver({"Id": {"type": "string"}})
    assert r.shape(node, "#/x") == shape
    assert not errors(diags)


def test_inline_union_of_plain_types_and_references_keeps_its_alternatives() -> None:
    r, diags = resolver({"Error": {"type": "object"}})
    node = {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/Error"}, {"type": "null"}]}
    assert r.shape(node, "#/$defs/A/properties/v") == Shape(
        "union", nullable=True, options=(Shape("str"), Shape("ref", ref="Error"))
    )
    assert diags.items == []


def test_inline_union_with_an_inline_object_is_raw_json_with_an_info() -> None:
    r, diags = resolver({})
    node = {"anyOf": [{"type": "string"}, {"type": "object", "properties": {}}, {"type": "null"}]}
    assert r.shape(node, "#/$defs/A/properties/v") == Shape("any", nullable=True)
    assert [str(d) for d in diags.items] == [
        "info at #/$defs/A/properties/v: inline union without a tag is kept as raw JSON"
    ]


# -- fields ----------------------------------------------------------------------------------------
def test_required_optional_and_nullable_fields() -> None:
    defs = {
        "A": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The id."},
                "note": {"type": ["string", "null"]},
                "count": {"type": "integer"},
            },
            "required": ["id", "note"],
        }
    }
    got = fields(defs, "A")
    assert list(got) == ["id", "note", "count"]
    assert (got["id"].required, got["id"].shape.nullable, got["id"].doc) == (True, False, "The id.")
    assert (got["note"].required, got["note"].shape.nullable) == (True, True)
    assert (got["count"].required, got["count"].shape.nullable) == (False, False)
    assert got["count"].pointer == "#/$defs/A/properties/count"


def test_allof_merges_properties_of_the_referenced_definitions() -> None:
    defs = {
        "Base": {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
            "required": ["b"],
        },
        "Child": {
            "type": "object",
            "allOf": [{"$ref": "#/$defs/Base"}],
            "properties": {"c": {"type": "boolean"}},
            "required": ["c"],
        },
    }
    got = fields(defs, "Child")
    assert {w: f.required for w, f in got.items()} == {"c": True, "a": False, "b": True}
    assert got["a"].pointer == "#/$defs/Base/properties/a"


def test_required_list_covers_properties_that_come_from_allof() -> None:
    defs = {
        "Base": {"type": "object", "properties": {"a": {"type": "string"}}},
        "Child": {"type": "object", "required": ["a"], "allOf": [{"$ref": "#/$defs/Base"}]},
    }
    assert fields(defs, "Child")["a"].required is True
    assert fields(defs, "Base")["a"].required is False


def test_untagged_object_alternatives_contribute_optional_fields() -> None:
    defs = {
        "Scope": {
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "required": ["id"],
            "anyOf": [
                {
                    "properties": {"session": {"type": "string"}, "kind": {}},
                    "required": ["session", "kind"],
                },
                {
                    "properties": {"request": {"type": "integer"}, "kind": {}},
                    "required": ["request", "kind"],
                },
            ],
        }
    }
    got = fields(defs, "Scope")
    assert {w: f.required for w, f in got.items()} == {
        "id": True,
        "session": False,
        "kind": True,  # every alternative requires it
        "request": False,
    }


def test_skipped_properties_are_left_out() -> None:
    defs = {"A": {"type": "object", "properties": {"type": {"const": "x"}, "v": {}}}}
    r, _ = resolver(defs)
    got = r.fields(defs["A"], "#/$defs/A", skip=frozenset({"type"}))
    assert [f.wire for f in got] == ["v"]


def test_a_definition_including_itself_through_allof_is_an_error() -> None:
    defs = {"Loop": {"type": "object", "allOf": [{"$ref": "#/$defs/Loop"}]}}
    r, diags = resolver(defs)
    r.fields({"$ref": "#/$defs/Loop"}, "#/$defs/Root")
    assert errors(diags) == [
        "error at #/$defs/Loop/allOf/0: definition 'Loop' includes itself through allOf"
    ]


# -- leniency --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("keywords", "expected"),
    [
        ({}, Leniency()),
        ({"x-deserialize-default-on-error": True}, Leniency(default_on_error=True)),
        ({"x-deserialize-skip-invalid-items": True}, Leniency(skip_invalid_items=True)),
        ({"x-deserialize-default-on-null": True}, Leniency(default_on_null=True)),
        (
            {"x-deserialize-default-on-error": True, "x-deserialize-skip-invalid-items": True},
            Leniency(default_on_error=True, skip_invalid_items=True),
        ),
        ({"x-deserialize-default-on-error": False}, Leniency()),
    ],
)
def test_leniency_flags_of_a_field(keywords: dict[str, Any], expected: Leniency) -> None:
    defs = {"A": {"type": "object", "properties": {"items": {"type": "array", **keywords}}}}
    assert fields(defs, "A")["items"].leniency == expected


def test_unknown_leniency_keyword_is_exactly_one_error(build_ir: BuildIR) -> None:
    """The field is resolved more than once (as a field and through the type using it); the
    unknown keyword is still one diagnostic, found by one pass."""
    defs = {
        "A": {"type": "object", "properties": {"v": {"type": "string", "x-deserialize-foo": True}}},
        "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}},
    }
    _, diags = build_ir({"$defs": defs})
    assert [str(d) for d in diags.items] == [
        "error at #/$defs/A/properties/v: unknown leniency rule 'x-deserialize-foo': "
        "the generator cannot honour it"
    ]
