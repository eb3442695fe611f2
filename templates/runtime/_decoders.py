"""The building blocks every generated decoder uses: `UNSET`, `DecodeError`, the errors it
raises (with the path built while an error unwinds, so a successful decode never pays for it),
the containers (lists, maps, unions, a shared empty `extra`) and the scalar checks.

A leaf; `_runtime` re-exports all of it, and the generated models call it through there.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, Final, TypeAlias

Decoder: TypeAlias = Callable[[Any], Any]


class UnsetType(enum.Enum):
    """The type of `UNSET`: a field that was omitted on the wire (as opposed to `null`)."""

    UNSET = "UNSET"

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = UnsetType.UNSET


class DecodeError(ValueError):
    """A JSON value does not fit the expected type; `path` says where (`$.update.content[2]`)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = " ".join(reason.split())
        self._parts: list[str | int] = []

    def at(self, part: str | int | None) -> DecodeError:
        """Prefix one step of the path (called while unwinding, innermost first)."""
        if part is not None:
            self._parts.append(part)
        return self

    @property
    def path(self) -> str:
        out = "$"
        for part in reversed(self._parts):
            if isinstance(part, int):
                out += f"[{part}]"
            elif part.isidentifier():
                out += "." + part
            else:
                out += "[" + _quote(part) + "]"
        return out

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


# -- errors ------------------------------------------------------------------------------------
def describe(value: Any) -> str:
    if value is None:
        return "null"
    kind = type(value)
    if kind is bool:
        return "a boolean"
    if kind is int:
        return "an integer"
    if kind is float:
        return "a number"
    if kind is str:
        return "a string"
    if kind is list:
        return "a list"
    if kind is dict:
        return "an object"
    return f"a non-JSON {kind.__name__}"


def expected(what: str, value: Any) -> DecodeError:
    if value is UNSET:
        return DecodeError("missing required field")
    return DecodeError(f"expected {what}, got {describe(value)}")


def missing() -> DecodeError:
    return DecodeError("missing required field")


def not_object(value: Any) -> DecodeError:
    return expected("an object", value)


def bad_tag(tag: str, value: Any, known: list[str] | None = None) -> DecodeError:
    if value is None or value is UNSET:
        return DecodeError("missing tag").at(tag)
    if type(value) is not str:
        return expected("a string tag", value).at(tag)
    return DecodeError(f"unknown tag {_quote(value)}; expected one of {', '.join(known or ())}").at(
        tag
    )


def wrong_tag(tag: str, want: str, value: Any) -> DecodeError:
    if value is UNSET:
        return DecodeError("missing tag").at(tag)
    return DecodeError(f"expected tag {_quote(want)}, got {_preview(value)}").at(tag)


def reserved_tag(value: str) -> DecodeError:
    return DecodeError(f"tag {_quote(value)} is reserved by this schema and has no variant here")


def too_short(minimum: int) -> DecodeError:
    return DecodeError(f"expected at least {minimum} item(s)")


def too_few_characters(minimum: int) -> DecodeError:
    return DecodeError(f"expected at least {minimum} character(s)")


def _quote(text: str) -> str:
    body = text if len(text) <= 60 else text[:57] + "..."
    return '"' + body.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'


def _preview(value: Any) -> str:
    return _quote(value) if type(value) is str else describe(value)


# -- containers ----------------------------------------------------------------------------------
class _NoExtra(dict[str, Any]):
    """The `extra` of every decoded object that had no unknown keys: one shared, empty,
    read-only dict (decoding allocates none). Assign a new dict to add keys."""

    __slots__ = ()

    def _read_only(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            "this decoded object has no extra keys and shares an empty read-only `extra`: "
            "assign a new dict instead (obj.extra = {...})"
        )

    __setitem__ = __delitem__ = setdefault = update = pop = popitem = clear = _read_only
    __ior__ = _read_only

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, ())

    def __copy__(self) -> dict[str, Any]:
        return {}

    def __deepcopy__(self, memo: Any) -> dict[str, Any]:
        return {}


NO_EXTRA: Final[dict[str, Any]] = _NoExtra()


def extras(data: dict[Any, Any], known: frozenset[str]) -> dict[str, Any]:
    """The undeclared keys of an object, kept as they came."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if type(key) is not str:
            raise DecodeError(f"object keys must be strings, got {describe(key)}")
        if key not in known:
            out[key] = value
    return out


def list_of(value: list[Any], item: Decoder) -> list[Any]:
    try:
        return [item(v) for v in value]
    except DecodeError as exc:
        for index, v in enumerate(value):  # error path only: find the failing index
            try:
                item(v)
            except DecodeError as again:
                raise again.at(index) from None
        raise exc


def list_skip(value: list[Any], item: Decoder) -> list[Any]:
    """`x-deserialize-skip-invalid-items`: invalid items are dropped, valid ones kept in order."""
    out = []
    for v in value:
        try:
            out.append(item(v))
        except DecodeError:
            pass
    return out


def map_of(value: dict[Any, Any], item: Decoder) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, v in value.items():
        if type(key) is not str:
            raise DecodeError(f"object keys must be strings, got {describe(key)}")
        try:
            out[key] = item(v)
        except DecodeError as exc:
            raise exc.at(key) from None
    return out


def list_decoder(item: Decoder) -> Decoder:
    def decode_list(value: Any) -> list[Any]:
        if type(value) is not list:
            raise expected("a list", value)
        return list_of(value, item)

    return decode_list


def map_decoder(item: Decoder) -> Decoder:
    def decode_map(value: Any) -> dict[str, Any]:
        if type(value) is not dict:
            raise expected("an object", value)
        return map_of(value, item)

    return decode_map


def or_null(item: Decoder) -> Decoder:
    def decode_nullable(value: Any) -> Any:
        return None if value is None else item(value)

    return decode_nullable


def first_of(what: str, *decoders: Decoder) -> Decoder:
    """An inline union: the first alternative that decodes the value, in schema order (as the
    SDK's zod union); none is an error naming `what`."""

    def decode_first(value: Any) -> Any:
        for decoder in decoders:
            try:
                return decoder(value)
            except DecodeError:
                pass
        raise expected(what, value)

    return decode_first


def exclusive(data: dict[str, Any], options: tuple[tuple[list[str], Decoder], ...]) -> Any:
    """Exactly one of several objects flattened into `data` (`oneOf`): the one whose required
    keys are all present, decoded from `data` itself (its `extra` holds every other key)."""
    found = [decoder for keys, decoder in options if all(k in data for k in keys)]
    if len(found) == 1:
        return found[0](data)
    raise DecodeError(f"expected exactly one of {_key_sets(options)}, found {len(found) or 'none'}")


def first_present(data: dict[str, Any], options: tuple[tuple[list[str], Decoder], ...]) -> Any:
    """One of several objects flattened into `data` (`anyOf`): the first, in schema order,
    whose required keys are all present and which decodes; the first one's error if none
    decodes."""
    error: DecodeError | None = None
    for keys, decoder in options:
        if all(k in data for k in keys):
            try:
                return decoder(data)
            except DecodeError as exc:
                error = error or exc
    if error is not None:
        raise error
    raise DecodeError(f"expected one of {_key_sets(options)}, found none")


def _key_sets(options: tuple[tuple[list[str], Decoder], ...]) -> str:
    return " or ".join(" + ".join(f"`{k}`" for k in keys) for keys, _ in options)


# -- scalars -------------------------------------------------------------------------------------
def d_any(value: Any) -> Any:
    return value


def d_str(value: Any) -> str:
    if type(value) is not str:
        raise expected("a string", value)
    return value


def str_min(minimum: int) -> Decoder:
    def decode_str(value: Any) -> str:
        if type(value) is not str:
            raise expected("a string", value)
        if len(value) < minimum:
            raise too_few_characters(minimum)
        return value

    return decode_str


def d_bool(value: Any) -> bool:
    if type(value) is not bool:
        raise expected("a boolean", value)
    return value


def d_null(value: Any) -> None:
    if value is not None:
        raise expected("null", value)


def d_object(value: Any) -> dict[str, Any]:
    if type(value) is not dict:
        raise expected("an object", value)
    return value


def d_int(value: Any) -> int:
    if type(value) is not int:
        raise expected("an integer", value)
    return value


def d_float(value: Any) -> float:
    if type(value) is not float and type(value) is not int:
        raise expected("a number", value)
    return value


def int_range(lo: int | None, hi: int | None) -> Decoder:
    def decode_int(value: Any) -> int:
        if (
            type(value) is not int
            or (lo is not None and value < lo)
            or (hi is not None and value > hi)
        ):
            raise expected(f"an integer from {lo} to {hi}", value)
        return value

    return decode_int


def float_range(lo: float | None, hi: float | None) -> Decoder:
    def decode_float(value: Any) -> float:
        if type(value) is not float and type(value) is not int:
            raise expected("a number", value)
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise expected(f"a number from {lo} to {hi}", value)
        return value

    return decode_float
