"""The structural comparison of two IR models: methods, then every `$defs` type.

Types are matched by `$defs` name (or as renamed, see `match`); each pair is compared by kind:
fields of objects and variants, variants of tagged unions, alternatives of untagged unions,
values of enums, shapes of aliases. Field types are compared as the JSON they accept
(`shapes.wire`), so an inline `string` that becomes a `$ref` to a string alias is no wire change.
A variant that reuses a `$defs` payload (`allOf: [{$ref: ContentChunk}]`) is compared through
that payload type, once, not again in every union that uses it.
"""

from __future__ import annotations

from collections.abc import Callable

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
    TypeDef,
    UntaggedUnion,
    Variant,
)
from ..naming import Names, exclusive_owners
from .context import Owners
from .finding import Change
from .load import Input
from .match import method_renames, type_renames
from .reach import method_direction, sender_direction
from .shapes import accepts_null, catch_all_union, describe, open_enum, spelled_same
from .unions import UnionComparer


class Comparer(UnionComparer):
    def __init__(self, old: Input, new: Input) -> None:
        super().__init__(old, new)
        self.method_pairs = method_renames(old.model, new.model)
        self.renames, self.rename_reasons = type_renames(old.model, new.model, self.method_pairs)

    def run(self) -> list[Change]:
        self.methods()
        self.batches()
        self.types()
        return self.changes

    # -- methods --------------------------------------------------------------------------
    def methods(self) -> None:
        for name, m, n in _method_pairs(self.old.model.methods, self.new.model.methods):
            path = f"method:{name}"
            if n is None:
                assert m is not None
                moved = self.method_pairs.get(name)
                hint = f"probably renamed to `{moved}` (same side and payloads)" if moved else ""
                self.add(
                    "method-removed",
                    path,
                    f"{m.kind} `{name}` (handled by the {m.side}) removed",
                    direction=method_direction(m),
                    hint=hint,
                )
                continue
            if m is None:
                was = next((o for o, x in self.method_pairs.items() if x == name), None)
                self.add(
                    f"method-added-{n.kind}",
                    path,
                    f"{n.kind} `{name}` (handled by the {n.side}) added",
                    direction=method_direction(n),
                    hint=f"probably renamed from `{was}`" if was else "",
                )
                continue
            direction = method_direction(n)
            if m.side != n.side:
                self.add(
                    "method-side-changed",
                    path,
                    f"now handled by the {n.side}, was the {m.side}",
                    direction="both",
                )
            if m.kind != n.kind:
                detail = f"now a {n.kind}, was a {m.kind}"
                self.add("method-kind-changed", path, detail, direction="both")
            if m.unstable != n.unstable:
                kind = "method-now-unstable" if n.unstable else "method-now-stable"
                detail = "now unstable" if n.unstable else "now stable"
                self.add(kind, path, detail, direction=direction)
            for role, o_name, n_name in (
                ("params", m.params, n.params),
                ("result", m.result, n.result),
            ):
                self._payload(path, role, o_name, n_name)

    def batches(self) -> None:
        """The JSON-RPC batch messages the root schema allows (named after their sender)."""
        old, new = set(self.old.batches), set(self.new.batches)
        for title in sorted(old - new):
            detail = f"batch message `{title}` removed from the root schema"
            self.add("batch-removed", f"batch:{title}", detail, direction=sender_direction(title))
        for title in sorted(new - old):
            detail = f"batch message `{title}` added to the root schema"
            self.add("batch-added", f"batch:{title}", detail, direction=sender_direction(title))

    def _payload(self, path: str, role: str, o_name: str | None, n_name: str | None) -> None:
        """A method whose params or result are now another type: compare the two types."""
        if o_name is None and n_name is None or (o_name and self.rename(o_name) == n_name):
            return
        o_py = self.old.names.types.get(o_name or "", "nothing")
        n_py = self.new.names.types.get(n_name or "", "nothing")
        self.add(
            "method-payload-replaced",
            f"{path}/{role}",
            f"{role} type `{o_name}` → `{n_name}`",
            (o_name, n_name),
            python=f"{role} class {o_py} → {n_py}",
        )
        if o_name in self.old.model.index and n_name in self.new.model.index:
            assert o_name is not None and n_name is not None
            self.pair(self.old.model.get(o_name), self.new.model.get(n_name), f"{path}/{role}")

    # -- types ----------------------------------------------------------------------------
    def types(self) -> None:
        targets = set(self.renames.values())
        for t in self.old.model.types:
            if t.name in self.new.model.index:
                self.pair(t, self.new.model.get(t.name), t.name)
            elif t.name in self.renames:
                n = self.new.model.get(self.renames[t.name])
                o_py, n_py = self.old.names.types[t.name], self.new.names.types[n.name]
                self.add(
                    "type-renamed",
                    t.name,
                    f"`{t.name}` renamed to `{n.name}` ({self.rename_reasons[t.name]})",
                    (t.name, n.name),
                    python=f"{o_py} → {n_py}",
                )
                self.pair(t, n, n.name)
            else:
                py = self.old.names.types[t.name]
                self.add(
                    "type-removed",
                    t.name,
                    f"{_kind_name(t)} `{t.name}` removed",
                    (t.name, None),
                    python=f"{py} is no longer exported",
                )
        for t in self.new.model.types:
            if t.name not in self.old.model.index and t.name not in targets:
                py = self.new.names.types[t.name]
                self.add(
                    "type-added",
                    t.name,
                    f"{_kind_name(t)} `{t.name}` added",
                    (None, t.name),
                    python=f"new {py}",
                )

    def pair(self, o: TypeDef, n: TypeDef, path: str) -> None:
        owners = (o.name, n.name)
        if o.doc != n.doc:
            self.add("description-changed", path, "description changed", owners)
        if isinstance(o, ObjectType) and isinstance(n, ObjectType):
            self.fields(o.fields, n.fields, path, owners, (o.name, n.name))
        elif isinstance(o, TaggedUnion) and isinstance(n, TaggedUnion):
            self.tagged(o, n, path)
        elif isinstance(o, UntaggedUnion) and isinstance(n, UntaggedUnion):
            self.untagged(o, n, path)
        elif isinstance(o, EnumType) and isinstance(n, EnumType):
            self.enum(o, n, path)
        elif isinstance(o, Alias) and isinstance(n, Alias):
            self.shape(o.shape, n.shape, path, owners, "type")
        else:
            self._kind_changed(o, n, path)

    def _kind_changed(self, o: TypeDef, n: TypeDef, path: str) -> None:
        owners = (o.name, n.name)
        o_shape, n_shape = _as_shape(o), _as_shape(n)
        if o_shape is not None and n_shape is not None:  # alias ↔ open enum: compare values
            self.shape(o_shape, n_shape, path, owners, "type")
            return
        ou, nu = _unwrap(o, self.old), _unwrap(n, self.new)
        if (ou is not o or nu is not n) and type(ou) is type(nu):
            # e.g. an object that became a one-branch union of an object: compare the objects
            self.add(
                "type-form-changed",
                path,
                f"now {_kind_name(n)}, was {_kind_name(o)}; the JSON is the same",
                owners,
                python=f"{self.new.names.types[n.name]} is now {_kind_name(n)}",
            )
            self.pair(ou, nu, path)
            return
        if isinstance(o, ObjectType) and isinstance(n, TaggedUnion) and n.fallback is None:
            twin = self._tagged_twin(o, n)
            if twin is not None:
                variant_py = self.new.names.variants[(n.name, twin.tag)]
                self.add(
                    "object-now-tagged",
                    path,
                    f"now {_kind_name(n)} on `{n.tag}`, was an object "
                    f"(variant `{twin.tag}` has its fields)",
                    owners,
                    python=f"{self.new.names.types[n.name]} is now {_kind_name(n)}",
                )
                self.fields(
                    o.fields, twin.fields, f"{path}[{twin.tag}]", owners, (o.name, variant_py)
                )
                return
        if isinstance(o, ObjectType) and isinstance(n, TaggedUnion):
            on_field = self._tag_was_field(o, n)
            if on_field is not None:
                self.add(
                    "object-now-tagged-on-field" if on_field else "type-kind-changed",
                    path,
                    f"now {_kind_name(n)} on its field `{n.tag}`, was an object"
                    + ("" if on_field else " (some values of the field are read differently)"),
                    owners,
                    python=f"{self.new.names.types[n.name]} is now {_kind_name(n)}",
                )
                return
        self.add(
            "type-kind-changed",
            path,
            f"now {_kind_name(n)}, was {_kind_name(o)}",
            owners,
            python=f"{self.new.names.types[n.name]} is now {_kind_name(n)}",
        )

    def _tag_was_field(self, o: ObjectType, n: TaggedUnion) -> bool | None:
        """An object that became a union on one of its own optional fields (IdleStateUpdate on
        `stopReason`, alpha.8): whether each side still takes every value of that field the
        other may send (True), or not (False); None when the tag was no field of the object."""
        f = next((f for f in o.fields if f.wire == n.tag and not f.required), None)
        if f is None or n.fallback is None:
            return None
        shape = self.old.model.look_through(f.shape)
        enum = self.old.model.index.get(shape.ref or "") if shape.kind == "ref" else None
        if isinstance(enum, EnumType) and enum.value_kind == "str":
            values = {str(m.value) for m in enum.members}
            new_takes_old = values <= set(n.known_tags) or n.open is not None
            old_takes_new = enum.open or (set(n.known_tags) <= values and n.open is None)
            return new_takes_old and old_takes_new
        if shape.kind == "str":
            return n.open is not None
        return False

    def _tagged_twin(self, o: ObjectType, n: TaggedUnion) -> Variant | None:
        """The one variant of `n` that has every field `o` requires, with the same JSON."""
        found = []
        for v in n.variants:
            mine = {f.wire: f for f in v.fields}
            if all(
                f.wire in mine and self.relater.relate(f.shape, mine[f.wire].shape) == "same"
                for f in o.fields
                if f.required
            ):
                found.append(v)
        return found[0] if len(found) == 1 else None

    # -- fields ---------------------------------------------------------------------------
    def fields(
        self,
        old: tuple[Field, ...],
        new: tuple[Field, ...],
        path: str,
        owners: Owners,
        classes: tuple[str, str],  # the keys of `Names.fields` (a type or a variant class)
        skip: frozenset[str] = frozenset(),
    ) -> None:
        o_py = self.old.names.fields(classes[0])
        n_py = self.new.names.fields(classes[1])
        o_by, n_by = {f.wire: f for f in old}, {f.wire: f for f in new}
        cls_py = self.py_class(classes[1], new=True)
        for f in old:
            if f.wire in skip:
                continue
            at = f"{path}.{f.wire}"
            if f.wire not in n_by:
                kind = "field-removed-required" if f.required else "field-removed-optional"
                twin = self._twin(f, [g for g in new if g.wire not in o_by])
                self.add(
                    kind,
                    at,
                    f"{'required' if f.required else 'optional'} field `{f.wire}` removed",
                    owners,
                    python=f"{self.py_class(classes[0], new=False)}.{o_py[f.wire]} removed",
                    hint=f"`{twin}` has the same type: renamed?" if twin else "",
                )
            else:
                self.field(f, n_by[f.wire], at, owners, f"{cls_py}.{n_py[f.wire]}")
        for f in new:
            if f.wire in o_by or f.wire in skip:
                continue
            req = "required" if f.required else "optional"
            self.add(
                f"field-added-{req}",
                f"{path}.{f.wire}",
                f"{req} field `{f.wire}` ({describe(f.shape)}) added",
                owners,
                python=f"{cls_py}.{n_py[f.wire]} added"
                + (" (a required keyword)" if f.required else ""),
            )
        self.exclusive(path, owners, classes)

    def exclusive(self, path: str, owners: Owners, classes: tuple[str, str]) -> None:
        """The exclusive alternatives of a pair of classes (the elicitation scopes)."""
        o = _exclusive_groups(self.old.model, self.old.names).get(classes[0])
        n = _exclusive_groups(self.new.model, self.new.names).get(classes[1])
        cls_py = self.py_class(classes[1], new=True)
        if o is not None and n is not None:
            kind = self._exclusive_change(o[0], n[0])
            if kind:
                self.add(
                    kind,
                    path,
                    f"exclusive alternatives {_spell_group(o[0])} → {_spell_group(n[0])}",
                    owners,
                    python=f"{cls_py}.{n[1]}: " + _annotation_change(o[0], n[0], self.rename),
                )
            return
        one = o or n
        if one is None:
            return
        group, field = one
        verb = "added" if o is None else "removed"
        self.add(
            f"exclusive-{verb}",
            path,
            f"exclusive alternatives {_spell_group(group)} {verb}",
            owners,
            python=f"{cls_py}.{field} {verb}",
        )

    def _exclusive_change(self, o: Exclusive, n: Exclusive) -> str:
        """How the JSON two groups accept relates: "" (the same), narrowed, widened, changed."""
        o_alts = [(self.rename(a.ref), a.keys) for a in o.alternatives]
        n_alts = [(a.ref, a.keys) for a in n.alternatives]
        if o_alts == n_alts and o.exactly_one == n.exactly_one:
            return ""
        unordered = o.exactly_one and n.exactly_one  # the order matters to an any-of only
        kept_old, kept_new = [a for a in o_alts if a in n_alts], [a for a in n_alts if a in o_alts]
        if not unordered and kept_old != kept_new:
            return "exclusive-changed"
        fewer, more = set(n_alts) <= set(o_alts), set(n_alts) >= set(o_alts)
        if fewer and n.exactly_one >= o.exactly_one:
            return "exclusive-narrowed"
        if more and n.exactly_one <= o.exactly_one:
            return "exclusive-widened"
        return "exclusive-changed"

    def field(
        self,
        o: Field,
        n: Field,
        path: str,
        owners: Owners,
        attr: str,  # the Python attribute, `PromptRequest.session_id`
    ) -> None:
        if o.required != n.required:
            kind = "field-now-required" if n.required else "field-now-optional"
            was = "optional" if n.required else "required"
            self.add(
                kind,
                path,
                f"now {'required' if n.required else 'optional'}, was {was}",
                owners,
                python=f"{attr}: {'required' if n.required else 'may be UNSET'}",
            )
        lenient = not o.required and o.leniency.default_on_error
        self.shape(
            o.shape,
            n.shape,
            path,
            owners,
            "field",
            lenient,
            o.leniency.skip_invalid_items,
            attr,
            n.leniency.default_on_error,
        )
        lost = _leniency_names(o) - _leniency_names(n)
        gained = _leniency_names(n) - _leniency_names(o)
        if lost:
            self.add("leniency-removed", path, f"{', '.join(sorted(lost))} removed", owners)
        if gained:
            self.add("leniency-added", path, f"{', '.join(sorted(gained))} added", owners)
        if o.doc != n.doc:
            self.add("description-changed", path, "description changed", owners)

    def _twin(self, gone: Field, candidates: list[Field]) -> str:
        """The one added field with the same type and requiredness, a likely rename."""
        same = [
            g.wire
            for g in candidates
            if g.required == gone.required and self.relater.relate(gone.shape, g.shape) == "same"
        ]
        return same[0] if len(same) == 1 else ""

    # -- shapes (fields and aliases) --------------------------------------------------------
    def shape(
        self,
        o: Shape,
        n: Shape,
        path: str,
        owners: Owners,
        what: str,
        lenient: bool = False,
        skip_invalid: bool = False,
        attr: str = "",
        lenient_new: bool = False,  # the new field falls back on invalid values
    ) -> None:
        ow, nw = self.wire_old(o), self.wire_new(n)
        spelled = f"{_spell(o, ow)} → {_spell(n, nw)}"
        subject = attr or self.new.names.types.get(owners[1] or "", path)
        if accepts_null(ow) != accepts_null(nw):
            if accepts_null(nw):
                kind = "nullable-added-lenient" if lenient else "nullable-added"
                detail, py = f"{what} now accepts null", f"{subject} may now be None"
            else:
                kind = "nullable-removed"
                detail, py = f"{what} no longer accepts null", f"{subject} no longer takes None"
            self.add(kind, path, detail, owners, python=py)
        o_ann, n_ann = self.annotation(o, new=False), self.annotation(n, new=True)
        # "" when the generated annotation stays the same (e.g. only bounds changed)
        py = f"{subject}: annotation {o_ann} → {n_ann}" if o_ann != n_ann else ""
        relation = self.relater.relate_non_null(o, n)
        if relation == "same":
            self._same_json(o, n, path, owners, what, py)
            return
        if relation == "wider":
            items_only = skip_invalid and ow.kind == nw.kind == "list"
            kind = "type-widened-lenient" if lenient or items_only else "type-widened"
        elif relation == "narrower":
            kind = "type-narrowed-lenient" if lenient_new else "type-narrowed"
        else:
            kind = "type-changed"
        self.add(kind, path, f"{what} {spelled}", owners, python=py)

    def _same_json(self, o: Shape, n: Shape, path: str, owners: Owners, what: str, py: str) -> None:
        """Two shapes that accept the same JSON: how they are written, typed or formatted."""
        ow, nw = self.wire_old(o), self.wire_new(n)
        spelled = f"{_spell(o, ow)} → {_spell(n, nw)}"
        typed = catch_all_union(nw.non_null(), self.new.model) if ow.kind == "any" else None
        untyped = catch_all_union(ow.non_null(), self.old.model) if nw.kind == "any" else None
        o_enum, n_enum = open_enum(o.non_null(), self.old.model), open_enum(n, self.new.model)
        if typed or untyped:
            how = f"now decoded as `{typed}`" if typed else f"no longer decoded as `{untyped}`"
            self.add("any-typed", path, f"{what} {spelled}, {how}", owners, python=py)
        elif spelled_same(o.non_null(), n.non_null(), self.rename):
            pass
        elif (o_enum is None) != (n_enum is None):
            how = (
                f"the open enum `{o_enum}` is now a plain {describe(nw.non_null())}"
                if o_enum
                else f"now the open enum `{n_enum}`"
            )
            self.add("enum-inlined", path, f"{what} {spelled}: {how}", owners, python=py)
        else:
            self.add("alias-only", path, f"{what} {spelled}, the same JSON", owners, python=py)
        if ow.kind == nw.kind == "str" and ow.format != nw.format:
            formats = f"`{ow.format or 'none'}` → `{nw.format or 'none'}`"
            self.add("format-changed", path, f"string format {formats}", owners)


_GROUPS: dict[int, tuple[Model, dict[str, tuple[Exclusive, str]]]] = {}


def _exclusive_groups(model: Model, names: Names) -> dict[str, tuple[Exclusive, str]]:
    """The exclusive group of each class and the Python field holding it, by the keys
    `fields` gets: an object's `$defs` name, a variant's class (worked out once per model)."""
    cached = _GROUPS.get(id(model))
    if cached is not None and cached[0] is model:
        return cached[1]
    out: dict[str, tuple[Exclusive, str]] = {}
    for t in model.types:
        for py, exclusive in exclusive_owners(t, names):
            out[t.name if isinstance(t, ObjectType) else py] = (exclusive, names.exclusive[py])
    _GROUPS[id(model)] = (model, out)
    return out


def _annotation_change(o: Exclusive, n: Exclusive, rename: Callable[[str], str]) -> str:
    if [rename(a.ref) for a in o.alternatives] != [a.ref for a in n.alternatives]:
        return "its annotation changes"
    if n.exactly_one:
        return "the same annotation; several alternatives' keys are now a DecodeError"
    return "the same annotation; several alternatives' keys now decode as the first"


def _spell_group(group: Exclusive) -> str:
    joined = " | ".join(a.ref for a in group.alternatives)
    return f"({'exactly one' if group.exactly_one else 'any'} of `{joined}`)"


def _as_shape(t: TypeDef) -> Shape | None:
    """The values an alias or an open enum accepts, as a shape (None for other kinds)."""
    if isinstance(t, Alias):
        return t.shape
    if isinstance(t, EnumType) and t.open:
        return Shape(t.value_kind)
    return None


def _unwrap(t: TypeDef, side: Input) -> TypeDef:
    """What a one-branch untagged union, or an alias of a reference, stands for."""
    for _ in range(8):
        shape = None
        if isinstance(t, UntaggedUnion) and len(t.branches) == 1:
            shape = t.branches[0].shape
        elif isinstance(t, Alias):
            shape = t.shape
        if shape is None or shape.kind != "ref" or shape.nullable or shape.ref is None:
            return t
        t = side.model.index.get(shape.ref, t)
    return t


def _spell(raw: Shape, on_wire: Shape) -> str:
    """`SessionId (string)` for an alias, `string` for an inline shape."""
    text, seen = describe(raw), describe(on_wire)
    return f"`{text}`" if text == seen else f"`{text}` ({seen})"


def _leniency_names(f: Field) -> set[str]:
    names = set()
    if f.leniency.default_on_error:
        names.add("x-deserialize-default-on-error")
    if f.leniency.skip_invalid_items:
        names.add("x-deserialize-skip-invalid-items")
    if f.leniency.default_on_null:
        names.add("x-deserialize-default-on-null")
    return names


def _kind_name(t: TypeDef) -> str:
    if isinstance(t, ObjectType):
        return "an object"
    if isinstance(t, TaggedUnion):
        return "an open tagged union" if t.open else "a closed tagged union"
    if isinstance(t, UntaggedUnion):
        return "an untagged union"
    if isinstance(t, EnumType):
        return "an open enum" if t.open else "a closed enum"
    return "an alias"


def compare(old: Input, new: Input) -> list[Change]:
    return Comparer(old, new).run()


def _method_pairs(
    old: tuple[Method, ...], new: tuple[Method, ...]
) -> list[tuple[str, Method | None, Method | None]]:
    """(name, old method, new method), old ones first, then the new ones. A name with one
    method on each side pairs them (so a request that became a notification is one change);
    a name that is both a request and a notification on a side pairs by kind."""
    olds: dict[str, list[Method]] = {}
    news: dict[str, list[Method]] = {}
    for m in old:
        olds.setdefault(m.name, []).append(m)
    for m in new:
        news.setdefault(m.name, []).append(m)
    out: list[tuple[str, Method | None, Method | None]] = []
    for name, before in olds.items():
        after = news.get(name, [])
        if len(before) == 1 and len(after) == 1:
            out.append((name, before[0], after[0]))
            continue
        for m in before:
            out.append((name, m, next((n for n in after if n.kind == m.kind), None)))
    for name, after in news.items():
        before = olds.get(name, [])
        if len(before) == 1 and len(after) == 1:
            continue
        kinds = {m.kind for m in before}
        out += [(name, None, n) for n in after if n.kind not in kinds]
    return out
