"""The frozen intermediate representation: the one model of an ACP schema.

Nodes are NamedTuples (immutable, hashable, compared by value, and cheap to define: frozen
dataclasses cost the CLI ~20 ms of start-up); the `Model` that holds them is a dataclass.

Everything downstream (naming, rendering, diffing) reads these nodes and never the raw JSON
Schema. Nodes keep wire names; Python names are decided later, in `naming`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, NamedTuple

# A JSON-level shape. `ref` points at a named definition; `list` and `map` carry `item`.
ShapeKind = Literal["any", "str", "int", "float", "bool", "null", "object", "ref", "list", "map"]


class Shape(NamedTuple):
    """The type of a value on the wire, with the constraints the decoder enforces."""

    kind: ShapeKind
    ref: str | None = None
    item: Shape | None = None
    nullable: bool = False
    minimum: int | float | None = None
    maximum: int | float | None = None
    min_items: int | None = None
    format: str | None = None

    def non_null(self) -> Shape:
        return self._replace(nullable=False) if self.nullable else self


class Leniency(NamedTuple):
    """The schema's `x-deserialize-*` rules on one field (the Rust crate is the reference)."""

    default_on_error: bool = False
    skip_invalid_items: bool = False
    default_on_null: bool = False

    @property
    def any(self) -> bool:
        return self.default_on_error or self.skip_invalid_items or self.default_on_null


class Field(NamedTuple):
    """A property of an object or variant: wire name, shape, requiredness, leniency."""

    wire: str
    shape: Shape
    required: bool
    doc: str
    pointer: str
    leniency: Leniency = Leniency()


class ObjectType(NamedTuple):
    """A JSON object with declared fields; undeclared keys are kept as `extra`."""

    name: str
    doc: str
    fields: tuple[Field, ...]
    pointer: str
    method: str | None = None
    side: str | None = None


class EnumMember(NamedTuple):
    """One known value of an enum, with the branch's title and description."""

    value: str | int
    title: str | None
    doc: str


class EnumType(NamedTuple):
    """A string or integer enum; an open one also accepts any other value of its JSON type."""

    name: str
    doc: str
    value_kind: Literal["str", "int"]
    members: tuple[EnumMember, ...]
    open: bool
    open_doc: str
    pointer: str


class Variant(NamedTuple):
    """One branch of a tagged union: its tag value and its whole payload (shared fields first)."""

    tag: str
    doc: str
    fields: tuple[Field, ...]
    payload: str | None  # the `$defs` type the branch reuses, when it reuses exactly one
    pointer: str
    title: str = ""


class OpenVariant(NamedTuple):
    """The catch-all branch: any tag outside `reserved`, payload kept whole."""

    title: str
    doc: str
    fields: tuple[Field, ...]  # includes the tag field itself, typed as a free string
    reserved: tuple[str, ...]  # tags the catch-all must not take (from its `not` clause)
    pointer: str


class TaggedUnion(NamedTuple):
    """A union decided by one string property (`sessionUpdate`, `type`, ...)."""

    name: str
    doc: str
    tag: str
    variants: tuple[Variant, ...]
    open: OpenVariant | None
    pointer: str
    method: str | None = None
    side: str | None = None
    # A branch without the tag (v1's SetSessionConfigOptionRequest): taken when the tag is
    # absent, and for an unknown tag when the union has no open variant.
    fallback: Variant | None = None

    @property
    def known_tags(self) -> tuple[str, ...]:
        return tuple(v.tag for v in self.variants)


class Branch(NamedTuple):
    """One alternative of an untagged union, chosen by JSON type, then by required keys."""

    title: str | None
    doc: str
    shape: Shape
    json_kind: Literal["null", "bool", "int", "float", "str", "list", "object", "any"]
    required: tuple[str, ...]  # for object branches: the keys that must be present


class UntaggedUnion(NamedTuple):
    """A union without a tag, decided by JSON type and then by required keys."""

    name: str
    doc: str
    branches: tuple[Branch, ...]
    pointer: str


class Alias(NamedTuple):
    """A named shape that is not a class of its own (`SessionId` is a string)."""

    name: str
    doc: str
    shape: Shape
    pointer: str
    method: str | None = None
    side: str | None = None


TypeDef = ObjectType | EnumType | TaggedUnion | UntaggedUnion | Alias


class Method(NamedTuple):
    """A JSON-RPC method: who handles it, whether it is answered, and its payload types."""

    name: str  # the wire method, e.g. "session/prompt"
    key: str  # the meta.json key, e.g. "session_prompt"
    side: Literal["agent", "client", "protocol"]
    kind: Literal["request", "notification"]
    params: str | None
    result: str | None
    unstable: bool = False


@dataclass(frozen=True, slots=True)
class Model:
    """The whole protocol version: types in schema order, and its methods."""

    title: str
    version: int | None
    types: tuple[TypeDef, ...]
    methods: tuple[Method, ...]
    source_sha256: str = ""
    source_ref: str = ""
    index: dict[str, TypeDef] = field(default_factory=dict, compare=False, hash=False)

    def get(self, name: str) -> TypeDef:
        return self.index[name]
