"""What the remote transports share: the headers of ACP over Streamable HTTP, which methods are
session-scoped, and `peek`, which reads the little a transport routes by (is a line a request,
a notification or a response; its id; its method; the session it names) without decoding the
rest.

The facts are the remote-transport RFD's (one `/acp` endpoint; `Acp-Connection-Id` from the
`initialize` answer on every later request; `Acp-Session-Id` on session-scoped requests and on
a session's own SSE stream), as the official TypeScript SDK 2.4.0 implements them.
"""

from __future__ import annotations

import json
from typing import Final, NamedTuple

CONNECTION_HEADER: Final = "Acp-Connection-Id"
SESSION_HEADER: Final = "Acp-Session-Id"
EVENT_STREAM: Final = "text/event-stream"
JSON_TYPE: Final = "application/json"

SESSION_SCOPED: Final = frozenset(
    {
        "session/cancel",
        "session/close",
        "session/delete",
        "session/fork",
        "session/load",
        "session/prompt",
        "session/resume",
        "session/set_config_option",
        "session/set_mode",
        "session/set_model",
    }
)
"""Methods whose POST must carry `Acp-Session-Id` (the SDK's list; any message whose params
name a `sessionId` needs it too)."""

REATTACH: Final = frozenset({"session/load", "session/resume"})
"""Requests that attach an existing session to the connection that sends them."""
OPENS: Final = frozenset({"session/new", "session/fork"})
"""Requests whose answer names a session made for the connection that sent them."""
CLAIMS: Final = REATTACH | {"session/delete"}
"""Session-scoped requests a connection may send for a session it has not attached (checked
against the session's principal instead)."""

REQUEST: Final = "request"
NOTIFICATION: Final = "notification"
RESPONSE: Final = "response"
INVALID: Final = "invalid"


class Peek(NamedTuple):
    """What routing needs of one JSON-RPC message."""

    kind: str  # REQUEST, NOTIFICATION, RESPONSE or INVALID
    id: str | None  # the id as a key (`id_key`), None for notifications
    method: str | None
    session_id: str | None  # params.sessionId when it is a string


_PREFIX: Final = b'{"jsonrpc":"2.0","method":"'
_SESSION_PARAMS: Final = b'","params":{"sessionId":"'
_ID_PREFIX: Final = b'{"jsonrpc":"2.0","id":'


def id_key(value: object) -> str | None:
    """A request id as a dictionary key that keeps 1 and "1" apart; None for what cannot be
    an id (a float, an object...)."""
    if type(value) is str:
        return "s:" + value
    if type(value) is int:
        return f"n:{value}"
    if value is None:
        return "null"
    return None


def peek(line: bytes) -> Peek:
    """Classify one line of JSON text. The usual shapes our runtime writes (a notification or
    request whose params begin with `sessionId`, an answer whose id comes first) are read
    from their prefix, which is exact JSON text and so gives what a full decode would; any
    other line is decoded."""
    if line.startswith(_PREFIX):
        end = line.find(b'"', len(_PREFIX))
        if end > 0 and line.find(b"\\", len(_PREFIX), end) < 0:
            method = line[len(_PREFIX) : end].decode()
            if line.startswith(_SESSION_PARAMS, end):
                start = end + len(_SESSION_PARAMS)
                stop = line.find(b'"', start)
                if stop > 0 and line.find(b"\\", start, stop) < 0:
                    if line.find(b'"id":', stop) < 0:  # no id anywhere: a notification
                        return Peek(NOTIFICATION, None, method, line[start:stop].decode())
    elif line.startswith(_ID_PREFIX):
        start = len(_ID_PREFIX)
        stop = line.find(b",", start)
        digits = line[start:stop]
        if stop > 0 and digits.isdigit() and line.startswith(b'"result":', stop + 1):
            return Peek(RESPONSE, f"n:{int(digits)}", None, None)
    try:
        value = json.loads(line)
    except ValueError:
        return Peek(INVALID, None, None, None)
    return classify(value)


def classify(value: object) -> Peek:
    """`peek` of a decoded message."""
    if type(value) is not dict:
        return Peek(INVALID, None, None, None)
    method = value.get("method")
    params = value.get("params")
    session = params.get("sessionId") if type(params) is dict else None
    session_id = session if type(session) is str else None
    if type(method) is str:
        if "id" in value:
            key = id_key(value["id"])
            return Peek(REQUEST if key is not None else INVALID, key, method, session_id)
        return Peek(NOTIFICATION, None, method, session_id)
    if "id" in value and ("result" in value or "error" in value):
        return Peek(RESPONSE, id_key(value["id"]), None, None)
    return Peek(INVALID, None, None, None)


def result_session(line: bytes) -> str | None:
    """The `result.sessionId` of an answer (that of `session/new` names the new session)."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    result = value.get("result") if type(value) is dict else None
    session = result.get("sessionId") if type(result) is dict else None
    return session if type(session) is str else None


def is_error(line: bytes) -> bool:
    """Whether an answer is an error (its `error` member is there)."""
    try:
        value = json.loads(line)
    except ValueError:
        return True
    return type(value) is not dict or "error" in value
