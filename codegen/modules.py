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
    when the schema defines all of them and none of `unless_types`: that is how a lane picks its
    session model (v2's needs `StateUpdate`; v1's needs v1's `ToolCall`, which v2 lacks, and
    v1 drafts define both).
    """

    module: str
    exports: tuple[str, ...] = ()
    template: str | None = None
    runtime: str | None = None
    file: str = ""  # the file's name when not `{module}.py`
    needs_types: tuple[str, ...] = ()
    unless_types: tuple[str, ...] = ()
    # Imported on first use of one of its names: the asyncio runtime would double the import
    # time of a package most users import for its models.
    lazy: bool = False
    context: str = ""  # a template rendered with another module's context (by its name)

    @property
    def filename(self) -> str:
        return self.file or self.module + ".py"


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

# Types whose presence selects the v1 toolkit: v1's lifecycle (the prompt's answer carries the
# stop reason, tool calls begin with `tool_call`) and its loadable, listable, closable sessions.
# No v2 schema has v1's `ToolCall` and `StopReason`, and no v1 schema v2's `ErrorStopReason`:
# a package gets one toolkit at most.
TOOLKIT_V1 = (
    "ToolCall",
    "StopReason",
    "PromptResponse",
    "SessionCapabilities",
    "LoadSessionRequest",
    "ResumeSessionRequest",
    "ListSessionsRequest",
    "CloseSessionRequest",
    "DeleteSessionRequest",
    "RequestPermissionRequest",
    "UsageUpdate",
    "SessionInfoUpdate",
)
# What the toolkit's modules export, the same in both lanes (v1 keeps its tool call handle in
# turn.py, v2 in tool_call.py).
TURN_EXPORTS = (
    "CustomStopReason",
    "Permission",
    "PlanHandle",
    "Turn",
    "TurnCancelled",
    "TurnEnded",
    "TurnStopReason",
)
AGENT_EXPORTS = ("Agent", "AgentSession", "run_agent", "serve_agent")
CLIENT_EXPORTS = (
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
)

CORE_MODULES = (
    ModuleSpec("__init__", template="__init__.py.j2"),
    ModuleSpec("_decoders", runtime="_decoders.py"),
    ModuleSpec(
        "_runtime",
        (
            "UNSET",
            "UnsetType",
            "DecodeError",
            "JsonValue",
            "OpenStr",
            "OpenInt",
            "decode",
            "encode",
        ),
        runtime="_runtime.py",
    ),
    ModuleSpec("models", template="models.py.j2"),
    ModuleSpec("methods", ("METHODS", "MethodInfo"), template="methods.py.j2"),
    ModuleSpec("REFERENCE", template="REFERENCE.md.j2", file="REFERENCE.md"),
)

EXTRA_MODULES = (
    ModuleSpec(
        "jsonrpc",
        ("ConnectionClosed", "RpcError", "UnencodableMessage"),
        runtime="jsonrpc.py",
    ),
    ModuleSpec("transcript", ("TranscriptRecorder",), runtime="transcript.py", lazy=True),
    ModuleSpec("_wire", template="wire.py.j2", context="models"),
    # `Connection` and the objects it wires (see the module docstring of connection.py).
    ModuleSpec(
        "transport",
        ("MemoryTransport", "StreamTransport", "Transport", "memory_pair"),
        runtime="transport.py",
        lazy=True,
    ),
    ModuleSpec("_salvage", runtime="_salvage.py"),
    ModuleSpec("_output", runtime="_output.py"),
    ModuleSpec("_outgoing", runtime="_outgoing.py"),
    ModuleSpec("_notifications", runtime="_notifications.py"),
    ModuleSpec("_requests", runtime="_requests.py"),
    ModuleSpec("_dispatch", runtime="_dispatch.py"),
    ModuleSpec("_reading", runtime="_reading.py"),
    ModuleSpec("connection", ("Connection",), runtime="connection.py", lazy=True),
    ModuleSpec(
        "rpc",
        ("AgentBase", "AgentStub", "ClientBase", "ClientStub"),
        template="rpc.py.j2",
        lazy=True,
    ),
    ModuleSpec(
        "process",
        ("ProcessConnection", "connect_process"),
        runtime="process.py",
        lazy=True,
    ),
    ModuleSpec("stdio", ("connect_stdio",), runtime="stdio.py", lazy=True),
    ModuleSpec(
        "session_state",
        ("SessionState",),
        template="session_state.py.j2",
        needs_types=("SessionUpdate", "StateUpdate"),
        unless_types=("ToolCall",),
    ),
    ModuleSpec(
        "session_state",
        ("SessionState",),
        template="session_state_v1.py.j2",
        needs_types=("SessionUpdate", "ToolCall"),
    ),
    # The toolkit (agent side, then client side). Its runtime modules know no protocol types;
    # the templates name this lane's classes, and follow the v2 prompt lifecycle of
    # npm-sdk-2.4.0 and later drafts.
    ModuleSpec("_lifecycle", runtime="_lifecycle.py", needs_types=TOOLKIT_V2),
    ModuleSpec("_sessions", runtime="_sessions.py", needs_types=TOOLKIT_V2),
    ModuleSpec("_broadcast", runtime="_broadcast.py", needs_types=TOOLKIT_V2),
    ModuleSpec(
        "turn",
        TURN_EXPORTS,
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
        AGENT_EXPORTS,
        template="agent.py.j2",
        needs_types=TOOLKIT_V2,
        lazy=True,
    ),
    ModuleSpec(
        "client",
        CLIENT_EXPORTS,
        template="client.py.j2",
        needs_types=TOOLKIT_V2,
        lazy=True,
    ),
    # The v1 toolkit: the same lane-neutral runtime modules, and v1's own templates.
    ModuleSpec("_lifecycle", runtime="_lifecycle.py", needs_types=TOOLKIT_V1),
    ModuleSpec("_sessions", runtime="_sessions.py", needs_types=TOOLKIT_V1),
    ModuleSpec("_broadcast", runtime="_broadcast.py", needs_types=TOOLKIT_V1),
    ModuleSpec(
        "turn",
        (*TURN_EXPORTS, "ToolCallHandle", "ToolContent"),
        template="turn_v1.py.j2",
        needs_types=TOOLKIT_V1,
        lazy=True,
    ),
    ModuleSpec(
        "agent",
        (*AGENT_EXPORTS, "MissingCapability", "TerminalHandle"),
        template="agent_v1.py.j2",
        needs_types=TOOLKIT_V1,
        lazy=True,
    ),
    ModuleSpec(
        "workspace",
        ("Workspace",),
        template="workspace_v1.py.j2",
        needs_types=TOOLKIT_V1,
        lazy=True,
    ),
    ModuleSpec(
        "client", CLIENT_EXPORTS, template="client_v1.py.j2", needs_types=TOOLKIT_V1, lazy=True
    ),
)

META_NAMES = ("SCHEMA_REF", "SCHEMA_SHA256", "PROTOCOL_VERSION")


def extra_exports() -> frozenset[str]:
    """Names the modules beside the models export from the package top level."""
    return frozenset(name for m in CORE_MODULES + EXTRA_MODULES for name in m.exports) | set(
        META_NAMES
    )
