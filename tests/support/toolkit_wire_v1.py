"""A raw client for tests of the v1 agent toolkit: `toolkit_wire.Wire` over an `acp_v1`
Connection, with v1's initialize and prompt answers."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import acp_kit as kit
from acp_kit import v1 as acp

from tests.support import toolkit_wire
from tests.support.rpc_wire import pipe

INITIALIZE_PARAMS = {
    "protocolVersion": 1,
    "clientCapabilities": {},
    "clientInfo": {"name": "test-client", "version": "1.0"},
}
Script = toolkit_wire.Script


class ScriptAgent(kit.Agent):
    """A v1 Agent whose `prompt` runs the test's script (default: say "ok")."""

    name = "script-agent"
    version = "1.0"

    def __init__(self, script: Any = None) -> None:
        super().__init__()
        self.script = script

    async def prompt(self, turn: kit.Turn) -> Any:
        if self.script is None:
            await turn.say("ok")
            return "end_turn"
        return await self.script(turn)


class V1Peer:
    """The far end of an acp_v1 Connection: writes raw lines, reads raw lines."""

    def __init__(self, handler: acp.AgentBase) -> None:
        self.inbox, self._to_conn = pipe()
        self._from_conn, writer = pipe()
        self.connection = acp.Connection(handler, self.inbox, writer)
        self.connection.start()

    def send_bytes(self, data: bytes) -> None:
        self._to_conn.write(data)

    def send(self, message: Any) -> None:
        self.send_bytes(json.dumps(message).encode() + b"\n")

    def eof(self) -> None:
        self._to_conn.close()


class Wire(toolkit_wire.Wire):
    """`toolkit_wire.Wire` on v1: `prompt` returns the answer, `initialize` speaks v1."""

    def __init__(self, agent: kit.Agent) -> None:
        self.agent = agent  # type: ignore[assignment]
        self.peer = V1Peer(agent)  # type: ignore[assignment]
        self._open(self.peer._from_conn, self.peer.send_bytes)

    async def initialize(self) -> Any:
        return await self.call("initialize", INITIALIZE_PARAMS)

    async def new_session(self, cwd: str = "/work", **params: Any) -> str:
        params.setdefault("mcpServers", [])
        return await super().new_session(cwd, **params)

    def prompt_later(self, sid: str, text: str = "hi") -> asyncio.Future[Any]:
        """Send a prompt; its answer is the future's result."""
        params = {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
        return asyncio.ensure_future(self.call("session/prompt", params))


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def chunk(kind: str, message_id: str, value: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "messageId": message_id, "content": text(value)}


def answer(rid: Any, stop_reason: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": stop_reason}}
