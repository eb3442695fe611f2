"""Hypothesis strategies for valid wire values, built from the generator's own IR.

Each `$defs` type becomes a strategy of plain JSON that the schema accepts: required fields
always, optional ones sometimes (null where nullable), an undeclared key now and then (kept in
`extra` by the decoders), known and unknown tags for tagged unions.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from codegen.ir import (
    Alias,
    Branch,
    EnumType,
    Field,
    Model,
    ObjectType,
    Shape,
    TaggedUnion,
    UntaggedUnion,
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
            return self._object(t.fields)
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

    def _branch(self, branch: Branch) -> st.SearchStrategy[Any]:
        if branch.shape.kind != "object":
            return self.shape(branch.shape)
        # An inline object alternative: raw JSON, but with the keys that select it.
        keys = st.fixed_dictionaries({key: JSON for key in branch.required})
        rest = st.dictionaries(st.text(max_size=6), JSON, max_size=2)
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
        extra = st.dictionaries(UNKNOWN_KEY.filter(lambda k: k not in declared), JSON, max_size=1)
        return st.tuples(base, extra).map(lambda pair: {**pair[1], **pair[0]})

    def _tagged(self, t: TaggedUnion) -> st.SearchStrategy[Any]:
        options = [self._object(v.fields, {t.tag: v.tag}) for v in t.variants]
        if t.open is not None:
            reserved = set(t.open.reserved)
            tags = st.text(min_size=1, max_size=10).filter(lambda tag: tag not in reserved)
            payload = [f for f in t.open.fields if f.wire != t.tag]
            options.append(tags.flatmap(lambda tag: self._object(tuple(payload), {t.tag: tag})))
        if t.fallback is not None:
            options.append(self._object(t.fallback.fields))
        return st.one_of(options)

    def shape(self, shape: Shape) -> st.SearchStrategy[Any]:
        base = self._shape(shape)
        return base | st.none() if shape.nullable else base

    def _shape(self, shape: Shape) -> st.SearchStrategy[Any]:
        kind = shape.kind
        if kind == "ref" and shape.ref is not None:
            return self.of(shape.ref)
        if kind == "str":
            return st.text(max_size=12)
        if kind == "bool":
            return st.booleans()
        if kind == "null":
            return st.none()
        if kind == "int":
            lo = int(shape.minimum) if shape.minimum is not None else -(2**53)
            hi = int(shape.maximum) if shape.maximum is not None else 2**53
            return st.integers(lo, hi)
        if kind == "float":
            return st.floats(
                min_value=shape.minimum,
                max_value=shape.maximum,
                allow_nan=False,
                allow_infinity=False,
            ) | st.integers(-1000, 1000).filter(
                lambda i: (
                    (shape.minimum is None or i >= shape.minimum)
                    and (shape.maximum is None or i <= shape.maximum)
                )
            )
        if kind == "list":
            item = self.shape(shape.item or Shape("any"))
            return st.lists(item, min_size=shape.min_items or 0, max_size=3)
        if kind == "map":
            return st.dictionaries(
                st.text(max_size=6), self.shape(shape.item or Shape("any")), max_size=3
            )
        if kind == "object":
            return st.dictionaries(st.text(max_size=6), JSON, max_size=3)
        return JSON


def mutate(value: Any, data: st.DataObject) -> Any:
    """Replace one node of a JSON tree with arbitrary JSON, or drop or add a key."""
    if isinstance(value, dict) and value and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value, key=str)))
        out = dict(value)
        action = data.draw(st.sampled_from(["replace", "drop", "descend"]))
        if action == "drop":
            del out[key]
        elif action == "replace":
            out[key] = data.draw(JSON)
        else:
            out[key] = mutate(out[key], data)
        return out
    if isinstance(value, list) and value and data.draw(st.booleans()):
        index = data.draw(st.integers(0, len(value) - 1))
        out_list = list(value)
        out_list[index] = mutate(out_list[index], data)
        return out_list
    return data.draw(JSON)
