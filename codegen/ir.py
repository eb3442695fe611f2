"""The frozen intermediate representation: the one model of an ACP schema.

Nodes are frozen, slotted dataclasses: immutable, hashable, equal only to a node of their own
type with equal fields, never indexable like a tuple. Copies with a change are
`dataclasses.replace(node, field=value)` (`Shape.with_nullable` on the hot path). Equality,
hash and repr are written once, in `Node`, rather than compiled for every class by
`dataclass()` at each start of the CLI (~3 ms). `Model` derives its index of types itself.

Everything downstream (naming, rendering, diffing) reads these nodes and never the raw JSON
Schema. Nodes keep wire names; Python names are decided later, in `naming`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Literal

# A JSON-level shape. `ref` points at a named definition; `list` and `map` carry `item`.
# `union` carries `options`: an inline union of named types, the first that decodes wins.
ShapeKind = Literal[
    "any", "str", "int", "float", "bool", "null", "object", "ref", "list", "map", "union"
]
Side = Literal["agent", "client", "protocol", "proxy"]
Role = Literal["agent", "client"]

# The protocol method the JSON-RPC runtime answers itself (it cancels the handler in flight):
# no role has a handler for it.
CANCEL_REQUEST = "$/cancel_request"


class Node:
    """What every node shares: equal only to a node of the same type whose fields are equal,
    hashed by its fields, and shown as `Type(field=value, ...)`, as a dataclass would be."""

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]]  # the fields, in order (set by `dataclass`)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__match_args__)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
        return f"{type(self).__name__}({fields})"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Shape(Node):
    """The type of a value on the wire, with the constraints the decoder enforces."""

    kind: ShapeKind
    ref: str | None = None
    item: Shape | None = None
    nullable: bool = False
    minimum: int | float | None = None
    maximum: int | float | None = None
    min_items: int | None = None
    format: str | None = None
    min_length: int | None = None  # strings: `minLength` (counted in code points)
    # `union`: the alternatives in schema order (each a `ref`); the first that decodes wins,
    # as in an inline `anyOf` of named types (the JSON-RPC envelopes' `params` and `result`).
    options: tuple[Shape, ...] = ()

    def non_null(self) -> Shape:
        return self.with_nullable(False)

    def with_nullable(self, nullable: bool) -> Shape:
        """This shape, nullable or not (a hot path: made directly, `replace` is slower)."""
        if nullable == self.nullable:
            return self
        return Shape(
            self.kind,
            self.ref,
            self.item,
            nullable,
            self.minimum,
            self.maximum,
            self.min_items,
            self.format,
            self.min_length,
            self.options,
        )


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Leniency(Node):
    """The schema's `x-deserialize-*` rules on one field (the Rust crate is the reference)."""

    default_on_error: bool = False
    skip_invalid_items: bool = False
    default_on_null: bool = False


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Field(Node):
    """A property of an object or variant: wire name, shape, requiredness, leniency."""

    wire: str
    shape: Shape
    required: bool
    doc: str
    pointer: str
    leniency: Leniency = Leniency()


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Alternative(Node):
    """One alternative of an `Exclusive` group: a `$defs` object, told by its required keys."""

    ref: str
    keys: tuple[str, ...]  # its required keys: all present selects it
    title: str
    doc: str


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Exclusive(Node):
    """One of several `$defs` objects, flattened into the owner's JSON object: an object-level
    `oneOf`/`anyOf` whose alternatives have disjoint required keys (the elicitation scopes:
    `sessionId` (+ `toolCallId`) or `requestId`). An alternative applies when its required
    keys are all present, and is decoded from the same object. `oneOf` (`exactly_one`): none
    or several applying is an error. `anyOf`: the first that applies and decodes, in schema
    order; none is an error. The owner's own fields never include the alternatives'
    properties."""

    alternatives: tuple[Alternative, ...]
    pointer: str  # the `oneOf`/`anyOf` itself
    exactly_one: bool = True  # `oneOf`; False for `anyOf`


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ObjectType(Node):
    """A JSON object with declared fields; undeclared keys are kept as `extra`."""

    name: str
    doc: str
    fields: tuple[Field, ...]
    pointer: str
    exclusive: Exclusive | None = None  # exactly one of these objects, on the same JSON object


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class EnumMember(Node):
    """One known value of an enum, with the branch's title and description."""

    value: str | int
    title: str | None
    doc: str


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class EnumType(Node):
    """A string or integer enum; an open one also accepts any other value of its JSON type."""

    name: str
    doc: str
    value_kind: Literal["str", "int"]
    members: tuple[EnumMember, ...]
    open: bool
    open_doc: str
    pointer: str
    # The bounds of the open values (an open integer enum's `format`, `minimum`, `maximum`).
    minimum: int | float | None = None
    maximum: int | float | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Variant(Node):
    """One branch of a tagged union: its tag value and its whole payload (shared fields first)."""

    tag: str
    doc: str
    fields: tuple[Field, ...]
    payload: str | None  # the `$defs` type the branch reuses, when it reuses exactly one
    pointer: str
    title: str = ""  # the fallback branch's title (it has no tag to be named after)
    # The branch's payload is itself a tagged union on another property of the same object
    # (`state_update` → StateUpdate by `state`): its `$defs` name. `fields` are then only the
    # fields outside that union; each of its classes becomes one class of this union.
    nested: str | None = None
    exclusive: Exclusive | None = None  # as on `ObjectType`


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class OpenVariant(Node):
    """The catch-all branch: any tag outside `reserved`, payload kept whole."""

    title: str
    doc: str
    fields: tuple[Field, ...]  # includes the tag field itself, typed as a free string
    reserved: tuple[str, ...]  # tags the catch-all must not take (from its `not` clause)
    pointer: str
    exclusive: Exclusive | None = None  # as on `ObjectType`


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TaggedUnion(Node):
    """A union decided by one string property (`sessionUpdate`, `type`, ...)."""

    name: str
    doc: str
    tag: str
    variants: tuple[Variant, ...]
    open: OpenVariant | None
    pointer: str
    # A branch without the tag (v1's SetSessionConfigOptionRequest), or with the tag as
    # `null` (IdleStateUpdate's `none`): taken when the tag is absent (or null), and for an
    # unknown tag when the union has no open variant.
    fallback: Variant | None = None
    # The tag property is optional and `x-deserialize-default-on-error`: a value that is not a
    # string (nor null) is dropped before the variant is chosen.
    lenient_tag: bool = False

    @property
    def known_tags(self) -> tuple[str, ...]:
        return tuple(v.tag for v in self.variants)


JsonKind = Literal["null", "bool", "int", "float", "str", "list", "object", "any"]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Branch(Node):
    """One alternative of an untagged union, chosen by JSON type, then by required keys."""

    title: str | None
    doc: str
    shape: Shape
    json_kind: JsonKind
    # The keys that must be present: of the object (object branches), or of the first item
    # (list branches). Empty when the branch is not told apart by keys.
    required: tuple[str, ...]
    # An inline object alternative with declared properties, as a class of its own (the
    # JSON-RPC envelopes' `Result` and `Error` responses); its `name` is `{union}/{index}`.
    inline: ObjectType | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class UntaggedUnion(Node):
    """A union without a tag, decided by JSON type and then by required keys."""

    name: str
    doc: str
    branches: tuple[Branch, ...]
    pointer: str


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Alias(Node):
    """A named shape that is not a class of its own (`SessionId` is a string)."""

    name: str
    doc: str
    shape: Shape
    pointer: str


TypeDef = ObjectType | EnumType | TaggedUnion | UntaggedUnion | Alias


def alias_refs(t: TypeDef) -> list[str]:
    """The `$defs` names that an alias or an untagged union refers to in its shapes, items of
    lists and maps included: what its module-level expression in `models.py` names."""
    shapes = [t.shape] if isinstance(t, Alias) else []
    shapes += [b.shape for b in t.branches] if isinstance(t, UntaggedUnion) else []
    found = []
    while shapes:
        shape = shapes.pop()
        if shape.ref is not None:
            found.append(shape.ref)
        if shape.item is not None:
            shapes.append(shape.item)
        shapes.extend(shape.options)
    return found


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Method(Node):
    """A JSON-RPC method: who handles it, whether it is answered, and its payload types."""

    name: str  # the wire method, e.g. "session/prompt"
    key: str  # the meta.json key, e.g. "session_prompt"
    side: Side
    kind: Literal["request", "notification"]
    params: str | None
    result: str | None
    unstable: bool = False
    pointer: str = ""  # where the method is declared: its meta.json entry, or its `x-method`

    @property
    def roles(self) -> tuple[Role, ...]:
        """The roles that handle it: its side; both for a protocol method, and for a proxy
        method (a proxy-chain component serves it as its conductor's agent, and the conductor
        as its proxies' client: `proxy/successor` goes both ways); none for the cancel
        request, which the runtime answers itself."""
        if self.name == CANCEL_REQUEST and self.side == "protocol":
            return ()
        if self.side == "protocol" or self.side == "proxy":
            return ("agent", "client")
        return (self.side,)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Model(Node):
    """The whole protocol version: types in schema order, its methods, and the JSON-RPC batch
    messages the root schema accepts (by title; none from npm-sdk 2.2 on in v2)."""

    title: str
    version: int | None
    types: tuple[TypeDef, ...]
    methods: tuple[Method, ...]
    batches: tuple[str, ...] = ()
    index: Mapping[str, TypeDef] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", MappingProxyType({t.name: t for t in self.types}))

    def get(self, name: str) -> TypeDef:
        return self.index[name]

    def step_through(self, shape: Shape, *, open_enums: bool = False) -> Shape | None:
        """One step: what a reference to an alias stands for (its shape, nullable if the
        reference is) and, with `open_enums`, a reference to an open enum (the plain type of
        its values); None for any other shape."""
        if shape.kind != "ref" or shape.ref is None:
            return None
        target = self.index.get(shape.ref)
        if isinstance(target, Alias):
            inner = target.shape
        elif open_enums and isinstance(target, EnumType) and target.open:
            inner = Shape(target.value_kind)
        else:
            return None
        return inner.with_nullable(True) if shape.nullable else inner

    def look_through(self, shape: Shape, *, open_enums: bool = False) -> Shape:
        """`shape` as the wire sees it: `step_through` until a shape that is no alias (or open
        enum) reference. References to anything else stay references."""
        if shape.kind != "ref":
            return shape
        seen: set[str | None] = set()  # a guard: `classify` leaves no cycle of aliases
        while shape.ref not in seen:
            inner = self.step_through(shape, open_enums=open_enums)
            if inner is None:
                return shape
            seen.add(shape.ref)
            shape = inner
        return shape


# -- nested tagged unions, level by level ----------------------------------------------------
@dataclass(frozen=True, slots=True, eq=False, repr=False)
class UnionLevel(Node):
    """A tagged union as its classes see it: a `$defs` union at the top, or, inside one of
    its variants, the union that variant's payload is (`SessionUpdate` → `state_update` →
    StateUpdate by `state` → `idle` → IdleStateUpdate by `stopReason`). Each class of a
    level carries the tags of the levels above it and their fields, on one flat object."""

    key: str  # names the level in `Names`: the union's name at the top, else `nested_key`
    union: TaggedUnion
    tags: tuple[tuple[str, str], ...]  # (wire tag, value) of the levels above, outermost first
    fields: tuple[Field, ...]  # the fields of the levels above, shared by every class here
    parent: str | None = None  # the key of the level above
    via: str = ""  # the tag of the variant above whose payload this level is
    doc: str = ""  # that variant's description


def nested_key(parent: str, tag: str) -> str:
    """The key of the level inside `parent`'s variant `tag` (no `$defs` name has U+001F)."""
    return f"{parent}\x1f{tag}"


def union_levels(model: Model, union: TaggedUnion) -> list[UnionLevel]:
    """`union`'s level and, depth first, those nested in its variants (each at most once on
    a path: a union that reaches itself again stays a flat variant)."""
    out: list[UnionLevel] = []

    def visit(level: UnionLevel, path: frozenset[str]) -> None:
        out.append(level)
        for v in level.union.variants:
            inner = model.index.get(v.nested or "")
            if isinstance(inner, TaggedUnion) and inner.name not in path:
                visit(
                    UnionLevel(
                        nested_key(level.key, v.tag),
                        inner,
                        (*level.tags, (level.union.tag, v.tag)),
                        merge_fields(level.fields, v.fields),
                        level.key,
                        v.tag,
                        v.doc or inner.doc,
                    ),
                    path | {inner.name},
                )

    visit(UnionLevel(union.name, union, (), ()), frozenset({union.name}))
    return out


def is_nested(model: Model, v: Variant) -> bool:
    """Whether the variant's payload is a tagged union of its own (see `union_levels`)."""
    return isinstance(model.index.get(v.nested or ""), TaggedUnion)


def merge_fields(outer: tuple[Field, ...], inner: tuple[Field, ...]) -> tuple[Field, ...]:
    """The fields of a level above, then a class's own (its own win on the same wire name)."""
    if not outer:
        return inner
    out = {f.wire: f for f in outer}
    for f in inner:
        out[f.wire] = f
    return tuple(out.values())
