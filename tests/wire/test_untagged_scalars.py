"""Untagged unions whose alternatives share a JSON type: the first one whose constraints hold."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

SCHEMA = {
    "$defs": {
        "Count": {
            "anyOf": [
                {"title": "Small", "type": "integer", "minimum": 0, "maximum": 9},
                {"title": "Any", "type": "integer"},
                {"title": "Text", "type": "string"},
            ]
        },
        "Holder": {
            "type": "object",
            "properties": {
                "c": {"$ref": "#/$defs/Count"},
                "list": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["c"],
        },
    }
}


@pytest.fixture
def pkg(make_package: Callable[..., ModuleType]) -> ModuleType:
    return make_package(SCHEMA)


@pytest.mark.parametrize("value", [5, 50, -3, "x"])
def test_value_of_a_shared_json_type_decodes(pkg: ModuleType, value: Any) -> None:
    holder = pkg.decode(pkg.Holder, {"c": value})
    assert holder.c == value
    assert pkg.encode(holder) == {"c": value}


def test_no_alternative_is_a_decode_error(pkg: ModuleType) -> None:
    with pytest.raises(pkg.DecodeError) as caught:
        pkg.decode(pkg.Holder, {"c": 1.5})
    assert caught.value.path == "$.c"
    assert caught.value.reason == "expected an integer or a string, got a number"


def test_field_named_like_a_builtin_is_renamed(pkg: ModuleType) -> None:
    holder = pkg.decode(pkg.Holder, {"c": 1, "list": ["a"]})
    assert holder.list_ == ["a"]
    assert pkg.encode(holder) == {"c": 1, "list": ["a"]}
