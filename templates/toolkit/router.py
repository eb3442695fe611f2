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
that lane's to answer.

On the client side, `client_lane` reads the agent's answer the same way: the version it names
picks the lane (one this client has), or the connection fails with one clear error naming both
sides' versions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final, cast

from ..runtime._runtime import DecodeError, decode
from ..runtime.jsonrpc import RoleBase, Route, RouteKey, RpcError
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


class AgentRouter(RoleBase):
    """A connection's handler until `initialize`: it picks the lane, hands the connection to
    an `AgentSide` of that lane, and lets it answer. Before that, only `initialize` is served
    (anything else is -32601, and the connection carries on)."""

    ROUTES: ClassVar[Mapping[RouteKey, Route]] = {
        ("initialize", "request"): Route("initialize", "request", None, None)
    }
    CANCEL_METHOD: ClassVar[str | None] = "$/cancel_request"
    BATCHES: ClassVar[bool] = False

    def __init__(
        self, agent: Agent, *, lanes: tuple[str, ...] | None = None, principal: str | None = None
    ) -> None:
        self.agent = agent
        self.offered = pick(agent.lanes if lanes is None else lanes)
        self.principal = principal
        self.side: AgentSide | None = None
        """The lane's handler, once `initialize` chose it."""

    async def initialize(self, params: Any) -> Any:
        requested = requested_version(params)
        lane = select(requested, self.offered)
        try:
            typed = initialize_params(lane, params, requested)
        except DecodeError as exc:
            raise RpcError.invalid_params(exc) from None
        side = side_class(lane)(self.agent, lane, self.principal)
        self.connection.rebind(
            cast(RoleBase, side)
        )  # side_class puts the lane's AgentBase under it
        self.side = side
        return await side.initialize(typed)

    async def disconnected(self) -> None:
        """The connection is gone: its sessions' work stops."""
        if self.side is not None:
            await self.side.disconnected()


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
