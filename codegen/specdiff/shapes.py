"""Wire shapes: what JSON a shape accepts, seen through aliases, and how two of them relate.

A `$ref` to an alias is the alias's shape on the wire (`SessionId` is a string), a `$ref`
to an open enum accepts any value of its JSON type, and one to an untagged union that ends in
an `any` catch-all (`ErrorData`) accepts any JSON; so all three are replaced by what they accept
before two shapes are compared. References to other types (objects, unions, closed enums)
stay names: what changed inside those types is reported on the types themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Literal

from ..ir import Alias, EnumType, Model, Shape, UntaggedUnion
from ..parse.resolve import INT_FORMAT_BOUNDS

Relation = Literal["same", "wider", "narrower", "different"]
_MAX_ALIAS_DEPTH = 16


def wire(shape: Shape, model: Model) -> Shape:
    """The shape with aliases (and open enums) replaced by what they accept, items too."""
    shape = model.look_through(shape, open_enums=True)
    if shape.item is not None:
        shape = replace(shape, item=wire(shape.item, model))
    return shape


class Relater:
    """How the set of JSON values a new shape accepts compares with what the old one accepts.

    Two references to the same type (after renames) relate as `same`: what changed inside
    that type is reported on the type. Aliases and open enums are seen through one level at
    a time, so `SessionId` and `string` are the same, and a closed enum accepts fewer values
    than the plain type of its values.
    """

    def __init__(self, old: Model, new: Model, rename: Callable[[str], str]) -> None:
        self.old, self.new, self.rename = old, new, rename

    def relate(self, old: Shape, new: Shape) -> Relation:
        nulls = _relation_of_flags(
            accepts_null(wire(old, self.old)), accepts_null(wire(new, self.new))
        )
        return combine(nulls, self.relate_non_null(old, new))

    def relate_non_null(self, old: Shape, new: Shape, depth: int = 0) -> Relation:
        old, new = old.non_null(), new.non_null()
        if old.kind == new.kind == "ref" and old.ref and self.rename(old.ref) == new.ref:
            return "same"
        if depth < _MAX_ALIAS_DEPTH:
            inner = _expand(old, self.old)
            if inner is not None:
                return self.relate_non_null(inner, new, depth + 1)
            inner = _expand(new, self.new)
            if inner is not None:
                return self.relate_non_null(old, inner, depth + 1)
        closed = _closed_enum_relation(old, new, self.old, self.new)
        if closed is not None:
            return closed
        if old.kind != new.kind:
            return _relate_kinds(old, new)
        if old.kind in ("list", "map"):
            items = self.relate(old.item or Shape("any"), new.item or Shape("any"))
            fewer = _relation_of_bound(old.min_items, new.min_items, lower=True)  # minItems
            return combine(items, fewer)
        if old.kind in ("int", "float"):
            return _relate_bounds(old, new)
        if old.kind == "ref":
            return "different"  # two unrelated named types
        return "same"  # str (formats are not checked by decoders), bool, null, object, any


def _expand(shape: Shape, model: Model) -> Shape | None:
    """One step through an alias or open enum (`Model.step_through`), or a reference to a
    catch-all union as any JSON; None for any other shape."""
    inner = model.step_through(shape, open_enums=True)
    if inner is None and catch_all_union(shape, model):
        return Shape("any")
    return inner


def open_enum(shape: Shape, model: Model) -> str | None:
    """The name of the open enum a shape refers to (through aliases), or None."""
    for _ in range(_MAX_ALIAS_DEPTH):
        target = model.index.get(shape.ref or "") if shape.kind == "ref" else None
        if isinstance(target, EnumType) and target.open:
            return target.name
        if not isinstance(target, Alias):
            return None
        shape = target.shape
    return None


def catch_all_union(shape: Shape, model: Model) -> str | None:
    """The name of the untagged union a shape refers to, when one alternative takes any JSON."""
    target = model.index.get(shape.ref or "") if shape.kind == "ref" else None
    if isinstance(target, UntaggedUnion) and any(b.shape.kind == "any" for b in target.branches):
        return target.name
    return None


def _closed_enum_relation(old: Shape, new: Shape, om: Model, nm: Model) -> Relation | None:
    """A closed enum against the plain type of its values: the enum accepts fewer."""
    o_enum, n_enum = _closed_enum(old, om), _closed_enum(new, nm)
    if o_enum is not None and n_enum is None and new.kind == o_enum:
        return "wider"
    if n_enum is not None and o_enum is None and old.kind == n_enum:
        return "narrower"
    return None


def _closed_enum(shape: Shape, model: Model) -> str | None:
    target = model.index.get(shape.ref or "") if shape.kind == "ref" else None
    return target.value_kind if isinstance(target, EnumType) and not target.open else None


def accepts_null(shape: Shape) -> bool:
    """Whether `null` is a valid value (`any` takes it without saying so)."""
    return shape.nullable or shape.kind in ("any", "null")


def combine(a: Relation, b: Relation) -> Relation:
    if a == "same":
        return b
    if b == "same" or a == b:
        return a
    return "different"


def _relation_of_flags(old: bool, new: bool) -> Relation:
    if old == new:
        return "same"
    return "wider" if new else "narrower"


def _relate_kinds(old: Shape, new: Shape) -> Relation:
    if new.kind == "any":
        return "wider"
    if old.kind == "any":
        return "narrower"
    if (old.kind, new.kind) == ("int", "float"):
        return combine("wider", _relate_bounds(old, new))
    if (old.kind, new.kind) == ("float", "int"):
        return combine("narrower", _relate_bounds(old, new))
    return "different"


def _relate_bounds(old: Shape, new: Shape) -> Relation:
    low = _relation_of_bound(old.minimum, new.minimum, lower=True)
    high = _relation_of_bound(old.maximum, new.maximum, lower=False)
    return combine(low, high)


def _relation_of_bound(
    old: int | float | None, new: int | float | None, *, lower: bool
) -> Relation:
    """A lower bound that moves down (or goes away) accepts more; an upper bound, up."""
    if old == new:
        return "same"
    if old is None:
        return "narrower"
    if new is None:
        return "wider"
    looser = new < old if lower else new > old
    return "wider" if looser else "narrower"


def spelled_same(old: Shape, new: Shape, rename: Callable[[str], str]) -> bool:
    """Whether two shapes are written the same way (same refs, same nesting), not only
    accepted the same way."""
    if old.kind != new.kind or old.nullable != new.nullable:
        return False
    if old.kind == "ref":
        return old.ref is not None and rename(old.ref) == new.ref
    if old.item is not None and new.item is not None:
        return spelled_same(old.item, new.item, rename)
    return True


def describe(shape: Shape) -> str:
    """A short human reading of a shape: `list[ContentBlock] | null`, `integer ≥ 0`."""
    text = _describe_non_null(shape)
    return f"{text} | null" if shape.nullable else text


def _describe_non_null(shape: Shape) -> str:
    if shape.kind == "ref":
        return shape.ref or "?"
    if shape.kind == "list":
        inner = describe(shape.item) if shape.item else "any"
        at_least = f" (≥ {shape.min_items} items)" if shape.min_items else ""
        return f"list[{inner}]{at_least}"
    if shape.kind == "map":
        return f"map[string, {describe(shape.item) if shape.item else 'any'}]"
    if shape.kind in ("int", "float"):
        name = "integer" if shape.kind == "int" else "number"
        if shape.format:
            name = f"{name} ({shape.format})"
        if (shape.minimum, shape.maximum) == INT_FORMAT_BOUNDS.get(shape.format or "", ()):
            return name  # the bounds the format implies
        bounds = [
            f"≥ {shape.minimum}" if shape.minimum is not None else "",
            f"≤ {shape.maximum}" if shape.maximum is not None else "",
        ]
        spelled = ", ".join(b for b in bounds if b)
        return f"{name} {spelled}" if spelled else name
    return {
        "str": "string",
        "bool": "boolean",
        "null": "null",
        "object": "object",
        "any": "any JSON",
    }.get(shape.kind, shape.kind)
