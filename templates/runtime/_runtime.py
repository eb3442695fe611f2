"""Wire runtime shared by every generated type: UNSET, DecodeError, decode() and encode(), the
base of the generated classes, and the registries the generated modules fill on import
(DECODERS, WRITERS). The decoders' building blocks live in `_decoders.py` and are re-exported
here, where the generated models call them.

Decoders raise `DecodeError` only. Paths are built while an error unwinds, so a successful
decode never pays for them.
"""

from __future__ import annotations

import dataclasses
import enum
import typing
from collections.abc import Callable
from typing import Any, ClassVar, TypeAlias, TypeVar, overload

# The decoders' building blocks, which the generated models reach through this module.
from ._decoders import NO_EXTRA as NO_EXTRA
from ._decoders import UNSET as UNSET
from ._decoders import DecodeError as DecodeError
from ._decoders import Decoder as Decoder
from ._decoders import UnsetType as UnsetType
from ._decoders import bad_tag as bad_tag
from ._decoders import d_any as d_any
from ._decoders import d_bool as d_bool
from ._decoders import d_float as d_float
from ._decoders import d_int as d_int
from ._decoders import d_null as d_null
from ._decoders import d_object as d_object
from ._decoders import d_str as d_str
from ._decoders import describe as describe
from ._decoders import exclusive as exclusive
from ._decoders import expected as expected
from ._decoders import extras as extras
from ._decoders import first_of as first_of
from ._decoders import first_present as first_present
from ._decoders import float_range as float_range
from ._decoders import int_range as int_range
from ._decoders import list_decoder as list_decoder
from ._decoders import list_of as list_of
from ._decoders import list_skip as list_skip
from ._decoders import map_decoder as map_decoder
from ._decoders import map_of as map_of
from ._decoders import missing as missing
from ._decoders import not_object as not_object
from ._decoders import or_null as or_null
from ._decoders import reserved_tag as reserved_tag
from ._decoders import str_min as str_min
from ._decoders import too_few_characters as too_few_characters
from ._decoders import too_short as too_short
from ._decoders import wrong_tag as wrong_tag

JsonValue: TypeAlias = Any
"""Any JSON value: None, bool, int, float, str, list or dict with string keys."""

T = TypeVar("T")


class OpenStr(str):
    """A value of an open enum outside its known values, as decoded (and to construct one:
    `OpenStr("my_kind")`); a plain string that is not one of the known values is a type error."""

    __slots__ = ()

    def to_json(self) -> str:
        return str.__str__(self)


class OpenInt(int):
    """An open integer enum's value outside its known values (see OpenStr)."""

    __slots__ = ()

    def to_json(self) -> int:
        return int(self)


class _DataclassFields:
    """`__dataclass_fields__` of a generated class, made the first time it is asked for: the
    class then is a real dataclass (`dataclasses.fields`, `replace`, `asdict` work), and an
    import does not pay for running `@dataclass` on hundreds of classes."""

    def __get__(self, instance: object, owner: type) -> dict[str, Any]:
        # Only a class with fields of its own (a union's private base has none): once made,
        # a class's own `__dataclass_fields__` hides this descriptor from its subclasses.
        if not owner.__dict__.get("__slots__"):
            raise AttributeError("__dataclass_fields__")
        dataclasses.dataclass(kw_only=True, init=False, repr=False, eq=False)(owner)
        fields: dict[str, Any] = owner.__dict__["__dataclass_fields__"]
        return fields


class Model:
    """Base of every generated class: its `__slots__` are its fields, in order, then `extra`."""

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, Any]] = _DataclassFields()  # type: ignore[assignment]

    def to_json(self) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        body = ", ".join(f"{name}={getattr(self, name)!r}" for name in field_names(self))
        return f"{type(self).__qualname__}({body})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in field_names(self))

    __hash__ = None  # type: ignore[assignment]  # mutable, like a dataclass with eq=True


def field_names(value: Model) -> tuple[str, ...]:
    """The attributes of a generated value, in order: its class's `__slots__`."""
    names: tuple[str, ...] = type(value).__slots__
    return names


class Alias:
    """Marks a named alias (`Annotated[str, Alias("SessionId")]`) so decode() can find it."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Alias({self.name!r})"


# The decoder of every exported type (classes, enums, aliases): decode() is one lookup.
DECODERS: dict[object, Decoder] = {}


def register(alias: object, decoder: Decoder) -> None:
    DECODERS[alias] = decoder


Writer: TypeAlias = Callable[[Any], str]
# The JSON text writer of each generated class, by class: every lane's `_wire.py` adds its own
# on import (a lane's rpc module imports it). `jsonrpc.to_text` looks a value's type up here and
# takes the general way (`dump_text(encode(value))`) for anything not found.
WRITERS: dict[type, Writer] = {}


def register_writers(writers: dict[type, Writer]) -> None:
    WRITERS.update(writers)


def documented(union: Any, name: str, doc: str) -> Any:
    """A tagged union's alias with a name and a docstring, for help(): `typing.Union[...]` of
    its classes, equal to the `X | Y` the type checker sees (whose `__doc__` is read-only)."""
    members = typing.get_args(union)
    if not members:  # a union of one class is that class, which keeps its own docstring
        return union
    alias: Any = typing.Union[members]  # noqa: UP007  # not `X | Y`: its __doc__ is read-only
    alias.__doc__ = doc
    alias.__name__ = alias.__qualname__ = name
    return alias


@overload
def decode(tp: type[T], data: Any) -> T: ...
@overload
def decode(tp: object, data: Any) -> Any: ...
def decode(tp: Any, data: Any) -> Any:
    """Turn parsed JSON into the typed value of `tp` (any type this package exports).

    Raises DecodeError, and nothing else, for any input.
    """
    try:
        fn = DECODERS[tp]
    except (KeyError, TypeError):  # not ours, or unhashable: a model of another package?
        from_json = getattr(tp, "from_json", None)
        if from_json is None:
            raise TypeError(f"{tp!r} is not a type of this package") from None
        fn = from_json
    try:
        return fn(data)
    except RecursionError:
        raise DecodeError("value is nested too deeply") from None


def guard(fn: Decoder, data: Any) -> Any:
    try:
        return fn(data)
    except RecursionError:
        raise DecodeError("value is nested too deeply") from None


def encode(value: Any) -> Any:
    """Turn a typed value back into plain JSON values (dict, list, str, int, float, bool, None).

    Raises TypeError naming the attribute path (`$.update.content`) of a value of the wrong
    Python type where a model, or a list or map of models, belongs."""
    if isinstance(value, Model):
        try:
            return value.to_json()
        except AttributeError as exc:
            raise misplaced(value, exc) from None
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    if value is UNSET:
        raise TypeError("UNSET is not a JSON value; omit the field instead")
    if isinstance(value, enum.Enum):
        return value.value
    to_json = getattr(value, "to_json", None)  # a model of another generated package
    return to_json() if callable(to_json) else value


enc = encode


def misplaced(root: Model, exc: AttributeError) -> Exception:
    """The TypeError for `root.to_json()` having met `exc.obj`, which has no `to_json`."""
    bad = getattr(exc, "obj", None)
    if exc.name != "to_json" or bad is None:
        return exc  # not a misplaced value: a bug to report as it is
    found = _find(root, bad, "$", 0)
    if found is None:
        return TypeError(f"cannot encode {type(bad).__name__} {bad!r:.40}: a model belongs there")
    path, value = found
    kind = "a list or map of models" if value is not bad else "a model"
    return TypeError(f"{path}: cannot encode {type(value).__name__}: {kind} belongs there")


def _find(value: Any, bad: object, path: str, depth: int) -> tuple[str, Any] | None:
    """Where `bad` sits under `value` (by Python attribute names), and the value held there:
    `bad` itself, or the str or dict whose iteration yielded it."""
    if depth > 100:
        return None
    if isinstance(value, Model):
        pairs: Any = ((f".{name}", getattr(value, name)) for name in field_names(value))
    elif isinstance(value, list | tuple):
        pairs = ((f"[{i}]", v) for i, v in enumerate(value))
    elif isinstance(value, dict):
        pairs = ((f"[{k!r}]", v) for k, v in value.items())
    else:
        return None
    for step, child in pairs:
        if child is bad or (isinstance(child, str | dict) and _yields(child, bad)):
            return path + step, child
        deeper = _find(child, bad, path + step, depth + 1) if not isinstance(child, str) else None
        if deeper is not None:
            return deeper
    return None


def _yields(container: str | dict[Any, Any], bad: object) -> bool:
    """Whether iterating `container` (a str or a dict where a list belongs) yields `bad`."""
    return isinstance(bad, str) and any(item is bad or item == bad for item in container)
