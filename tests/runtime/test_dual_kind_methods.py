"""A wire name the schema defines both as a request and as a notification (the unstable v2
lane's `mcp/message` and `proxy/successor`) is two methods: each kind routed to its own
typed handler, told apart on the wire by the `id`, with a stub for each. The request keeps the
method's Python name; the notification gets `_notification` appended."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from acp_kit import v2_unstable as unstable

from codegen.ir import Method
from tests.support.rpc_wire import RawPeer, notification, request, run


def obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": sorted(props)}


MESSAGE = {"x-method": "relay/message"}
SCHEMA = {
    "$defs": {
        # A request the client handles, and a notification of the same name the agent handles.
        "MessageRelayRequest": {**obj(n={"type": "integer"}), **MESSAGE, "x-side": "client"},
        "MessageRelayResponse": {**obj(n={"type": "integer"}), **MESSAGE, "x-side": "client"},
        "MessageRelayNotification": {**obj(n={"type": "integer"}), **MESSAGE, "x-side": "agent"},
        # Both kinds of one name, handled by both roles (x-side proxy).
        "HopRequest": {**obj(to={"type": "string"}), "x-method": "hop", "x-side": "proxy"},
        "HopResponse": {**obj(ok={"type": "boolean"}), "x-method": "hop", "x-side": "proxy"},
        "HopNotification": {**obj(to={"type": "string"}), "x-method": "hop", "x-side": "proxy"},
    }
}


def rpc_of(pkg: ModuleType) -> ModuleType:
    return importlib.import_module(pkg.AgentBase.__module__)


def test_the_ir_has_one_method_per_kind_each_with_its_own_side(
    build_ir: Callable[..., Any],
) -> None:
    model, diags = build_ir(SCHEMA)
    assert [str(d) for d in diags.items] == []  # no "only the notification is routed"
    found = {(m.name, m.kind): (m.side, m.params, m.result) for m in model.methods}
    assert found == {
        ("relay/message", "request"): ("client", "MessageRelayRequest", "MessageRelayResponse"),
        ("relay/message", "notification"): ("agent", "MessageRelayNotification", None),
        ("hop", "request"): ("proxy", "HopRequest", "HopResponse"),
        ("hop", "notification"): ("proxy", "HopNotification", None),
    }


def test_a_meta_json_listing_keeps_each_kind_s_own_side(build_ir: Callable[..., Any]) -> None:
    meta = {"clientMethods": {"relay_message": "relay/message"}}  # one group names it
    model, diags = build_ir(
        {"$defs": {k: v for k, v in SCHEMA["$defs"].items() if "Relay" in k}}, meta
    )
    assert [str(d) for d in diags.items if d.level != "info"] == []
    assert [(m.kind, m.side, m.key) for m in model.methods] == [
        ("request", "client", "relay_message"),
        ("notification", "agent", "relay_message"),
    ]


def test_names_follow_one_rule(name_ir: Callable[..., Any]) -> None:
    _, names, _ = name_ir(SCHEMA)
    assert names.methods == {
        ("relay/message", "request"): "relay_message",
        ("relay/message", "notification"): "relay_message_notification",
        ("hop", "request"): "hop",
        ("hop", "notification"): "hop_notification",
    }


def test_route_tables_and_method_tables_hold_both_kinds(
    make_package: Callable[..., ModuleType],
) -> None:
    pkg = make_package(SCHEMA)
    rpc = rpc_of(pkg)
    assert {k: r.attr for k, r in rpc.AGENT_ROUTES.items()} == {
        ("relay/message", "notification"): "relay_message_notification",
        ("hop", "request"): "hop",
        ("hop", "notification"): "hop_notification",
    }
    assert {k: r.attr for k, r in rpc.CLIENT_ROUTES.items()} == {
        ("relay/message", "request"): "relay_message",
        ("hop", "request"): "hop",
        ("hop", "notification"): "hop_notification",
    }
    assert pkg.METHODS["relay/message"] is pkg.METHODS_BY_KIND[("relay/message", "request")]
    note = pkg.METHODS_BY_KIND[("relay/message", "notification")]
    assert (note.kind, note.side, note.params, note.result) == (
        "notification",
        "agent",
        pkg.MessageRelayNotification,
        None,
    )


def test_each_kind_reaches_its_own_handler_by_the_id(
    make_package: Callable[..., ModuleType],
) -> None:
    pkg = make_package(SCHEMA)
    seen: list[Any] = []

    class Proxy(pkg.AgentBase):  # type: ignore[name-defined,misc]
        async def hop(self, params: Any) -> Any:
            seen.append(("request", params))
            return pkg.HopResponse(ok=params.to == "next")

        async def hop_notification(self, params: Any) -> None:
            seen.append(("notification", params))

    async def scenario() -> None:
        peer = RawPeer(Proxy(), pkg)
        peer.send(notification("hop", {"to": "a"}))
        assert await peer.call(request(7, "hop", {"to": "next"})) == {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {"ok": True},
        }
        # Invalid params of each kind: the request is answered -32602, the notification dropped.
        got = await peer.call(request(8, "hop", {"to": 1}))
        assert got["error"]["code"] == -32602
        peer.send(notification("hop", {"to": 2}))
        await peer.connection.notifications_handled()
        assert seen == [
            ("notification", pkg.HopNotification(to="a")),
            ("request", pkg.HopRequest(to="next")),
        ]

    run(scenario())


def test_a_kind_the_role_does_not_handle_is_a_method_not_found_or_ignored(
    make_package: Callable[..., ModuleType],
) -> None:
    pkg = make_package(SCHEMA)
    noted: list[Any] = []

    class Agent(pkg.AgentBase):  # type: ignore[name-defined,misc]
        async def relay_message_notification(self, params: Any) -> None:
            noted.append(params)

    async def scenario() -> None:
        peer = RawPeer(Agent(), pkg)
        # The agent handles relay/message's notification only: its request is -32601 ...
        assert await peer.call(request(1, "relay/message", {"n": 1})) == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32601, "message": "Method not found", "data": "relay/message"},
        }
        peer.send(notification("relay/message", {"n": 2}))
        await peer.connection.notifications_handled()
        assert noted == [pkg.MessageRelayNotification(n=2)]

    run(scenario())

    class Client(pkg.ClientBase):  # type: ignore[name-defined,misc]
        async def relay_message(self, params: Any) -> Any:
            return pkg.MessageRelayResponse(n=params.n * 2)

    async def client_side() -> None:
        peer = RawPeer(Client(), pkg)
        # ... and the client serves the request; its notification is ignored quietly.
        peer.send(notification("relay/message", {"n": 5}))
        got = await peer.call(request(2, "relay/message", {"n": 21}))
        assert got == {"jsonrpc": "2.0", "id": 2, "result": {"n": 42}}

    run(client_side())


def test_stubs_send_each_kind(make_package: Callable[..., ModuleType]) -> None:
    pkg = make_package(SCHEMA)

    async def scenario() -> None:
        peer = RawPeer(pkg.ClientBase(), pkg)
        stub = pkg.AgentStub(peer.connection)
        await stub.hop_notification(pkg.HopNotification(to="x"))
        assert await peer.recv() == notification("hop", {"to": "x"})
        call = asyncio.ensure_future(stub.hop(pkg.HopRequest(to="y")))
        assert await peer.recv() == request(0, "hop", {"to": "y"})
        peer.send({"jsonrpc": "2.0", "id": 0, "result": {"ok": False}})
        assert await call == pkg.HopResponse(ok=False)
        client_stub = pkg.ClientStub(peer.connection)
        call = asyncio.ensure_future(client_stub.relay_message(pkg.MessageRelayRequest(n=3)))
        assert await peer.recv() == request(1, "relay/message", {"n": 3})
        peer.send({"jsonrpc": "2.0", "id": 1, "result": {"n": 4}})
        assert await call == pkg.MessageRelayResponse(n=4)
        await pkg.AgentStub(peer.connection).relay_message_notification(
            pkg.MessageRelayNotification(n=9)
        )
        assert await peer.recv() == notification("relay/message", {"n": 9})

    run(scenario())


@pytest.mark.parametrize(
    ("wire", "kind", "twin", "expected"),
    [
        ("mcp/message", "request", False, "mcp_message"),
        ("mcp/message", "notification", True, "mcp_message_notification"),
        ("session/update", "notification", False, "session_update"),
    ],
)
def test_the_rule(wire: str, kind: Any, twin: bool, expected: str) -> None:
    from codegen.naming import method_name

    method = Method(name=wire, key=wire.replace("/", "_"), side="agent", kind=kind, params=None,
                    result=None)  # fmt: skip
    assert method_name(method, twin=twin) == expected


def test_the_unstable_lane_serves_mcp_message_and_proxy_successor_in_both_forms() -> None:
    rpc = rpc_of(unstable)
    assert rpc.CLIENT_ROUTES[("mcp/message", "request")].attr == "mcp_message"
    assert rpc.AGENT_ROUTES[("mcp/message", "notification")].attr == "mcp_message_notification"
    for routes in (rpc.AGENT_ROUTES, rpc.CLIENT_ROUTES):
        assert routes[("proxy/successor", "request")].attr == "proxy_successor"
        assert routes[("proxy/successor", "notification")].attr == "proxy_successor_notification"
    for cls in (unstable.AgentStub, unstable.ClientStub):
        assert hasattr(cls, "proxy_successor") and hasattr(cls, "proxy_successor_notification")
    assert hasattr(unstable.ClientStub, "mcp_message")
    assert hasattr(unstable.AgentStub, "mcp_message_notification")

    seen: list[Any] = []

    class Client(unstable.ClientBase):  # type: ignore[misc]
        async def mcp_message(self, params: Any) -> Any:
            seen.append(params.method)
            return unstable.MessageMcpResponseResult(result={"tools": []})

    async def scenario() -> None:
        peer = RawPeer(Client())
        params = {"serverId": "srv", "requestId": "r1", "method": "tools/list"}
        got = await peer.call(request(3, "mcp/message", params))
        assert got == {"jsonrpc": "2.0", "id": 3, "result": {"result": {"tools": []}}}
        assert seen == ["tools/list"]

    run(scenario())
