"""The registry of generated modules: which files a package has, where each comes from, and what
it exports. A leaf module: the naming step reads it (exported names are taken) and the pipeline
renders from it, and it imports neither."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ModuleSpec:
    """One module of a generated package.

    `template` is a Jinja template under `templates/`; `runtime` a hand-written module under
    `templates/runtime/`, copied with the banner. A module with `needs_types` is generated only
    when the schema defines all of them (the session model needs v2's `SessionUpdate`).
    """

    module: str
    exports: tuple[str, ...] = ()
    template: str | None = None
    runtime: str | None = None
    needs_types: tuple[str, ...] = ()
    # Imported on first use of one of its names: the asyncio runtime would double the import
    # time of a package most users import for its models.
    lazy: bool = False

    @property
    def filename(self) -> str:
        return self.module + ".py"


# Types whose presence selects the v2 toolkit: the v2 lifecycle with an idle `error` stop
# reason, resumable, listable, closable sessions, and cancellable tool calls (npm-sdk-2.4.0).
TOOLKIT_V2 = (
    "StateUpdate",
    "ErrorStopReason",
    "PromptResponse",
    "ReplayFrom",
    "ListSessionsRequest",
    "CloseSessionRequest",
    "RequestPermissionSubject",
    "CancelToolCallRequest",
)

CORE_MODULES = (
    ModuleSpec("__init__", template="__init__.py.j2"),
    ModuleSpec(
        "_runtime",
        ("UNSET", "UnsetType", "DecodeError", "JsonValue", "decode", "encode"),
        runtime="_runtime.py",
    ),
    ModuleSpec("models", template="models.py.j2"),
    ModuleSpec("methods", ("METHODS", "MethodInfo"), template="methods.py.j2"),
)

EXTRA_MODULES = (
    ModuleSpec(
        "jsonrpc",
        ("ConnectionClosed", "RpcError", "TranscriptRecorder", "UnencodableMessage"),
        runtime="jsonrpc.py",
    ),
    ModuleSpec("connection", ("Connection",), runtime="connection.py", lazy=True),
    ModuleSpec(
        "rpc",
        ("AgentBase", "AgentStub", "ClientBase", "ClientStub"),
        template="rpc.py.j2",
        lazy=True,
    ),
    ModuleSpec(
        "stdio",
        ("ProcessConnection", "connect_process", "connect_stdio"),
        runtime="stdio.py",
        lazy=True,
    ),
    ModuleSpec(
        "session_state",
        ("SessionState",),
        template="session_state.py.j2",
        needs_types=("SessionUpdate", "StateUpdate"),
    ),
    # The toolkit (agent side, then client side). Its runtime modules know no protocol types;
    # the templates name this lane's classes, and follow the v2 prompt lifecycle of
    # npm-sdk-2.4.0 and later drafts.
    ModuleSpec("_lifecycle", runtime="_lifecycle.py", needs_types=TOOLKIT_V2),
    ModuleSpec("_sessions", runtime="_sessions.py", needs_types=TOOLKIT_V2),
    ModuleSpec("_broadcast", runtime="_broadcast.py", needs_types=TOOLKIT_V2),
    ModuleSpec(
        "turn",
        (
            "CustomStopReason",
            "Permission",
            "PlanHandle",
            "Turn",
            "TurnCancelled",
            "TurnEnded",
            "TurnStopReason",
        ),
        template="turn.py.j2",
        needs_types=TOOLKIT_V2,
        lazy=True,
    ),
    ModuleSpec(
        "tool_call",
        ("ToolCallCancelled", "ToolCallHandle", "ToolContent"),
        template="tool_call.py.j2",
        needs_types=TOOLKIT_V2,
        lazy=True,
    ),
    ModuleSpec(
        "agent",
        ("Agent", "AgentSession", "run_agent", "serve_agent"),
        template="agent.py.j2",
        needs_types=TOOLKIT_V2,
        lazy=True,
    ),
    ModuleSpec(
        "client",
        (
            "Client",
            "IncompatibleAgent",
            "PermissionPolicy",
            "RemoteAgent",
            "RemoteSession",
            "TurnResult",
            "allow",
            "ask_user",
            "connect_agent",
            "deny",
            "spawn_agent",
        ),
        template="client.py.j2",
        needs_types=TOOLKIT_V2,
        lazy=True,
    ),
)

META_NAMES = ("SCHEMA_REF", "SCHEMA_SHA256", "PROTOCOL_VERSION")


def extra_exports() -> frozenset[str]:
    """Names the modules beside the models export from the package top level."""
    return frozenset(name for m in CORE_MODULES + EXTRA_MODULES for name in m.exports) | set(
        META_NAMES
    )
