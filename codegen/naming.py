"""Every public Python name of a generated package is decided here: types, variants, fields,
enum members and methods. (The private helpers of `models.py`, `_d_X`, `_K_X`, `_T_X`, `_E_X`,
are spelled from the class name `X` by the lowering and the template.)

Rules:
- A `$defs` name is kept when it is a valid, non-reserved identifier; otherwise it is made one
  (non-identifier characters become `_`, leading underscores and digits are dealt with).
- A tagged union's variant takes its tag's PascalCase name when no `$defs` entry, no other
  variant and no runtime name wants it, else `{Union}{Tag}`, else `{Tag}{Union}`. The open
  catch-all is `{Union}{Title}` (`SessionUpdateOther`). An overrides file keyed by
  (union, tag) pins names.
- Fields: camelCase → snake_case, `_meta` → `meta`; keywords and reserved attributes get `_`.
- Enum members: UPPER_SNAKE of the title when there is one, else of the value.
- Methods: the meta.json key when it is a usable identifier, else the wire name in snake_case
  (see `method_name`).
Two different things with the same Python name (in one module, one class or one role's
dispatcher) are an error naming both pointers.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .diagnostics import Diagnostics
from .ir import EnumType, Field, Method, Model, ObjectType, TaggedUnion
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
    {"extra", "from_json", "to_json", "TAG", "TAG_FIELD", "RESERVED_TAGS", "self"}
    | {"str", "dict", "list", "int", "float", "bool", "frozenset"}
)
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+|[0-9]+")


def pascal(text: str) -> str:
    words = _WORD.findall(text)
    return "".join(w[:1].upper() + w[1:] for w in words)


def snake(text: str) -> str:
    return "_".join(w.lower() for w in _WORD.findall(text))


def upper_snake(text: str) -> str:
    return snake(text).upper()


def identifier(text: str, fallback: str) -> str:
    """A valid, non-keyword identifier made from `text`."""
    name = re.sub(r"\W", "_", text, flags=re.ASCII).strip("_") or fallback
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
    methods: dict[str, str] = field(default_factory=dict)  # wire method → handler name
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

    for t in model.types:
        py = identifier(t.name, "Type")
        if py in reserved:
            py += "_"
        names.types[t.name] = py
        claim(py, t.pointer)

    unions = [t for t in model.types if isinstance(t, TaggedUnion)]
    pinned = _check_overrides(overrides, unions, reserved, diags)
    wanted: dict[str, int] = {}
    for u in unions:
        for v in u.variants:
            base = pascal(v.tag)
            wanted[base] = wanted.get(base, 0) + 1
    for u in unions:
        union_py = names.types[u.name]
        for v in u.variants:
            base = identifier(pascal(v.tag), "Tag")
            free = wanted.get(pascal(v.tag), 0) == 1 and base not in taken and base not in reserved
            py = pinned.get((u.name, v.tag)) or _first_free(
                ([base] if free else []) + [union_py + base, base + union_py], taken, reserved
            )
            names.variants[(u.name, v.tag)] = py
            claim(py, v.pointer)
        if u.open is not None:
            py = pinned.get((u.name, None)) or union_py + identifier(pascal(u.open.title), "Other")
            names.open_variants[u.name] = py
            claim(py, u.open.pointer)
        if u.fallback is not None:
            title = identifier(pascal(u.fallback.title), "Default")
            py = _first_free(
                [union_py + title, title + union_py, union_py + title + "Default"],
                taken,
                reserved,
            )
            names.fallback_variants[u.name] = py
            claim(py, u.fallback.pointer)

    classes = frozenset(taken)  # a field may not hide a class its annotations name
    for t in model.types:
        if isinstance(t, ObjectType):
            names._fields[names.types[t.name]] = _field_names(t.fields, classes, diags)
        elif isinstance(t, TaggedUnion):
            for v in t.variants:
                names._fields[names.variants[(t.name, v.tag)]] = _field_names(
                    v.fields, classes, diags
                )
            if t.open is not None:
                names._fields[names.open_variants[t.name]] = _field_names(
                    t.open.fields, classes, diags
                )
            if t.fallback is not None:
                fallback = names.fallback_variants[t.name]
                names._fields[fallback] = _field_names(t.fallback.fields, classes, diags)
        elif isinstance(t, EnumType):
            _member_names(t, names, diags)
    _method_names(model.methods, names, diags)
    return names


def _first_free(candidates: list[str], taken: dict[str, str], reserved: frozenset[str]) -> str:
    """The first candidate nobody owns yet; the first one (reported by `claim`) otherwise."""
    for name in candidates:
        if name not in taken and name not in reserved:
            return name
    return candidates[0]


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
    for method in methods:
        if not method.roles:
            continue
        py = method_name(method)
        names.methods[method.name] = py
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


def method_name(method: Method) -> str:
    """The Python method name of a JSON-RPC method: its meta.json key when that is a usable
    identifier (`session_prompt`), else one derived from the wire name (`session/prompt` →
    `session_prompt`); names the generated bases and stubs already use get a trailing `_`."""
    key = method.key
    if not (key.isidentifier() and key.isascii() and key == key.lower()) or key[0] == "_":
        key = _method_snake(method.name)
    if keyword.iskeyword(key) or key in METHOD_RESERVED:
        key += "_"
    return key


def _method_snake(wire: str) -> str:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", wire)
    words = re.sub(r"[^0-9A-Za-z]+", "_", spaced).strip("_").lower()
    if not words:
        return "method_"
    return "m_" + words if words[0].isdigit() else words
