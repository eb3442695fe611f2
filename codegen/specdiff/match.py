"""Pair old and new names: renamed types and renamed methods.

Types are matched by `$defs` name. A type that disappears is paired with a new one when
- a method kept its name but its params (or result) are now the new type, or
- a method was renamed (same side, kind and payloads) and the type is its payload, or
- the two are the only removed/added types with that exact structure (`fingerprint`).
Anything else is reported as removed + added.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from ..ir import (
    EnumType,
    Field,
    Method,
    Model,
    ObjectType,
    Shape,
    TaggedUnion,
    TypeDef,
    UntaggedUnion,
    Variant,
)
from .shapes import wire

Rename = Callable[[str], str]


def fingerprint(model: Model, t: TypeDef, rename: Rename) -> Hashable:
    """The structure of a type, without its name, pointers or documentation."""
    if isinstance(t, ObjectType):
        return ("object", fields_print(model, t.fields, rename))
    if isinstance(t, EnumType):
        return ("enum", t.value_kind, tuple(sorted(str(m.value) for m in t.members)), t.open)
    if isinstance(t, TaggedUnion):
        variants = tuple(sorted((v.tag, _variant_print(model, v, rename)) for v in t.variants))
        fallback = _variant_print(model, t.fallback, rename) if t.fallback else None
        return ("tagged", t.tag, variants, t.open is not None, fallback)
    if isinstance(t, UntaggedUnion):
        branches = tuple(
            sorted(
                repr((b.json_kind, shape_print(wire(b.shape, model), rename), b.required))
                for b in t.branches
            )
        )
        return ("untagged", branches)
    return ("alias", shape_print(wire(t.shape, model), rename))


def fields_print(model: Model, fields: tuple[Field, ...], rename: Rename) -> Hashable:
    return tuple(
        sorted(
            (f.wire, repr(shape_print(wire(f.shape, model), rename)), f.required) for f in fields
        )
    )


def _variant_print(model: Model, v: Variant, rename: Rename) -> Hashable:
    return fields_print(model, v.fields, rename)


def shape_print(shape: Shape, rename: Rename) -> Hashable:
    item = shape_print(shape.item, rename) if shape.item is not None else None
    ref = rename(shape.ref) if shape.ref is not None else None
    return (shape.kind, ref, item, shape.nullable, shape.minimum, shape.maximum, shape.min_items)


def type_renames(
    old: Model, new: Model, method_pairs: dict[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """Old `$defs` name → new name for types that were renamed, and why they were paired."""
    removed = [n for n in old.index if n not in new.index]
    added = {n for n in new.index if n not in old.index}
    renames: dict[str, str] = {}
    why: dict[str, str] = {}

    def pair(o: str | None, n: str | None, reason: str) -> None:
        if o is None or n is None or o not in removed or n not in added:
            return
        if o not in renames and n not in renames.values():
            renames[o] = n
            why[o] = reason

    by_name = {m.name: m for m in reversed(new.methods)}  # a name's first method
    by_kind = {(m.name, m.kind): m for m in new.methods}
    for m in old.methods:
        moved = method_pairs.get(m.name, m.name)
        nm = by_kind.get((moved, m.kind)) or by_name.get(moved)
        if nm is not None:
            pair(m.params, nm.params, f"the params of `{nm.name}`")
            pair(m.result, nm.result, f"the result of `{nm.name}`")
    while True:  # a rename can make two more types identical: repeat until nothing new
        found = _unique_pairs(
            old,
            new,
            [n for n in removed if n not in renames],
            [n for n in added if n not in renames.values()],
            lambda name: renames.get(name, name),
        )
        if not found:
            return renames, why
        for o, n in found.items():
            pair(o, n, "the same structure")


def _unique_pairs(
    old: Model, new: Model, removed: list[str], added: list[str], rename: Rename
) -> dict[str, str]:
    olds: dict[Hashable, list[str]] = {}
    for name in removed:
        olds.setdefault(_key(fingerprint(old, old.get(name), rename)), []).append(name)
    news: dict[Hashable, list[str]] = {}
    for name in added:
        news.setdefault(_key(fingerprint(new, new.get(name), _same)), []).append(name)
    return {
        names[0]: news[fp][0]
        for fp, names in olds.items()
        if len(names) == 1 and len(news.get(fp, ())) == 1
    }


def method_renames(old: Model, new: Model) -> dict[str, str]:
    """Old method name → new one, for a removed and an added method with the same side,
    kind and payload structure (the only such pair)."""
    new_names = {m.name for m in new.methods}
    old_names = {m.name for m in old.methods}
    gone = [m for m in old.methods if m.name not in new_names]
    came = [m for m in new.methods if m.name not in old_names]
    olds: dict[Hashable, list[str]] = {}
    for m in gone:
        olds.setdefault(_method_print(old, m), []).append(m.name)
    news: dict[Hashable, list[str]] = {}
    for m in came:
        news.setdefault(_method_print(new, m), []).append(m.name)
    return {
        names[0]: news[fp][0]
        for fp, names in olds.items()
        if len(names) == 1 and len(news.get(fp, ())) == 1
    }


def _method_print(model: Model, m: Method) -> Hashable:
    def payload(name: str | None) -> str:
        if name is None or name not in model.index:
            return ""
        return _key(fingerprint(model, model.get(name), _same))

    return (m.side, m.kind, payload(m.params), payload(m.result))


def _key(value: Any) -> str:
    """A stable, hashable spelling of a fingerprint (numbers and None mix in sorted tuples)."""
    return repr(value)


def _same(name: str) -> str:
    return name
