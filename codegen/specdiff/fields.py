"""Fields and shapes: the fields of a pair of classes (added, removed, required or not,
renamed), each field's type compared as the JSON it accepts, the exclusive alternatives of a
class, and the shapes of aliases and untagged alternatives."""

from __future__ import annotations

from collections.abc import Callable

from ..ir import Exclusive, Field, Model, ObjectType, Shape
from ..naming import Names, exclusive_owners
from .context import Context, Owners
from .shapes import accepts_null, catch_all_union, describe, open_enum, spelled_same


class FieldComparer:
    """Compares fields and shapes, recording what changed in the shared `Context`."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def compare(
        self,
        old: tuple[Field, ...],
        new: tuple[Field, ...],
        path: str,
        owners: Owners,
        classes: tuple[str, str],  # the keys of `Names.fields` (a type or a variant class)
        skip: frozenset[str] = frozenset(),
    ) -> None:
        o_py = self.ctx.old.names.fields(classes[0])
        n_py = self.ctx.new.names.fields(classes[1])
        o_by, n_by = {f.wire: f for f in old}, {f.wire: f for f in new}
        cls_py = self.ctx.py_class(classes[1], new=True)
        for f in old:
            if f.wire in skip:
                continue
            at = f"{path}.{f.wire}"
            if f.wire not in n_by:
                kind = "field-removed-required" if f.required else "field-removed-optional"
                twin = self._twin(f, [g for g in new if g.wire not in o_by])
                self.ctx.add(
                    kind,
                    at,
                    f"{'required' if f.required else 'optional'} field `{f.wire}` removed",
                    owners,
                    python=f"{self.ctx.py_class(classes[0], new=False)}.{o_py[f.wire]} removed",
                    hint=f"`{twin}` has the same type: renamed?" if twin else "",
                )
            else:
                self.field(f, n_by[f.wire], at, owners, f"{cls_py}.{n_py[f.wire]}")
        for f in new:
            if f.wire in o_by or f.wire in skip:
                continue
            req = "required" if f.required else "optional"
            self.ctx.add(
                f"field-added-{req}",
                f"{path}.{f.wire}",
                f"{req} field `{f.wire}` ({describe(f.shape)}) added",
                owners,
                python=f"{cls_py}.{n_py[f.wire]} added"
                + (" (a required keyword)" if f.required else ""),
            )
        self._exclusive(path, owners, classes)

    def _exclusive(self, path: str, owners: Owners, classes: tuple[str, str]) -> None:
        """The exclusive alternatives of a pair of classes (the elicitation scopes)."""
        o = _exclusive_groups(self.ctx.old.model, self.ctx.old.names).get(classes[0])
        n = _exclusive_groups(self.ctx.new.model, self.ctx.new.names).get(classes[1])
        cls_py = self.ctx.py_class(classes[1], new=True)
        if o is not None and n is not None:
            kind = self._exclusive_change(o[0], n[0])
            if kind:
                self.ctx.add(
                    kind,
                    path,
                    f"exclusive alternatives {_spell_group(o[0])} → {_spell_group(n[0])}",
                    owners,
                    python=f"{cls_py}.{n[1]}: " + _annotation_change(o[0], n[0], self.ctx.rename),
                )
            return
        one = o or n
        if one is None:
            return
        group, field = one
        verb = "added" if o is None else "removed"
        self.ctx.add(
            f"exclusive-{verb}",
            path,
            f"exclusive alternatives {_spell_group(group)} {verb}",
            owners,
            python=f"{cls_py}.{field} {verb}",
        )

    def _exclusive_change(self, o: Exclusive, n: Exclusive) -> str:
        """How the JSON two groups accept relates: "" (the same), narrowed, widened, changed."""
        o_alts = [(self.ctx.rename(a.ref), a.keys) for a in o.alternatives]
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
            self.ctx.add(
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
            self.ctx.add("leniency-removed", path, f"{', '.join(sorted(lost))} removed", owners)
        if gained:
            self.ctx.add("leniency-added", path, f"{', '.join(sorted(gained))} added", owners)
        if o.doc != n.doc:
            self.ctx.add("description-changed", path, "description changed", owners)

    def _twin(self, gone: Field, candidates: list[Field]) -> str:
        """The one added field with the same type and requiredness, a likely rename."""
        same = [
            g.wire
            for g in candidates
            if g.required == gone.required
            and self.ctx.relater.relate(gone.shape, g.shape) == "same"
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
        ow, nw = self.ctx.wire_old(o), self.ctx.wire_new(n)
        spelled = f"{_spell(o, ow)} → {_spell(n, nw)}"
        subject = attr or self.ctx.new.names.types.get(owners[1] or "", path)
        if accepts_null(ow) != accepts_null(nw):
            if accepts_null(nw):
                kind = "nullable-added-lenient" if lenient else "nullable-added"
                detail, py = f"{what} now accepts null", f"{subject} may now be None"
            else:
                kind = "nullable-removed"
                detail, py = f"{what} no longer accepts null", f"{subject} no longer takes None"
            self.ctx.add(kind, path, detail, owners, python=py)
        o_ann, n_ann = self.ctx.annotation(o, new=False), self.ctx.annotation(n, new=True)
        # "" when the generated annotation stays the same (e.g. only bounds changed)
        py = f"{subject}: annotation {o_ann} → {n_ann}" if o_ann != n_ann else ""
        relation = self.ctx.relater.relate_non_null(o, n)
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
        self.ctx.add(kind, path, f"{what} {spelled}", owners, python=py)

    def _same_json(self, o: Shape, n: Shape, path: str, owners: Owners, what: str, py: str) -> None:
        """Two shapes that accept the same JSON: how they are written, typed or formatted."""
        ow, nw = self.ctx.wire_old(o), self.ctx.wire_new(n)
        spelled = f"{_spell(o, ow)} → {_spell(n, nw)}"
        typed = catch_all_union(nw.non_null(), self.ctx.new.model) if ow.kind == "any" else None
        untyped = catch_all_union(ow.non_null(), self.ctx.old.model) if nw.kind == "any" else None
        o_enum, n_enum = (
            open_enum(o.non_null(), self.ctx.old.model),
            open_enum(n, self.ctx.new.model),
        )
        if typed or untyped:
            how = f"now decoded as `{typed}`" if typed else f"no longer decoded as `{untyped}`"
            self.ctx.add("any-typed", path, f"{what} {spelled}, {how}", owners, python=py)
        elif spelled_same(o.non_null(), n.non_null(), self.ctx.rename):
            pass
        elif (o_enum is None) != (n_enum is None):
            how = (
                f"the open enum `{o_enum}` is now a plain {describe(nw.non_null())}"
                if o_enum
                else f"now the open enum `{n_enum}`"
            )
            self.ctx.add("enum-inlined", path, f"{what} {spelled}: {how}", owners, python=py)
        else:
            self.ctx.add("alias-only", path, f"{what} {spelled}, the same JSON", owners, python=py)
        if ow.kind == nw.kind == "str" and ow.format != nw.format:
            formats = f"`{ow.format or 'none'}` → `{nw.format or 'none'}`"
            self.ctx.add("format-changed", path, f"string format {formats}", owners)


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
