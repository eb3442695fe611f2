"""What can still be read of a line the strict parser refused (`load_line` raised
UnreadableMessage) for a value it holds (a number beyond a double, NaN, an integer of too many
digits, invalid UTF-8 in a string, nesting too deep) while the rest is JSON grammar: `salvage`
gives its envelope (its `id`, whether it is a request, where and why), so that a request is
answered under its own id.

The line is read again member by member with a lenient parser that puts a `Refused` marker
where the strict one gave up; the first marker in document order says where and why. Bounded:
the work is a second parse of a line already within `max_message_bytes`, plus (for a member
nested too deeply to parse) one pass over its brackets, done only for lines up to
DEEP_SKIP_MAX_BYTES.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Final

from ._runtime import DecodeError

DEEP_SKIP_MAX_BYTES: Final = 1024 * 1024
_SPACE: Final = re.compile(r"[ \t\n\r]*")
# A string (escapes included) or a bracket: what skipping a value nested too deeply looks at.
_TOKEN: Final = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_ESCAPED_BYTE: Final = re.compile("[\udc80-\udcff]")  # an invalid byte, as surrogateescape reads it


class Refused:
    """Where the strict parser gave up on a value, and why."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Salvaged:
    """A refused line's envelope: its `id`, whether it is a request (it has a `method`), and
    the first refused value: `member` is the top-level key it sits under, `error` a
    DecodeError whose path runs from that member's value (`$` is the value itself)."""

    rid: Any
    is_request: bool
    member: str
    error: DecodeError


def salvage(line: bytes, reason: str) -> Salvaged | None:
    """The envelope of `line`, which the strict parser refused for `reason`, or None when
    there is none to recover: not JSON grammar, not an object, no `id`, or the `id` itself
    refused."""
    try:
        text = line.decode()
        utf8_reason = None
    except UnicodeDecodeError:  # `reason` names the first bad byte
        text = line.decode("utf-8", "surrogateescape")
        utf8_reason = reason
    members = _members(text, len(line) <= DEEP_SKIP_MAX_BYTES)
    if members is None or "id" not in members:
        return None
    rid = members["id"]
    if _first_refused(rid, utf8_reason) is not None:
        return None
    for key, value in members.items():
        found = _first_refused(key, utf8_reason) or _first_refused(value, utf8_reason)
        if found is not None:
            return Salvaged(rid, "method" in members, key, found)
    return None


def _members(text: str, may_skip: bool) -> dict[str, Any] | None:
    """The top-level members of the object `text` is, values read leniently (None: not an
    object in JSON grammar)."""
    pos = _SPACE.match(text, 0).end()  # type: ignore[union-attr]
    if not text.startswith("{", pos):
        return None
    members: dict[str, Any] = {}
    pos = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
    if text.startswith("}", pos):
        return members if _at_end(text, pos + 1) else None
    while True:
        if not text.startswith('"', pos):
            return None
        try:
            key, pos = _scanstring(text, pos + 1)
            pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
            if not text.startswith(":", pos):
                return None
            pos = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
            try:
                value, pos = _lenient_scan(text, pos)
            except RecursionError:
                end = _skip_value(text, pos) if may_skip else None
                if end is None:
                    return None
                value, pos = Refused("nested too deeply"), end
        except (StopIteration, ValueError):
            return None
        members[key] = value
        pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if text.startswith(",", pos):
            pos = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
        elif text.startswith("}", pos):
            return members if _at_end(text, pos + 1) else None
        else:
            return None


def _at_end(text: str, pos: int) -> bool:
    return _SPACE.match(text, pos).end() == len(text)  # type: ignore[union-attr]


def _skip_value(text: str, pos: int) -> int | None:
    """The end of the array or object at `pos`, found by its brackets (None: unbalanced). The
    lenient parser read no further than here, so only the brackets are left to check; what
    lies between them is checked as grammar by nothing: this errs towards an answer under the
    id for a line too deep to parse at all."""
    if not text.startswith(("[", "{"), pos):
        return None
    depth = 0
    for token in _TOKEN.finditer(text, pos):
        char = token.group()
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return token.end()
    return None


def _first_refused(value: Any, utf8_reason: str | None) -> DecodeError | None:
    """The first refused value under `value`, in document order, as a DecodeError with its
    path (iterative: the lenient parser nests as deep as the recursion limit allows). Strings
    are looked at only when the line is not UTF-8: an invalid byte reads as a lone surrogate
    (a JSON escape such as `\\udc80` reads so too, and is taken for one then)."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        reason: str | None = None
        if type(item) is Refused:
            reason = item.reason
        elif type(item) is str:
            if utf8_reason is not None and _ESCAPED_BYTE.search(item):
                reason = utf8_reason
        elif type(item) is list:
            stack.extend((v, (*path, i)) for i, v in reversed(list(enumerate(item))))
        elif type(item) is dict:
            for key, v in reversed(list(item.items())):
                if utf8_reason is not None and _ESCAPED_BYTE.search(key):
                    stack.append((Refused(utf8_reason), (*path, key)))
                else:
                    stack.append((v, (*path, key)))
        if reason is not None:
            error = DecodeError(reason)
            for part in reversed(path):
                error.at(part)
            return error
    return None


def _lenient_float(text: str) -> Any:
    value = float(text)
    return value if math.isfinite(value) else Refused(f"the number {text[:40]} is out of range")


def _lenient_int(text: str) -> Any:
    try:
        return int(text)
    except ValueError as exc:  # more digits than int() accepts
        return Refused(str(exc).split(";")[0])


def _lenient_constant(name: str) -> Any:
    return Refused(f"{name} is not JSON")


_LENIENT: Final = json.JSONDecoder(
    parse_float=_lenient_float, parse_int=_lenient_int, parse_constant=_lenient_constant
)
_lenient_scan: Final = _LENIENT.scan_once  # type: ignore[attr-defined]
_scanstring: Final = json.decoder.scanstring  # type: ignore[attr-defined]
