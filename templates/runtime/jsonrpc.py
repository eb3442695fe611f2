"""JSON-RPC 2.0 as ACP uses it: error codes and `RpcError`, the route entries a dispatcher
reads, and one message as one line (`dump_line`, `load_line`; `to_text` for a params value,
through the per-class writers the generated `_wire` modules register).

It imports only `_runtime` and knows no connection: `connection.py` runs all of it over a
`Transport`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal

from ._runtime import UNSET, WRITERS, DecodeError, JsonValue, UnsetType, encode

MAX_MESSAGE_BYTES: Final = 64 * 1024 * 1024
"""Longest line accepted by default; a longer one is skipped and answered with an error."""

Direction = Literal["in", "out"]
Tap = Callable[[Direction, bytes], object]
"""Sees every raw message: `"in"` or `"out"`, and the line without its final newline."""

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
REQUEST_CANCELLED: Final = -32800

Message = dict[str, Any]


class RpcError(Exception):
    """A JSON-RPC error. Raise it in a handler to answer with it; a call raises it when the
    peer answers with an error."""

    def __init__(self, code: int, message: str, data: JsonValue | UnsetType = UNSET) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        data = "" if self.data is UNSET else f": {json.dumps(self.data, default=repr)}"
        return f"{self.message} ({self.code}){data}"

    def to_json(self) -> Message:
        out: Message = {"code": self.code, "message": self.message}
        if self.data is not UNSET:
            out["data"] = self.data
        return out

    @classmethod
    def from_json(cls, error: Any) -> RpcError:
        """The error object of a response; a malformed one becomes an invalid-response error."""
        if (
            type(error) is dict
            and type(error.get("code")) is int
            and type(error.get("message")) is str
        ):
            return cls(error["code"], error["message"], error.get("data", UNSET))
        return cls(INVALID_REQUEST, "Invalid response", {"error": error})

    @classmethod
    def parse_error(cls, reason: str) -> RpcError:
        return cls(PARSE_ERROR, "Parse error", reason)

    @classmethod
    def invalid_request(cls, reason: str) -> RpcError:
        return cls(INVALID_REQUEST, "Invalid request", reason)

    @classmethod
    def too_long(cls, size: int, limit: int) -> RpcError:
        reason = f"the message is {size} bytes long, over the limit of {limit} bytes; skipped"
        return cls(INVALID_REQUEST, "Invalid request", reason)

    @classmethod
    def method_not_found(cls, method: str) -> RpcError:
        return cls(METHOD_NOT_FOUND, "Method not found", method)

    @classmethod
    def invalid_params(cls, error: DecodeError) -> RpcError:
        return cls(INVALID_PARAMS, "Invalid params", {"path": error.path, "reason": error.reason})

    @classmethod
    def internal_error(cls, detail: str) -> RpcError:
        return cls(INTERNAL_ERROR, "Internal error", detail)

    @classmethod
    def request_cancelled(cls) -> RpcError:
        return cls(REQUEST_CANCELLED, "Request cancelled")


class ConnectionClosed(ConnectionError):
    """The connection is closed: raised by calls made after that, and by calls still waiting
    for their answer when it happened."""


Kind = Literal["request", "notification"]
RouteKey = tuple[str, Kind]
"""A route table's key: the method name and the kind of message (a request has an `id`). One
name may be both (the unstable v2 `mcp/message`, `proxy/successor`): two routes."""


@dataclass(frozen=True, slots=True)
class Route:
    """How the dispatcher serves one method: the handler's method, whether it is answered, and
    the types its params decode to (None: raw JSON) and its result encodes from."""

    attr: str
    kind: Kind
    params: Any
    result: Any


class UnreadableMessage(ValueError):
    """A line that is not one JSON value: invalid UTF-8, bad syntax, a number out of range,
    nesting too deep. `reason` says which, for the error answer's `data`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class UnencodableMessage(ValueError):
    """An outgoing value that has no JSON form (a non-finite float, a foreign object, a cycle):
    raised by the call that tried to send it, before anything is written."""


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise UnreadableMessage(f"the number {text[:40]} is out of range")
    return value


def _reject_constant(name: str) -> Any:
    raise UnreadableMessage(f"{name} is not JSON")


# One decoder and one encoder for every line: json.loads/json.dumps with options build new ones
# on each call.
_DECODER: Final = json.JSONDecoder(parse_float=_finite_float, parse_constant=_reject_constant)
_scan: Final[Callable[[str, int], tuple[Any, int]]] = _DECODER.scan_once  # type: ignore[attr-defined]
_FALLBACK_ENCODER: Final = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, check_circular=False, separators=(",", ":")
)


def _make_encoder() -> Callable[[Any, int], Iterable[str]]:
    """The C encoder made once (json.dumps builds one per call): value, 0 -> text chunks."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - CPython always has the C encoder
        return lambda value, _: _FALLBACK_ENCODER.iterencode(value)
    encoder: Callable[[Any, int], Iterable[str]] = make(
        None, _FALLBACK_ENCODER.default, json.encoder.encode_basestring,
        None, ":", ",", False, False, False,
    )  # fmt: skip
    return encoder


_encode_chunks: Final = _make_encoder()


def dump_line(message: Message) -> bytes:
    """One message as a line: compact UTF-8 JSON, with the line separators some readers split
    on escaped, and a final `\\n`. Raises UnencodableMessage for values JSON cannot carry."""
    return (dump_text(message) + "\n").encode()


def to_text(value: Any) -> str:
    """`dump_text(encode(value))` for a params value: written directly by its class's writer
    (registered by the generated `_wire` module of its lane) when it has one, else, and for
    anything that writer does not cover (extra keys, a field holding another type), the
    general way, which raises what it raises."""
    direct = WRITERS.get(type(value))
    if direct is not None:
        try:
            text = direct(value)
        except Exception:  # noqa: BLE001 - the general way redoes it, and raises what it raises
            pass
        else:
            return text if text.isascii() else escape_separators(text)
    return dump_text(encode(value))


def dump_text(value: Any) -> str:
    """`value` as the compact JSON text `dump_line` writes (without the newline)."""
    try:
        text = "".join(_encode_chunks(value, 0))
    except ValueError as exc:
        reason = "a number is not finite (inf or nan)" if "float" in str(exc) else str(exc)
        raise UnencodableMessage(f"not JSON: {reason}") from None
    except TypeError as exc:
        raise UnencodableMessage(f"not JSON: {exc}") from None
    except RecursionError:
        raise UnencodableMessage("not JSON: nested too deeply (or a cycle)") from None
    return text if text.isascii() else escape_separators(text)


def escape_separators(text: str) -> str:
    """JSON text with the line separators some readers split on (U+2028, U+2029, U+0085)
    escaped, and lone surrogates (which UTF-8 cannot carry; a peer's `"\\ud800"` decodes to
    one) written as JSON escapes: `dump_text` does it to every line it writes."""
    for char, escaped in _ESCAPES:
        if char in text:
            text = text.replace(char, escaped)
    if _SURROGATE.search(text) is not None:
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def reply_line(reply: Message) -> bytes:
    """`dump_line` for an answer: a result that is not JSON becomes an internal error."""
    try:
        return dump_line(reply)
    except UnencodableMessage as exc:
        error = RpcError.internal_error(f"the result is {exc}")
        return dump_line(error_reply(reply.get("id"), error))


_ESCAPES: Final = (("\u2028", "\\u2028"), ("\u2029", "\\u2029"), ("\u0085", "\\u0085"))
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def error_reply(rid: Any, error: RpcError) -> Message:
    return {"jsonrpc": "2.0", "id": rid, "error": error.to_json()}


def valid_id(rid: Any) -> bool:
    return rid is None or type(rid) is str or type(rid) is int


def load_line(line: bytes, scan: bool = True) -> Any:
    """Parse one line; raises UnreadableMessage (a ValueError) for anything that is not one
    JSON value in UTF-8 (NaN, Infinity and numbers that overflow to them included). `scan`
    False skips the scanner-only attempt (the outcome is the same, see below)."""
    try:
        text = line.decode()
        # The scanner alone for the usual line (one value, nothing around it): what decode()
        # returns for it; decode() for anything else, and for its error messages.
        if scan:
            try:
                value, end = _scan(text, 0)
            except (StopIteration, ValueError):
                end = -1
            if end == len(text):
                return value
        return _DECODER.decode(text)
    except UnicodeDecodeError as exc:
        raise UnreadableMessage(f"invalid UTF-8 at byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        where = "character" if exc.msg.endswith(" at") else "at character"
        raise UnreadableMessage(f"{exc.msg} {where} {exc.pos}") from None
    except RecursionError:
        raise UnreadableMessage("nested too deeply") from None
    except UnreadableMessage:
        raise
    except ValueError as exc:  # e.g. an integer with more digits than int() accepts
        raise UnreadableMessage(str(exc).split(";")[0]) from None
