"""Extension traffic of the kind widely deployed agent adapters and editors exchange, replayed
through our client and through our agent over a real connection (in-memory pipes, raw JSON on
the far end): `_`-prefixed requests and notifications (`_auth/status_update`, `_session/...`)
reach the hooks with their params as raw JSON, unknown requests are -32601 naming the method,
unknown notifications are ignored quietly, and vendor `_meta` keys and unknown capability keys
reach the user and are written back unchanged."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import acp_kit as kit
import pytest
from acp_kit.runtime.connection import RoleBase
from acp_kit.toolkit.router import AgentRouter

from tests.support.rpc_wire import RawPeer, notification, pipe, request, run

LANES = {"v1": kit.v1, "v2": kit.v2, "v2_unstable": kit.v2_unstable}
VENDOR_META = {"claudeCode": {"promptQueueing": True}, "zed.dev/agent": {"beta": [1, 2]}}
AUTH_STATUS = {"status": "authenticated", "account": {"email": "a@example.com"}, "_meta": {"x": 1}}


def initialize_answer(version: int) -> dict[str, Any]:
    """An adapter's `initialize` answer: vendor `_meta` and capability keys no schema has."""
    if version == 1:
        return {
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": True, "embeddedContext": True},
                "mcpCapabilities": {"http": True, "sse": True},
                "_meta": VENDOR_META,
                "futureCapability": {"depth": 3},
            },
            "agentInfo": {"name": "adapter", "version": "0.9"},
            "authMethods": [],
            "_meta": {"adapter.io/build": "abc"},
        }
    return {
        "protocolVersion": 2,
        "info": {"name": "adapter", "version": "0.9"},
        "capabilities": {
            "session": {"_meta": {"vendor.io/fork": True}, "futureSessionThing": {}},
            "_meta": VENDOR_META,
            "futureCapability": {"depth": 3},
        },
        "_meta": {"adapter.io/build": "abc"},
    }


def tool_call_update(version: int) -> dict[str, Any]:
    """A tool call as adapters report it: a vendor `_meta` and a key this schema lacks."""
    body: dict[str, Any] = {
        "toolCallId": "toolu_1",
        "title": "Run tests",
        "kind": "execute",
        "status": "pending",
        "rawInput": {"command": "pytest"},
        "_meta": {"claudeCode": {"toolName": "Bash"}},
        "futureField": [1, {"two": 2}],
    }
    return {"sessionUpdate": "tool_call" if version == 1 else "tool_call_update", **body}


class Recording(kit.Client):
    def __init__(self, lanes: tuple[str, ...]) -> None:
        super().__init__(permissions=kit.allow, lanes=lanes)
        self.notes: list[tuple[str, Any]] = []
        self.asked: list[tuple[str, Any]] = []

    async def ext_notification(self, method: str, params: Any) -> None:
        self.notes.append((method, params))

    async def ext_method(self, method: str, params: Any) -> Any:
        self.asked.append((method, params))
        if method == "_session/title":
            return {"title": "from the client", "echo": params}
        return await super().ext_method(method, params)


class RawAgent:
    """The agent end of a connection to our client: raw JSON lines both ways."""

    def __init__(self) -> None:
        self.inbox, client_out = pipe()  # what our client writes
        to_client, self._out = pipe()  # what we write to it
        self.connection = kit.Connection(RoleBase(), to_client, client_out)

    def send(self, message: Any) -> None:
        self._out.write(json.dumps(message).encode() + b"\n")

    async def recv(self) -> Any:
        return json.loads(await asyncio.wait_for(self.inbox.readline(), 5))


@pytest.mark.parametrize("name", list(LANES))
def test_adapter_traffic_through_our_client(name: str, caplog: pytest.LogCaptureFixture) -> None:
    lane = LANES[name]
    version = lane.PROTOCOL_VERSION

    async def scenario() -> tuple[Recording, Any, Any, list[Any], list[Any]]:
        raw = RawAgent()
        client = Recording(lanes=(name,))
        connecting = asyncio.ensure_future(kit.connect_agent(client, raw.connection))
        asked = await raw.recv()
        assert asked["method"] == "initialize"
        raw.send({"jsonrpc": "2.0", "id": asked["id"], "result": initialize_answer(version)})
        remote = await connecting
        opening = asyncio.ensure_future(remote.new_session("/w"))
        asked = await raw.recv()
        raw.send({"jsonrpc": "2.0", "id": asked["id"],
                  "result": {"sessionId": "s1", "_meta": {"adapter.io/x": 1}}})  # fmt: skip
        session = await opening
        seen: list[Any] = []
        session.subscribe(seen.append)
        replies = []
        raw.send(notification("_auth/status_update", AUTH_STATUS))
        raw.send(notification("_session/usage", {"sessionId": "s1", "tokens": 12}))
        raw.send(notification("_nobody/listens", [1, 2, 3]))  # the default: ignored quietly
        raw.send(notification("vendor/not_extension"))  # a method no schema has: ignored
        params = {"sessionId": "s1", "update": tool_call_update(version), "_meta": {"seq": 7}}
        raw.send(notification("session/update", params))
        for rid, method, params in (
            (100, "_session/title", {"sessionId": "s1"}),
            (101, "_vendor/unknown", None),
            (102, "vendor/not_extension", {}),
        ):
            raw.send(request(rid, method, params))
            replies.append(await raw.recv())
        await raw.connection.notifications_handled()
        return client, remote, session, seen, replies

    with caplog.at_level(logging.DEBUG, logger="acp_kit"):
        client, remote, session, seen, replies = run(scenario())
    assert lane.encode(remote.info) == initialize_answer(version)  # written back unchanged
    capabilities = remote.info.agent_capabilities if version == 1 else remote.info.capabilities
    assert capabilities.meta == VENDOR_META
    assert capabilities.extra == {"futureCapability": {"depth": 3}}
    assert client.notes == [
        ("_auth/status_update", AUTH_STATUS),
        ("_session/usage", {"sessionId": "s1", "tokens": 12}),
        ("_nobody/listens", [1, 2, 3]),
    ]
    assert client.asked == [("_session/title", {"sessionId": "s1"}), ("_vendor/unknown", None)]
    assert replies == [
        {"jsonrpc": "2.0", "id": 100,
         "result": {"title": "from the client", "echo": {"sessionId": "s1"}}},  # fmt: skip
        {"jsonrpc": "2.0", "id": 101,
         "error": {"code": -32601, "message": "Method not found", "data": "_vendor/unknown"}},
        {"jsonrpc": "2.0", "id": 102,
         "error": {"code": -32601, "message": "Method not found", "data": "vendor/not_extension"}},
    ]  # fmt: skip
    [update] = seen
    assert lane.encode(update) == tool_call_update(version)
    assert update.meta == {"claudeCode": {"toolName": "Bash"}}
    assert update.extra == {"futureField": [1, {"two": 2}]}
    call = session.state.snapshot()["toolCalls"]["toolu_1"]
    assert call["_meta"] == {"claudeCode": {"toolName": "Bash"}}
    assert call["futureField"] == [1, {"two": 2}]
    noisy = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert noisy == []  # unknown notifications are ignored quietly


def initialize_request(version: int) -> dict[str, Any]:
    """An editor's `initialize`: vendor `_meta` in the capabilities, keys no schema has."""
    if version == 1:
        return {
            "protocolVersion": 1,
            "clientCapabilities": {
                "fs": {"readTextFile": True, "writeTextFile": True},
                "terminal": True,
                "_meta": {"terminal_output": True, "terminal-auth": True},
                "futureCapability": True,
            },
            "clientInfo": {"name": "editor", "version": "0.2"},
        }
    return {
        "protocolVersion": 2,
        "info": {"name": "editor", "version": "0.2"},
        "capabilities": {"_meta": {"terminal_output": True}, "futureCapability": True},
        "_meta": {"editor.io/session": "x"},
    }


class Extended(kit.Agent):
    name = "extended"

    def __init__(self) -> None:
        super().__init__()
        self.notes: list[tuple[str, Any, str]] = []
        self.prompts: list[list[Any]] = []
        self.opened: list[Any] = []

    def advertise(self, lane: Any, capabilities: Any) -> Any:
        """Vendor keys of its own, as adapters advertise them."""
        data = dict(kit.encode(capabilities), _meta={"vendor.io/modes": ["a", "b"]})
        return kit.decode(lane.models.AgentCapabilities, data)

    async def on_ext_request(self, side: Any, method: str, params: Any) -> Any:
        if method == "_session/list_archived":
            return {"sessions": [], "asked": params, "lane": side.lane.name}
        return await super().on_ext_request(side, method, params)

    async def on_ext_notification(self, side: Any, method: str, params: Any) -> None:
        self.notes.append((method, params, side.lane.name))

    async def on_new_session(self, session: kit.AgentSession) -> None:
        self.opened.append(session.request)

    async def prompt(self, turn: kit.Turn) -> kit.TurnStopReason:
        self.prompts.append(list(turn.prompt))
        await turn.say("ok")
        return "end_turn"


BLOCK = {"type": "text", "text": "hi", "_meta": {"zed.dev/mention": {"path": "/w/a.py"}},
         "futureKey": "kept"}  # fmt: skip


@pytest.mark.parametrize("name", list(LANES))
def test_editor_traffic_through_our_agent(name: str, caplog: pytest.LogCaptureFixture) -> None:
    lane = LANES[name]
    version = lane.PROTOCOL_VERSION
    agent = Extended()
    agent.lanes = ("v1", name) if version == 2 else None

    async def scenario() -> tuple[AgentRouter, list[Any], list[Any]]:
        router = AgentRouter(agent)
        peer = RawPeer(router)
        answers = [await peer.call(request(0, "initialize", initialize_request(version)))]
        new = {"cwd": "/w", "mcpServers": [], "_meta": {"claudeCode": {"options": {"x": 1}}},
               "futureParam": 1}  # fmt: skip
        opened = await peer.call(request(1, "session/new", new))
        session_id = opened["result"]["sessionId"]
        for rid, method, params in (
            (2, "_session/list_archived", {"cwd": "/w", "_meta": {"a": None}}),
            (3, "_unknown/thing", None),
            (4, "not/a_method", {}),
        ):
            answers.append(await peer.call(request(rid, method, params)))
        peer.send(notification("_zed/settings_changed", {"theme": "dark"}))
        peer.send(notification("_nobody/cares"))
        peer.send(notification("not/a_method", {}))
        peer.send(request(5, "session/prompt", {"sessionId": session_id, "prompt": [BLOCK]}))
        seen = []
        while True:  # to the turn's end: the answer on v1, the idle state on v2
            message = await peer.recv()
            seen.append(message)
            update = message.get("params", {}).get("update", {})
            if message.get("id") == 5 and version == 1 or update.get("state") == "idle":
                break
        await peer.connection.notifications_handled()
        return router, answers, seen

    with caplog.at_level(logging.DEBUG, logger="acp_kit"):
        router, answers, seen = run(scenario())
    side = router.side
    assert side is not None
    assert lane.encode(side.client_info) == initialize_request(version)
    capabilities = (
        side.client_info.client_capabilities if version == 1 else side.client_info.capabilities
    )
    assert capabilities.extra == {"futureCapability": True}
    assert capabilities.meta["terminal_output"] is True
    advertised = answers[0]["result"]["agentCapabilities" if version == 1 else "capabilities"]
    assert advertised["_meta"] == {"vendor.io/modes": ["a", "b"]}
    assert answers[1:] == [
        {"jsonrpc": "2.0", "id": 2, "result": {"sessions": [], "lane": name,
                                               "asked": {"cwd": "/w", "_meta": {"a": None}}}},
        {"jsonrpc": "2.0", "id": 3,
         "error": {"code": -32601, "message": "Method not found", "data": "_unknown/thing"}},
        {"jsonrpc": "2.0", "id": 4,
         "error": {"code": -32601, "message": "Method not found", "data": "not/a_method"}},
    ]  # fmt: skip
    assert agent.notes == [
        ("_zed/settings_changed", {"theme": "dark"}, name),
        ("_nobody/cares", None, name),
    ]
    [request_seen] = agent.opened
    assert request_seen.meta == {"claudeCode": {"options": {"x": 1}}}
    assert request_seen.extra == {"futureParam": 1}
    [[block]] = agent.prompts
    assert lane.encode(block) == BLOCK and block.meta == BLOCK["_meta"]
    if version == 2:  # the inserted user message echoes the prompt as sent, vendor keys and all
        assert seen[0] == {"jsonrpc": "2.0", "id": 5, "result": {"messageId": "msg_user_1"}}
        echoed = seen[1]["params"]["update"]
        assert echoed == {"sessionUpdate": "user_message", "messageId": "msg_user_1",
                          "content": [BLOCK]}  # fmt: skip
    noisy = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert noisy == []
