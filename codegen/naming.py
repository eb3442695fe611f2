"""Every public Python name of a generated package is decided here: types, variants, fields,
enum members and methods. (The private helpers of `models.py`, `_d_X`, `_K_X`, `_T_X`, `_E_X`,
are spelled from the class name `X` by the lowering and the template.)

Rules:
- A `$defs` name is kept when it is a valid, non-reserved identifier; otherwise it is made one
  (non-identifier characters become `_`, leading underscores and digits are dealt with).
- A tagged union's variant is `{Union}{Tag}`: the union's class name, then the tag in
  PascalCase (`SessionUpdateAgentMessageChunk`; a tag with no ASCII letter or digit spells
  its code points, `+` → `Tag2B`); the open catch-all is `{Union}Other`
  (`{Union}Unknown` in a union with a tag `other`); a tag-less default branch is
  `{Union}{Title}` after its title (`McpServerStdio`; `{Union}Default` when untitled or taken
  by a sibling). Nothing else in the schema changes these names: a `$defs` type that one of
  them would collide with yields and is renamed `{Name}Payload` (in ACP it is that variant's
  own payload struct). An overrides file keyed by (union, tag) pins names; a pinned name that
  collides is an error.
- A variant whose payload is itself a tagged union (on another property of the same object)
  is that union's classes, named by the same rule after the variant: `SessionUpdateStateUpdate`
  + `idle` → `SessionUpdateStateUpdateIdle` (itself a union on `stopReason`) + `end_turn` →
  `SessionUpdateStateUpdateIdleEndTurn`, so a class's name spells its whole path of tags. The
  catch-all of such a nested union takes the unknown tag as `other_{tag}`
  (`SessionUpdateStateUpdateOther(other_state=...)`): no class of the outer union has a
  free-string parameter named after an inner union's tag.
- An untagged union's inline object alternative (the JSON-RPC envelopes' responses) is a class
  `{Union}{Title}` after the alternative's title (`AgentResponseResult`, `AgentResponseError`;
  `{Union}Alternative{N}`, counted from 1, when untitled); it takes precedence over a `$defs`
  name the same way.
- An object's exclusive alternatives (exactly one of several `$defs` objects on the same JSON
  object) are one field named after the words their `$defs` names end with in common, in
  snake_case (`ElicitationSessionScope` | `ElicitationRequestScope` → `scope`; `one_of` when
  they share no last word).
- Fields: camelCase → snake_case, `_meta` → `meta`; keywords and reserved attributes get `_`.
- Enum members: UPPER_SNAKE of the title when there is one, else of the value.
- Methods: the meta.json key when it is a usable identifier, else the wire name in snake_case
  (see `method_name`); a wire name that is both a request and a notification names its request
  so, and its notification with `_notification` appended (`mcp_message`,
  `mcp_message_notification`).
Two different things with the same Python name (in one module, one class or one role's
dispatcher) are an error naming both pointers.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .diagnostics import Diagnostics
from .ir import (
    EnumType,
    Exclusive,
    Field,
    Method,
    Model,
    ObjectType,
    TaggedUnion,
    UnionLevel,
    UntaggedUnion,
    merge_fields,
    union_levels,
)
from .modules import extra_exports

# Names the generated package defines itself; a schema may not take them.
RUNTIME_NAMES = frozenset(
    {"DecodeError", "UNSET", "UnsetType", "JsonValue", "Model", "decode", "encode", "TypeAlias"}
    | {"METHODS", "MethodInfo", "SCHEMA_REF", "SCHEMA_SHA256", "PROTOCOL_VERSION"}
)
# A class named `str` or `list` would shadow the builtin that every decoder uses.
BUILTIN_NAMES = frozenset(n for n in dir(builtins) if not n.startswith("_"))
# Attributes every generated class has, `__init__`'s `self`, and the builtins named by the
# annotation every class has (`extra: dict[str, Any]`), which a field of that name would hide.
RESERVED_ATTRS = frozenset(
    {"extra", "from_json", "to_json", "TAG", "TAGS", "TAG_FIELD", "RESERVED_TAGS", "self"}
    | {"str", "dict", "list", "int", "float", "bool", "frozenset"}
)
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+|[0-9]+")
_NON_WORD = re.compile(r"\W", flags=re.ASCII)


def pascal(text: str) -> str:
    words = _WORD.findall(text)
    return "".join(w[:1].upper() + w[1:] for w in words)


def snake(text: str) -> str:
    return "_".join(w.lower() for w in _WORD.findall(text))


def upper_snake(text: str) -> str:
    return snake(text).upper()


def identifier(text: str, fallback: str) -> str:
    """A valid, non-keyword identifier made from `text`."""
    name = _NON_WORD.sub("_", text).strip("_") or fallback
    if name[0].isdigit():
        name = f"{fallback}_{name}"
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        name += "_"
    return name


@dataclass
class Names:
    """Every Python name the generator emits, by what it names."""

    types: dict[str, str] = field(default_factory=dict)
    variants: dict[tuple[str, str], str] = field(default_factory=dict)
    open_variants: dict[str, str] = field(default_factory=dict)
    fallback_variants: dict[str, str] = field(default_factory=dict)
    members: dict[tuple[str, str | int], str] = field(default_factory=dict)
    # (wire method, "request" | "notification") → handler name
    methods: dict[tuple[str, str], str] = field(default_factory=dict)
    # (untagged union, branch index) → the class of that inline object alternative
    inline: dict[tuple[str, int], str] = field(default_factory=dict)
    # class → the Python name of its exclusive alternatives' field (`scope`)
    exclusive: dict[str, str] = field(default_factory=dict)
    _fields: dict[str, dict[str, str]] = field(default_factory=dict)

    def fields(self, owner: str) -> Mapping[str, str]:
        """Wire name → Python name of the fields of the class `owner` (a Python class name)."""
        return self._fields[owner]


def assign_names(model: Model, overrides: dict[str, Any] | None, diags: Diagnostics) -> Names:
    names = Names()
    taken: dict[str, str] = {}  # python name → JSON pointer that owns it
    reserved = RUNTIME_NAMES | BUILTIN_NAMES | extra_exports()

    def claim(py: str, pointer: str) -> None:
        if py in taken:
            diags.error(pointer, f"Python name {py!r} is also used by {taken[py]}")
        else:
            taken[py] = pointer

    unions = [t for t in model.types if isinstance(t, TaggedUnion)]
    levels = {u.name: union_levels(model, u) for u in unions}
    pinned = _check_overrides(overrides, unions, reserved, diags)
    plain = {t.name: _type_name(t.name, reserved) for t in model.types}
    # The rule's names come first: a `$defs` type that one of them would take is renamed.
    wanted: set[str] = set()
    for u in unions:
        for _, ruled in _level_names(levels[u.name], plain[u.name], pinned, reserved):
            wanted.update(ruled.variants.values())
            wanted.update(py for py in (ruled.other, ruled.default) if py)
    wanted -= set(pinned.values())
    inline = _inline_names(model, plain, reserved)
    wanted.update(py for py, _ in inline.values())
    for t in model.types:
        py = plain[t.name] + "Payload" if plain[t.name] in wanted else plain[t.name]
        names.types[t.name] = py
        claim(py, t.pointer)

    for u in unions:
        for level, ruled in _level_names(levels[u.name], names.types[u.name], pinned, reserved):
            for v in level.union.variants:
                names.variants[(level.key, v.tag)] = ruled.variants[v.tag]
                claim(ruled.variants[v.tag], v.pointer)
            if level.union.open is not None:
                names.open_variants[level.key] = ruled.other
                claim(ruled.other, level.union.open.pointer)
            if level.union.fallback is not None:
                names.fallback_variants[level.key] = ruled.default
                claim(ruled.default, level.union.fallback.pointer)

    for key, (py, pointer) in inline.items():
        names.inline[key] = py
        claim(py, pointer)

    classes = frozenset(taken)  # a field may not hide a class its annotations name
    for t in model.types:
        if isinstance(t, UntaggedUnion):
            for i, b in enumerate(t.branches):
                if b.inline is not None:
                    py = names.inline[(t.name, i)]
                    names._fields[py] = _field_names(b.inline.fields, classes, diags)
                    _exclusive_name(py, b.inline.exclusive, names, diags)
        if isinstance(t, ObjectType):
            names._fields[names.types[t.name]] = _field_names(t.fields, classes, diags)
        elif isinstance(t, TaggedUnion):
            for level in levels[t.name]:
                _level_field_names(level, names, classes, diags)
        elif isinstance(t, EnumType):
            _member_names(t, names, diags)
        for owner, exclusive in exclusive_owners(t, names):
            _exclusive_name(owner, exclusive, names, diags)
    _method_names(model.methods, names, diags)
    return names


def _level_names(
    levels: list[UnionLevel],
    union_py: str,
    pinned: dict[tuple[str, str | None], str],
    reserved: frozenset[str],
) -> list[tuple[UnionLevel, _UnionNames]]:
    """The rule's names of each level's classes: a nested level is named after the variant it
    expands (`SessionUpdateStateUpdate` → `SessionUpdateStateUpdateIdle`), so that the whole
    path of tags, and nothing else, spells a class's name. Pins apply at the top level."""
    out: list[tuple[UnionLevel, _UnionNames]] = []
    by_key: dict[str, _UnionNames] = {}
    for level in levels:
        if level.parent is None:
            ruled = _union_names(level.union, union_py, reserved)
            ruled.variants.update(
                {tag: py for (name, tag), py in pinned.items() if name == level.key and tag}
            )
            if (level.key, None) in pinned:
                ruled = ruled._replace(other=pinned[(level.key, None)])
        else:
            ruled = _union_names(level.union, by_key[level.parent].variants[level.via], reserved)
        by_key[level.key] = ruled
        out.append((level, ruled))
    return out


def _level_field_names(
    level: UnionLevel,
    names: Names,
    classes: frozenset[str],
    diags: Diagnostics,
) -> None:
    """The field names of each class of one level: its own fields after those of the levels
    above. The catch-all of a nested level takes its unknown tag as `other_{tag}` (so that no
    class of the outer union has a free-string parameter named after an inner union's tag)."""
    u = level.union
    for v in u.variants:
        # A nested variant is a union of classes: its names are those of the fields its
        # classes share (the ones outside the payload union).
        fields = merge_fields(level.fields, v.fields)
        names._fields[names.variants[(level.key, v.tag)]] = _field_names(fields, classes, diags)
    if u.open is not None:
        found = _field_names(merge_fields(level.fields, u.open.fields), classes, diags)
        if level.parent is not None:
            found[u.tag] = "other_" + found[u.tag]
        names._fields[names.open_variants[level.key]] = found
    if u.fallback is not None:
        fallback = names.fallback_variants[level.key]
        names._fields[fallback] = _field_names(
            merge_fields(level.fields, u.fallback.fields), classes, diags
        )


def _inline_names(
    model: Model, plain: dict[str, str], reserved: frozenset[str]
) -> dict[tuple[str, int], tuple[str, str]]:
    """`{Union}{Title}` for every inline object alternative of an untagged union, with the
    alternative's pointer."""
    out: dict[tuple[str, int], tuple[str, str]] = {}
    for t in model.types:
        if not isinstance(t, UntaggedUnion):
            continue
        for i, b in enumerate(t.branches):
            if b.inline is not None:
                py = identifier(
                    plain[t.name] + (pascal(b.title or "") or f"Alternative{i + 1}"), "Type"
                )
                out[(t.name, i)] = (py + "_" if py in reserved else py, b.inline.pointer)
    return out


def exclusive_owners(t: Any, names: Names) -> list[tuple[str, Exclusive]]:
    """(class, its exclusive group) for the classes of an object type or tagged union."""
    if isinstance(t, ObjectType):
        owners = [(names.types[t.name], t.exclusive)]
    elif isinstance(t, TaggedUnion):
        owners = [(names.variants[(t.name, v.tag)], v.exclusive) for v in t.variants]
        if t.open is not None:
            owners.append((names.open_variants[t.name], t.open.exclusive))
        if t.fallback is not None:
            owners.append((names.fallback_variants[t.name], t.fallback.exclusive))
    else:
        owners = []
    return [(py, e) for py, e in owners if e is not None]


def exclusive_field(exclusive: Exclusive) -> str:
    """The field of a group of exclusive alternatives: the words their `$defs` names end
    with in common (`ElicitationSessionScope`, `ElicitationRequestScope` → `scope`)."""
    words = [_WORD.findall(a.ref) for a in exclusive.alternatives]
    common: list[str] = []
    while all(len(w) > len(common) for w in words):
        last = {w[-1 - len(common)] for w in words}
        if len(last) != 1:
            break
        common.insert(0, last.pop())
    return field_name("".join(common)) if common else "one_of"


def _exclusive_name(
    owner: str, exclusive: Exclusive | None, names: Names, diags: Diagnostics
) -> None:
    if exclusive is None:
        return
    py = exclusive_field(exclusive)
    if py in names._fields[owner].values():
        diags.error(
            exclusive.pointer,
            f"exclusive alternatives of {owner} map to field {py!r}, as does a property",
        )
    names.exclusive[owner] = py


def _type_name(name: str, reserved: frozenset[str]) -> str:
    py = identifier(name, "Type")
    return py + "_" if py in reserved else py


def _tag_part(tag: str) -> str:
    """The tag in PascalCase; a tag without an ASCII letter or digit spells its code points
    (`'+'` → `Tag2B`), so that it still names one class of its own."""
    return pascal(tag) or "Tag" + "_".join(f"{ord(ch):X}" for ch in tag)


class _UnionNames(NamedTuple):
    """The rule's names of one union's classes: by tag, the catch-all, the default branch."""

    variants: dict[str, str]
    other: str
    default: str


def _union_names(u: TaggedUnion, union_py: str, reserved: frozenset[str]) -> _UnionNames:
    """`{Union}{Tag}`, `{Union}Other`, `{Union}{Title}`: a function of the union alone, so
    that no change elsewhere in the schema renames these classes."""

    def name(part: str) -> str:
        py = identifier(union_py + part, "Type")
        return py + "_" if py in reserved else py

    variants = {v.tag: name(_tag_part(v.tag)) for v in u.variants}
    other = default = ""
    if u.open is not None:
        other = name("Unknown" if name("Other") in variants.values() else "Other")
    if u.fallback is not None:
        default = name(pascal(u.fallback.title) or "Default")
        if default in variants.values():
            default = name("Default")
    return _UnionNames(variants, other, default)


def field_name(wire: str) -> str:
    py = snake(wire) or identifier(wire, "field")
    py = identifier(py, "field")
    if py in RESERVED_ATTRS:
        py += "_"
    return py


def _field_names(
    fields: tuple[Field, ...], classes: frozenset[str], diags: Diagnostics
) -> dict[str, str]:
    seen: dict[str, str] = {}
    out: dict[str, str] = {}
    for f in fields:
        py = field_name(f.wire)
        if py in classes:
            py += "_"
        if py in seen:
            diags.error(
                f.pointer, f"field {f.wire!r} maps to Python name {py!r}, as does {seen[py]}"
            )
        seen[py] = f.pointer
        out[f.wire] = py
    return out


def _member_names(t: EnumType, names: Names, diags: Diagnostics) -> None:
    seen: dict[str, str | int] = {}
    for m in t.members:
        if isinstance(m.value, int) and not (m.title and upper_snake(m.title)):
            py = "VALUE_" + str(m.value).replace("-", "MINUS_")  # keep the sign: -1 is not 1
        else:
            py = upper_snake(m.title if isinstance(m.value, int) and m.title else str(m.value))
            py = py or "VALUE_EMPTY"
        py = identifier(py, "VALUE")
        if py.startswith("_") or py in ("NAME", "VALUE"):
            py = "V" + py
        if py in seen:
            diags.error(
                t.pointer, f"enum values {seen[py]!r} and {m.value!r} both map to member {py}"
            )
            continue
        seen[py] = m.value
        names.members[(t.name, m.value)] = py


def _check_overrides(
    overrides: dict[str, Any] | None,
    unions: list[TaggedUnion],
    reserved: frozenset[str],
    diags: Diagnostics,
) -> dict[tuple[str, str | None], str]:
    """Overrides: `{"Union": {"tag": "Name", ...}}`; the key `"*"` names the open variant."""
    pinned: dict[tuple[str, str | None], str] = {}
    if not overrides:
        return pinned
    by_name = {u.name: u for u in unions}
    for union, tags in overrides.items():
        u = by_name.get(union)
        if u is None or not isinstance(tags, dict):
            diags.error(
                f"overrides/{union}", f"override names {union!r}, which is not a tagged union"
            )
            continue
        for tag, py in tags.items():
            known = tag in u.known_tags or (tag == "*" and u.open is not None)
            if not known:
                diags.error(
                    f"overrides/{union}/{tag}",
                    f"override names tag {tag!r}, which {union} does not have",
                )
            elif not isinstance(py, str) or not py.isidentifier() or keyword.iskeyword(py):
                diags.error(
                    f"overrides/{union}/{tag}", f"override {py!r} is not a valid Python identifier"
                )
            elif py in reserved or py.startswith("_"):  # `_` names are the modules' own
                diags.error(
                    f"overrides/{union}/{tag}",
                    f"override {py!r} is a name the generated package reserves",
                )
            else:
                pinned[(union, None if tag == "*" else tag)] = py
    return pinned


# Attributes of the generated AgentBase/ClientBase/stubs and their runtime base.
METHOD_RESERVED = frozenset({"agent", "client", "connection", "ext_method", "ext_notification"})


def _method_names(methods: tuple[Method, ...], names: Names, diags: Diagnostics) -> None:
    """The handler name of every method some role handles; two methods of one role (its
    base class and stub) with one name are an error."""
    seen: dict[tuple[str, str], Method] = {}  # (role, python name) → the method that has it
    requests = {m.name for m in methods if m.kind == "request"}
    for method in methods:
        if not method.roles:
            continue
        py = method_name(method, twin=method.kind == "notification" and method.name in requests)
        names.methods[(method.name, method.kind)] = py
        for role in method.roles:
            other = seen.setdefault((role, py), method)
            if other is not method:
                where = f" at {other.pointer}" if other.pointer else ""
                diags.error(
                    method.pointer,
                    f"method {method.name!r} maps to Python name {py!r} ({role} side), "
                    f"as does {other.name!r}{where}",
                )
                break


def method_name(method: Method, *, twin: bool = False) -> str:
    """The Python method name of a JSON-RPC method: its meta.json key when that is a usable
    identifier (`session_prompt`), else one derived from the wire name (`session/prompt` →
    `session_prompt`); the notification `twin` of a request of the same wire name gets
    `_notification` appended (`mcp_message_notification`); names the generated bases and stubs
    already use get a trailing `_`."""
    key = method.key
    if not (key.isidentifier() and key.isascii() and key == key.lower()) or key[0] == "_":
        key = _method_snake(method.name)
    if twin:
        key += "_notification"
    if keyword.iskeyword(key) or key in METHOD_RESERVED:
        key += "_"
    return key


def _method_snake(wire: str) -> str:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", wire)
    words = re.sub(r"[^0-9A-Za-z]+", "_", spaced).strip("_").lower()
    if not words:
        return "method_"
    return "m_" + words if words[0].isdigit() else words
