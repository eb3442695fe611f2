"""The version router: which lane a connection speaks, decided once, at `initialize`, by the
protocol's version negotiation.

The client's `initialize` names the latest protocol version it supports. The agent answers with
the highest version it serves at or below that one, and with error -32022 (`data`: the version
requested and those supported) when it serves none (the v2 schema's rule; v1's said "else the
agent's latest", which a client could not use: it would close the connection). The request is
then read as the
chosen version's `InitializeRequest`: strictly when the client asked for exactly that version,
and keeping what parses when it asked for another (a newer client's request may not fit an
older schema: a missing or malformed v2 `info` becomes `{name: "unknown", version:
"unknown"}`, and a v2 client's `info` is its v1 `clientInfo`). After that the connection is
handed to the lane's handler (`AgentSide`) and never routed again: a later `initialize` is
that lane's to answer (read as the first one was, and answered with the same version).

On the client side, `client_lane` reads the agent's answer the same way: the version it names
picks the lane (one this client has), or the connection fails with one clear error naming both
sides' versions.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final, cast

from ..runtime._runtime import DecodeError, decode
from ..runtime.connection import RoleBase
from ..runtime.jsonrpc import Route, RouteKey, RpcError
from .agent import Agent, AgentSide, side_class
from .lane import Lane, pick

_MAX_VERSION: Final = 0xFFFF
_UNKNOWN: Final = {"name": "unknown", "version": "unknown"}


class UnsupportedVersion(Exception):
    """The two sides share no protocol version (the message names both sides' versions)."""


def requested_version(params: Any) -> int:
    """The `protocolVersion` of an `initialize` request; -32602 when it is not one."""
    version = params.get("protocolVersion") if type(params) is dict else None
    if type(version) is not int or not 0 <= version <= _MAX_VERSION:
        raise RpcError(
            -32602,
            "Invalid params",
            {"path": "$.protocolVersion", "reason": "must be an integer from 0 to 65535"},
        )
    return version


UNSUPPORTED_PROTOCOL_VERSION: Final = -32022


def select(requested: int, offered: Mapping[int, Lane]) -> Lane:
    """The lane that answers a client asking for `requested`: the highest version offered at
    or below it; -32022 (naming both sides' versions) when there is none."""
    fitting = [version for version in offered if version <= requested]
    if not fitting:
        supported = sorted(offered)
        raise RpcError(
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"requested": requested, "supported": supported},
        )
    return offered[max(fitting)]


def initialize_params(lane: Lane, params: dict[str, Any], requested: int) -> Any:
    """`params` as `lane`'s InitializeRequest: strict for the lane's own version, else what
    fits (see the module docstring). Raises DecodeError when even that does not decode."""
    m = lane.models
    if requested == lane.version:
        return decode(m.InitializeRequest, params)
    shaped = dict(params, protocolVersion=lane.version)
    if lane.dialect == "v1":
        if "clientInfo" not in shaped and isinstance(shaped.get("info"), dict):
            shaped["clientInfo"] = shaped["info"]
    else:
        try:
            decode(m.Implementation, shaped.get("info"))
        except DecodeError:
            shaped["info"] = dict(_UNKNOWN)
    try:
        return decode(m.InitializeRequest, shaped)
    except DecodeError:  # keep only what every version has
        minimal: dict[str, Any] = {"protocolVersion": lane.version}
        if lane.dialect != "v1":
            minimal["info"] = shaped["info"]
        return decode(m.InitializeRequest, minimal)


def read_initialize(lane: Lane, params: Any) -> Any:
    """An `initialize` request (raw JSON) as `lane` reads it (see `initialize_params`);
    RpcError -32602 when it is not one."""
    requested = requested_version(params)
    try:
        return initialize_params(lane, params, requested)
    except DecodeError as exc:
        raise RpcError.invalid_params(exc) from None


Handlers = Mapping[str, Callable[[], RoleBase]]
"""Lane name → a function making that lane's handler (an `AgentBase` of the lane's `rpc`)."""


class AgentRouter(RoleBase):
    """A connection's handler until `initialize`: it picks the lane, hands the connection to
    that lane's handler, and lets it answer. Before that, only `initialize` is served: anything
    else is -32601 (and the connection carries on), except requests read after an `initialize`
    request and before its answer, which the chosen lane serves once it answered (a client
    that pipelines gets its answers in order).

    It routes to a toolkit `Agent` (an `AgentSide` of the lane chosen), or to handlers of your
    own, one per lane: `AgentRouter({"v1": MyV1Agent, "v2": MyV2Agent})`, each an `AgentBase`
    of that lane (`acp_kit.v1.AgentBase`, ...), made for the connection once its lane is known.
    """

    ROUTES: ClassVar[Mapping[RouteKey, Route]] = {
        ("initialize", "request"): Route("initialize", "request", None, None)
    }
    CANCEL_METHOD: ClassVar[str | None] = "$/cancel_request"
    BATCHES: ClassVar[bool] = False

    def __init__(
        self,
        agent: Agent | Handlers,
        *,
        lanes: tuple[str, ...] | None = None,
        principal: str | None = None,
    ) -> None:
        if isinstance(agent, Agent):
            self.agent: Agent | None = agent
            self.handlers: Handlers = {}
            self.offered = pick(agent.lanes if lanes is None else lanes)
        else:
            self.agent, self.handlers = None, dict(agent)
            self.offered = pick(tuple(self.handlers) if lanes is None else lanes)
        self.principal = principal
        self.handler: RoleBase | None = None
        """The lane's handler, once `initialize` chose it."""
        self._routing: asyncio.Future[RoleBase | None] | None = None
        routes = dict(AgentRouter.ROUTES)
        self._pipelined_attrs: dict[str, Any] = {}
        for lane in self.offered.values():
            for key, route in lane.rpc.AGENT_ROUTES.items():
                if route.kind == "request" and key not in routes:
                    attr = f"_pipelined_{route.attr}"
                    routes[key] = Route(attr, "request", None, None)
                    self._pipelined_attrs[attr] = functools.partial(self._pipelined, key[0])
        self.__dict__["ROUTES"] = routes  # this connection's: its lanes' methods
        # A request is served by the connection's handler when its task starts: after the
        # rebind, that is the lane's handler, which forwards these the same way.
        self.__dict__.update(self._pipelined_attrs)

    async def initialize(self, params: Any) -> Any:
        routing = self._routing = self._routing or asyncio.get_running_loop().create_future()
        try:
            lane = select(requested_version(params), self.offered)
            typed = read_initialize(lane, params)
        except RpcError:
            self._routing = None
            if not routing.done():
                routing.set_result(None)  # requests that came meanwhile: not initialized
            raise
        if self.agent is not None:  # side_class puts the lane's AgentBase under AgentSide
            handler = cast(RoleBase, side_class(lane)(self.agent, lane, self.principal))
        else:
            handler = self.handlers[lane.name]()
        handler.__dict__.update(self._pipelined_attrs)
        self.connection.rebind(handler)
        self.handler = handler
        try:
            answer: Any = await handler.initialize(typed)  # type: ignore[attr-defined]
            return answer
        finally:  # the answer is written in the step this returns in: theirs come after it
            if not routing.done():
                routing.set_result(handler)

    @property
    def side(self) -> AgentSide | None:
        """The toolkit's handler of the connection, once chosen (None for handlers of your own)."""
        return self.handler if isinstance(self.handler, AgentSide) else None

    async def _pipelined(self, method: str, params: Any) -> Any:
        """A request read while an `initialize` was being answered, served by the lane's
        handler once it answered (-32601 when no initialize came, or it failed)."""
        handler = None if self._routing is None else await asyncio.shield(self._routing)
        route = None if handler is None else handler.ROUTES.get((method, "request"))
        if handler is None or route is None:
            raise RpcError.method_not_found(method)
        try:
            value = params if route.params is None else decode(route.params, params or {})
        except DecodeError as exc:
            raise RpcError.invalid_params(exc) from None
        return await getattr(handler, route.attr)(value)

    async def disconnected(self) -> None:
        """The connection is gone: its sessions' work stops."""
        side = self.side
        if side is not None:
            await side.disconnected()


def client_lane(answer: Any, offered: Mapping[int, Lane], asked: int) -> Lane:
    """The lane to speak with an agent that answered `initialize` with `answer` (raw JSON);
    UnsupportedVersion when this client has no lane for the version it names."""
    version = answer.get("protocolVersion") if type(answer) is dict else None
    ours = ", ".join(str(v) for v in sorted(offered))
    if type(version) is not int:
        raise UnsupportedVersion(
            f"the agent's initialize answer names no protocol version (this client speaks {ours})"
        )
    lane = offered.get(version)
    if lane is None:
        raise UnsupportedVersion(
            f"the agent speaks protocol version {version}; this client speaks {ours}"
            f" (it asked for {asked})"
        )
    return lane


def refused_version(error: RpcError, offered: Mapping[int, Lane], asked: int) -> str:
    """What an agent's -32022 answer to `initialize` means, naming both sides' versions."""
    data = error.data
    theirs = data.get("supported") if isinstance(data, dict) else None
    ours = ", ".join(str(v) for v in sorted(offered))
    if isinstance(theirs, list) and theirs and all(type(v) is int for v in theirs):
        listed = ", ".join(str(v) for v in sorted(theirs))
        return (
            f"the agent speaks protocol version {listed}; this client speaks {ours}"
            f" (it asked for {asked})"
        )
    return f"the agent speaks no protocol version up to {asked}; this client speaks {ours}"
