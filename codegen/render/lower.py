"""The lowering: IR + decided names → the typed context of every generated module.

This is the one place that decides what the templates see (`context.py` has the types); the
templates only loop over it and look things up. `lower` makes the contexts of a package;
`Lowering` does the work and also answers `annotation` for `specdiff`.

- models: each shape becomes a `Check` (how a decoder validates and converts a value) and an
  annotation; each field, class, union, enum and alias a context in declaration order.
- methods and rpc: each method with its handler name (from `naming`) and its payload types.
- session_state: which `SessionUpdate` kinds follow which rule of the protocol (`session.py`).

How a shape is annotated, checked and encoded is `shapes.py`.
- __init__: what the package exports, eagerly and lazily.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Literal

from ..ir import (
    Alias,
    EnumType,
    Exclusive,
    Field,
    Method,
    Model,
    ObjectType,
    Shape,
    TaggedUnion,
    UnionLevel,
    UntaggedUnion,
    alias_refs,
    is_nested,
    merge_fields,
    union_levels,
)
from ..modules import ModuleSpec
from ..naming import Names
from .context import (
    AliasContext,
    Check,
    ClassContext,
    EnumContext,
    ExclusiveContext,
    FieldContext,
    Group,
    MemberContext,
    MethodContext,
    MethodsContext,
    ModelsContext,
    ModuleContext,
    Option,
    ReferenceContext,
    RpcContext,
    UnionContext,
)
from .session import SESSION_RULES, SESSION_RULES_V1, SESSION_TEMPLATE_V1, session_state
from .shapes import EXPECTED, Shapes

NOTE_WIDTH = 88  # our own docstring paragraphs are wrapped; the schema's text is kept as is
# Untagged unions: the JSON types in the order they are tested, and how each is tested.
_KIND_ORDER = ("null", "bool", "int", "float", "str", "list", "object", "any")
_CONDITIONS = {
    "null": "v is None",
    "bool": "type(v) is bool",
    "int": "type(v) is int",
    "float": "type(v) is float or type(v) is int",
    "str": "type(v) is str",
    "list": "type(v) is list",
    "object": "type(v) is dict",
    "any": "",  # no test: any value
}
_KIND_WORDS = {
    "null": "null",
    "bool": "boolean",
    "int": "integer",
    "float": "number",
    "str": "string",
    "list": "list",
    "object": "object",
    "any": "any other value",
}


def lower(
    model: Model,
    names: Names,
    modules: Sequence[ModuleSpec],
    *,
    banner: str,
    ref: str,
    sha256: str,
) -> dict[str, ModuleContext]:
    """The context of each templated module of `modules`, by module name."""
    lowering = Lowering(model, names)
    models = lowering.models(banner)
    methods = lowering.methods()
    made: dict[str, ModuleContext] = {
        "models": models,
        "methods": MethodsContext(banner, methods),
        "rpc": _rpc(banner, model.methods, methods, bool(model.batches)),
        "REFERENCE": ReferenceContext(
            banner, model.title, _outer_first(models.unions), methods, models.enums
        ),
    }
    wanted = {m.module for m in modules if m.template is not None}
    if "session_state" in wanted:
        template = next(m.template for m in modules if m.module == "session_state")
        rules = SESSION_RULES_V1 if template == SESSION_TEMPLATE_V1 else SESSION_RULES
        made["session_state"] = session_state(model, names, banner, rules)
    for name in wanted - made.keys():  # a template that needs the banner only (the toolkit)
        made[name] = ModuleContext(banner)
    return {name: made[name] for name in wanted}


class Lowering:
    def __init__(self, model: Model, names: Names) -> None:
        self.model = model
        self.names = names
        self.shapes = Shapes(model, names)

    def annotation(self, shape: Shape) -> str:
        """The Python type of a shape, as `models.py` writes it (`specdiff` names types so)."""
        return self.shapes.annotation(shape)

    # -- models.py --------------------------------------------------------------------------
    def models(self, banner: str) -> ModelsContext:
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
                    unions.append(self._union(level, py))
                    if level.parent is not None:
                        exports.append(self.names.variants[(level.parent, level.via)])
            elif isinstance(t, UntaggedUnion):
                for cls, made in self._inline_classes(t):
                    exports.append(cls)
                    classes.append(self._with_exclusive(made, exclusive))
                aliases.append(self._untagged(t, py))
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
        doc = _wrap(rule + " Its keys sit on this object's own JSON (flattened).")
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
            c, exclusive=exclusive, note=(c.note + "\n\n" if c.note else "") + _wrap(note)
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
            note = _wrap(f"Open: any other {EXPECTED[t.value_kind][2:]} decodes as itself.")
            note += f"\n\n{t.open_doc}" if t.open_doc.strip() else ""
        return EnumContext(
            py, t.doc, note, t.value_kind, members, t.open, self.shapes.enum_check(t)
        )

    def _union(self, level: UnionLevel, top: str) -> UnionContext:
        # The union's public name is a `typing.Union` alias of its classes (its `__doc__` is
        # writable, unlike that of a PEP 604 `X | Y`, so help() shows the tag table); their
        # shared behaviour lives in the private base `union_base(top)`, that of the `$defs`
        # union at the top (a nested union's classes are that union's classes too).
        t, key = level.union, level.key
        py = top if level.parent is None else self.names.variants[(level.parent, level.via)]
        variants = tuple((v.tag, self.names.variants[(key, v.tag)]) for v in t.variants)
        nested = tuple(
            (v.tag, self._inner_tag(t, v.tag)) for v in t.variants if is_nested(self.model, v)
        )
        inner_tags = dict(nested)
        open_cls = self.names.open_variants[key] if t.open is not None else ""
        fallback_cls = self.names.fallback_variants[key] if t.fallback is not None else ""
        tagless = t.fallback is not None and all(f.wire != t.tag for f in t.fallback.fields)
        tags = ", ".join(t.known_tags)
        note = f"Tagged union on `{t.tag}` ({tags}): one table lookup picks the variant."
        if level.parent is not None:
            outer = ", ".join(f"`{wire}: {value}`" for wire, value in level.tags)
            note = f"The classes of {outer}: a tagged union on `{t.tag}` ({tags})."
        if open_cls:
            note += (
                f" Any other tag decodes to `{open_cls}`, which keeps the whole payload;"
                " a known or reserved tag with a broken payload is a DecodeError."
            )
        if fallback_cls and tagless:
            note += (
                f" Without the tag, with {'a' if open_cls else 'an unknown or'} non-string"
                f" one, or when the tag's variant rejects the payload, it decodes as"
                f" `{fallback_cls}` (which ignores the tag)."
            )
        elif fallback_cls:
            dropped = " (a malformed one is dropped first)" if t.lenient_tag else ""
            note += f" With the tag absent or null{dropped}, it decodes as `{fallback_cls}`."
        if not open_cls and not fallback_cls:
            note += " Closed: any other tag is a DecodeError."
        note += (
            f" Each tag's class is `{py}` followed by the tag in PascalCase, unless a names file"
            " pins another name."
        )
        if nested:
            note += (
                " A tag whose payload is itself a tagged union names that union, whose classes"
                " add their own tag the same way."
            )
        members = tuple(cls for _, cls in variants) + tuple(
            c for c in (open_cls, fallback_cls) if c
        )
        table = [
            f"- `{tag}`: `{cls}`"
            + (f" (a union on `{inner_tags[tag]}`)" if tag in inner_tags else "")
            for tag, cls in variants
        ]
        if open_cls:
            table.append(f"- any other tag: `{open_cls}` (open)")
        when = ""
        if fallback_cls:
            when = "none, or any other" if not open_cls else "none, or not a string"
            if not tagless:
                when = "absent, null or malformed" if t.lenient_tag else "absent or null"
            table.append(f"- {when}: `{fallback_cls}` (fallback)")
        note = _wrap(note) + f"\n\nTag `{t.tag}` to class:\n\n" + "\n".join(table)
        return UnionContext(
            py,
            t.doc if level.parent is None else level.doc,
            note,
            t.tag,
            variants,
            t.known_tags,
            open_cls,
            fallback_cls,
            base=union_base(py) if level.parent is None else "",
            members=members,
            outer_tags=level.tags,
            fallback_tagless=tagless,
            fallback_when=when,
            lenient_tag=t.lenient_tag,
            nested=nested,
        )

    def _inner_tag(self, t: TaggedUnion, tag: str) -> str:
        v = next(v for v in t.variants if v.tag == tag)
        inner = self.model.get(v.nested or "")
        return inner.tag if isinstance(inner, TaggedUnion) else ""

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
        views = tuple(self._field(f, pys[f.wire]) for f in fields)
        required = tuple(f for f in views if f.required)
        keys = tuple(f.wire for f in fields)
        return ClassContext(
            py,
            doc,
            _wrap(note),
            union,
            views,
            required,
            tuple(f for f in views if not f.required),
            tags=tags,
            reserved=reserved,
            open_tag_py=open_tag_py,
            known_keys=(*(wire for wire, _ in tags), *keys),
            min_keys=len(required) + len(tags),
            nested=nested,
        )

    def _field(self, f: Field, py: str) -> FieldContext:
        shape = f.shape
        check = self.shapes.check(shape.non_null(), skip_invalid=f.leniency.skip_invalid_items)
        empty = {"list": "[]", "map": "{}", "object": "{}"}.get(self.shapes.wire(shape).kind, "")
        on_null: Literal["check", "keep", "empty"] = "check"
        if f.leniency.default_on_null and empty:
            on_null = "empty"
        elif shape.nullable and check.kind != "any":
            on_null = "keep"
        encode, enum_type = self.shapes.encode(shape)
        return FieldContext(
            py=py,
            wire=f.wire,
            annotation=self.shapes.annotation(shape) + ("" if f.required else " | _UnsetType"),
            required=f.required,
            nullable=shape.nullable,
            doc=f.doc,
            check=check,
            on_null=on_null,
            lenient=(
                f.leniency.default_on_error
                and check.kind != "any"
                and (not f.required or bool(empty))
            ),
            empty=empty,
            encode=encode,
            enum_type=enum_type,
        )

    def _alias(self, t: Alias, py: str) -> AliasContext:
        shape = t.shape
        if shape.kind == "ref" and shape.ref is not None and not shape.nullable:
            target = self.names.types[shape.ref]
            return AliasContext(py, t.doc, "", "name", target, target=target)
        return AliasContext(
            py, t.doc, "", "shape", self.shapes.annotation(shape), check=self.shapes.check(shape)
        )

    def _untagged(self, t: UntaggedUnion, py: str) -> AliasContext:
        by_kind: dict[str, list[Option]] = {}
        inline = {
            id(b): self.names.inline[(t.name, i)] for i, b in enumerate(t.branches) if b.inline
        }
        for b in t.branches:
            options = by_kind.setdefault(b.json_kind, [])
            if options and options[-1].always:
                continue  # an earlier alternative of this JSON type takes every value
            check = self.shapes.check(b.shape, type_known=True)
            if id(b) in inline:
                check = Check("call", call="_d_" + inline[id(b)])
            if b.json_kind in ("object", "list"):
                always = not b.required  # told apart by keys, or by nothing
            else:
                always = check.kind == "any" or (check.kind == "enum" and check.open)
            takes_empty = b.json_kind == "list" and not options
            options.append(Option(check, b.required, always, takes_empty))
        groups = []
        for kind in _KIND_ORDER:
            if kind not in by_kind:
                continue
            condition = _CONDITIONS[kind]
            if kind == "float" and "int" in by_kind:
                condition = "type(v) is float"  # integers went to the integer alternatives
            found = tuple(by_kind[kind])
            sets = ["{" + ", ".join(o.keys) + "}" for o in found]
            missing = "needs the keys of one of " + " or ".join(sets)
            groups.append(Group(kind, condition, found, missing))
        catch_all = not groups[-1].condition and groups[-1].options[-1].always
        if catch_all and len(groups) > 1:
            # Order decides: what fails every typed alternative is the catch-all's.
            groups[:-1] = [replace(g, falls_through=True) for g in groups[:-1]]
        words = [EXPECTED[g.json_kind] for g in groups]
        expected = ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0]
        annotation = " | ".join(
            dict.fromkeys(inline.get(id(b)) or self.shapes.annotation(b.shape) for b in t.branches)
        )
        return AliasContext(
            py,
            t.doc,
            _untagged_rule(groups),
            "untagged",
            annotation,
            groups=tuple(groups),
            always=catch_all,
            expected=expected,
        )

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

    # -- shapes -----------------------------------------------------------------------------
    # -- methods.py and rpc.py --------------------------------------------------------------
    def methods(self) -> tuple[MethodContext, ...]:
        requests = {m.name for m in self.model.methods if m.kind == "request"}
        return tuple(
            self._method(m, m.kind == "notification" and m.name in requests)
            for m in self.model.methods
        )

    def _method(self, method: Method, twin: bool) -> MethodContext:
        params = self.names.types.get(method.params or "", "")
        result = self.names.types.get(method.result or "", "")
        request = method.kind == "request"
        arrow = f"`{params or 'JSON'}` → `{result or 'JSON'}`"
        if not request:
            arrow = f"`{params or 'JSON'}`, never answered"
        lane = " Unstable: only in the unstable schema." if method.unstable else ""
        result_annotation = "None"
        if request:
            result_annotation = f"_m.{result}" if result else "Any"
        return MethodContext(
            name=method.name,
            py=self.names.methods.get((method.name, method.kind), ""),
            side=method.side,
            kind=method.kind,
            unstable=method.unstable,
            doc=f"`{method.name}` ({method.kind}): {arrow}.{lane}",
            params_class=params,
            result_class=result,
            params_type=f"_m.{params}" if params else "None",
            result_type=f"_m.{result}" if result else "None",
            params_annotation=f"_m.{params}" if params else "Any",
            result_annotation=result_annotation,
            twin=twin,
        )

    # -- session_state.py -------------------------------------------------------------------


def _rpc(
    banner: str, methods: tuple[Method, ...], contexts: tuple[MethodContext, ...], batches: bool
) -> RpcContext:
    roles: dict[str, list[MethodContext]] = {"agent": [], "client": []}
    cancel: str | None = None
    for method, context in zip(methods, contexts, strict=True):
        if not method.roles and method.side == "protocol":
            cancel = method.name  # the runtime cancels in-flight handlers itself
        for role in method.roles:
            roles[role].append(context)
    every = roles["agent"] + roles["client"]
    return RpcContext(
        banner,
        agent=tuple(roles["agent"]),
        client=tuple(roles["client"]),
        cancel_method=cancel,
        batches=batches,
        needs_any=any("Any" in (m.params_annotation, m.result_annotation) for m in every),
        needs_models=any(m.params_class or m.result_class for m in every),
        has_requests=any(m.kind == "request" for m in every),
    )


def _outer_first(unions: tuple[UnionContext, ...]) -> tuple[UnionContext, ...]:
    """The unions as a reader wants them: each `$defs` union, then those nested in it (models.py
    has them the other way round: an alias after the aliases it names)."""
    out: list[UnionContext] = []
    group: list[UnionContext] = []
    for u in unions:
        group.append(u)
        if not u.outer_tags:  # a `$defs` union ends the group of those nested in it
            out.extend(reversed(group))
            group = []
    return tuple(out + group)


def isort_key(name: str) -> tuple[int, str, str]:
    """Ruff's import order within one `from` statement: CONSTANTS, Classes, then the rest."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return (kind, name.lower(), name)


def _sorted_imports(
    modules: dict[str, tuple[str, ...]],
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple(
        (module, tuple(sorted(names, key=isort_key))) for module, names in sorted(modules.items())
    )


def _untagged_rule(groups: list[Group]) -> str:
    """What the decoder of an untagged union does, said for the JSON types it has."""
    kinds = [_KIND_WORDS[g.json_kind] for g in groups]
    if len(kinds) > 1:
        text = f"Untagged union, decided by JSON type first, in this order: {', '.join(kinds)}."
    else:
        text = f"Untagged union: every alternative is {EXPECTED[groups[0].json_kind]}."
    several = {g.json_kind for g in groups if len(g.options) > 1}
    if "number" in kinds and "integer" not in kinds:
        text += " An integer may fill a number."
    if "object" in several:
        text += (
            " Among objects, the first alternative in schema order whose required keys"
            " are all present."
        )
    if "list" in several:
        text += (
            " Among lists, the same test on the first item; an empty list takes the first"
            " list alternative."
        )
    if several - {"object", "list"}:
        text += (
            " Among alternatives of another shared JSON type, the first in schema order"
            " that accepts the value."
        )
    if groups[0].falls_through:
        text += (
            " The last alternative takes any value: a value that fails the alternatives"
            " before it is kept as it is (order decides)."
        )
    return _wrap(text)


def union_base(union: str) -> str:
    """The private base class of a tagged union's variants."""
    return f"_{union}Base"


def _wrap(text: str) -> str:
    """One of our own paragraphs, wrapped at spaces to lines of at most `NOTE_WIDTH`
    characters (a longer word keeps its own line)."""
    if len(text) <= NOTE_WIDTH:
        return text
    lines = [""]
    for word in text.split(" "):
        if lines[-1] and len(lines[-1]) + 1 + len(word) > NOTE_WIDTH:
            lines.append(word)
        else:
            lines[-1] = f"{lines[-1]} {word}" if lines[-1] else word
    return "\n".join(lines)
