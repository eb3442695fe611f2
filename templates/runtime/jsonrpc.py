"""JSON-RPC 2.0 as ACP uses it: error codes and `RpcError`, the route entries the dispatcher
reads, the base of both roles' handlers, and the framing of one message as one line.

`Connection` (in `connection.py`) runs all of it over a byte stream.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, Protocol

from ._runtime import UNSET, DecodeError, JsonValue, UnsetType

if TYPE_CHECKING:
    from .connection import Connection

MAX_MESSAGE_BYTES: Final = 32 * 1024 * 1024
"""Longest line accepted, as in the TypeScript SDK."""

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
REQUEST_CANCELLED: Final = -32800

Message = dict[str, Any]


class ByteReader(Protocol):
    """What a Connection reads from, e.g. `asyncio.StreamReader`."""

    async def read(self, n: int = -1) -> bytes: ...


class ByteWriter(Protocol):
    """What a Connection writes to, e.g. `asyncio.StreamWriter`."""

    def write(self, data: bytes) -> object: ...

    async def drain(self) -> None: ...

    def close(self) -> object: ...


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
    def parse_error(cls) -> RpcError:
        return cls(PARSE_ERROR, "Parse error")

    @classmethod
    def invalid_request(cls, reason: str) -> RpcError:
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


@dataclass(frozen=True, slots=True)
class Route:
    """How the dispatcher serves one method: the handler's method, whether it is answered, and
    the types its params decode to (None: raw JSON) and its result encodes from."""

    attr: str
    kind: Literal["request", "notification"]
    params: Any
    result: Any


class RoleBase:
    """Base of `AgentBase` and `ClientBase`: the route table, the connection it serves, and the
    hooks for `_`-prefixed extension methods."""

    ROUTES: ClassVar[Mapping[str, Route]] = {}
    CANCEL_METHOD: ClassVar[str | None] = None
    """The protocol-level notification that cancels an in-flight request, if the schema has one."""
    _connection: Connection | None = None

    @property
    def connection(self) -> Connection:
        """The connection this handler serves (set when the Connection is created)."""
        if self._connection is None:
            raise RuntimeError(f"{type(self).__name__} is not attached to a Connection")
        return self._connection

    async def ext_method(self, method: str, params: JsonValue) -> JsonValue:
        """An extension request (`_vendor/...`): override to serve it; by default -32601."""
        raise RpcError.method_not_found(method)

    async def ext_notification(self, method: str, params: JsonValue) -> None:
        """An extension notification: ignored unless overridden."""


def dump_line(message: Message) -> bytes:
    """One message as a line: compact UTF-8 JSON, with the line separators some readers split
    on escaped, and a final `\\n`."""
    text = json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    for char, escaped in _ESCAPES:
        if char in text:
            text = text.replace(char, escaped)
    return (text + "\n").encode()


def reply_line(reply: Message) -> bytes:
    """`dump_line` for an answer: a result that is not JSON becomes an internal error."""
    try:
        return dump_line(reply)
    except (TypeError, ValueError) as exc:
        error = RpcError.internal_error(f"the result is not JSON: {exc}")
        return dump_line(error_reply(reply.get("id"), error))


_ESCAPES: Final = (("\u2028", "\\u2028"), ("\u2029", "\\u2029"), ("\u0085", "\\u0085"))


def error_reply(rid: Any, error: RpcError) -> Message:
    return {"jsonrpc": "2.0", "id": rid, "error": error.to_json()}


def valid_id(rid: Any) -> bool:
    return rid is None or type(rid) is str or type(rid) is int


def load_line(line: bytes) -> Any:
    """Parse one line; raises ValueError for anything that is not JSON (NaN included)."""
    try:
        return json.loads(line, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")
