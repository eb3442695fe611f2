"""Values to put to the official SDK's validators: the IR's wire strategies, made fair to JS.

`WireStrategies` (strategies.py) draws what our decoders accept. `OracleStrategies` changes
what would only measure JavaScript or cost time, not the SDK:

- integers stay within the JS-safe range (JSON.parse rounds past 2**53; the 64-bit bounds
  have targeted tests instead);
- `format: uri` and `date-time` strings are mostly well formed (zod checks those formats, the
  reference decoders do not: a known difference, still drawn now and then);
- free JSON (`_meta`, `any`, undeclared keys) and plain strings come from fixed palettes of
  edge values instead of recursive and text strategies, which cost most of the drawing time
  (zod takes any string where the schema says string: the string's value rarely matters).

`mutate()` breaks a value in one place, with palette values, and `drawn()` collects a fixed
number of values and mutations, deterministically. `edges()` adds, without Hypothesis, the
boundaries of every field of one drawn value: the field left out, null, and values just past
what its shape allows (bounds ± 1, an integral float, an empty list or string...).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture import providers
from hypothesis.internal.constants_ast import Constants

from codegen.ir import (
    Alias,
    EnumType,
    Exclusive,
    Field,
    Model,
    ObjectType,
    Shape,
    TaggedUnion,
    UntaggedUnion,
    merge_fields,
)
from tests.support.strategies import WireStrategies

JS_SAFE = 2**53 - 1
SEED = 20261009  # a fixed seed: the same values on every run (derandomize would hash sources)
URLS = st.sampled_from(
    [
        "https://example.com/",
        "file:///home/user/project/main.py",
        "http://localhost:8080/mcp?x=1#top",
        "data:text/plain;base64,SGk=",
        "zed://agent/session/1",
    ]
)
TIMESTAMPS = st.sampled_from(
    ["2026-01-31T12:00:00Z", "2026-02-01T08:30:15.250+02:00", "1999-12-31T23:59:59-05:00"]
)
PALETTE: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2.5,
    1.0,
    -0.0,
    2**31,
    2**53 + 1,
    1e300,
    "",
    "x",
    "é 👍",
    "https://example.com/",
    [],
    [None],
    ["a", 1],
    {},
    {"a": 1},
    {"type": "text", "text": "hi"},
    {"nested": {"deep": [1, {"k": None}]}},
]
JSON = st.sampled_from(PALETTE)
STRINGS = st.sampled_from(["", "a", "hello world", "é 👍", "0", "null", "_x", "line\nbreak"])
KEYS = st.sampled_from(["", "a", "_meta", "type", "x-y", "ключ"])


class OracleStrategies(WireStrategies):
    """The wire strategies with values the official SDK's validators care about: JS-safe
    integers, URLs and timestamps, and a small palette of JSON values and keys."""

    any_json = JSON
    any_key = KEYS

    def _shape(self, shape: Shape) -> st.SearchStrategy[Any]:
        kind = shape.kind
        if kind == "int":
            lo = max(-JS_SAFE, int(shape.minimum) if shape.minimum is not None else -JS_SAFE)
            hi = min(JS_SAFE, int(shape.maximum) if shape.maximum is not None else JS_SAFE)
            return st.integers(lo, hi)
        if kind == "str" and shape.format == "uri":
            return URLS | URLS | STRINGS
        if kind == "str" and shape.format == "date-time":
            return TIMESTAMPS | TIMESTAMPS | STRINGS
        if kind == "str":
            return STRINGS
        if kind == "object":
            return st.dictionaries(KEYS, JSON, max_size=2)
        return super()._shape(shape)


def mutate(value: Any, data: st.DataObject) -> Any:
    """`value` broken in one place: a key dropped, added or replaced, an item replaced..."""
    if isinstance(value, dict) and value and data.draw(st.integers(0, 3)):
        key = data.draw(st.sampled_from(sorted(value)))
        action = data.draw(st.sampled_from(["replace", "drop", "add", "descend", "descend"]))
        out = dict(value)
        if action == "drop":
            del out[key]
        elif action == "add":
            out[data.draw(KEYS)] = data.draw(JSON)
        elif action == "replace":
            out[key] = data.draw(JSON)
        else:
            out[key] = mutate(out[key], data)
        return out
    if isinstance(value, list) and value and data.draw(st.integers(0, 3)):
        index = data.draw(st.integers(0, len(value) - 1))
        out_list = list(value)
        if data.draw(st.booleans()):
            out_list[index] = mutate(out_list[index], data)
        else:
            out_list.append(data.draw(JSON))
        return out_list
    return data.draw(JSON)


_quiet_depth = 0


@contextmanager
def without_local_constants() -> Iterator[None]:
    """Draw without the constants Hypothesis collects from every loaded module's source.

    Hypothesis mixes in literals found in the user modules imported so far, so the same
    derandomized test draws other values when other test modules happen to be loaded (the
    whole suite against one file). For a fixed sample, the pool is emptied while drawing,
    and the cache of permitted constants is cleared around it (once, however deeply this is
    nested: refilling that cache is slow). Internal API: Hypothesis is pinned (pyproject.toml).
    """
    global _quiet_depth
    original = providers._get_local_constants
    if _quiet_depth == 0:
        providers.CONSTANTS_CACHE.cache.clear()
        providers._get_local_constants = Constants  # an empty pool
    _quiet_depth += 1
    try:
        yield
    finally:
        _quiet_depth -= 1
        if _quiet_depth == 0:
            providers._get_local_constants = original
            providers.CONSTANTS_CACHE.cache.clear()


def drawn(
    strategy: st.SearchStrategy[Any], valid: int, mutated: int, per_example: int = 6
) -> list[tuple[str, Any]]:
    """`valid` values of `strategy` and `mutated` mutations of others, as (kind, value) pairs.

    Hypothesis draws them (generate phase only, a fixed seed, without local constants: the
    same values on every run, whatever else is loaded), `per_example` at a time: its cost is
    mostly per example, not per value.
    """
    out: list[tuple[str, Any]] = []
    counts = {"valid": 0, "mutated": 0}

    @seed(SEED)
    @settings(
        max_examples=-(-max(valid, mutated) // per_example),
        database=None,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def collect(data: st.DataObject) -> None:
        # The same draws whatever was collected: Hypothesis may run an example again and
        # checks that it draws alike.
        for _ in range(per_example):
            value = data.draw(strategy)
            broken = mutate(value, data)
            if counts["valid"] < valid:
                out.append(("valid", value))
                counts["valid"] += 1
            if counts["mutated"] < mutated:
                out.append(("mutated", broken))
                counts["mutated"] += 1

    with without_local_constants():
        collect()
    return out


# -- edges ---------------------------------------------------------------------------------------
def edges(model: Model, name: str, base: Any) -> list[Any]:
    """Variants of `base` (a valid value of `name`) that probe one boundary each."""
    t = model.get(name)
    fields = _fields_of(model, t, base)
    if not fields:  # not an object, or one without declared fields: the value as a whole
        shape = t.shape if isinstance(t, Alias) else Shape("ref", ref=name)
        return _unique(_edge_values(shape, model))
    out: list[Any] = []
    for f in fields:
        if f.wire in base:
            out.append({k: v for k, v in base.items() if k != f.wire})
        out.extend({**base, f.wire: v} for v in _edge_values(f.shape, model))
    exclusive = _exclusive_of(t, base)
    if exclusive is not None:  # no alternative's keys, and every alternative's
        keys = {k for a in exclusive.alternatives for k in a.keys}
        out.append({k: v for k, v in base.items() if k not in keys})
        out.append({**{k: "x" for k in keys}, **base})
    return _unique(out)


def _exclusive_of(t: Any, base: dict[str, Any]) -> Exclusive | None:
    if isinstance(t, ObjectType):
        return t.exclusive
    if isinstance(t, TaggedUnion):
        variant = next((v for v in t.variants if v.tag == base.get(t.tag)), None)
        return variant.exclusive if variant is not None else None
    return None


def _fields_of(model: Model, t: Any, base: Any) -> tuple[Field, ...] | None:
    """The fields that `base` was drawn with: the object's, or its variant's (tag kept)."""
    if not isinstance(base, dict):
        return None
    if isinstance(t, ObjectType):
        return t.fields
    fields: tuple[Field, ...] = ()
    while isinstance(t, TaggedUnion):  # down the unions nested in the variant, by their tags
        variant = next((v for v in t.variants if v.tag == base.get(t.tag)), None)
        if variant is None:
            return None
        fields = merge_fields(fields, variant.fields)
        t = model.index.get(variant.nested or "")
    return fields or None


def _edge_values(shape: Shape, model: Model, depth: int = 0) -> list[Any]:
    out: list[Any] = [None]
    kind = shape.kind
    if kind == "ref" and shape.ref is not None and depth < 4:
        target = model.get(shape.ref)
        if isinstance(target, Alias):
            return out + _edge_values(target.shape, model, depth + 1)
        if isinstance(target, EnumType):
            if target.value_kind == "int":
                return out + [2**31, -(2**31) - 1, 1.0, "1"] if target.open else out + [999]
            return out + ([5, ""] if target.open else [5, "not-a-member"])
        if isinstance(target, UntaggedUnion):
            return out + [True, [None], {}]
        return out + [[], "x", {}]  # objects and tagged unions
    if kind == "int":
        lo, hi = shape.minimum, shape.maximum
        out += [1.0, True, "1"]
        out += [int(lo) - 1] if lo is not None else []
        out += [int(hi) + 1] if hi is not None else []
    elif kind == "float":
        out += [True, "1"]
        out += [shape.minimum - 1] if shape.minimum is not None else []
        out += [shape.maximum + 1] if shape.maximum is not None else []
    elif kind == "str":
        out += [5, ""]
    elif kind == "bool":
        out += [0, "true"]
    elif kind == "list":
        out += [[], [None], {}]
    elif kind in ("map", "object"):
        out += [[], {"k": None}]
    elif kind == "union":
        out += [True, [None], {}]
    return out


def _unique(values: list[Any]) -> list[Any]:
    seen: dict[str, Any] = {}
    for v in values:
        seen.setdefault(json.dumps(v, sort_keys=True), v)
    return list(seen.values())
