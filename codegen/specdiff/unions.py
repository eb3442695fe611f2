"""Tagged unions (variants, tag, catch-all, default branch), untagged unions and enums.

Openness decides what a new or removed tag does to the other side: an open union's catch-all
takes any tag it does not reserve, so old receivers keep a new variant and new receivers
keep a removed one; a closed union (or a tag the catch-all reserves) rejects it.
"""

from __future__ import annotations

from ..ir import Branch, EnumType, ObjectType, TaggedUnion, UntaggedUnion, Variant, is_nested
from .context import Context
from .fields import FieldComparer
from .shapes import describe


class UnionComparer:
    """Compares tagged unions, untagged unions and enums; their fields and shapes by the
    `FieldComparer` it holds."""

    def __init__(self, ctx: Context, fields: FieldComparer) -> None:
        self.ctx = ctx
        self.fields = fields

    def tagged(self, o: TaggedUnion, n: TaggedUnion, path: str) -> None:
        owners = (o.name, n.name)
        if o.tag != n.tag:
            self.ctx.add("tag-field-changed", path, f"tag property `{o.tag}` → `{n.tag}`", owners)
        self._openness(o, n, path)
        o_tags, n_tags = {v.tag: v for v in o.variants}, {v.tag: v for v in n.variants}
        for tag, v in o_tags.items():
            at = f"{path}[{tag}]"
            if tag in n_tags:
                self._variant(o, n, v, n_tags[tag], at)
                continue
            reserved = n.open is not None and tag in n.open.reserved
            kind = _openness_kind("removed", n, reserved, self._fits(v, n.fallback, new=True))
            still = ", the tag stays reserved" if reserved else ""
            twin = self._twin_variant(v, [w for w in n.variants if w.tag not in o_tags])
            self.ctx.add(
                kind,
                at,
                f"variant `{tag}` removed{still}",
                owners,
                python=f"{self.ctx.old.names.variants[(o.name, tag)]} goes away",
                hint=f"`{twin}` has the same payload: renamed?" if twin else "",
            )
        for tag, added in n_tags.items():
            if tag in o_tags:
                continue
            was_reserved = o.open is not None and tag in o.open.reserved
            fits = self._fits(added, o.fallback, new=False)
            kind = _openness_kind("added", o, was_reserved, fits)
            note = " (the old catch-all reserved it)" if was_reserved else ""
            self.ctx.add(
                kind,
                f"{path}[{tag}]",
                f"variant `{tag}` added{note}",
                owners,
                python=f"new {self.ctx.new.names.variants[(n.name, tag)]}",
            )
        self._fallback(o, n, path)

    def _variant(self, ou: TaggedUnion, nu: TaggedUnion, o: Variant, n: Variant, at: str) -> None:
        owners = (ou.name, nu.name)
        o_py, n_py = (
            self.ctx.old.names.variants[(ou.name, o.tag)],
            self.ctx.new.names.variants[(nu.name, n.tag)],
        )
        if o_py != n_py:
            self.ctx.add(
                "variant-class-renamed",
                at,
                "variant class renamed",
                owners,
                python=f"{o_py} → {n_py}",
            )
        o_nested, n_nested = is_nested(self.ctx.old.model, o), is_nested(self.ctx.new.model, n)
        if o_nested != n_nested:
            inner = n.nested if n_nested else o.nested
            self.ctx.add(
                "variant-now-union" if n_nested else "variant-no-longer-union",
                at,
                f"payload `{inner}` is {'now' if n_nested else 'no longer'} a tagged union",
                owners,
                python=f"{n_py} is now {'a union of classes' if n_nested else 'one class'}",
            )
            return  # the payload's fields are compared on the payload type itself
        skip = self._payload_fields(o, n)
        if o.doc != n.doc and not (skip and self._docs_from_payload(o, n)):
            self.ctx.add("description-changed", at, "description changed", owners)
        self.fields.compare(o.fields, n.fields, at, owners, (o_py, n_py), skip)

    def _payload_fields(self, o: Variant, n: Variant) -> frozenset[str]:
        """The fields a variant takes from a `$defs` payload that both sides share: those are
        compared once, on the payload type itself."""
        if o.payload is None or n.payload is None or self.ctx.rename(o.payload) != n.payload:
            return frozenset()
        op, np = self.ctx.old.model.index.get(o.payload), self.ctx.new.model.index.get(n.payload)
        if not isinstance(op, ObjectType) or not isinstance(np, ObjectType):
            return frozenset()
        return frozenset(f.wire for f in op.fields) | frozenset(f.wire for f in np.fields)

    def _docs_from_payload(self, o: Variant, n: Variant) -> bool:
        """Whether both variants only repeat their payload's description (reported there)."""
        op = self.ctx.old.model.index.get(o.payload or "")
        np = self.ctx.new.model.index.get(n.payload or "")
        return op is not None and np is not None and (o.doc, n.doc) == (op.doc, np.doc)

    def _fits(self, v: Variant, fallback: Variant | None, *, new: bool) -> bool:
        """Whether every field the other side's default branch requires is always in `v`,
        with a type the branch accepts (`new`: `v` is old and the branch new)."""
        if fallback is None:
            return False
        mine = {f.wire: f for f in v.fields}
        for f in fallback.fields:
            if not f.required:
                continue
            g = mine.get(f.wire)
            if g is None or not g.required:
                return False
            # the branch must accept every value `v` may carry
            if new:  # v old, branch new: the branch must be the same or wider
                ok = self.ctx.relater.relate(g.shape, f.shape) in ("same", "wider")
            else:  # branch old, v new: v must be the same or narrower
                ok = self.ctx.relater.relate(f.shape, g.shape) in ("same", "narrower")
            if not ok:
                return False
        return True

    def _twin_variant(self, gone: Variant, candidates: list[Variant]) -> str:
        same = [
            v.tag
            for v in candidates
            if (gone.payload is not None and self.ctx.rename(gone.payload) == v.payload)
        ]
        return same[0] if len(same) == 1 else ""

    def _openness(self, o: TaggedUnion, n: TaggedUnion, path: str) -> None:
        owners = (o.name, n.name)
        if o.open is None and n.open is not None:
            py = self.ctx.new.names.open_variants[n.name]
            self.ctx.add(
                "now-open",
                path,
                "now open (a catch-all takes unknown tags)",
                owners,
                python=f"new {py}",
            )
        elif o.open is not None and n.open is None:
            py = self.ctx.old.names.open_variants[o.name]
            self.ctx.add(
                "now-closed", path, "now closed (no catch-all)", owners, python=f"{py} goes away"
            )
        if o.open is None or n.open is None:
            return
        o_py, n_py = (
            self.ctx.old.names.open_variants[o.name],
            self.ctx.new.names.open_variants[n.name],
        )
        if o_py != n_py:
            self.ctx.add(
                "variant-class-renamed",
                f"{path}[*]",
                "catch-all class renamed",
                owners,
                python=f"{o_py} → {n_py}",
            )
        known = set(o.known_tags) | set(n.known_tags)
        for tag in sorted(set(n.open.reserved) - set(o.open.reserved) - known):
            self.ctx.add(
                "reserved-tag-added", f"{path}[{tag}]", f"tag `{tag}` now reserved", owners
            )
        for tag in sorted(set(o.open.reserved) - set(n.open.reserved) - known):
            self.ctx.add(
                "reserved-tag-removed", f"{path}[{tag}]", f"tag `{tag}` no longer reserved", owners
            )
        skip = frozenset({o.tag, n.tag})
        self.fields.compare(o.open.fields, n.open.fields, f"{path}[*]", owners, (o_py, n_py), skip)

    def _fallback(self, o: TaggedUnion, n: TaggedUnion, path: str) -> None:
        owners, at = (o.name, n.name), f"{path}[default]"
        if o.fallback is None and n.fallback is not None:
            py = self.ctx.new.names.fallback_variants[n.name]
            self.ctx.add(
                "fallback-added", at, "a branch without the tag added", owners, python=f"new {py}"
            )
        elif o.fallback is not None and n.fallback is None:
            py = self.ctx.old.names.fallback_variants[o.name]
            self.ctx.add(
                "fallback-removed",
                at,
                "the branch without the tag removed",
                owners,
                python=f"{py} goes away",
            )
        elif o.fallback is not None and n.fallback is not None:
            o_py = self.ctx.old.names.fallback_variants[o.name]
            n_py = self.ctx.new.names.fallback_variants[n.name]
            self.fields.compare(o.fallback.fields, n.fallback.fields, at, owners, (o_py, n_py))

    # -- untagged unions --------------------------------------------------------------------
    def untagged(self, o: UntaggedUnion, n: UntaggedUnion, path: str) -> None:
        """Alternatives are matched by title (one titled the same on both sides is the same
        alternative, its shape compared like a field's), the others by what they accept."""
        owners = (o.name, n.name)
        o_titles, n_titles = _titled(o), _titled(n)
        paired = {
            t
            for t in o_titles.keys() & n_titles.keys()
            if o_titles[t].json_kind == n_titles[t].json_kind
        }
        for title in sorted(paired):
            ob, nb = o_titles[title], n_titles[title]
            at = f"{path}({title})"
            if ob.required != nb.required:
                keys = f"{sorted(ob.required)} → {sorted(nb.required)}"
                self.ctx.add(
                    "type-changed", at, f"alternative {title}: required keys {keys}", owners
                )
            self.fields.shape(ob.shape, nb.shape, at, owners, f"alternative {title}:")

        def key(shape_text: str, kind: str, required: tuple[str, ...]) -> str:
            return f"{kind} {shape_text} {sorted(required)}"

        o_keys = {
            key(describe(self.ctx.renamed(self.ctx.wire_old(b.shape))), b.json_kind, b.required): b
            for b in o.branches
            if b.title not in paired
        }
        n_keys = {
            key(describe(self.ctx.wire_new(b.shape)), b.json_kind, b.required): b
            for b in n.branches
            if b.title not in paired
        }
        for k, b in o_keys.items():
            if k not in n_keys:
                what = _branch_name(b.title, describe(b.shape), b.required)
                at = f"{path}({b.title or describe(b.shape)})"
                self.ctx.add("branch-removed", at, f"alternative {what} removed", owners)
        for k, b in n_keys.items():
            if k not in o_keys:
                what = _branch_name(b.title, describe(b.shape), b.required)
                at = f"{path}({b.title or describe(b.shape)})"
                self.ctx.add("branch-added", at, f"alternative {what} added", owners)

    # -- enums ------------------------------------------------------------------------------
    def enum(self, o: EnumType, n: EnumType, path: str) -> None:
        owners = (o.name, n.name)
        if o.value_kind != n.value_kind:
            self.ctx.add(
                "type-changed", path, f"values are now {n.value_kind}, were {o.value_kind}", owners
            )
            return
        if o.open != n.open:
            kind = "now-open" if n.open else "now-closed"
            self.ctx.add(kind, path, "now open" if n.open else "now closed", owners)
        o_members = {m.value: m for m in o.members}
        n_members = {m.value: m for m in n.members}
        o_class, n_class = self.ctx.old.names.types[o.name], self.ctx.new.names.types[n.name]
        for value, m in o_members.items():
            at = f"{path}[{value}]"
            if value not in n_members:
                kind = "value-removed-open" if n.open else "value-removed-closed"
                py = self.ctx.old.names.members.get((o.name, value), "?")
                self.ctx.add(
                    kind, at, f"value {value!r} removed", owners, python=f"{o_class}.{py} goes away"
                )
                continue
            nm = n_members[value]
            if (m.doc, m.title) != (nm.doc, nm.title):
                self.ctx.add("description-changed", at, "description changed", owners)
            o_py = self.ctx.old.names.members.get((o.name, value))
            n_py = self.ctx.new.names.members.get((n.name, value))
            if o_py != n_py:
                self.ctx.add(
                    "member-renamed",
                    at,
                    "member renamed",
                    owners,
                    python=f"{o_class}.{o_py} → {n_class}.{n_py}",
                )
        for value in n_members:
            if value not in o_members:
                kind = "value-added-open" if o.open else "value-added-closed"
                py = self.ctx.new.names.members.get((n.name, value), "?")
                self.ctx.add(
                    kind,
                    f"{path}[{value}]",
                    f"value {value!r} added",
                    owners,
                    python=f"new {n_class}.{py}",
                )


def _titled(u: UntaggedUnion) -> dict[str, Branch]:
    """The alternatives by title, for titles used once."""
    titles = [b.title for b in u.branches if b.title]
    return {b.title: b for b in u.branches if b.title and titles.count(b.title) == 1}


def _openness_kind(change: str, receiving: TaggedUnion, reserved: bool, fits: bool) -> str:
    """What a tag unknown to the receiving side's union does: the catch-all takes it (unless
    reserved), else the tag-less default branch takes it when the payload fits, else it is
    rejected."""
    if receiving.open is not None:
        return f"variant-{change}-closed" if reserved else f"variant-{change}-open"
    if receiving.fallback is not None and fits:
        return f"variant-{change}-default"
    return f"variant-{change}-closed"


def _branch_name(title: str | None, shape: str, required: tuple[str, ...]) -> str:
    keys = f" with {', '.join(required)}" if required else ""
    return f"{title}: {shape}{keys}" if title else f"{shape}{keys}"
