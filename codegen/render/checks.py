"""How a decoder checks (and converts) the value in its local `v`: one small class per kind of
check, each writing its own statements.

A check's `lines()` are statements that leave the checked (converted) value in `v`;
`returned()` the same ending in a `return` of it (a decoder's body, or an alternative of an
untagged union). Lines are relative: the caller indents them, the template places the block.
Every piece of Python here is made from decided names, runtime helpers and `pylit` literals,
never from raw schema text.

`type_known` says that the JSON type was tested already (an untagged union tests it once,
before its alternatives), so only the rest is checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from .env import pylit

OnNull = Literal["check", "keep", "empty"]
_OPEN_VALUE = {"str": "_rt.OpenStr", "int": "_rt.OpenInt"}


def indented(lines: list[str], by: str = "    ") -> list[str]:
    return [by + line if line else line for line in lines]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Check:
    """The base: what every kind answers. `kind` names it for the templates of other modules
    (`_wire.py` writes a plain string field its own way)."""

    kind: ClassVar[str] = ""
    checks_nothing: ClassVar[bool] = False  # every value passes unchanged

    def steps(self) -> list[str]:
        """The statements before the value is ready."""
        return []

    def value(self) -> str:
        """The checked value, as an expression over `v` (after `steps`)."""
        return "v"

    def lines(self) -> list[str]:
        value = self.value()
        return self.steps() + ([] if value == "v" else [f"v = {value}"])

    def returned(self) -> list[str]:
        return [*self.steps(), f"return {self.value()}"]

    def takes_every_value(self) -> bool:
        """Every value of the JSON type it is given passes (so nothing after it is tried)."""
        return self.checks_nothing


def _raise_unless(condition: str, expected: str) -> list[str]:
    return [f"if {condition}:", f"    raise _rt.expected({pylit(expected)}, v)"]


def _bounds(lo: int | float | None, hi: int | float | None) -> list[str]:
    """The bound tests of a number (`v < 0`, `v > 9`), each already a `pylit` literal."""
    return ([f"v < {pylit(lo)}"] if lo is not None else []) + (
        [f"v > {pylit(hi)}"] if hi is not None else []
    )


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Anything(Check):
    """No check: any value (or one whose JSON type is all there is to test, tested already)."""

    kind: ClassVar[str] = "any"
    checks_nothing: ClassVar[bool] = True


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TypeCheck(Check):
    """A string, boolean or object: its exact Python type, and a string's fewest characters."""

    kind: ClassVar[str] = "type"
    pytype: str  # `str`, `bool` or `dict`
    expected: str
    min_length: int | None = None
    type_known: bool = False

    def steps(self) -> list[str]:
        out = []
        if not self.type_known:
            out = _raise_unless(f"type(v) is not {self.pytype}", self.expected)
        if self.min_length:
            n = self.min_length
            out += [f"if len(v) < {n}:", f"    raise _rt.too_few_characters({n})"]
        return out


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class NumberCheck(Check):
    """An integer or a number (an integer fills a number; a boolean is neither) in its bounds;
    with `type_known` the bounds only (there is at least one)."""

    kind: ClassVar[str] = "number"
    pytype: Literal["int", "float"]
    expected: str
    lo: int | float | None = None
    hi: int | float | None = None
    type_known: bool = False

    def steps(self) -> list[str]:
        tests = _bounds(self.lo, self.hi)
        if not self.type_known:
            is_not = "type(v) is not int"
            if self.pytype == "float":
                is_not = "(type(v) is not float and type(v) is not int)"
            tests.insert(0, is_not)
        return _raise_unless(" or ".join(tests), self.expected)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class NullCheck(Check):
    """The value must be null."""

    kind: ClassVar[str] = "null"

    def steps(self) -> list[str]:
        return _raise_unless("v is not None", "null")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class CallCheck(Check):
    """A decoder function does it all (a class, a union, an alias, an inline union)."""

    kind: ClassVar[str] = "call"
    call: str  # the decoder: a function's name, or an expression that makes one

    def value(self) -> str:
        return f"{self.call}(v)"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class EnumCheck(Check):
    """A member of an enum, looked up by value; an open enum keeps any other value of its
    type (in its bounds) as `OpenStr`/`OpenInt`."""

    kind: ClassVar[str] = "enum"
    pytype: Literal["str", "int"]
    expected: str
    table: str  # the module-level lookup table, value → member
    open: bool = False
    lo: int | float | None = None
    hi: int | float | None = None
    type_known: bool = False

    def steps(self) -> list[str]:
        is_not = [] if self.type_known else [f"type(v) is not {self.pytype}"]
        if not self.open:
            return _raise_unless(" or ".join([*is_not, f"v not in {self.table}"]), self.expected)
        tests = is_not + _bounds(self.lo, self.hi)
        out = _raise_unless(" or ".join(tests), self.expected) if tests else []
        return [*out, f"e = {self.table}.get(v)"]

    def takes_every_value(self) -> bool:
        return self.open and self.type_known and self.lo is None and self.hi is None

    def value(self) -> str:
        if not self.open:
            return f"{self.table}[v]"
        return f"e if e is not None else {_OPEN_VALUE[self.pytype]}(v)"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ListCheck(Check):
    """A list of items, each decoded by `item`; invalid items dropped with `skip_invalid`."""

    kind: ClassVar[str] = "list"
    item: str  # the item decoder, an expression
    min_items: int | None = None
    skip_invalid: bool = False
    type_known: bool = False

    def _of(self) -> str:
        return f"_rt.{'list_skip' if self.skip_invalid else 'list_of'}(v, {self.item})"

    def steps(self) -> list[str]:
        out = [] if self.type_known else _raise_unless("type(v) is not list", "a list")
        if self.min_items:  # counted after the invalid items are dropped
            n = self.min_items
            out += [f"v = {self._of()}", f"if len(v) < {n}:", f"    raise _rt.too_short({n})"]
        return out

    def value(self) -> str:
        return "v" if self.min_items else self._of()


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class MapCheck(Check):
    """An object used as a map, each value decoded by `item`."""

    kind: ClassVar[str] = "map"
    item: str
    type_known: bool = False

    def steps(self) -> list[str]:
        return [] if self.type_known else _raise_unless("type(v) is not dict", "an object")

    def value(self) -> str:
        return f"_rt.map_of(v, {self.item})"


def field_decode(
    py: str,
    wire: str,
    *,
    required: bool,
    check: Check,
    on_null: OnNull,
    lenient: bool,
    empty: str,
    reserved_in: str = "",
) -> str:
    """The statements that decode one field of `data` into `self.<py>`.

    `on_null`: a null is checked like any value (`check`), kept as None (`keep`), or becomes
    `empty` (`empty`, the default-on-null rule). `lenient`: a value that fails becomes `empty`
    (required) or stays omitted. `reserved_in`: the open variant whose `RESERVED_TAGS` the
    value must not be."""
    body = check.lines()
    if on_null == "empty":
        body = ["if v is None:", f"    v = {empty}", *(["else:", *indented(body)] if body else [])]
    elif on_null == "keep" and body:
        body = ["if v is not None:", *indented(body)]
    if lenient and body:
        fallback = empty if required else "_UNSET"
        body = ["try:", *indented(body), "except _DecodeError:", f"    v = {fallback}"]
    key = pylit(wire)
    if required:
        read = [f"v = data[{key}]", *body]
    else:
        read = [f"if {key} in data:", f"    v = data[{key}]", "    n += 1", *indented(body)]
        read += ["else:", "    v = _UNSET"]
    if reserved_in:
        read += [f"if v in {reserved_in}.RESERVED_TAGS:", "    raise _rt.reserved_tag(v)"]
    return "\n".join([f"key = {key}", *read, f"self.{py} = v"])
