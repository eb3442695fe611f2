"""The views the templates loop over: plain, frozen data about one generated module.

`view.ViewBuilder` makes them from the IR and the decided names. Python expressions in here are
names of functions and types only; schema text reaches templates through the `pylit` and
`docstring` filters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple


class Check(NamedTuple):
    """How to validate (and convert) one value held in the local `v`."""

    kind: str  # any | type | int | float | null | call | enum | list | map
    expected: str = ""
    pytype: str = ""  # kind "type": the exact Python type
    lo: int | float | None = None
    hi: int | float | None = None
    call: str = ""  # kind "call": decoder function; list/map: item decoder expression
    table: str = ""  # kind "enum": lookup table
    open: bool = False  # kind "enum": unknown values are kept
    min_items: int | None = None
    skip_invalid: bool = False


class FieldView(NamedTuple):
    """A field as the templates see it: names, annotation, check, encoding."""

    py: str
    wire: str
    annotation: str
    required: bool
    nullable: bool
    doc: str
    check: Check
    encode: str  # plain | model | list_model | map_model | str_enum | int_enum | generic
    default_on_error: bool
    default_on_null: bool
    empty: str  # the empty value for lenient rules on collections ("[]", "{}") or ""


class ClassView(NamedTuple):
    """A generated class: an object type, a tagged-union variant or an open variant."""

    py: str
    doc: str
    base: str
    fields: tuple[FieldView, ...]
    tag_wire: str = ""
    tag: str = ""  # fixed tag of a variant
    reserved: tuple[str, ...] = ()  # open variant: tags it must refuse
    open_tag_py: str = ""  # open variant: Python name of its tag field
    payload: str = ""

    @property
    def note(self) -> str:
        if self.reserved:
            return (
                f"The open variant: any `{self.tag_wire}` outside the known and reserved tags, "
                "with its whole payload kept."
            )
        if self.tag:
            extra = f" Payload: `{self.payload}`." if self.payload else ""
            return f"Wire tag: `{self.tag_wire}: {self.tag}`.{extra}"
        return ""

    @property
    def required(self) -> tuple[FieldView, ...]:
        return tuple(f for f in self.fields if f.required)

    @property
    def optional(self) -> tuple[FieldView, ...]:
        return tuple(f for f in self.fields if not f.required)

    @property
    def known_keys(self) -> tuple[str, ...]:
        keys = [f.wire for f in self.fields]
        return tuple([self.tag_wire, *keys] if self.tag else keys)


class UnionView(NamedTuple):
    """A tagged union's base class and its tag table."""

    py: str
    doc: str
    tag_wire: str
    variants: tuple[tuple[str, str], ...]  # (tag, class)
    open_class: str
    reserved: tuple[str, ...]
    fallback_class: str = ""

    @property
    def rule(self) -> str:
        tags = ", ".join(t for t, _ in self.variants)
        text = f"Tagged union on `{self.tag_wire}` ({tags}): one table lookup picks the variant."
        if self.open_class:
            text += (
                f" Any other tag decodes to `{self.open_class}`, which keeps the whole payload;"
                " a known or reserved tag with a broken payload is a DecodeError."
            )
        elif self.fallback_class:
            text += (
                f" Without the tag, or with an unknown one, it decodes as `{self.fallback_class}`."
            )
        else:
            text += " Closed: any other tag is a DecodeError."
        return text


class EnumView(NamedTuple):
    """An enum; `check` decodes one value of it."""

    py: str
    doc: str
    base: str  # StrEnum | IntEnum
    value_type: str  # str | int
    members: tuple[tuple[str, str | int, str], ...]  # (name, value, doc)
    open: bool
    open_doc: str

    @property
    def check(self) -> Check:
        values = ", ".join(repr(v) for _, v, _ in self.members)
        expected = (
            f"one of {values}"
            if not self.open
            else ("a string" if self.value_type == "str" else "an integer")
        )
        return Check(
            "enum", expected, pytype=self.value_type, table="_E_" + self.py, open=self.open
        )

    @property
    def open_note(self) -> str:
        if not self.open:
            return "Closed: any other value is a DecodeError."
        return f"Open: any other {self.value_type} decodes as itself. " + self.open_doc


class Option(NamedTuple):
    """One alternative of an untagged union, with the keys that select it."""

    required: tuple[str, ...]  # keys (objects) or first-item keys (lists) that select it
    check: Check
    doc: str
    list_item: bool = False

    @property
    def condition(self) -> str:
        if self.list_item:
            keys = "".join(f" and {k!r} in first" for k in self.required)
            return f"first is None or (type(first) is dict{keys})" if keys else "True"
        return " and ".join(f"{k!r} in v" for k in self.required) or "True"


_CONDITIONS = {
    "null": "v is None",
    "bool": "type(v) is bool",
    "int": "type(v) is int",
    "float": "type(v) is float or type(v) is int",
    "str": "type(v) is str",
    "list": "type(v) is list",
    "object": "type(v) is dict",
    "any": "True",
}


class Group(NamedTuple):
    """The alternatives of an untagged union that share one JSON type."""

    json_kind: str
    options: tuple[Option, ...]

    @property
    def condition(self) -> str:
        return _CONDITIONS[self.json_kind]

    @property
    def missing_message(self) -> str:
        sets = ["{" + ", ".join(o.required) + "}" for o in self.options]
        return "needs the keys of one of " + " or ".join(sets)


class AliasView(NamedTuple):
    """A named alias: of a class, of a plain shape, or an untagged union."""

    py: str
    doc: str
    annotation: str
    check: Check | None  # None: alias of a class or enum, decoded by its target
    target: str = ""  # decoder of the target when `check` is None
    groups: tuple[Group, ...] = ()  # untagged unions
    untagged: bool = False
    expected: str = ""

    @property
    def rule(self) -> str:
        if not self.untagged:
            return ""
        return (
            "Untagged union, decoded without trying alternatives in turn: first by JSON type "
            "(null, boolean, integer, number, string, list, object, in that order; an integer "
            "may fill a number); among objects, the first alternative in schema order whose "
            "required keys are all present; among lists, the same test on the first item "
            "(an empty list takes the first list alternative)."
        )


@dataclass
class ModuleView:
    """Everything `models.py` declares, in the order it is declared."""

    enums: list[EnumView] = field(default_factory=list)
    unions: list[UnionView] = field(default_factory=list)
    classes: list[ClassView] = field(default_factory=list)
    aliases: list[AliasView] = field(default_factory=list)
    exports: list[str] = field(default_factory=list)
