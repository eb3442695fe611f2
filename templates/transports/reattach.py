"""What a remote client transport remembers to put a session back after its stream (or socket)
was lost: which sessions the connection holds and how each was set up, which of our requests
wait for an answer in which session, and what the agent offers to re-attach one.

`Sessions` watches every line both ways. When a session must be re-attached, it makes the
request — `session/resume` where the agent offers it (v2 always; v1 when it advertises
`sessionCapabilities.resume`), else `session/load` (v1's `loadSession`) — under an id of its
own, and keeps that request's answer, and the history a load replays before it, from the
client: those updates were applied already, so nothing is applied twice. The requests that
waited in the session fail at once (their answers may never come).
"""

from __future__ import annotations

import json
from typing import Any, Final

from .protocol import NOTIFICATION, OPENS, REATTACH, REQUEST, RESPONSE, peek

_ID_PREFIX: Final = "acp-reattach-"


class Sessions:
    """The sessions of one remote connection, as its client transport saw them."""

    def __init__(self) -> None:
        self.setups: dict[str, dict[str, Any]] = {}  # session → the params that opened it
        self._asked: dict[str, tuple[str, str | None, dict[str, Any] | None]] = {}
        self._initialize: dict[str, Any] | None = None
        self._reattaching: dict[str, tuple[str, str]] = {}  # our id → (session, method)
        self._replaying: set[str] = set()  # sessions whose load replay is being skipped
        self._count = 0
        self.reattached: list[tuple[str, str]] = []
        """The re-attaches made, in order: (session id, method)."""
        self.version = 0
        self.can_resume = False
        self.can_load = False

    # -- watching ---------------------------------------------------------------------------
    def sent(self, line: bytes) -> None:
        """A line the client sends."""
        peeked = peek(line)
        if peeked.kind != REQUEST or peeked.id is None or peeked.method is None:
            return
        setup: dict[str, Any] | None = None
        if peeked.method == "initialize" or peeked.method in OPENS or peeked.method in REATTACH:
            params = json.loads(line).get("params")
            setup = params if type(params) is dict else {}
            if peeked.method == "initialize":
                self._initialize = json.loads(line)
        self._asked[peeked.id] = (peeked.method, peeked.session_id, setup)

    def received(self, line: bytes) -> bool:
        """A line from the agent: whether the client is to see it (False for our own
        re-attach answers and the history a re-attaching load replays)."""
        peeked = peek(line)
        if peeked.kind == NOTIFICATION:
            return peeked.session_id not in self._replaying
        if peeked.kind != RESPONSE or peeked.id is None:
            return True
        ours = self._reattaching.pop(peeked.id, None)
        if ours is not None:
            self._replaying.discard(ours[0])
            return False
        asked = self._asked.pop(peeked.id, None)
        if asked is None:
            return True
        method, session_id, setup = asked
        if method == "initialize":
            self._capabilities(line)
        elif method in OPENS and setup is not None:
            result = json.loads(line).get("result")
            made = result.get("sessionId") if type(result) is dict else None
            if type(made) is str:
                self.setups[made] = setup
        elif method in REATTACH and session_id is not None and setup is not None:
            self.setups[session_id] = setup
        elif method == "session/delete" and session_id is not None:
            self.setups.pop(session_id, None)
        return True

    # -- re-attaching -----------------------------------------------------------------------
    def initialize_line(self) -> bytes | None:
        """The `initialize` the client sent (for a new connection in its place), under an id
        of ours."""
        if self._initialize is None:
            return None
        request = dict(self._initialize, id=self._next_id("initialize", ""))
        return json.dumps(request).encode()

    def reattach_line(self, session_id: str) -> bytes | None:
        """The request that re-attaches `session_id`; None when the agent offers none (or the
        session is not one this connection opened)."""
        setup = self.setups.get(session_id)
        if setup is None or not (self.can_resume or self.can_load):
            return None
        method = "session/resume" if self.can_resume else "session/load"
        params: dict[str, Any] = {"sessionId": session_id, "cwd": setup.get("cwd", "/")}
        if "mcpServers" in setup or method == "session/load":
            params["mcpServers"] = setup.get("mcpServers", [])
        if "additionalDirectories" in setup:
            params["additionalDirectories"] = setup["additionalDirectories"]
        if method == "session/load":
            self._replaying.add(session_id)
        self.reattached.append((session_id, method))
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id(method, session_id)}
        request["method"] = method
        request["params"] = params
        return json.dumps(request).encode()

    def pending_in(self, session_id: str | None) -> list[str]:
        """The ids (as sent) of our requests that wait for an answer in `session_id` (None:
        every one)."""
        found = []
        for key, (_, sid, _) in self._asked.items():
            if session_id is None or sid == session_id:
                found.append(key)
        return found

    def failed(self, key: str, reason: str, data: Any = None) -> bytes:
        """An error answer for our request `key` (an id key), which will get no other."""
        self._asked.pop(key, None)
        raw: Any = key[2:] if key.startswith("s:") else int(key[2:]) if key != "null" else None
        error: dict[str, Any] = {"code": -32603, "message": reason}
        if data is not None:
            error["data"] = data
        return json.dumps({"jsonrpc": "2.0", "id": raw, "error": error}).encode()

    def _next_id(self, method: str, session_id: str) -> str:
        self._count += 1
        key = f"{_ID_PREFIX}{self._count}"
        self._reattaching["s:" + key] = (session_id, method)
        return key

    def _capabilities(self, line: bytes) -> None:
        result = json.loads(line).get("result")
        if type(result) is not dict:
            return
        version = result.get("protocolVersion")
        self.version = version if type(version) is int else 0
        capabilities = result.get("agentCapabilities")
        if type(capabilities) is dict:
            self.can_load = capabilities.get("loadSession") is True
            sessions = capabilities.get("sessionCapabilities")
            self.can_resume = type(sessions) is dict and type(sessions.get("resume")) is dict
        if self.version >= 2:
            self.can_resume = True  # session/resume is every v2 agent's
