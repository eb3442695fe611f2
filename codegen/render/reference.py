"""What a lane's REFERENCE.md lists of its object types: each class with its fields, their
Python and wire names, a readable type, and whether they are required."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Model, ObjectType, Shape
from ..naming import Names

_SCALARS = {"str": "str", "int": "int", "float": "float", "bool": "bool", "null": "None"}


@dataclass(frozen=True, slots=True)
class FieldRow:
    """One field of an object in REFERENCE.md's tables."""

    py: str
    wire: str
    type: str
    required: bool


@dataclass(frozen=True, slots=True)
class ObjectRow:
    """One object type in REFERENCE.md: its class, description and fields."""

    py: str
    doc: str  # the first sentence of its description
    fields: tuple[FieldRow, ...]


def object_rows(model: Model, names: Names) -> tuple[ObjectRow, ...]:
    """Every object type of the lane, in schema order."""
    rows = []
    for t in model.types:
        if not isinstance(t, ObjectType) or t.name not in names.types:
            continue
        py = names.types[t.name]
        owned = names.fields(py)
        fields = tuple(
            FieldRow(owned.get(f.wire, f.wire), f.wire, readable(model, names, f.shape), f.required)
            for f in t.fields
        )
        rows.append(ObjectRow(py, _first_sentence(t.doc), fields))
    return tuple(rows)


def readable(model: Model, names: Names, shape: Shape) -> str:
    """A shape as a person reads it: `list[ContentBlock] | None` (an enum by its name)."""
    if shape.kind == "ref" and shape.ref is not None:
        base = names.types.get(shape.ref, shape.ref)
    elif shape.kind in ("list", "map"):
        item = readable(model, names, shape.item or Shape("any"))
        base = f"list[{item}]" if shape.kind == "list" else f"dict[str, {item}]"
    elif shape.kind == "union":
        base = " | ".join(dict.fromkeys(readable(model, names, o) for o in shape.options))
    elif shape.kind == "object":
        base = "dict[str, Any]"
    else:
        base = _SCALARS.get(shape.kind, "Any")
    return base + " | None" if shape.nullable and base not in ("None", "Any") else base


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    end = flat.find(". ")
    return flat if end < 0 else flat[: end + 1]
