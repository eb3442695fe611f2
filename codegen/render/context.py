"""The typed contexts the templates render: one per generated module, made by `lower`.

All of it is plain data, made once by `lower` and only read by the templates (so no equality,
hashing or repr: each would cost the CLI's start-up a compiled function a class). Schema text
(wire names, tags, descriptions, enum values) is kept as data and reaches the output only
through the `pylit` and `docstring` filters. A few fields hold Python source that the lowering
builds from decided names, builtins, runtime helpers and `pylit` literals, never from raw text:
`annotation`s (type expressions), the `decode` bodies (statements, made by `checks.py` and
`unions.py`), `FieldContext.to_json` (an expression), and `MethodContext`'s `*_type` and
`*_annotation`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .reference import ObjectRow

import json
from dataclasses import dataclass, fields
from typing import Any, Literal

from .checks import Check

Encode = Literal["plain", "model", "list_model", "map_model", "enum", "generic"]


@dataclass(slots=True, eq=False, repr=False)
class FieldContext:
    """A field of a generated class: names, annotation, how it is decoded and encoded."""

    py: str
    wire: str
    annotation: str  # with `| _UnsetType` when the field may be omitted
    required: bool
    nullable: bool
    doc: str
    check: Check  # how its (non-null) value is checked
    decode: str  # the statements that decode it from `data` into `self` (`checks.field_decode`)
    to_json: str  # its value in `self`, encoded: an expression
    encode: Encode  # how `to_json` encodes it
    enum_type: str  # encode `enum`: the plain type its members encode as (`str`, `int`)
    write: str  # its JSON text as `_wire.py` writes it from `o`: an expression


@dataclass(slots=True, eq=False, repr=False)
class ExclusiveContext:
    """A class's exclusive alternatives: one field holding one of several classes, whose keys
    sit on the class's own JSON object (decoded by which required keys are present)."""

    py: str  # the field (`scope`)
    annotation: str  # the union of the alternatives' classes
    doc: str
    options: tuple[tuple[tuple[str, ...], str], ...]  # (required keys, class), in schema order
    table: str  # the module-level table of (keys, decoder) the runtime picks from
    pick: str  # the runtime's function: `exclusive` (`oneOf`) or `first_present` (`anyOf`)


@dataclass(slots=True, eq=False, repr=False)
class ClassContext:
    """A generated class: an object type, or a tagged union's variant, open or fallback one."""

    py: str
    doc: str
    note: str  # a paragraph the docstring adds about the wire, or ""
    union: str  # a variant's private base class (its union's), "" for an object type
    fields: tuple[FieldContext, ...]
    required: tuple[FieldContext, ...]
    optional: tuple[FieldContext, ...]
    # A variant's fixed tags, (wire, value), outermost first: its own union's, then those of
    # the unions nested in it (`sessionUpdate: state_update`, `state: idle`, ...). An open or
    # fallback class of a nested union has those of the levels above only.
    tags: tuple[tuple[str, str], ...] = ()
    reserved: tuple[str, ...] = ()  # open variant: the tags it must refuse
    known_keys: tuple[str, ...] = ()  # every wire key the class declares, the tags included
    min_keys: int = 0  # keys a decoded object always has: the required fields and the tags
    exclusive: ExclusiveContext | None = None  # exactly one of several classes, flattened

    nested: bool = False  # a class of a nested union (it carries `TAGS`)

    @property
    def slots(self) -> str:
        """`__slots__`: every field (the exclusive one where its keys are), then `extra`."""
        names = [f.py for f in self.fields]
        if self.exclusive is not None:
            names.append(self.exclusive.py)
        return "(" + "".join(f"{name!r}, " for name in names) + "'extra')"

    @property
    def json_tags(self) -> str:
        """The start of the class's JSON text as `_wire.py` writes it: `{` and its fixed tags
        (`{"sessionUpdate":"state_update","state":"idle"`); "" without fixed tags."""
        pairs = [f"{_json_text(wire)}:{_json_text(value)}" for wire, value in self.tags]
        return "{" + ",".join(pairs) if pairs else ""

    @property
    def all_tags(self) -> dict[str, str]:
        """`TAGS` of a class of a nested union: its fixed tags, wire name to value."""
        return dict(self.tags) if self.nested else {}

    @property
    def tag(self) -> str:
        """The tag of the outermost union (`TAG`); "" for a class without fixed tags."""
        return self.tags[0][1] if self.tags else ""


@dataclass(slots=True, eq=False, repr=False)
class UnionContext:
    """A tagged union: its private base class, its tag table and its alias of all classes."""

    py: str
    doc: str
    note: str
    tag_wire: str
    variants: tuple[tuple[str, str], ...]  # (tag, variant class)
    open_class: str
    fallback_class: str
    base: str = ""  # the private base class of the variants ("" for a nested union)
    members: tuple[str, ...] = ()  # every class of the union: variants, then open or fallback
    # A nested union (the payload of a variant of `outer_tags`' unions): the tags its decoder
    # checks first, and which its classes carry.
    outer_tags: tuple[tuple[str, str], ...] = ()
    fallback_when: str = ""  # the tags the fallback class takes, in words (for REFERENCE.md)
    # The tags whose class is a nested union, each with that union's tag (`state_update`,
    # `state`): the name in `variants` is then that union's.
    nested: tuple[tuple[str, str], ...] = ()
    decode: str = ""  # the body of its decoder, after the object (and outer tags) are checked


@dataclass(slots=True, eq=False, repr=False)
class MemberContext:
    """One member of an enum: its Python name, value and description."""

    py: str
    value: str | int
    doc: str


@dataclass(slots=True, eq=False, repr=False)
class EnumContext:
    """An enum class; `decode` is the body of the decoder of one value of it."""

    py: str
    doc: str
    note: str
    value_type: str  # `str` or `int`
    members: tuple[MemberContext, ...]
    open: bool
    decode: str


@dataclass(slots=True, eq=False, repr=False)
class AliasContext:
    """A named alias: of a class or enum (`name`), of a plain shape, or an untagged union."""

    py: str
    doc: str
    note: str
    kind: Literal["name", "shape", "untagged"]
    annotation: str
    target: str = ""  # name: the class or enum it names
    decode: str = ""  # shape, untagged: the body of the decoder of a value `v`


@dataclass(slots=True, eq=False, repr=False)
class ModuleContext:
    """What every generated module's template sees: the banner, and its own fields."""

    banner: str

    def variables(self) -> dict[str, Any]:
        """The template's variables: every field by name."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(slots=True, eq=False, repr=False)
class ModelsContext(ModuleContext):
    """`models.py`: everything it declares, in the order it declares it."""

    title: str
    enums: tuple[EnumContext, ...]
    unions: tuple[UnionContext, ...]
    classes: tuple[ClassContext, ...]
    aliases: tuple[AliasContext, ...]
    exports: tuple[str, ...]
    needs_annotated: bool  # some alias carries its own decoder
    needs_unset_type: bool  # some field may be omitted
    needs_literal: bool = False  # some field takes an enum's values as literals


@dataclass(slots=True, eq=False, repr=False)
class MethodContext:
    """One JSON-RPC method as the method table and the dispatchers see it."""

    name: str  # the wire method, e.g. "session/prompt"
    py: str  # the handler's Python name, "" for a method no role handles
    side: str
    kind: str  # request | notification
    unstable: bool
    doc: str
    params_class: str  # the params class, "" when the schema has none
    result_class: str  # the result class, "" for a notification or when the schema has none
    params_type: str  # `_m.X`, or `None`: the params type as the route tables hold it
    result_type: str
    params_annotation: str  # `_m.X`, or `Any`: the annotation of a handler's `params`
    result_annotation: str  # `_m.X`, `Any`, or `None` for a notification
    twin: bool = False  # a notification whose wire name is also a request's


@dataclass(slots=True, eq=False, repr=False)
class MethodsContext(ModuleContext):
    """`methods.py`: every method of the schema."""

    methods: tuple[MethodContext, ...]


@dataclass(slots=True, eq=False, repr=False)
class ReferenceContext(ModuleContext):
    """`REFERENCE.md`: the unions, methods and enums a user looks up."""

    title: str
    unions: tuple[UnionContext, ...]
    methods: tuple[MethodContext, ...]
    enums: tuple[EnumContext, ...]
    objects: tuple[ObjectRow, ...]  # every object type with its fields


@dataclass(slots=True, eq=False, repr=False)
class RpcContext(ModuleContext):
    """`rpc.py`: the methods each role handles, and the protocol-level cancel method."""

    agent: tuple[MethodContext, ...]  # handled by the agent: AgentBase, called by AgentStub
    client: tuple[MethodContext, ...]  # handled by the client: ClientBase, called by ClientStub
    cancel_method: str | None  # `$/cancel_request` when the schema has it
    batches: bool  # the schema defines JSON-RPC batches (arrays of messages)
    needs_any: bool  # some handler's params or result is untyped
    needs_models: bool
    has_requests: bool


@dataclass(slots=True, eq=False, repr=False)
class SessionStateContext(ModuleContext):
    """`session_state.py`: which `SessionUpdate` kinds follow which rule."""

    tag_wire: str
    kinds: tuple[tuple[str, str], ...]  # (tag, class) of every kind the schema knows
    roles: tuple[tuple[str, str], ...]  # (tag, role) of the message kinds that have a rule
    rules: tuple[tuple[str, str], ...]  # (class, SessionState method) of the kinds with a rule
    tool_call_collections: tuple[str, ...]  # tool call fields that hold lists
    usage_fields: tuple[str, ...]  # the usage fields kept (not `_meta`)


def _json_text(value: str) -> str:
    """A string's JSON text as the generated runtime writes it (UTF-8 kept, like `json_text`)."""
    return json.dumps(value, ensure_ascii=False)
