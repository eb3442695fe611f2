"""The structural comparison of two IR models: methods, then every `$defs` type.

Types are matched by `$defs` name (or as renamed, see `match`); each pair is compared by kind:
fields of objects and variants, variants of tagged unions, alternatives of untagged unions,
values of enums, shapes of aliases. Field types are compared as the JSON they accept
(`shapes.wire`), so an inline `string` that becomes a `$ref` to a string alias is no wire change.
A variant that reuses a `$defs` payload (`allOf: [{$ref: ContentChunk}]`) is compared through
that payload type, once, not again in every union that uses it.
"""

from __future__ import annotations

from ..ir import (
    Alias,
    EnumType,
    Method,
    ObjectType,
    Shape,
    TaggedUnion,
    TypeDef,
    UntaggedUnion,
    Variant,
)
from .context import Context
from .fields import FieldComparer
from .finding import Change
from .load import Input
from .match import method_renames, type_renames
from .reach import method_direction, sender_direction
from .unions import UnionComparer


class Comparer:
    """The whole comparison: methods and types here; fields and shapes by its `FieldComparer`,
    unions and enums by its `UnionComparer`, all recording into one `Context`."""

    def __init__(self, old: Input, new: Input) -> None:
        self.ctx = Context(old, new)
        self.fields = FieldComparer(self.ctx)
        self.unions = UnionComparer(self.ctx, self.fields)
        self.method_pairs = method_renames(old.model, new.model)
        self.ctx.renames, self.rename_reasons = type_renames(
            old.model, new.model, self.method_pairs
        )

    def run(self) -> list[Change]:
        self.methods()
        self.batches()
        self.types()
        return self.ctx.changes

    # -- methods --------------------------------------------------------------------------
    def methods(self) -> None:
        for name, m, n in _method_pairs(self.ctx.old.model.methods, self.ctx.new.model.methods):
            path = f"method:{name}"
            if n is None:
                assert m is not None
                moved = self.method_pairs.get(name)
                hint = f"probably renamed to `{moved}` (same side and payloads)" if moved else ""
                self.ctx.add(
                    "method-removed",
                    path,
                    f"{m.kind} `{name}` (handled by the {m.side}) removed",
                    direction=method_direction(m),
                    hint=hint,
                )
                continue
            if m is None:
                was = next((o for o, x in self.method_pairs.items() if x == name), None)
                self.ctx.add(
                    f"method-added-{n.kind}",
                    path,
                    f"{n.kind} `{name}` (handled by the {n.side}) added",
                    direction=method_direction(n),
                    hint=f"probably renamed from `{was}`" if was else "",
                )
                continue
            direction = method_direction(n)
            if m.side != n.side:
                self.ctx.add(
                    "method-side-changed",
                    path,
                    f"now handled by the {n.side}, was the {m.side}",
                    direction="both",
                )
            if m.kind != n.kind:
                detail = f"now a {n.kind}, was a {m.kind}"
                self.ctx.add("method-kind-changed", path, detail, direction="both")
            if m.unstable != n.unstable:
                kind = "method-now-unstable" if n.unstable else "method-now-stable"
                detail = "now unstable" if n.unstable else "now stable"
                self.ctx.add(kind, path, detail, direction=direction)
            for role, o_name, n_name in (
                ("params", m.params, n.params),
                ("result", m.result, n.result),
            ):
                self._payload(path, role, o_name, n_name)

    def batches(self) -> None:
        """The JSON-RPC batch messages the root schema allows (named after their sender)."""
        old, new = set(self.ctx.old.batches), set(self.ctx.new.batches)
        for title in sorted(old - new):
            detail = f"batch message `{title}` removed from the root schema"
            self.ctx.add(
                "batch-removed", f"batch:{title}", detail, direction=sender_direction(title)
            )
        for title in sorted(new - old):
            detail = f"batch message `{title}` added to the root schema"
            self.ctx.add("batch-added", f"batch:{title}", detail, direction=sender_direction(title))

    def _payload(self, path: str, role: str, o_name: str | None, n_name: str | None) -> None:
        """A method whose params or result are now another type: compare the two types."""
        if o_name is None and n_name is None or (o_name and self.ctx.rename(o_name) == n_name):
            return
        o_py = self.ctx.old.names.types.get(o_name or "", "nothing")
        n_py = self.ctx.new.names.types.get(n_name or "", "nothing")
        self.ctx.add(
            "method-payload-replaced",
            f"{path}/{role}",
            f"{role} type `{o_name}` → `{n_name}`",
            (o_name, n_name),
            python=f"{role} class {o_py} → {n_py}",
        )
        if o_name in self.ctx.old.model.index and n_name in self.ctx.new.model.index:
            assert o_name is not None and n_name is not None
            self.pair(
                self.ctx.old.model.get(o_name), self.ctx.new.model.get(n_name), f"{path}/{role}"
            )

    # -- types ----------------------------------------------------------------------------
    def types(self) -> None:
        targets = set(self.ctx.renames.values())
        for t in self.ctx.old.model.types:
            if t.name in self.ctx.new.model.index:
                self.pair(t, self.ctx.new.model.get(t.name), t.name)
            elif t.name in self.ctx.renames:
                n = self.ctx.new.model.get(self.ctx.renames[t.name])
                o_py, n_py = self.ctx.old.names.types[t.name], self.ctx.new.names.types[n.name]
                self.ctx.add(
                    "type-renamed",
                    t.name,
                    f"`{t.name}` renamed to `{n.name}` ({self.rename_reasons[t.name]})",
                    (t.name, n.name),
                    python=f"{o_py} → {n_py}",
                )
                self.pair(t, n, n.name)
            else:
                py = self.ctx.old.names.types[t.name]
                self.ctx.add(
                    "type-removed",
                    t.name,
                    f"{_kind_name(t)} `{t.name}` removed",
                    (t.name, None),
                    python=f"{py} is no longer exported",
                )
        for t in self.ctx.new.model.types:
            if t.name not in self.ctx.old.model.index and t.name not in targets:
                py = self.ctx.new.names.types[t.name]
                self.ctx.add(
                    "type-added",
                    t.name,
                    f"{_kind_name(t)} `{t.name}` added",
                    (None, t.name),
                    python=f"new {py}",
                )

    def pair(self, o: TypeDef, n: TypeDef, path: str) -> None:
        owners = (o.name, n.name)
        if o.doc != n.doc:
            self.ctx.add("description-changed", path, "description changed", owners)
        if isinstance(o, ObjectType) and isinstance(n, ObjectType):
            self.fields.compare(o.fields, n.fields, path, owners, (o.name, n.name))
        elif isinstance(o, TaggedUnion) and isinstance(n, TaggedUnion):
            self.unions.tagged(o, n, path)
        elif isinstance(o, UntaggedUnion) and isinstance(n, UntaggedUnion):
            self.unions.untagged(o, n, path)
        elif isinstance(o, EnumType) and isinstance(n, EnumType):
            self.unions.enum(o, n, path)
        elif isinstance(o, Alias) and isinstance(n, Alias):
            self.fields.shape(o.shape, n.shape, path, owners, "type")
        else:
            self._kind_changed(o, n, path)

    def _kind_changed(self, o: TypeDef, n: TypeDef, path: str) -> None:
        owners = (o.name, n.name)
        o_shape, n_shape = _as_shape(o), _as_shape(n)
        if o_shape is not None and n_shape is not None:  # alias ↔ open enum: compare values
            self.fields.shape(o_shape, n_shape, path, owners, "type")
            return
        ou, nu = _unwrap(o, self.ctx.old), _unwrap(n, self.ctx.new)
        if (ou is not o or nu is not n) and type(ou) is type(nu):
            # e.g. an object that became a one-branch union of an object: compare the objects
            self.ctx.add(
                "type-form-changed",
                path,
                f"now {_kind_name(n)}, was {_kind_name(o)}; the JSON is the same",
                owners,
                python=f"{self.ctx.new.names.types[n.name]} is now {_kind_name(n)}",
            )
            self.pair(ou, nu, path)
            return
        if isinstance(o, ObjectType) and isinstance(n, TaggedUnion) and n.fallback is None:
            twin = self._tagged_twin(o, n)
            if twin is not None:
                variant_py = self.ctx.new.names.variants[(n.name, twin.tag)]
                self.ctx.add(
                    "object-now-tagged",
                    path,
                    f"now {_kind_name(n)} on `{n.tag}`, was an object "
                    f"(variant `{twin.tag}` has its fields)",
                    owners,
                    python=f"{self.ctx.new.names.types[n.name]} is now {_kind_name(n)}",
                )
                self.fields.compare(
                    o.fields, twin.fields, f"{path}[{twin.tag}]", owners, (o.name, variant_py)
                )
                return
        if isinstance(o, ObjectType) and isinstance(n, TaggedUnion):
            on_field = self._tag_was_field(o, n)
            if on_field is not None:
                self.ctx.add(
                    "object-now-tagged-on-field" if on_field else "type-kind-changed",
                    path,
                    f"now {_kind_name(n)} on its field `{n.tag}`, was an object"
                    + ("" if on_field else " (some values of the field are read differently)"),
                    owners,
                    python=f"{self.ctx.new.names.types[n.name]} is now {_kind_name(n)}",
                )
                return
        self.ctx.add(
            "type-kind-changed",
            path,
            f"now {_kind_name(n)}, was {_kind_name(o)}",
            owners,
            python=f"{self.ctx.new.names.types[n.name]} is now {_kind_name(n)}",
        )

    def _tag_was_field(self, o: ObjectType, n: TaggedUnion) -> bool | None:
        """An object that became a union on one of its own optional fields (IdleStateUpdate on
        `stopReason`, alpha.8): whether each side still takes every value of that field the
        other may send (True), or not (False); None when the tag was no field of the object."""
        f = next((f for f in o.fields if f.wire == n.tag and not f.required), None)
        if f is None or n.fallback is None:
            return None
        shape = self.ctx.old.model.look_through(f.shape)
        enum = self.ctx.old.model.index.get(shape.ref or "") if shape.kind == "ref" else None
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
                f.wire in mine and self.ctx.relater.relate(f.shape, mine[f.wire].shape) == "same"
                for f in o.fields
                if f.required
            ):
                found.append(v)
        return found[0] if len(found) == 1 else None


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
