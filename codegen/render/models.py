"""The lowering of `models.py`: each type of the IR, with its decided names, becomes the
context of its classes, enum or alias, in declaration order. Each field gets a `Check` (how a
decoder validates and converts its value) and an annotation from `shapes.py`; unions are
`unions.py`'s."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from ..ir import (
    Alias,
    EnumType,
    Exclusive,
    Field,
    Model,
    ObjectType,
    TaggedUnion,
    UnionLevel,
    UntaggedUnion,
    alias_refs,
    is_nested,
    merge_fields,
    union_levels,
)
from ..naming import Names
from .checks import OnNull, TypeCheck, field_decode
from .context import (
    AliasContext,
    ClassContext,
    EnumContext,
    ExclusiveContext,
    FieldContext,
    MemberContext,
    ModelsContext,
    UnionContext,
)
from .prose import wrap
from .shapes import EXPECTED, Shapes, to_json, to_text
from .unions import tagged_union, union_base, untagged_union


class ModelsLowering:
    """The contexts of one package's `models.py` (its model and names)."""

    def __init__(self, model: Model, names: Names) -> None:
        self.model = model
        self.names = names
        self.shapes = Shapes(model, names)

    def context(self, banner: str) -> ModelsContext:
        enums: list[EnumContext] = []
        unions: list[UnionContext] = []
        classes: list[ClassContext] = []
        aliases: list[AliasContext] = []
        exports: list[str] = []
        exclusive = self._exclusive_groups()
        for t in self.model.types:
            py = self.names.types[t.name]
            exports.append(py)
            if isinstance(t, EnumType):
                enums.append(self._enum(t, py))
            elif isinstance(t, ObjectType):
                classes.append(
                    self._with_exclusive(self._class(py, t.doc, "", t.fields), exclusive)
                )
            elif isinstance(t, TaggedUnion):
                levels = union_levels(self.model, t)
                for level in levels:
                    for cls, made in self._variants(level, union_base(py)):
                        exports.append(cls)
                        classes.append(self._with_exclusive(made, exclusive))
                # Nested unions first: an alias names the aliases of the levels inside it.
                for level in reversed(levels):
                    unions.append(tagged_union(self.model, self.names, level, py))
                    if level.parent is not None:
                        exports.append(self.names.variants[(level.parent, level.via)])
            elif isinstance(t, UntaggedUnion):
                for cls, made in self._inline_classes(t):
                    exports.append(cls)
                    classes.append(self._with_exclusive(made, exclusive))
                aliases.append(untagged_union(self.shapes, self.names, t, py))
            else:
                aliases.append(self._alias(t, py))
        return ModelsContext(
            banner,
            title=self.model.title,
            enums=tuple(enums),
            unions=tuple(unions),
            classes=tuple(classes),
            aliases=self._alias_order(aliases),
            exports=tuple(exports),
            needs_annotated=any(a.kind != "name" for a in aliases),
            needs_literal=any("_Literal[" in f.annotation for c in classes for f in c.fields)
            or any("_Literal[" in a.annotation for a in aliases),
            needs_unset_type=any(c.optional for c in classes),
        )

    # -- exclusive alternatives and inline classes ----------------------------------------
    # An object's exclusive alternatives (the elicitation scopes) become ONE required field
    # typed as the union of the alternatives' own classes (`scope: ElicitationSessionScope |
    # ElicitationRequestScope`), flattened on the wire: a user cannot build an object with no
    # scope or two (mypy), the decoder picks the class by which required keys are present,
    # and a key of the other scope is the object's `extra`, never a field.
    def _exclusive_groups(self) -> dict[str, Exclusive]:
        """Class name → its exclusive group, for every class that has one."""
        out: dict[str, Exclusive] = {}
        for t in self.model.types:
            if isinstance(t, ObjectType) and t.exclusive is not None:
                out[self.names.types[t.name]] = t.exclusive
            elif isinstance(t, TaggedUnion):
                for v in t.variants:
                    if v.exclusive is not None:
                        out[self.names.variants[(t.name, v.tag)]] = v.exclusive
                if t.open is not None and t.open.exclusive is not None:
                    out[self.names.open_variants[t.name]] = t.open.exclusive
                if t.fallback is not None and t.fallback.exclusive is not None:
                    out[self.names.fallback_variants[t.name]] = t.fallback.exclusive
            elif isinstance(t, UntaggedUnion):
                for i, b in enumerate(t.branches):
                    if b.inline is not None and b.inline.exclusive is not None:
                        out[self.names.inline[(t.name, i)]] = b.inline.exclusive
        return out

    def _with_exclusive(self, c: ClassContext, groups: Mapping[str, Exclusive]) -> ClassContext:
        group = groups.get(c.py)
        if group is None:
            return c
        options = tuple((a.keys, self.names.types[a.ref]) for a in group.alternatives)
        said = "; ".join(
            f"`{cls}` when {' and '.join(f'`{k}`' for k in keys)} "
            + ("is" if len(keys) == 1 else "are")
            + " present"
            for keys, cls in options
        )
        if group.exactly_one:
            rule = f"Exactly one of: {said}. None or more than one is a DecodeError."
        else:
            rule = (
                f"One of: {said}; when several are, the first in this order that decodes"
                " (the others' keys are `extra`). None is a DecodeError."
            )
        doc = wrap(rule + " Its keys sit on this object's own JSON (flattened).")
        exclusive = ExclusiveContext(
            py=self.names.exclusive[c.py],
            annotation=" | ".join(cls for _, cls in options),
            doc=doc,
            options=options,
            table="_X_" + c.py,
            pick="exclusive" if group.exactly_one else "first_present",
        )
        note = (
            f"`{exclusive.py}` holds one of {len(options)} exclusive alternatives, on this same"
            " object."
        )
        return replace(
            c, exclusive=exclusive, note=(c.note + "\n\n" if c.note else "") + wrap(note)
        )

    def _inline_classes(self, t: UntaggedUnion) -> Iterable[tuple[str, ClassContext]]:
        for i, b in enumerate(t.branches):
            if b.inline is not None:
                cls = self.names.inline[(t.name, i)]
                note = f"The `{b.title or i + 1}` alternative of `{self.names.types[t.name]}`."
                yield cls, self._class(cls, b.inline.doc, "", b.inline.fields, note=note)

    def _enum(self, t: EnumType, py: str) -> EnumContext:
        members = tuple(
            MemberContext(self.names.members[(t.name, m.value)], m.value, m.doc) for m in t.members
        )
        note = "Closed: any other value is a DecodeError."
        if t.open:
            note = wrap(f"Open: any other {EXPECTED[t.value_kind][2:]} decodes as itself.")
            note += f"\n\n{t.open_doc}" if t.open_doc.strip() else ""
        decode = "\n".join(self.shapes.enum_check(t).returned())
        return EnumContext(py, t.doc, note, t.value_kind, members, t.open, decode)

    def _variants(self, level: UnionLevel, base: str) -> Iterable[tuple[str, ClassContext]]:
        t, key = level.union, level.key
        for v in t.variants:
            if is_nested(self.model, v):
                continue  # its classes are those of the level inside it
            cls = self.names.variants[(key, v.tag)]
            tags = (*level.tags, (t.tag, v.tag))
            note = "Wire tag" + ("s" if len(tags) > 1 else "") + ": "
            note += ", ".join(f"`{wire}: {value}`" for wire, value in tags) + "."
            note += f" Payload: `{self.names.types[v.payload]}`." if v.payload else ""
            fields = merge_fields(level.fields, v.fields)
            yield (
                cls,
                self._class(
                    cls, v.doc, base, fields, tags=tags, note=note, nested=bool(level.parent)
                ),
            )
        if t.open is not None:
            cls = self.names.open_variants[key]
            yield cls, self._open_variant(level, cls, base)
        if t.fallback is not None:
            cls = self.names.fallback_variants[key]
            note = (
                f"Payload: `{self.names.types[t.fallback.payload]}`." if t.fallback.payload else ""
            )
            fields = merge_fields(level.fields, t.fallback.fields)
            nested = level.parent is not None
            yield (
                cls,
                self._class(
                    cls, t.fallback.doc, base, fields, tags=level.tags, note=note, nested=nested
                ),
            )

    def _open_variant(self, level: UnionLevel, cls: str, base: str) -> ClassContext:
        t = level.union
        assert t.open is not None
        where = ", ".join(f"`{wire}: {value}`" for wire, value in level.tags)
        note = (
            f"The open variant{' of ' + where if where else ''}: any `{t.tag}` outside the"
            " known and reserved tags, with its whole payload kept."
        )
        return self._class(
            cls,
            t.open.doc,
            base,
            merge_fields(level.fields, t.open.fields),
            tags=level.tags,
            reserved=t.open.reserved,
            open_tag_py=self.names.fields(cls)[t.tag],
            note=note,
            nested=bool(level.parent),
        )

    def _class(
        self,
        py: str,
        doc: str,
        union: str,
        fields: tuple[Field, ...],
        *,
        tags: tuple[tuple[str, str], ...] = (),
        reserved: tuple[str, ...] = (),
        open_tag_py: str = "",
        note: str = "",
        nested: bool = False,
    ) -> ClassContext:
        pys = self.names.fields(py)
        views = tuple(
            self._field(f, pys[f.wire], py if pys[f.wire] == open_tag_py else "") for f in fields
        )
        required = tuple(f for f in views if f.required)
        keys = tuple(f.wire for f in fields)
        return ClassContext(
            py,
            doc,
            wrap(note),
            union,
            views,
            required,
            tuple(f for f in views if not f.required),
            tags=tags,
            reserved=reserved,
            known_keys=(*(wire for wire, _ in tags), *keys),
            min_keys=len(required) + len(tags),
            nested=nested,
        )

    def _field(self, f: Field, py: str, reserved_in: str = "") -> FieldContext:
        shape = f.shape
        check = self.shapes.check(shape.non_null(), skip_invalid=f.leniency.skip_invalid_items)
        empty = {"list": "[]", "map": "{}", "object": "{}"}.get(self.shapes.wire(shape).kind, "")
        on_null: OnNull = "check"
        if f.leniency.default_on_null and empty:
            on_null = "empty"
        elif shape.nullable:
            on_null = "keep"
        decode = field_decode(
            py,
            f.wire,
            required=f.required,
            check=check,
            on_null=on_null,
            lenient=f.leniency.default_on_error and (not f.required or bool(empty)),
            empty=empty,
            reserved_in=reserved_in,
        )
        encode, enum_type = self.shapes.encode(shape)
        return FieldContext(
            py=py,
            wire=f.wire,
            annotation=self.shapes.annotation(shape) + ("" if f.required else " | _UnsetType"),
            required=f.required,
            nullable=shape.nullable,
            doc=f.doc,
            check=check,
            decode=decode,
            to_json=to_json(encode, enum_type, "self." + py, nullable=shape.nullable),
            encode=encode,
            enum_type=enum_type,
            write=to_text(
                encode,
                enum_type,
                "o." + py,
                nullable=shape.nullable,
                text=isinstance(check, TypeCheck) and check.pytype == "str",
            ),
        )

    def _alias(self, t: Alias, py: str) -> AliasContext:
        shape = t.shape
        if shape.kind == "ref" and shape.ref is not None and not shape.nullable:
            target = self.names.types[shape.ref]
            return AliasContext(py, t.doc, "", "name", target, target=target)
        decode = "\n".join(self.shapes.check(shape).returned())
        return AliasContext(py, t.doc, "", "shape", self.shapes.annotation(shape), decode=decode)

    def _alias_order(self, aliases: list[AliasContext]) -> tuple[AliasContext, ...]:
        """Aliases are module-level expressions: one naming another must come after it."""
        by_py = {a.py: a for a in aliases}
        deps = {
            self.names.types[t.name]: [self.names.types[r] for r in alias_refs(t)]
            for t in self.model.types
            if isinstance(t, Alias | UntaggedUnion)
        }
        done: dict[str, AliasContext] = {}

        def visit(a: AliasContext, stack: set[str]) -> None:
            if a.py in done or a.py in stack:
                return
            stack.add(a.py)
            for dep in deps.get(a.py, ()):
                if dep in by_py and dep != a.py:
                    visit(by_py[dep], stack)
            done[a.py] = a

        for a in aliases:
            visit(a, set())
        return tuple(done.values())
