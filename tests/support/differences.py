"""The known differences between our decoders and the official SDK's, one rule each.

Every rule has an id, which is also a heading anchor in interop/DIFFERENCES.md, and a kind:
`deliberate` (we follow the reference implementation or keep the three states on purpose),
`gap` (our decoder is laxer or stricter than the schema: a generator bug, written up) or
`pending` (a construct the generator does not model yet; none today). A rule explains a
disagreement in one of three ways:

- `repair`: rewrite the input so that this one cause is gone (`https://example.com/r` where a
  `format: uri` string was, an int where an integral float was...). When both sides agree on
  the repaired value, the cause was this rule's and nothing else.
- `entry`: both sides accepted and one differing place is this rule's normalization (the SDK
  fills in a schema `default`...).
- `types`: a disagreement on a value of one of these `$defs` types that neither of the other
  two explains (the top-level checks of a type the rule is about as a whole).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from codegen.ir import Field, ObjectType, Shape, TaggedUnion
from tests.support.differential import ABSENT, Entry, Lane, at

Kind = Literal["deliberate", "gap", "pending"]
Repair = Callable[[Lane, str, Any], Any]
EntryRule = Callable[[Lane, Any, Entry], bool]


@dataclass(frozen=True)
class Difference:
    id: str
    kind: Kind
    summary: str
    repair: Repair | None = None
    entry: EntryRule | None = None
    types: frozenset[str] = field(default_factory=frozenset)


# -- walking JSON --------------------------------------------------------------------------------
def rewrite(value: Any, fn: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    """A copy of `value` with `fn` applied to every object, innermost first."""
    if isinstance(value, list):
        return [rewrite(v, fn) for v in value]
    if isinstance(value, dict):
        return fn({k: rewrite(v, fn) for k, v in value.items()})
    return value


def map_scalars(value: Any, fn: Callable[[Any], Any]) -> Any:
    if isinstance(value, list):
        return [map_scalars(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: map_scalars(v, fn) for k, v in value.items()}
    return fn(value)


def _fields(lane: Lane) -> Iterator[Field]:
    for t in lane.model.types:
        if isinstance(t, ObjectType):
            yield from t.fields
        elif isinstance(t, TaggedUnion):
            for v in t.variants:
                yield from v.fields
            if t.open is not None:
                yield from t.open.fields
            if t.fallback is not None:
                yield from t.fallback.fields


_CACHE: dict[tuple[int, str], Any] = {}


def _per_lane(lane: Lane, what: str, compute: Callable[[], Any]) -> Any:
    """`compute()` once per lane (the rules run for every disagreement)."""
    key = (id(lane), what)
    if key not in _CACHE:
        _CACHE[key] = compute()
    return _CACHE[key]


def _keys_with_format(lane: Lane, fmt: str) -> frozenset[str]:
    def has(shape: Shape | None) -> bool:
        return shape is not None and (shape.format == fmt or has(shape.item))

    keys: frozenset[str] = _per_lane(
        lane, f"format {fmt}", lambda: frozenset(f.wire for f in _fields(lane) if has(f.shape))
    )
    return keys


def _set_strings(keys: frozenset[str], replacement: str) -> Callable[[dict[str, Any]], Any]:
    def fix(obj: dict[str, Any]) -> dict[str, Any]:
        return {k: replacement if k in keys and isinstance(v, str) else v for k, v in obj.items()}

    return fix


# -- deliberate ----------------------------------------------------------------------------------
def _uri(lane: Lane, _: str, value: Any) -> Any:
    return rewrite(value, _set_strings(_keys_with_format(lane, "uri"), "https://example.com/r"))


def _date_time(lane: Lane, _: str, value: Any) -> Any:
    keys = _keys_with_format(lane, "date-time")
    return rewrite(value, _set_strings(keys, "2026-01-31T12:00:00Z"))


def _integral_floats(_: Lane, __: str, value: Any) -> Any:
    return map_scalars(value, lambda v: int(v) if type(v) is float and v.is_integer() else v)


JS_SAFE = 2**53 - 1


def _wide_integers(_: Lane, __: str, value: Any) -> Any:
    return map_scalars(value, lambda v: 1 if type(v) is int and abs(v) > JS_SAFE else v)


def _schema_defaults(lane: Lane) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for definition in lane.defs.values():
        props = definition.get("properties") if isinstance(definition, dict) else None
        for name, prop in (props or {}).items():
            if isinstance(prop, dict) and "default" in prop:
                out.setdefault(name, set()).add(json.dumps(prop["default"], sort_keys=True))
    return out


def _filled_default(lane: Lane, _: Any, e: Entry) -> bool:
    name = e.path[-1] if e.path else None
    table = _per_lane(lane, "defaults", lambda: _schema_defaults(lane))
    defaults = table.get(name, set()) if isinstance(name, str) else set()
    return e.ours is ABSENT and json.dumps(e.sdk, sort_keys=True) in defaults


def _lenient_lists(lane: Lane) -> frozenset[str]:
    """Properties that are a list (not nullable) with default-on-error, in some `$defs` type."""
    out = set()
    for definition in lane.defs.values():
        props = definition.get("properties") if isinstance(definition, dict) else None
        for name, prop in (props or {}).items():
            if isinstance(prop, dict) and prop.get("type") == "array":
                if prop.get("x-deserialize-default-on-error") is True:
                    out.add(name)
    return frozenset(out)


def _empty_list_fallback(lane: Lane, value: Any, e: Entry) -> bool:
    given = at(value, e.path)
    name = e.path[-1] if e.path else None
    return (
        e.ours is ABSENT
        and e.sdk == []
        and given is not ABSENT
        and not isinstance(given, list)
        and name in _per_lane(lane, "lenient lists", lambda: _lenient_lists(lane))
    )


DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        "uri-format",
        "deliberate",
        "the SDK checks `format: uri` (zod `z.url()`); we do not, like the reference decoders",
        repair=_uri,
    ),
    Difference(
        "date-time-format",
        "deliberate",
        "the SDK checks `format: date-time` (ISO 8601 with offset); we do not",
        repair=_date_time,
    ),
    Difference(
        "integral-floats",
        "deliberate",
        "JavaScript cannot tell 1.0 from 1: the SDK takes an integral JSON float as an integer;"
        " we do not (a JSON float is not an integer, as in serde_json)",
        repair=_integral_floats,
    ),
    Difference(
        "unbounded-64-bit",
        "deliberate",
        "the SDK checks no bounds on int64/uint64 (and rounds past 2**53); we check the bounds",
        repair=_wide_integers,
    ),
    Difference(
        "schema-defaults",
        "deliberate",
        "the SDK fills in a schema `default` for an omitted field; we keep it omitted",
        entry=_filled_default,
    ),
    Difference(
        "empty-list-fallback",
        "deliberate",
        "for an invalid optional list with default-on-error the SDK falls back to `[]`;"
        " we fall back to omitted",
        entry=_empty_list_fallback,
    ),
)
BY_ID = {d.id: d for d in DIFFERENCES}
