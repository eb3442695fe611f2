"""Hypothesis strategies for valid wire values, built from the generator's own IR.

Each `$defs` type becomes a strategy of plain JSON that the schema accepts: required fields
always, optional ones sometimes (null where nullable), an undeclared key now and then (kept in
`extra` by the decoders), known and unknown tags for tagged unions.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

from codegen.ir import (
    Alias,
    Branch,
    EnumType,
    Exclusive,
    Field,
    Model,
    ObjectType,
    Shape,
    TaggedUnion,
    UntaggedUnion,
    is_nested,
    merge_fields,
    union_levels,
)

JSON_SCALARS = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=8)
JSON = st.recursive(
    JSON_SCALARS | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
UNKNOWN_KEY = st.sampled_from(["x_unknown", "_vendor", "zz-extra"])


class WireStrategies:
    """Strategies of every `$defs` type of `model`. A subclass picks other values for what the
    schema leaves free: `any_json` (undeclared keys' values, free-form JSON) and `any_key`."""

    any_json: st.SearchStrategy[Any] = JSON
    any_key: st.SearchStrategy[str] = st.text(max_size=6)

    def __init__(self, model: Model) -> None:
        self.model = model
        self._memo: dict[str, st.SearchStrategy[Any]] = {}

    def of(self, name: str) -> st.SearchStrategy[Any]:
        if name not in self._memo:
            self._memo[name] = st.deferred(lambda: self._build(name))
        return self._memo[name]

    def _build(self, name: str) -> st.SearchStrategy[Any]:
        t = self.model.get(name)
        if isinstance(t, ObjectType):
            return self.with_exclusive(self._object(t.fields), t.exclusive)
        if isinstance(t, EnumType):
            known = st.sampled_from([m.value for m in t.members])
            if not t.open:
                return known
            other = (
                st.text(min_size=1, max_size=8)
                if t.value_kind == "str"
                else st.integers(-(2**31), 2**31 - 1)
            )
            return known | other
        if isinstance(t, TaggedUnion):
            return self._tagged(t)
        if isinstance(t, UntaggedUnion):
            return st.one_of([self._branch(b) for b in t.branches])
        assert isinstance(t, Alias)
        return self.shape(t.shape)

    def with_exclusive(
        self, objects: st.SearchStrategy[Any], exclusive: Exclusive | None
    ) -> st.SearchStrategy[Any]:
        """Objects with exactly one of the exclusive alternatives' keys merged in."""
        if exclusive is None:
            return objects
        one = st.one_of([self.of(a.ref) for a in exclusive.alternatives])
        return st.tuples(objects, one).map(lambda pair: {**pair[1], **pair[0]})

    def _branch(self, branch: Branch) -> st.SearchStrategy[Any]:
        if branch.inline is not None:
            return self.with_exclusive(self._object(branch.inline.fields), branch.inline.exclusive)
        if branch.shape.kind != "object":
            return self.shape(branch.shape)
        # An inline object alternative: raw JSON, but with the keys that select it.
        keys = st.fixed_dictionaries({key: self.any_json for key in branch.required})
        rest = st.dictionaries(self.any_key, self.any_json, max_size=2)
        return st.tuples(rest, keys).map(lambda pair: {**pair[0], **pair[1]})

    def _object(
        self, fields: tuple[Field, ...], fixed: dict[str, Any] | None = None
    ) -> st.SearchStrategy[Any]:
        required = {f.wire: self.shape(f.shape) for f in fields if f.required}
        optional = {f.wire: self.shape(f.shape) for f in fields if not f.required}
        for wire, value in (fixed or {}).items():
            required[wire] = st.just(value)
            optional.pop(wire, None)
        base = st.fixed_dictionaries(required, optional=optional)
        declared = {f.wire for f in fields} | set(fixed or {})
        unknown = UNKNOWN_KEY.filter(lambda k: k not in declared)
        extra = st.dictionaries(unknown, self.any_json, max_size=1)
        return st.tuples(base, extra).map(lambda pair: {**pair[1], **pair[0]})

    def _tagged(self, t: TaggedUnion) -> st.SearchStrategy[Any]:
        """Every class of the union, those of the unions nested in its variants included: each
        with the tags of the levels above it and their fields."""
        options = []
        for level in union_levels(self.model, t):
            u, outer = level.union, dict(level.tags)
            for v in u.variants:
                if not is_nested(self.model, v):
                    fields = merge_fields(level.fields, v.fields)
                    obj = self._object(fields, {**outer, u.tag: v.tag})
                    options.append(self.with_exclusive(obj, v.exclusive))
            if u.open is not None:
                reserved = set(u.open.reserved)
                tags = st.text(min_size=1, max_size=10).filter(lambda tag, r=reserved: tag not in r)
                payload = merge_fields(
                    level.fields, tuple(f for f in u.open.fields if f.wire != u.tag)
                )
                options.append(
                    tags.flatmap(
                        lambda tag, p=payload, o=outer, w=u.tag, x=u.open.exclusive: (
                            self.with_exclusive(self._object(p, {**o, w: tag}), x)
                        )
                    )
                )
            if u.fallback is not None:
                fields = merge_fields(level.fields, u.fallback.fields)
                obj = self._object(fields, outer)
                options.append(self.with_exclusive(obj, u.fallback.exclusive))
        return st.one_of(options)

    def shape(self, shape: Shape) -> st.SearchStrategy[Any]:
        base = self._shape(shape)
        return base | st.none() if shape.nullable else base

    def _shape(self, shape: Shape) -> st.SearchStrategy[Any]:
        kind = shape.kind
        if kind == "ref" and shape.ref is not None:
            return self.of(shape.ref)
        if kind == "str":
            return st.text(min_size=shape.min_length or 0, max_size=12)
        if kind == "bool":
            return st.booleans()
        if kind == "null":
            return st.none()
        if kind == "int":
            lo = int(shape.minimum) if shape.minimum is not None else -(2**53)
            hi = int(shape.maximum) if shape.maximum is not None else 2**53
            return st.integers(lo, hi)
        if kind == "float":  # a float, or an integer (JSON does not tell them apart)
            lo = math.ceil(shape.minimum) if shape.minimum is not None else -1000
            hi = math.floor(shape.maximum) if shape.maximum is not None else 1000
            floats = st.floats(shape.minimum, shape.maximum, allow_nan=False, allow_infinity=False)
            return floats | st.integers(lo, hi) if lo <= hi else floats
        if kind == "list":
            item = self.shape(shape.item or Shape("any"))
            return st.lists(item, min_size=shape.min_items or 0, max_size=3)
        if kind == "map":
            return st.dictionaries(
                st.text(max_size=6), self.shape(shape.item or Shape("any")), max_size=3
            )
        if kind == "object":
            return st.dictionaries(st.text(max_size=6), JSON, max_size=3)
        if kind == "union":
            return st.one_of([self.shape(o) for o in shape.options])
        return self.any_json


def mutate(value: Any, data: st.DataObject, *, same_type: bool = False) -> Any:
    """Change one node of a JSON tree: replace it with arbitrary JSON, drop one of its keys, or
    add an undeclared one. With `same_type`, objects and lists are changed inside only and a
    scalar is replaced by another of its JSON type: the result is valid more often."""
    if isinstance(value, dict) and value and (same_type or data.draw(st.booleans())):
        key = data.draw(st.sampled_from(sorted(value, key=str)))
        out = dict(value)
        actions = ["drop", "add", "descend"] + ([] if same_type else ["replace"])
        action = data.draw(st.sampled_from(actions))
        if action == "drop":
            del out[key]
        elif action == "add":
            out[data.draw(UNKNOWN_KEY)] = data.draw(JSON)
        elif action == "replace":
            out[key] = data.draw(JSON)
        else:
            out[key] = mutate(out[key], data, same_type=same_type)
        return out
    if isinstance(value, list) and value and (same_type or data.draw(st.booleans())):
        index = data.draw(st.integers(0, len(value) - 1))
        out_list = list(value)
        out_list[index] = mutate(out_list[index], data, same_type=same_type)
        return out_list
    return data.draw(_like(value) if same_type else JSON)


def _like(value: Any) -> st.SearchStrategy[Any]:
    """Other values of the JSON type of `value` (an empty object or list stays as it is)."""
    if type(value) is bool:
        return st.booleans()
    if type(value) is int:
        return st.integers(-(2**40), 2**40)
    if type(value) is float:
        return st.floats(allow_nan=False, allow_infinity=False)
    if type(value) is str:
        return st.text(max_size=8)
    return st.just(value)
