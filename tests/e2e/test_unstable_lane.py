"""The toolkit and the router on the committed unstable lane (`acp_kit.v2_unstable`): served
only when an agent or client names it, with v2's prompt lifecycle, and what it adds beyond the
stable lane — MCP servers over ACP (`mcp/message` both as the agent's request to the client and
as the client's notification to the agent, each with its own typed handler)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import acp_kit as kit
import pytest
from acp_kit.runtime.connection import RoleBase
from acp_kit.toolkit.lane import lanes, pick
from acp_kit.toolkit.router import AgentRouter

from tests.support.rpc_wire import RawPeer, notification, pipe, request, run

U = kit.v2_unstable
ACP_SERVER = {"type": "acp", "name": "notes", "serverId": "srv_1"}


def test_the_unstable_lane_is_served_only_when_named() -> None:
    assert ("v2_unstable", 2, True) in lanes()
    assert {v: lane.name for v, lane in pick(None).items()} == {1: "v1", 2: "v2"}
    assert {v: lane.name for v, lane in pick(("v1", "v2_unstable")).items()} == {
        1: "v1",
        2: "v2_unstable",
    }
    with pytest.raises(ValueError, match="lanes v2 and v2_unstable both speak protocol version 2"):
        pick(("v2", "v2_unstable"))
    features = kit.toolkit.lane.lane("v2_unstable").features
    assert (features.version, features.state_updates, features.subagents) == (2, True, True)
    assert not kit.toolkit.lane.lane("v2").features.subagents


class Notes(kit.Agent):
    """Reads a note through the client's MCP server over ACP, and hears the client's
    notifications about its inner requests."""

    name = "notes"
    lanes = ("v1", "v2_unstable")
    mcp_transports = frozenset({"acp"})

    def __init__(self) -> None:
        super().__init__()
        self.heard: list[Any] = []

    async def mcp_message_notification(self, params: Any) -> None:  # client → agent
        self.heard.append(params)

    async def prompt(self, turn: kit.Turn) -> kit.TurnStopReason:
        [server] = turn.session.mcp_servers
        side: Any = turn.session.side
        answer = await side.client.mcp_message(  # agent → client, answered
            U.MessageMcpRequest(
                server_id=server.server_id, request_id="r1", method="resources/read",
                params={"uri": "note://1"},
            )
        )  # fmt: skip
        await turn.say(json.dumps(U.encode(answer)))
        return "end_turn"


class McpHost(kit.Client):
    """A client that provides an MCP server over ACP."""

    async def mcp_message(self, params: Any) -> Any:
        await self.stub.mcp_message_notification(
            U.MessageMcpNotification(
                server_id=params.server_id, request_id=params.request_id,
                method="notifications/progress", params={"progress": 1},
            )
        )  # fmt: skip
        return U.MessageMcpResponseResult(result={"contents": [{"text": "buy milk"}]})


def test_an_mcp_server_over_acp_in_both_directions() -> None:
    agent = Notes()

    async def scenario() -> tuple[kit.RemoteAgent, kit.TurnResult, list[dict[str, Any]]]:
        to_agent, client_out = pipe()
        to_client, agent_out = pipe()
        written: list[dict[str, Any]] = []
        kit.Connection(
            AgentRouter(agent), to_agent, agent_out,
            tap=lambda d, line: written.append(json.loads(line)) if d == "out" else None,
        ).start()  # fmt: skip
        client = McpHost(lanes=("v2_unstable",), permissions=kit.allow)
        remote = await kit.connect_agent(client, kit.Connection(RoleBase(), to_client, client_out))
        session = await remote.new_session("/w", mcp_servers=[U.decode(U.McpServer, ACP_SERVER)])
        return remote, await session.prompt("read it"), written

    remote, result, written = run(scenario())
    assert U.encode(remote.info.capabilities.session.mcp) == {"acp": {}}
    assert json.loads(result.text) == {"result": {"contents": [{"text": "buy milk"}]}}
    [asked] = [m for m in written if m.get("method") == "mcp/message"]
    assert asked == {
        "jsonrpc": "2.0", "id": asked["id"], "method": "mcp/message",
        "params": {"serverId": "srv_1", "requestId": "r1", "method": "resources/read",
                   "params": {"uri": "note://1"}},
    }  # fmt: skip
    assert agent.heard == [
        U.MessageMcpNotification(
            server_id="srv_1", request_id="r1", method="notifications/progress",
            params={"progress": 1},
        )
    ]  # fmt: skip


def test_the_stable_lane_refuses_an_acp_mcp_server_and_does_not_advertise_it() -> None:
    class Stable(Notes):
        lanes = ("v1", "v2")

    async def scenario() -> tuple[Any, Any]:
        peer = RawPeer(AgentRouter(Stable()))
        init = await peer.call(
            request(0, "initialize", {"protocolVersion": 2, "info": {"name": "c", "version": "1"}})
        )
        new = {"cwd": "/w", "mcpServers": [ACP_SERVER]}
        return init, await peer.call(request(1, "session/new", new))

    init, refused = run(scenario())
    assert "mcp" not in init["result"]["capabilities"]["session"]
    assert refused["error"]["code"] == -32602
    assert refused["error"]["data"] == {
        "path": "$.mcpServers[0]",
        "reason": "protocol version 2 has no 'acp' MCP servers",
    }


def test_an_agent_answers_the_mcp_message_request_it_does_not_serve_with_32601() -> None:
    """The agent handles `mcp/message` notifications only: a request of that name (the
    client's side of the method) is -32601, and the connection carries on."""

    async def scenario() -> list[Any]:
        peer = RawPeer(AgentRouter(Notes()))
        init = {"protocolVersion": 2, "info": {"name": "c", "version": "1"}}
        await peer.call(request(0, "initialize", init))
        params = {"serverId": "s", "requestId": "r", "method": "ping"}
        got = [await peer.call(request(1, "mcp/message", params))]
        peer.send(notification("mcp/message", params))
        got.append(await peer.call(request(2, "session/list", {})))
        return got

    wrong, listed = run(scenario())
    assert wrong == {
        "jsonrpc": "2.0", "id": 1,
        "error": {"code": -32601, "message": "Method not found", "data": "mcp/message"},
    }  # fmt: skip
    assert listed == {"jsonrpc": "2.0", "id": 2, "result": {"sessions": []}}


def test_a_client_of_the_unstable_lane_and_an_agent_of_the_stable_one_speak_v2() -> None:
    async def script(turn: kit.Turn) -> kit.TurnStopReason:
        await turn.say(turn.features.lane)
        return "end_turn"

    class Plain(kit.Agent):
        async def prompt(self, turn: kit.Turn) -> kit.TurnStopReason:
            return await script(turn)

    async def scenario() -> tuple[str, str]:
        to_agent, client_out = pipe()
        to_client, agent_out = pipe()
        kit.Connection(AgentRouter(Plain()), to_agent, agent_out).start()
        client = kit.Client(lanes=("v1", "v2_unstable"))
        remote = await kit.connect_agent(client, kit.Connection(RoleBase(), to_client, client_out))
        result = await (await remote.new_session("/w")).prompt("hi")
        await asyncio.sleep(0)
        return remote.features.lane, result.text

    assert run(scenario()) == ("v2_unstable", "v2")  # each side its own lane of version 2
