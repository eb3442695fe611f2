"""What the dispatcher templates need: each role's methods with a Python name, and the
protocol-level cancel method that the JSON-RPC runtime handles by itself.

Method names come from `naming.method_name`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..diagnostics import InputError
from ..ir import Method, Model
from ..naming import Names, method_name

CANCEL_REQUEST = "$/cancel_request"


@dataclass(frozen=True, slots=True)
class RpcMethodView:
    """One method as the dispatcher templates see it."""

    name: str  # the wire method, e.g. "session/prompt"
    py: str  # the Python method name, e.g. "session_prompt"
    kind: str  # request | notification
    params_py: str  # Python class of the params, "" when the schema has none
    result_py: str  # Python class of the result, "" for notifications or when unknown
    unstable: bool
    doc: str


@dataclass(frozen=True, slots=True)
class RpcView:
    """The methods each role handles, and the protocol-level cancel method."""

    agent: tuple[RpcMethodView, ...]  # handled by the agent: AgentBase, called by AgentStub
    client: tuple[RpcMethodView, ...]  # handled by the client: ClientBase, called by ClientStub
    cancel_method: str | None  # `$/cancel_request` when the schema has it
    batches: bool = False  # the schema defines JSON-RPC batches (arrays of messages)

    @property
    def needs_any(self) -> bool:
        """Some method has no params or result type: its stub and base use `Any`."""
        return any(
            not m.params_py or (m.kind == "request" and not m.result_py)
            for m in self.agent + self.client
        )

    @property
    def needs_models(self) -> bool:
        return any(m.params_py or m.result_py for m in self.agent + self.client)

    @property
    def has_requests(self) -> bool:
        return any(m.kind == "request" for m in self.agent + self.client)


def build_rpc_view(model: Model, names: Names, batches: bool = False) -> RpcView:
    roles: dict[str, list[RpcMethodView]] = {"agent": [], "client": []}
    cancel: str | None = None
    for method in model.methods:
        if method.side == "protocol" and method.name == CANCEL_REQUEST:
            cancel = method.name  # the runtime cancels in-flight handlers itself
            continue
        view = _method_view(method, names)
        for side in ("agent", "client") if method.side == "protocol" else (method.side,):
            roles[side].append(view)
    for side, views in roles.items():
        _check_unique(side, views)
    return RpcView(tuple(roles["agent"]), tuple(roles["client"]), cancel, batches)


def _method_view(method: Method, names: Names) -> RpcMethodView:
    params_py = names.types.get(method.params or "", "")
    result_py = names.types.get(method.result or "", "") if method.kind == "request" else ""
    arrow = f"`{params_py or 'JSON'}` → `{result_py or 'JSON'}`"
    if method.kind == "notification":
        arrow = f"`{params_py or 'JSON'}`, never answered"
    lane = " Unstable: only in the unstable schema." if method.unstable else ""
    doc = f"`{method.name}` ({method.kind}): {arrow}.{lane}"
    return RpcMethodView(
        name=method.name,
        py=method_name(method),
        kind=method.kind,
        params_py=params_py,
        result_py=result_py,
        unstable=method.unstable,
        doc=doc,
    )


def _check_unique(side: str, views: list[RpcMethodView]) -> None:
    seen: dict[str, str] = {}
    for view in views:
        other = seen.setdefault(view.py, view.name)
        if other != view.name:
            raise InputError(
                f"methods {other!r} and {view.name!r} ({side} side) "
                f"both map to the Python name {view.py!r}"
            )
