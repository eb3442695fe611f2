"""The generated dispatch tables, bases and stubs follow meta.json and `x-method`/`x-side`:
one route per method on the side that handles it, Python names from the meta.json keys, and
two methods of one role with one Python name are an error pointing at both."""

from __future__ import annotations

import asyncio
import importlib
import inspect
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from acp_kit import v1 as acp_v1
from acp_kit import v2 as acp_v2

from codegen.config import default_templates
from codegen.diagnostics import Diagnostics, InputError
from codegen.ir import Method
from codegen.naming import method_name as python_name
from codegen.pipeline import Target, generate
from tests.conftest import write_schema
from tests.support.rpc_wire import RawPeer, request, run


def rpc_of(pkg: ModuleType) -> ModuleType:
    """The rpc module of a lane, or of the one lane of a one-lane package (imported lazily,
    on first use)."""
    root = Path(pkg.__file__ or "").parent
    if (root / "rpc.py").exists():
        return importlib.import_module(pkg.__name__ + ".rpc")
    (lane,) = [path.parent.name for path in root.glob("*/rpc.py")]
    return importlib.import_module(f"{pkg.__name__}.{lane}.rpc")


@pytest.mark.parametrize(
    ("key", "wire", "expected"),
    [
        ("session_prompt", "session/prompt", "session_prompt"),
        ("fs_read_text_file", "fs/read_text_file", "fs_read_text_file"),
        ("do ping", "vendor/doPing", "vendor_do_ping"),  # key unusable: from the wire name
        ("Session/Prompt", "session/prompt", "session_prompt"),
        ("class", "class", "class_"),  # a keyword
        ("connection", "connection", "connection_"),  # an attribute of the bases and stubs
        ("_x", "_x", "x"),  # not private by accident
        ("", "$/hello", "hello"),
        ("", "9/lives", "m_9_lives"),
    ],
)
def test_python_names(key: str, wire: str, expected: str) -> None:
    method = Method(name=wire, key=key, side="agent", kind="request", params=None, result=None)
    assert python_name(method) == expected


def generation_errors(tmp_path: Path, schema: dict[str, Any], meta: dict[str, Any]) -> list[str]:
    diags = Diagnostics()
    target = Target("pkg", write_schema(tmp_path / "schema", schema, meta))
    with pytest.raises(InputError):
        generate(target, default_templates(), diags, fmt=False)
    return [str(d) for d in diags.items if d.level == "error"]


def test_two_methods_of_one_role_with_one_python_name_are_one_error(tmp_path: Path) -> None:
    meta = {"agentMethods": {"a b": "a/b", "a_b": "a_b"}, "clientMethods": {"a_b": "c/d"}}
    assert generation_errors(tmp_path, {"$defs": {}}, meta) == [
        "error at meta.json#/agentMethods/a_b: method 'a_b' maps to Python name 'a_b' "
        "(agent side), as does 'a/b' at meta.json#/agentMethods/a b"
    ]  # the client's `a_b` is another class's method: no conflict


def test_a_protocol_method_collides_with_either_role(tmp_path: Path) -> None:
    meta = {"clientMethods": {"hello": "c/hello"}, "protocolMethods": {"hello": "$/hello"}}
    assert generation_errors(tmp_path, {"$defs": {}}, meta) == [
        "error at meta.json#/protocolMethods/hello: method '$/hello' maps to Python name "
        "'hello' (client side), as does 'c/hello' at meta.json#/clientMethods/hello"
    ]


@pytest.mark.parametrize("pkg", [acp_v1, acp_v2], ids=["v1", "v2"])
def test_routes_cover_every_method_on_its_handling_side(pkg: ModuleType) -> None:
    routes = {"agent": rpc_of(pkg).AGENT_ROUTES, "client": rpc_of(pkg).CLIENT_ROUTES}
    for (name, kind), info in pkg.METHODS_BY_KIND.items():
        assert pkg.METHODS[name] is info  # one kind per name in the stable lanes
        if name == "$/cancel_request":  # handled by the runtime itself
            assert pkg.AgentBase.CANCEL_METHOD == name
            assert all((name, kind) not in table for table in routes.values())
            continue
        route = routes[info.side][(name, kind)]
        other = "client" if info.side == "agent" else "agent"
        assert (name, kind) not in routes[other]
        assert (route.kind, route.params, route.result) == (info.kind, info.params, info.result)
    assert sum(len(table) for table in routes.values()) == len(pkg.METHODS) - 1


@pytest.mark.parametrize("pkg", [acp_v1, acp_v2], ids=["v1", "v2"])
def test_bases_and_stubs_have_one_typed_coroutine_per_method(pkg: ModuleType) -> None:
    roles = {
        "agent": (pkg.AgentBase, pkg.AgentStub, rpc_of(pkg).AGENT_ROUTES),
        "client": (pkg.ClientBase, pkg.ClientStub, rpc_of(pkg).CLIENT_ROUTES),
    }
    for base, stub, routes in roles.values():
        assert base.ROUTES is routes
        for route in routes.values():
            for cls in (base, stub):
                method = getattr(cls, route.attr)
                assert inspect.iscoroutinefunction(method), (cls, route.attr)
                hints = inspect.get_annotations(method, eval_str=True)
                assert hints["params"] is route.params
                assert hints["return"] is (route.result if route.kind == "request" else None)


def test_v1_client_methods() -> None:
    assert sorted(rpc_of(acp_v1).CLIENT_ROUTES) == [
        ("elicitation/complete", "notification"),
        ("elicitation/create", "request"),
        ("fs/read_text_file", "request"),
        ("fs/write_text_file", "request"),
        ("session/request_permission", "request"),
        ("session/update", "notification"),
        ("terminal/create", "request"),
        ("terminal/kill", "request"),
        ("terminal/output", "request"),
        ("terminal/release", "request"),
        ("terminal/wait_for_exit", "request"),
    ]
    route = rpc_of(acp_v1).CLIENT_ROUTES[("fs/read_text_file", "request")]
    assert route.attr == "fs_read_text_file"


def obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": sorted(props)}


PING = {"x-method": "vendor/doPing", "x-side": "agent"}
ODD_SCHEMA = {
    "$defs": {
        "PingRequest": {**obj(n={"type": "integer"}), **PING},
        "PingResponse": {**obj(n={"type": "integer"}), **PING},
        "ClassNotification": {**obj(), "x-method": "class", "x-side": "client"},
        "HelloNotification": {**obj(), "x-method": "$/hello", "x-side": "protocol"},
        "CancelRequestNotification": {
            **obj(requestId={"type": ["string", "integer", "null"]}),
            "x-method": "$/cancel_request",
            "x-side": "protocol",
        },
    }
}  # fmt: skip
ODD_META = {
    "agentMethods": {"do ping": "vendor/doPing"},
    "clientMethods": {"class": "class"},
    "protocolMethods": {"hello": "$/hello", "cancel_request": "$/cancel_request"},
}


def test_odd_method_names_generate_working_dispatch(
    make_package: Callable[..., ModuleType],
) -> None:
    pkg = make_package(ODD_SCHEMA, ODD_META)
    assert {k: r.attr for k, r in rpc_of(pkg).AGENT_ROUTES.items()} == {
        ("vendor/doPing", "request"): "vendor_do_ping",
        ("$/hello", "notification"): "hello",  # protocol methods: both roles handle them
    }
    assert {k: r.attr for k, r in rpc_of(pkg).CLIENT_ROUTES.items()} == {
        ("class", "notification"): "class_",
        ("$/hello", "notification"): "hello",
    }
    assert pkg.AgentBase.CANCEL_METHOD == "$/cancel_request"

    class Agent(pkg.AgentBase):  # type: ignore[name-defined,misc]
        async def vendor_do_ping(self, params: Any) -> Any:
            return pkg.PingResponse(n=params.n + 1)

    async def scenario() -> None:
        peer = RawPeer(Agent())
        got = await peer.call(request(1, "vendor/doPing", {"n": 41}))
        assert got == {"jsonrpc": "2.0", "id": 1, "result": {"n": 42}}
        stub = pkg.AgentStub(peer.connection)
        call = asyncio.ensure_future(stub.vendor_do_ping(pkg.PingRequest(n=1)))
        assert await peer.recv() == request(0, "vendor/doPing", {"n": 1})
        peer.send({"jsonrpc": "2.0", "id": 0, "result": {"n": 2}})
        assert await call == pkg.PingResponse(n=2)

    run(scenario())


def test_a_schema_without_cancel_request_never_sends_it(
    make_package: Callable[..., ModuleType],
) -> None:
    schema = {"$defs": dict(ODD_SCHEMA["$defs"])}
    del schema["$defs"]["CancelRequestNotification"]
    meta = {**ODD_META, "protocolMethods": {"hello": "$/hello"}}
    pkg = make_package(schema, meta)
    assert pkg.AgentBase.CANCEL_METHOD is None

    async def scenario() -> None:
        peer = RawPeer(pkg.ClientBase())
        call = asyncio.ensure_future(
            pkg.AgentStub(peer.connection).vendor_do_ping(pkg.PingRequest(n=1))
        )
        await peer.recv()
        call.cancel()
        # Nothing is sent for the cancelled call: the next line is the next call.
        call = asyncio.ensure_future(peer.connection.request("_next"))
        assert (await peer.recv())["method"] == "_next"
        call.cancel()

    run(scenario())
