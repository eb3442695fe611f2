"""Build the frozen IR from a loaded schema: classify every `$defs` entry, infer tags, find methods.

The rules, in the order they are tried for one definition:
1. `enum`, or a union whose branches are all `const` strings (or all integers), is an enum;
   a branch of the same JSON type without `const` makes it open.
2. A union whose branches share a required `const` property is a tagged union on that
   property (`discriminator.propertyName` names it outright). At most one branch lacks the
   const: that is the open catch-all, and its `not` clause lists the reserved tags.
3. An object with an untagged union of object alternatives is one object (see `Resolver.fields`);
   alternatives that are `$defs` objects with disjoint required keys are its `Exclusive`
   group instead (exactly one applies: `Resolver.exclusive`, attached by `_with_exclusive`).
4. Any other union is untagged: decoded by JSON type, then by required keys.
5. Objects become classes; everything else is an alias of a shape.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal, TypeVar

from ..diagnostics import Diagnostics, pointer_join
from ..ir import (
    Alias,
    Branch,
    EnumMember,
    EnumType,
    Field,
    JsonKind,
    Method,
    Model,
    ObjectType,
    OpenVariant,
    Shape,
    TaggedUnion,
    TypeDef,
    UntaggedUnion,
    Variant,
    alias_refs,
)
from .load import Source, meta_names
from .methods import batch_titles, find_methods
from .resolve import KNOWN_LENIENCY, Resolver, branches_of, def_pointer
from .walk import iter_keys, pointer

_V = TypeVar("_V", Variant, OpenVariant)


def build_model(source: Source, diags: Diagnostics) -> Model:
    schema = source.schema
    defs: dict[str, Any] = schema["$defs"]
    builder = _Builder(Resolver(defs, diags), diags)
    _check_leniency_keywords(schema, diags)
    types = _break_alias_cycles(tuple(builder.get(name) for name in defs), diags)
    meta_name = meta_names(source.path.name)[0]
    methods: tuple[Method, ...] = find_methods(
        defs, source.meta, source.stable_meta, diags, meta_name
    )
    title = schema.get("title") if isinstance(schema.get("title"), str) else ""
    version = _protocol_version(source)
    return Model(
        title=title or "",
        version=version,
        types=types,
        methods=methods,
        batches=batch_titles(schema),
    )


def _protocol_version(source: Source) -> int | None:
    """meta.json's `version`; without one (the npm package ships no meta files), the lane
    folder the schema sits in, as upstream lays them out (`v2/schema.json` → 2)."""
    version = source.meta.get("version") if source.meta else None
    if type(version) is int:
        return version
    lane = source.path.parent.name
    if lane[:1] == "v" and lane[1:].isdigit() and len(lane) <= 4:
        return int(lane[1:])
    return None


def _break_alias_cycles(types: tuple[TypeDef, ...], diags: Diagnostics) -> tuple[TypeDef, ...]:
    """Aliases are module-level expressions: one that reaches itself through aliases alone
    (`A = list[A]`) cannot be written out, so it is kept as raw JSON, with a warning."""
    index = {t.name: t for t in types}

    def aliases_named(t: TypeDef) -> list[str]:
        return [r for r in alias_refs(t) if isinstance(index.get(r), Alias | UntaggedUnion)]

    def reaches_itself(t: TypeDef) -> bool:
        stack, seen = aliases_named(t), set()
        while stack:
            name = stack.pop()
            if name == t.name:
                return True
            if name not in seen:
                seen.add(name)
                stack.extend(aliases_named(index[name]))
        return False

    out = list(types)
    for i, t in enumerate(types):
        if reaches_itself(t):
            diags.warning(t.pointer, "refers to itself through aliases only; kept as raw JSON")
            out[i] = Alias(t.name, t.doc, Shape("any"), t.pointer)
    return tuple(out)


def _check_leniency_keywords(schema: dict[str, Any], diags: Diagnostics) -> None:
    if not _unknown_leniency(schema):  # the usual case, found without building paths
        return
    for path, key, _ in iter_keys(schema):
        if key.startswith("x-deserialize-") and key not in KNOWN_LENIENCY:
            diags.error(
                pointer("#", path), f"unknown leniency rule {key!r}: the generator cannot honour it"
            )


def _unknown_leniency(schema: dict[str, Any]) -> bool:
    """Whether any object below `schema` has an `x-deserialize-` key the generator does not know."""
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            for key, value in node.items():
                if key.startswith("x-deserialize-") and key not in KNOWN_LENIENCY:
                    return True
                if type(value) is dict or type(value) is list:
                    stack.append(value)
        else:
            stack.extend(v for v in node if type(v) is dict or type(v) is list)
    return False


class _Builder:
    def __init__(self, resolver: Resolver, diags: Diagnostics) -> None:
        self.r = resolver
        self.diags = diags
        self.built: dict[str, TypeDef] = {}
        self.building: set[str] = set()

    def get(self, name: str) -> TypeDef:
        if name not in self.built:
            if name in self.building:  # a union reaching itself: judge it by shape only
                return Alias(name, "", Shape("any"), def_pointer(name))
            self.building.add(name)
            self.built[name] = _with_exclusive(self.r, self._build(name, self.r.defs[name]))
            self.building.discard(name)
        return self.built[name]

    # -- classification -------------------------------------------------------------------
    def _build(self, name: str, node: Any) -> TypeDef:
        at = def_pointer(name)
        if not isinstance(node, dict):
            if node is not True:
                self.diags.warning(at, "definition is not an object schema; kept as raw JSON")
            return Alias(name, "", Shape("any"), at)
        doc = _text(node.get("description"))
        if isinstance(node.get("enum"), list):
            enum = self._plain_enum(name, doc, node, at)
            if enum is not None:
                return enum
        found = branches_of(node)
        if found is not None:
            key, branches = found
            enum = self._const_enum(name, doc, branches, at)
            if enum is not None:
                return enum
            tagged = self._tagged(name, doc, node, key, branches, at)
            if tagged is not None:
                return tagged
            if not _is_object(node):
                return self._untagged(name, doc, key, branches, at)
        if _is_object(node):
            return ObjectType(name, doc, tuple(self.r.fields(node, at)), at)
        return Alias(name, doc, self.r.shape(node, at), at)

    def _plain_enum(self, name: str, doc: str, node: dict[str, Any], at: str) -> EnumType | None:
        values = node["enum"]
        kinds = {type(v) for v in values}
        if not values or kinds not in ({str}, {int}):
            return None
        members = tuple(EnumMember(v, None, "") for v in values)
        return EnumType(name, doc, "str" if kinds == {str} else "int", members, False, "", at)

    def _const_enum(self, name: str, doc: str, branches: list[Any], at: str) -> EnumType | None:
        members: list[EnumMember] = []
        open_doc: str | None = None
        open_shape = Shape("any")
        kinds: set[type] = set()
        for b in branches:
            if not isinstance(b, dict) or "properties" in b or "allOf" in b or "$ref" in b:
                return None
            if "const" in b:
                value = b["const"]
                if type(value) not in (str, int):
                    return None
                kinds.add(type(value))
                members.append(
                    EnumMember(value, _text(b.get("title")) or None, _text(b.get("description")))
                )
            elif b.get("type") in ("string", "integer") and open_doc is None:
                kinds.add(str if b["type"] == "string" else int)
                open_doc = _text(b.get("description"))
                open_shape = self.r.shape(b, at)
            else:
                return None
        if not members or len(kinds) != 1:
            return None
        kind: Literal["str", "int"] = "str" if kinds == {str} else "int"
        return EnumType(
            name,
            doc,
            kind,
            tuple(members),
            open_doc is not None,
            open_doc or "",
            at,
            open_shape.minimum if kind == "int" else None,
            open_shape.maximum if kind == "int" else None,
        )

    # -- tagged unions --------------------------------------------------------------------
    def _tagged(
        self,
        name: str,
        doc: str,
        node: dict[str, Any],
        key: str,
        branches: list[Any],
        at: str,
    ) -> TaggedUnion | None:
        consts = [self._consts(b) for b in branches]
        disc = node.get("discriminator")
        if isinstance(disc, dict) and isinstance(disc.get("propertyName"), str):
            tag: str | None = disc["propertyName"]
        else:
            tag = _infer_tag(consts)
        if tag is None:
            return None
        tagged_idx = [i for i, c in enumerate(consts) if tag in c]
        loose_idx = [i for i, c in enumerate(consts) if tag not in c]
        if not tagged_idx or len(loose_idx) > 2:
            return None
        shared_node = {
            k: v for k, v in node.items() if k not in ("anyOf", "oneOf", "discriminator")
        }
        shared = self.r.fields(shared_node, at, skip=frozenset({tag}))
        own_tag = next((f for f in self.r.fields(shared_node, at) if f.wire == tag), None)
        lenient_tag = own_tag is not None and own_tag.leniency.default_on_error
        variants: list[Variant] = []
        seen: dict[str, str] = {}
        for i in tagged_idx:
            b, bat = branches[i], pointer_join(at, key, i)
            value = consts[i][tag]
            if value in seen:
                self.diags.error(
                    bat, f"tag {value!r} of {tag!r} is used twice (first at {seen[value]})"
                )
                continue
            seen[value] = bat
            variants.append(self._variant(b, bat, tag, value, shared))
        open_variant: OpenVariant | None = None
        fallback: Variant | None = None
        for i in loose_idx:
            b, bat = branches[i], pointer_join(at, key, i)
            own = self.r.fields(b, bat)
            tag_field = next((f for f in own if f.wire == tag), None)
            if (tag_field is None and not _declares(b, tag)) or _is_null_tag(tag_field):
                if fallback is not None:
                    return None
                # Without the tag, or with it as `null` (kept as the branch's own field, with
                # the union's leniency for it): the branch for an absent tag.
                if tag_field is not None and own_tag is not None:
                    merged = replace(tag_field, leniency=own_tag.leniency, doc=own_tag.doc)
                    own = [merged if f.wire == tag else f for f in own]
                title = _text(b.get("title")) or "default"
                payload = _single_payload(self.r, b, tag, bat)
                fallback = Variant(
                    "", _text(b.get("description")), _merge(shared, own), payload, bat, title
                )
                continue
            if open_variant is not None or tag_field is None:
                return None
            if tag_field.shape.kind not in ("str", "any"):
                return None  # the tag is there but not a string: not a tagged union
            own = [_as_required_str(f) if f.wire == tag else f for f in own]
            reserved = sorted(set(seen) | set(_reserved_tags(b, tag)), key=str)
            title = _text(b.get("title")) or "other"
            open_variant = OpenVariant(
                title, _text(b.get("description")), _merge(shared, own), tuple(reserved), bat
            )
        return TaggedUnion(
            name,
            doc,
            tag,
            tuple(variants),
            open_variant,
            at,
            fallback=fallback,
            lenient_tag=lenient_tag and fallback is not None,
        )

    def _variant(self, b: Any, at: str, tag: str, value: str, shared: list[Field]) -> Variant:
        """A tagged branch; a payload that is itself a tagged union (on another property)
        is kept as that union, and the variant's fields are only those outside it."""
        payload = _single_payload(self.r, b, tag, at)
        doc = _text(b.get("description")) or (
            _text(self.r.definition(payload).get("description")) if payload else ""
        )
        inner = self.get(payload) if payload else None
        if isinstance(inner, TaggedUnion) and inner.tag != tag:
            return Variant(value, doc, tuple(shared), payload, at, nested=payload)
        own = self.r.fields(b, at, skip=frozenset({tag}))
        return Variant(value, doc, _merge(shared, own), payload, at)

    def _consts(self, branch: Any, depth: int = 0) -> dict[str, str]:
        """The string `const` properties of a branch, looking through `allOf` references."""
        out: dict[str, str] = {}
        if not isinstance(branch, dict) or depth > 8:
            return out
        props = branch.get("properties")
        if isinstance(props, dict):
            for prop, sub in props.items():
                if isinstance(sub, dict) and isinstance(sub.get("const"), str):
                    out[prop] = sub["const"]
                elif (
                    isinstance(sub, dict)
                    and isinstance(sub.get("enum"), list)
                    and len(sub["enum"]) == 1
                ):
                    if isinstance(sub["enum"][0], str):
                        out[prop] = sub["enum"][0]
        refs = []
        if "$ref" in branch:
            refs.append(branch)
        if isinstance(branch.get("allOf"), list):
            refs.extend(branch["allOf"])
        for sub in refs:
            target = self.r.ref_name(sub, "") if isinstance(sub, dict) and "$ref" in sub else None
            nested = self._consts(self.r.definition(target) if target else sub, depth + 1)
            for prop, value in nested.items():
                out.setdefault(prop, value)
        return out

    # -- untagged unions ------------------------------------------------------------------
    def _untagged(
        self, name: str, doc: str, key: str, branches: list[Any], at: str
    ) -> UntaggedUnion:
        out: list[Branch] = []
        for i, b in enumerate(branches):
            bat = pointer_join(at, key, i)
            shape = self.r.shape(b, bat)
            title = _text(b.get("title")) if isinstance(b, dict) else ""
            bdoc = _text(b.get("description")) if isinstance(b, dict) else ""
            json_kind, required = self._json_kind(shape, b)
            if any((o.shape, o.json_kind, o.required) == (shape, json_kind, required) for o in out):
                continue  # the same alternative again (v0.2's ClientResponse has `null` thrice)
            inline = (
                _inline_object(self.r, f"{name}/{i}", b, bdoc, bat)
                if shape.kind == "object"
                else None
            )
            out.append(Branch(title or None, bdoc, shape, json_kind, required, inline))
        return UntaggedUnion(name, doc, tuple(out), at)

    def _json_kind(self, shape: Shape, node: Any) -> tuple[JsonKind, tuple[str, ...]]:
        """The JSON type of an alternative, and the keys that tell it apart: an object's
        required keys (a tagged union's tag), or those of the first item of a list."""
        if shape.kind == "ref" and shape.ref is not None:
            target = self.get(shape.ref)
            if isinstance(target, ObjectType):
                return "object", tuple(f.wire for f in target.fields if f.required)
            if isinstance(target, TaggedUnion):
                return "object", (target.tag,)
            if isinstance(target, EnumType):
                return target.value_kind, ()
            if isinstance(target, Alias):
                return self._json_kind(target.shape, None)
            return "any", ()
        if shape.kind == "object":
            req = node.get("required") if isinstance(node, dict) else None
            return "object", tuple(r for r in req or () if isinstance(r, str))
        if shape.kind == "list":
            items = node.get("items") if isinstance(node, dict) else None
            kind, keys = self._json_kind(shape.item or Shape("any"), items)
            return "list", keys if kind == "object" else ()
        return _JSON_KINDS.get(shape.kind, "any"), ()


def _inline_object(r: Resolver, name: str, node: Any, doc: str, at: str) -> ObjectType | None:
    """An untagged union's inline object alternative that declares properties, as a class."""
    if not isinstance(node, dict) or not isinstance(node.get("properties"), dict):
        return None
    return ObjectType(name, doc, tuple(r.fields(node, at)), at, r.exclusive(node, at))


def _with_exclusive(r: Resolver, t: TypeDef) -> TypeDef:
    """`t` with the `Exclusive` group of each of its objects (the object, or each variant of
    a tagged union, found from the branch its pointer names); `t` itself when it has none."""
    if isinstance(t, ObjectType):
        found = r.exclusive(_node_at(r.defs, t.pointer), t.pointer)
        return replace(t, exclusive=found) if found is not None else t
    if isinstance(t, TaggedUnion):
        variants = tuple(_variant_exclusive(r, v) for v in t.variants)
        open_variant = _variant_exclusive(r, t.open) if t.open is not None else None
        fallback = _variant_exclusive(r, t.fallback) if t.fallback is not None else None
        if (variants, open_variant, fallback) != (t.variants, t.open, t.fallback):
            return replace(t, variants=variants, open=open_variant, fallback=fallback)
    return t


def _variant_exclusive(r: Resolver, v: _V) -> _V:
    found = r.exclusive(_node_at(r.defs, v.pointer), v.pointer)
    return replace(v, exclusive=found) if found is not None else v


def _node_at(defs: dict[str, Any], at: str) -> Any:
    """The schema node a `#/$defs/...` pointer names (None when it names nothing)."""
    node: Any = defs
    for part in at.split("/")[2:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return None
    return node


_JSON_KINDS: dict[str, JsonKind] = {
    "str": "str",
    "int": "int",
    "float": "float",
    "bool": "bool",
    "null": "null",
}


def _infer_tag(consts: list[dict[str, str]]) -> str | None:
    """The property that carries a `const` in every branch but at most two (a catch-all and a
    branch without the tag; `_tagged` checks what those two are)."""
    counts: dict[str, int] = {}
    for c in consts:
        for prop in c:
            counts[prop] = counts.get(prop, 0) + 1
    need = max(1, len(consts) - 2)
    candidates = [p for p, n in counts.items() if n >= need and n >= 1]
    if not candidates:
        return None
    # Prefer the property present in the most branches; ties go to first seen.
    return max(candidates, key=lambda p: counts[p])


def _reserved_tags(branch: dict[str, Any], tag: str) -> list[str]:
    negated = branch.get("not")
    if not isinstance(negated, dict):
        return []
    alts = negated.get("anyOf") or negated.get("oneOf") or [negated]
    out = []
    for alt in alts if isinstance(alts, list) else []:
        props = alt.get("properties") if isinstance(alt, dict) else None
        sub = props.get(tag) if isinstance(props, dict) else None
        if isinstance(sub, dict) and isinstance(sub.get("const"), str):
            out.append(sub["const"])
        elif isinstance(sub, dict) and isinstance(sub.get("enum"), list):
            out.extend(v for v in sub["enum"] if isinstance(v, str))
    return out


def _single_payload(r: Resolver, branch: Any, tag: str, at: str) -> str | None:
    if not isinstance(branch, dict):
        return None
    props = branch.get("properties")
    if isinstance(props, dict) and set(props) - {tag}:
        return None
    all_of = branch.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1:
        return r.ref_name(all_of[0], at)
    if "$ref" in branch:
        return r.ref_name(branch, at)
    return None


def _is_null_tag(f: Field | None) -> bool:
    return f is not None and f.shape.kind == "null"


def _declares(branch: Any, prop: str) -> bool:
    props = branch.get("properties") if isinstance(branch, dict) else None
    return isinstance(props, dict) and prop in props


def _merge(shared: list[Field], own: list[Field]) -> tuple[Field, ...]:
    out = {f.wire: f for f in shared}
    for f in own:
        out[f.wire] = f
    return tuple(out.values())


def _as_required_str(f: Field) -> Field:
    return replace(f, shape=Shape("str"), required=True)


def _is_object(node: dict[str, Any]) -> bool:
    return node.get("type") == "object" or isinstance(node.get("properties"), dict)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
