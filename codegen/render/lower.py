"""Views: what the templates loop over, derived from the IR and the decided names.

Each shape becomes a `Check` (how a value is validated and converted) and an annotation. Both
are plain data; the templates decide the statements. Python expressions in here are names of
functions and types only — never text taken from the schema (that goes through `pyliteral`).
"""

from __future__ import annotations

from typing import Any

from ..ir import (
    Alias,
    EnumType,
    Field,
    Model,
    ObjectType,
    Shape,
    TaggedUnion,
    UntaggedUnion,
)
from ..naming import Names
from .context import (
    AliasView,
    Check,
    ClassView,
    EnumView,
    FieldView,
    Group,
    ModuleView,
    Option,
    UnionView,
)

_PRIMITIVE_TYPES = {"str": "str", "bool": "bool", "object": "dict"}
_EXPECTED = {
    "str": "a string",
    "bool": "a boolean",
    "object": "an object",
    "null": "null",
    "list": "a list",
    "map": "an object",
}


_KIND_ORDER = ("null", "bool", "int", "float", "str", "list", "object", "any")
_KIND_EXPECTED = {
    "null": "null",
    "bool": "a boolean",
    "int": "an integer",
    "float": "a number",
    "str": "a string",
    "list": "a list",
    "object": "an object",
    "any": "any value",
}


class ViewBuilder:
    def __init__(self, model: Model, names: Names) -> None:
        self.model = model
        self.names = names

    def build(self) -> ModuleView:
        view = ModuleView()
        for t in self.model.types:
            py = self.names.types[t.name]
            view.exports.append(py)
            if isinstance(t, EnumType):
                view.enums.append(self._enum(t, py))
            elif isinstance(t, ObjectType):
                view.classes.append(self._class(py, t.doc, "_rt.Model", t.fields))
            elif isinstance(t, TaggedUnion):
                self._tagged(t, py, view)
            elif isinstance(t, UntaggedUnion):
                view.aliases.append(self._untagged(t, py))
            else:
                view.aliases.append(self._alias(t, py))
        view.aliases = _alias_order(view.aliases)
        return view

    # -- types ------------------------------------------------------------------------------
    def _enum(self, t: EnumType, py: str) -> EnumView:
        members = tuple((self.names.members[(t.name, m.value)], m.value, m.doc) for m in t.members)
        base = "_enum.StrEnum" if t.value_kind == "str" else "_enum.IntEnum"
        return EnumView(py, t.doc, base, t.value_kind, members, t.open, t.open_doc)

    def _class(
        self, py: str, doc: str, base: str, fields: tuple[Field, ...], **kw: Any
    ) -> ClassView:
        pys = self.names.fields(py) if kw.get("owner") is None else self.names.fields(kw["owner"])
        kw.pop("owner", None)
        views = tuple(self._field(f, p) for f, p in zip(fields, pys, strict=True))
        return ClassView(py, doc, base, views, **kw)

    def _tagged(self, t: TaggedUnion, py: str, view: ModuleView) -> None:
        variants = []
        for v in t.variants:
            cls = self.names.variants[(t.name, v.tag)]
            view.exports.append(cls)
            variants.append((v.tag, cls))
            payload = self.names.types.get(v.payload or "", "")  # its Python name
            view.classes.append(
                self._class(cls, v.doc, py, v.fields, tag_wire=t.tag, tag=v.tag, payload=payload)
            )
        open_cls = ""
        reserved: tuple[str, ...] = ()
        if t.open is not None:
            open_cls = self.names.open_variants[t.name]
            view.exports.append(open_cls)
            reserved = t.open.reserved
            tag_py = self.names.fields(open_cls)[[f.wire for f in t.open.fields].index(t.tag)]
            view.classes.append(
                self._class(
                    open_cls,
                    t.open.doc,
                    py,
                    t.open.fields,
                    tag_wire=t.tag,
                    reserved=reserved,
                    open_tag_py=tag_py,
                )
            )
        fallback_cls = ""
        if t.fallback is not None:
            fallback_cls = self.names.fallback_variants[t.name]
            view.exports.append(fallback_cls)
            view.classes.append(
                self._class(
                    fallback_cls,
                    t.fallback.doc,
                    py,
                    t.fallback.fields,
                    payload=self.names.types.get(t.fallback.payload or "", ""),
                )
            )
        view.unions.append(
            UnionView(py, t.doc, t.tag, tuple(variants), open_cls, reserved, fallback_cls)
        )

    def _alias(self, t: Alias, py: str) -> AliasView:
        shape = t.shape
        if shape.kind == "ref" and shape.ref is not None and not shape.nullable:
            target_py = self.names.types[shape.ref]
            return AliasView(py, t.doc, target_py, None, target="_d_" + target_py)
        return AliasView(py, t.doc, self.annotation(shape), self.check(shape))

    def _untagged(self, t: UntaggedUnion, py: str) -> AliasView:
        by_kind: dict[str, list[Option]] = {}
        for b in t.branches:
            required = b.required
            if b.json_kind == "list" and b.shape.item is not None:
                required = self._object_required(b.shape.item)
            option = Option(required, self.check(b.shape), b.doc, list_item=b.json_kind == "list")
            by_kind.setdefault(b.json_kind, []).append(option)
        groups = tuple(Group(k, tuple(by_kind[k])) for k in _KIND_ORDER if k in by_kind)
        parts = [_KIND_EXPECTED[g.json_kind] for g in groups]
        expected = ", ".join(parts[:-1]) + " or " + parts[-1] if len(parts) > 1 else parts[0]
        members = " | ".join(dict.fromkeys(self.annotation(b.shape) for b in t.branches))
        return AliasView(py, t.doc, members, None, groups=groups, untagged=True, expected=expected)

    def _object_required(self, shape: Shape) -> tuple[str, ...]:
        if shape.kind == "ref" and shape.ref is not None:
            target = self.model.get(shape.ref)
            if isinstance(target, ObjectType):
                return tuple(f.wire for f in target.fields if f.required)
            if isinstance(target, TaggedUnion):
                return (target.tag,)
        return ()

    # -- fields -----------------------------------------------------------------------------
    def _field(self, f: Field, py: str) -> FieldView:
        shape = f.shape
        ann = self.annotation(shape)
        if not f.required:
            ann += " | _UnsetType"
        check = self.check(shape.non_null(), skip_invalid=f.leniency.skip_invalid_items)
        resolved = self._resolve(shape)
        empty = {"list": "[]", "map": "{}", "object": "{}"}.get(resolved.kind, "")
        return FieldView(
            py=py,
            wire=f.wire,
            annotation=ann,
            required=f.required,
            nullable=shape.nullable,
            doc=f.doc,
            check=check,
            encode=self._encode_kind(shape),
            default_on_error=f.leniency.default_on_error and (not f.required or bool(empty)),
            default_on_null=f.leniency.default_on_null and bool(empty),
            empty=empty,
        )

    def annotation(self, shape: Shape) -> str:
        base: str
        if shape.kind == "ref" and shape.ref is not None:
            target = self.model.get(shape.ref)
            base = self.names.types[shape.ref]
            if isinstance(target, EnumType) and target.open:
                base += " | " + target.value_kind
        elif shape.kind == "list":
            base = f"list[{self.annotation(shape.item or Shape('any'))}]"
        elif shape.kind == "map":
            base = f"dict[str, {self.annotation(shape.item or Shape('any'))}]"
        else:
            base = {
                "str": "str",
                "int": "int",
                "float": "float",
                "bool": "bool",
                "null": "None",
                "object": "dict[str, _Any]",
            }.get(shape.kind, "_Any")
        if shape.nullable and base not in ("None", "_Any"):
            base += " | None"
        return base

    def _resolve(self, shape: Shape) -> Shape:
        """Look through aliases of plain shapes (a `SessionId` is checked as a string)."""
        seen = set()
        while shape.kind == "ref" and shape.ref is not None and shape.ref not in seen:
            seen.add(shape.ref)
            target = self.model.get(shape.ref)
            if not isinstance(target, Alias):
                return shape
            inner = target.shape
            shape = inner._replace(nullable=inner.nullable or shape.nullable)
        return shape

    def check(self, shape: Shape, skip_invalid: bool = False) -> Check:
        shape = self._resolve(shape)
        kind = shape.kind
        if kind == "ref" and shape.ref is not None:
            target = self.model.get(shape.ref)
            py = self.names.types[shape.ref]
            if isinstance(target, EnumType):
                values = ", ".join(repr(m.value) for m in target.members)
                expected = (
                    f"one of {values}"
                    if not target.open
                    else _EXPECTED.get(target.value_kind, "an integer")
                )
                if target.value_kind == "int" and target.open:
                    expected = "an integer"
                return Check(
                    "enum", expected, pytype=target.value_kind, table="_E_" + py, open=target.open
                )
            return Check("call", call="_d_" + py)
        if kind in _PRIMITIVE_TYPES:
            return Check("type", _EXPECTED[kind], pytype=_PRIMITIVE_TYPES[kind])
        if kind == "int":
            return Check(
                "int", _number_expected("an integer", shape), lo=shape.minimum, hi=shape.maximum
            )
        if kind == "float":
            return Check(
                "float", _number_expected("a number", shape), lo=shape.minimum, hi=shape.maximum
            )
        if kind == "null":
            return Check("null", "null")
        if kind in ("list", "map"):
            item = shape.item or Shape("any")
            return Check(
                kind,
                _EXPECTED[kind],
                call=self.item_decoder(item),
                min_items=shape.min_items,
                skip_invalid=skip_invalid,
            )
        return Check("any")

    def item_decoder(self, shape: Shape) -> str:
        """An expression for a function `(value) -> decoded` (items of lists and maps)."""
        nullable = shape.nullable
        base = self._item_decoder(shape.non_null() if not self._resolve(shape).nullable else shape)
        if nullable:
            return f"_rt.or_null({base})"
        return base

    def _item_decoder(self, shape: Shape) -> str:
        if shape.kind == "ref" and shape.ref is not None:
            return "_d_" + self.names.types[shape.ref]
        if shape.kind in ("str", "bool", "object", "any", "null"):
            return f"_rt.d_{shape.kind}"
        if shape.kind in ("int", "float"):
            if shape.minimum is None and shape.maximum is None:
                return f"_rt.d_{shape.kind}"
            return f"_rt.{shape.kind}_range({shape.minimum!r}, {shape.maximum!r})"
        if shape.kind == "list":
            return f"_rt.list_decoder({self.item_decoder(shape.item or Shape('any'))})"
        if shape.kind == "map":
            return f"_rt.map_decoder({self.item_decoder(shape.item or Shape('any'))})"
        return "_rt.d_any"

    def _encode_kind(self, shape: Shape) -> str:
        if self._is_model(shape):
            return "model"
        enum = self._enum_of(shape)
        if enum is not None:  # members become plain str/int on the wire
            return f"{enum.value_kind}_enum"
        if shape.kind in ("list", "map") and shape.item is not None:
            if self._is_model(shape.item) and not shape.item.nullable:
                return f"{shape.kind}_model"
            return "plain" if self._is_plain(shape.item) else "generic"
        return "plain" if self._is_plain(shape) else "generic"

    def _is_model(self, shape: Shape) -> bool:
        if shape.kind != "ref" or shape.ref is None:
            return False
        return isinstance(self.model.get(shape.ref), ObjectType | TaggedUnion)

    def _enum_of(self, shape: Shape) -> EnumType | None:
        shape = self._resolve(shape)
        if shape.kind == "ref" and shape.ref is not None:
            target = self.model.get(shape.ref)
            return target if isinstance(target, EnumType) else None
        return None

    def _is_plain(self, shape: Shape) -> bool:
        """JSON that encodes as itself: no models, no enum members inside."""
        shape = self._resolve(shape)
        if shape.kind == "ref" and shape.ref is not None:
            return False
        if shape.kind in ("list", "map"):
            return self._is_plain(shape.item or Shape("any"))
        return True


def _number_expected(what: str, shape: Shape) -> str:
    lo, hi = shape.minimum, shape.maximum
    if lo is not None and hi is not None:
        return f"{what} from {lo} to {hi}"
    if lo is not None:
        return f"{what} >= {lo}"
    if hi is not None:
        return f"{what} <= {hi}"
    return what


def _alias_order(aliases: list[AliasView]) -> list[AliasView]:
    """Aliases are runtime expressions: one naming another must come after it."""
    by_name = {a.py: a for a in aliases}
    done: dict[str, AliasView] = {}

    def visit(a: AliasView, stack: set[str]) -> None:
        if a.py in done or a.py in stack:
            return
        stack.add(a.py)
        for word in (
            a.annotation.replace("[", " ")
            .replace("]", " ")
            .replace("|", " ")
            .replace(",", " ")
            .split()
        ):
            dep = by_name.get(word)
            if dep is not None and dep is not a:
                visit(dep, stack)
        done[a.py] = a

    for a in aliases:
        visit(a, set())
    return list(done.values())
