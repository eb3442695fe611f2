"""The registry of generated modules: which files a package has, where each comes from, and what
it exports. A leaf module: the naming step reads it (exported names are taken) and the pipeline
renders from it, and it imports neither.

A package is made of lanes and of what the lanes share:

- each **lane** (one schema: `v1/schema.json`, `v2/schema.json`, ...) has its own modules,
  rendered from templates: `models`, `methods`, `rpc`, `_wire`, its session model, its
  `REFERENCE.md`, and `lane` (what the toolkit needs of it) when the toolkit serves it;
- the **runtime** (`runtime/`) and the **toolkit** (`toolkit/`) are hand-written modules,
  copied once per package with the banner, whatever the number of lanes;
- the package root has `__init__` (the exports), `_lanes` (the lanes it holds) and `vocab` (the
  values the toolkit's helpers accept, from the lanes' schemas).

A one-lane package holds its lane's modules at the root; a package of several lanes holds each
in a subpackage named after it (`v1/`, `v2/`, `v2_unstable/`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ModuleSpec:
    """One module of a generated package.

    `template` is a Jinja template under `templates/`; `source` a hand-written module under
    `templates/` (`runtime/jsonrpc.py`), copied with the banner. A lane module with
    `needs_types` is generated only when the lane's schema defines all of them and none of
    `unless_types`: that is how a lane picks its session model (v2's needs `StateUpdate`; v1's
    needs v1's `ToolCall`, which v2 lacks, and v1 drafts define both).
    """

    module: str  # dotted, relative to the package root or the lane's folder
    exports: tuple[str, ...] = ()
    template: str | None = None
    source: str | None = None
    file: str = ""  # the file's name when not `{module}.py`
    needs_types: tuple[str, ...] = ()
    unless_types: tuple[str, ...] = ()
    # Imported on first use of one of its names: the asyncio runtime would double the import
    # time of a package most users import for its models.
    lazy: bool = False
    context: str = ""  # a template rendered with another module's context (by its name)

    @property
    def filename(self) -> str:
        """The file's path relative to the package root (or the lane's folder)."""
        return self.file or self.module.replace(".", "/") + ".py"


# Types whose presence lets the toolkit serve a lane with the v2 prompt lifecycle: an idle
# `error` stop reason, resumable, listable, closable sessions, and cancellable tool calls
# (npm-sdk-2.4.0 and later drafts).
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

# Types whose presence lets the toolkit serve a lane with v1's lifecycle (the prompt's answer
# carries the stop reason, tool calls begin with `tool_call`) and its loadable, listable,
# closable sessions. No v2 schema has v1's `ToolCall` and `StopReason`, and no v1 schema v2's
# `ErrorStopReason`: a lane has one dialect at most.
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
# The toolkit's dialect of a lane, by the types that select it (checked in this order).
DIALECTS = (("v2", TOOLKIT_V2), ("v1", TOOLKIT_V1))

CORE_EXPORTS: tuple[str, ...] = ("UNSET", "UnsetType", "DecodeError", "JsonValue", "OpenStr")
CORE_EXPORTS += ("OpenInt", "decode", "encode")

# A lane's own modules, rendered from its schema.
LANE_MODULES = (
    ModuleSpec("models", template="models.py.j2"),
    ModuleSpec("methods", ("METHODS", "METHODS_BY_KIND", "MethodInfo"), template="methods.py.j2"),
    ModuleSpec("_wire", template="wire.py.j2", context="models"),
    ModuleSpec(
        "rpc",
        ("AgentBase", "AgentStub", "ClientBase", "ClientStub"),
        template="rpc.py.j2",
        lazy=True,
    ),
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
    ModuleSpec("REFERENCE", template="REFERENCE.md.j2", file="REFERENCE.md"),
)
# A lane the toolkit serves also has `lane.py` (its classes for the toolkit).
LANE_BINDING = ModuleSpec("lane", template="lane.py.j2")

# The JSON-RPC runtime: hand-written, one copy per package. `Connection` and the objects it
# wires (see the module docstring of runtime/connection.py).
RUNTIME_MODULES = (
    ModuleSpec("runtime._decoders", source="runtime/_decoders.py"),
    ModuleSpec("runtime._runtime", CORE_EXPORTS, source="runtime/_runtime.py"),
    ModuleSpec(
        "runtime.jsonrpc",
        ("ConnectionClosed", "RpcError", "UnencodableMessage"),
        source="runtime/jsonrpc.py",
        lazy=True,
    ),
    ModuleSpec(
        "runtime.transcript", ("TranscriptRecorder",), source="runtime/transcript.py", lazy=True
    ),
    ModuleSpec(
        "runtime.transport",
        ("MemoryTransport", "StreamTransport", "Transport", "memory_pair"),
        source="runtime/transport.py",
        lazy=True,
    ),
    ModuleSpec("runtime._salvage", source="runtime/_salvage.py"),
    ModuleSpec("runtime._output", source="runtime/_output.py"),
    ModuleSpec("runtime._outgoing", source="runtime/_outgoing.py"),
    ModuleSpec("runtime._notifications", source="runtime/_notifications.py"),
    ModuleSpec("runtime._requests", source="runtime/_requests.py"),
    ModuleSpec("runtime._dispatch", source="runtime/_dispatch.py"),
    ModuleSpec("runtime._reading", source="runtime/_reading.py"),
    ModuleSpec("runtime.connection", ("Connection",), source="runtime/connection.py", lazy=True),
    ModuleSpec(
        "runtime.process",
        ("ProcessConnection", "connect_process"),
        source="runtime/process.py",
        lazy=True,
    ),
    ModuleSpec("runtime.stdio", ("connect_stdio",), source="runtime/stdio.py", lazy=True),
)

# The toolkit: hand-written and lane-neutral, one copy per package that has a lane it serves.
TOOLKIT_MODULES = (
    ModuleSpec("toolkit.lane", ("NotSupported", "ProtocolFeatures"), source="toolkit/lane.py"),
    ModuleSpec("toolkit.broadcast", source="toolkit/broadcast.py"),
    ModuleSpec("toolkit.lifecycle", source="toolkit/lifecycle.py"),
    ModuleSpec("toolkit.book", source="toolkit/book.py"),
    ModuleSpec("toolkit.content", ("ToolContent",), source="toolkit/content.py", lazy=True),
    ModuleSpec(
        "toolkit.tool_call",
        ("ToolCallCancelled", "ToolCallHandle"),
        source="toolkit/tool_call.py",
        lazy=True,
    ),
    ModuleSpec(
        "toolkit.turn",
        (
            "CustomStopReason",
            "Permission",
            "PlanHandle",
            "Turn",
            "TurnCancelled",
            "TurnEnded",
            "TurnStopReason",
        ),
        source="toolkit/turn.py",
        lazy=True,
    ),
    ModuleSpec("toolkit.dialect", source="toolkit/dialect.py"),
    ModuleSpec("toolkit.dialect_v1", source="toolkit/dialect_v1.py"),
    ModuleSpec("toolkit.dialect_v2", source="toolkit/dialect_v2.py"),
    ModuleSpec(
        "toolkit.session",
        ("AgentSession", "MissingCapability", "TerminalHandle"),
        source="toolkit/session.py",
        lazy=True,
    ),
    ModuleSpec(
        "toolkit.agent",
        ("Agent", "run_agent", "serve_agent"),
        source="toolkit/agent.py",
        lazy=True,
    ),
    ModuleSpec(
        "toolkit.subagents",
        ("Subagent", "SubagentTurn", "SubagentWork"),
        source="toolkit/subagents.py",
        lazy=True,
    ),
    ModuleSpec("toolkit.router", ("AgentRouter",), source="toolkit/router.py", lazy=True),
    ModuleSpec(
        "toolkit.policies",
        ("PermissionPolicy", "allow", "ask_user", "deny"),
        source="toolkit/policies.py",
        lazy=True,
    ),  # fmt: skip
    ModuleSpec(
        "toolkit.remote",
        ("RemoteSession", "TurnResult"),
        source="toolkit/remote.py",
        lazy=True,
    ),
    ModuleSpec(
        "toolkit.children",
        ("NotPermitted", "RemoteChild"),
        source="toolkit/children.py",
        lazy=True,
    ),
    ModuleSpec("toolkit.files", source="toolkit/files.py"),
    ModuleSpec("toolkit.terminals", source="toolkit/terminals.py"),
    ModuleSpec(
        "toolkit.approvals",
        (
            "Approval",
            "ProposedCommand",
            "ProposedWrite",
            "approve_always",
            "approve_by_asking",
            "approve_never",
        ),
        source="toolkit/approvals.py",
        lazy=True,
    ),  # fmt: skip
    ModuleSpec("toolkit.workspace", ("Workspace",), source="toolkit/workspace.py", lazy=True),
    # The session store: the interface, its values, and one module per implementation (the
    # PostgreSQL engine imports psycopg, an optional extra, so only `PostgresStore` loads it).
    ModuleSpec("toolkit.store_types", source="toolkit/store_types.py"),
    ModuleSpec("toolkit.store_engine", source="toolkit/store_engine.py"),
    ModuleSpec("toolkit.store_fold", source="toolkit/store_fold.py"),
    ModuleSpec("toolkit.store_runner", source="toolkit/store_runner.py"),
    ModuleSpec(
        "toolkit.store",
        (
            "DEFAULT_RETENTION",
            "HistoryEntry",
            "Retention",
            "SessionRecord",
            "SessionSetup",
            "SessionStore",
            "StoreError",
            "StoreOpenError",
        ),
        source="toolkit/store.py",
        lazy=True,
    ),
    ModuleSpec(
        "toolkit.store_memory", ("MemoryStore",), source="toolkit/store_memory.py", lazy=True
    ),
    ModuleSpec("toolkit.store_sqlite_schema", source="toolkit/store_sqlite_schema.py"),
    ModuleSpec("toolkit.store_sqlite_write", source="toolkit/store_sqlite_write.py"),
    ModuleSpec(
        "toolkit.store_sqlite", ("SQLiteStore",), source="toolkit/store_sqlite.py", lazy=True
    ),
    ModuleSpec(
        "toolkit.store_postgres", ("PostgresStore",), source="toolkit/store_postgres.py", lazy=True
    ),
    ModuleSpec("toolkit.store_postgres_engine", source="toolkit/store_postgres_engine.py"),
    ModuleSpec("toolkit.stored_history", source="toolkit/stored_history.py"),
    ModuleSpec("toolkit.stored_sessions", source="toolkit/stored_sessions.py"),
    ModuleSpec(
        "toolkit.client",
        ("Client", "IncompatibleAgent", "RemoteAgent", "connect_agent", "spawn_agent"),
        source="toolkit/client.py",
        lazy=True,
    ),
    # The remote transports (Streamable HTTP and WebSocket), a subpackage of their own: stdlib
    # only; httpx, websockets and uvicorn are imported by the modules that use them, when used.
    ModuleSpec("transports.protocol", source="transports/protocol.py"),
    ModuleSpec("transports.sse", source="transports/sse.py"),
    ModuleSpec("transports._asgi", source="transports/_asgi.py"),
    ModuleSpec("transports._extras", ("MissingExtra",), source="transports/_extras.py", lazy=True),
    ModuleSpec("transports.limits", ("ServerLimits",), source="transports/limits.py", lazy=True),
    ModuleSpec(
        "transports.security",
        ("Authenticate", "bearer_token"),
        source="transports/security.py",
        lazy=True,
    ),
    ModuleSpec("transports.registry", source="transports/registry.py"),
    ModuleSpec("transports.outbox", source="transports/outbox.py"),
    ModuleSpec("transports.hosted", source="transports/hosted.py"),
    ModuleSpec("transports.http_server", source="transports/http_server.py"),
    ModuleSpec("transports.ws_server", source="transports/ws_server.py"),
    ModuleSpec("transports.server", ("AgentApp",), source="transports/server.py", lazy=True),
    ModuleSpec(
        "transports.serve",
        ("run_remote", "serve_remote"),
        source="transports/serve.py",
        lazy=True,
    ),
    ModuleSpec("transports.reattach", source="transports/reattach.py"),
    ModuleSpec(
        "transports.http_client", ("HttpTransport",), source="transports/http_client.py", lazy=True
    ),
    ModuleSpec(
        "transports.ws_client",
        ("WebSocketError", "WebSocketTransport"),
        source="transports/ws_client.py",
        lazy=True,
    ),
    ModuleSpec(
        "transports.connect", ("connect_remote",), source="transports/connect.py", lazy=True
    ),
)

# The templates of the package-level files (render/package.py renders them).
PACKAGE_TEMPLATES: tuple[str, ...] = ("__init__.py.j2", "subpackage.py.j2", "lanes.py.j2")
PACKAGE_TEMPLATES += ("vocab.py.j2", "lane.py.j2", "API.md.j2")

META_NAMES = ("SCHEMA_REF", "SCHEMA_SHA256", "PROTOCOL_VERSION")


def extra_exports() -> frozenset[str]:
    """Names the modules beside the models export from a package (or a lane) top level."""
    every = LANE_MODULES + RUNTIME_MODULES + TOOLKIT_MODULES
    return frozenset(name for m in every for name in m.exports) | set(META_NAMES)
