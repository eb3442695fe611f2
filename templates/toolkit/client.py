"""A client built on `Client`: spawn the agent, open sessions, run turns, watch updates — with an
agent of any protocol version this package holds.

    async with spawn_agent("python", "agent.py", permissions=allow) as agent:
        session = await agent.new_session()          # cwd: this process's directory
        session.subscribe(print)                     # every update of the session, in order
        result = await session.prompt("hello")       # returns once the turn ended
        print(result.stop_reason, result.text)

`connect_agent` asks for the newest protocol version the package has (or the one `protocol=`
names) and speaks whichever the agent answers with, if the package has it: the same
`RemoteAgent` and `RemoteSession` API on every version (`agent.features` says what differs).
Sessions are the ones this client opened, loaded or resumed: updates for any other session are
dropped (those arriving while a `session/new` is under way are kept for it a moment), and
permission requests for them are answered -32002. Permission requests go to the client's policy
(see `policies.py`); once `session.cancel()` was called, that session's requests are answered
`cancelled`, pending ones included.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections import deque
from collections.abc import AsyncIterator, Coroutine, Iterable, Mapping, Sequence
from typing import IO, Any, Final, Unpack

from ..runtime._runtime import UNSET, DecodeError, JsonValue, decode, encode
from ..runtime.connection import Connection, ConnectionOptions, RoleBase
from ..runtime.jsonrpc import RpcError
from ..runtime.process import EXIT_TIMEOUT, ProcessConnection, connect_process
from ..vocab import InitializeResponse, McpServer, SessionInfo
from .broadcast import STALL_TIMEOUT
from .dialect import Dialect, dialect_for, not_found
from .lane import Lane, ProtocolFeatures, pick
from .policies import PermissionPolicy, ask_user
from .remote import IncompatibleAgent, RemoteSession, TurnResult
from .router import (
    UNSUPPORTED_PROTOCOL_VERSION,
    UnsupportedVersion,
    client_lane,
    refused_version,
)
from .workspace import Workspace

__all__ = [
    "Client",
    "IncompatibleAgent",
    "RemoteAgent",
    "RemoteSession",
    "TurnResult",
    "connect_agent",
    "spawn_agent",
]
_log: Final = logging.getLogger(__name__)
_EARLY_UPDATES: Final = 256  # updates of not-yet-known sessions kept while one is being opened


class Client:
    """The client side: keeps a `RemoteSession` per session it opened, loaded or resumed, and
    answers permission requests with `permissions` (default: `ask_user`). `name` and
    `version` are what `initialize` tells the agent; `lanes` the lanes it may speak (default:
    the stable lane of every version the package holds); `stall_timeout` how long one
    subscriber may hold the connection up before it is dropped.

    A subclass may serve more of the client's methods: a method named after the route
    (`elicitation_create`) is called with the lane's params."""

    def __init__(
        self,
        *,
        permissions: PermissionPolicy = ask_user,
        name: str = "acp-client",
        version: str = "0.0.0",
        lanes: Iterable[str] | None = None,
        stall_timeout: float = STALL_TIMEOUT,
        workspace: Workspace | None = None,
    ) -> None:
        self.permissions = permissions
        self.workspace = workspace
        """The client's files and terminals the agent may use (v1; see `Workspace`)."""
        self.name = name
        self.version = version
        self.offered = pick(None if lanes is None else tuple(lanes))
        self.stall_timeout = stall_timeout
        self.sessions: dict[str, RemoteSession] = {}
        self.lane: Lane | None = None
        """The lane this client speaks, once the agent answered `initialize`."""
        self._side: Any = None
        self._opening = 0  # session/new requests under way
        self._early: deque[tuple[str, Any]] = deque(maxlen=_EARLY_UPDATES)
        self._dropped: set[str] = set()  # sessions whose updates were dropped (logged once)
        self._tasks: set[asyncio.Task[None]] = set()  # what runs for it in the background

    @property
    def dialect(self) -> Dialect:
        if self.lane is None:
            raise RuntimeError("the agent has not answered initialize yet")
        return dialect_for(self.lane)

    @property
    def connection(self) -> Connection:
        if self._side is None:
            raise RuntimeError("this client is not connected")
        connection: Connection = self._side.connection
        return connection

    @property
    def stub(self) -> Any:
        """Calls any method of the agent (the lane's `AgentStub`)."""
        if self._side is None:
            raise RuntimeError("this client is not connected")
        return self._side.agent

    def offers(self) -> frozenset[str]:
        """The client's own methods it advertises (a workspace's files and terminals)."""
        if self.workspace is None:
            return frozenset()
        can = self.workspace.capabilities()
        return frozenset(
            name
            for name, on in (
                ("fs.readTextFile", can.read_text_file),
                ("fs.writeTextFile", can.write_text_file),
                ("terminal", can.terminal),
            )
            if on
        )

    # -- what the agent calls --------------------------------------------------------------
    async def session_update(self, params: Any) -> None:
        session = self.sessions.get(params.session_id)
        if session is not None:
            await session.apply(params.update)
        elif self._opening:
            self._early.append((params.session_id, params.update))
        elif params.session_id not in self._dropped and len(self._dropped) < 1024:
            self._dropped.add(params.session_id)
            _log.warning("dropped updates for session %r, which this client did not open",
                         params.session_id[:80])  # fmt: skip

    async def session_request_permission(self, params: Any) -> Any:
        session = self.sessions.get(params.session_id)
        if session is None:
            raise not_found(params.session_id)
        return await session.decide(params)

    # -- the workspace (v1's files and terminals; -32601 without one) ----------------------
    def _workspace(self, method: str) -> Workspace:
        if self.workspace is None:
            raise RpcError.method_not_found(method)
        return self.workspace

    def _roots(self, session_id: str) -> list[str]:
        session = self.sessions.get(session_id)
        return [] if session is None else session.roots

    async def fs_read_text_file(self, params: Any) -> Any:
        line, limit = params.line, params.limit
        text = await self._workspace("fs/read_text_file").read_text_file(
            params.session_id,
            self._roots(params.session_id),
            params.path,
            line if isinstance(line, int) else None,
            limit if isinstance(limit, int) else None,
        )
        return self.dialect.m.ReadTextFileResponse(content=text)

    async def fs_write_text_file(self, params: Any) -> Any:
        await self._workspace("fs/write_text_file").write_text_file(
            params.session_id, self._roots(params.session_id), params.path, params.content
        )
        return self.dialect.m.WriteTextFileResponse()

    async def terminal_create(self, params: Any) -> Any:
        env = {v.name: v.value for v in params.env} if isinstance(params.env, list) else None
        limit = params.output_byte_limit
        terminal_id = await self._workspace("terminal/create").create_terminal(
            params.session_id,
            self._roots(params.session_id),
            params.command,
            params.args if isinstance(params.args, list) else (),
            env,
            params.cwd if isinstance(params.cwd, str) else None,
            limit if isinstance(limit, int) else None,
        )
        return self.dialect.m.CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(self, params: Any) -> Any:
        m = self.dialect.m
        got = await self._workspace("terminal/output").terminal_output(
            params.session_id, params.terminal_id
        )
        status = got.exit_status
        exit_status = UNSET if status is None else m.TerminalExitStatus(
            exit_code=status.exit_code, signal=status.signal
        )  # fmt: skip
        return m.TerminalOutputResponse(
            output=got.output, truncated=got.truncated, exit_status=exit_status
        )

    async def terminal_wait_for_exit(self, params: Any) -> Any:
        status = await self._workspace("terminal/wait_for_exit").wait_for_exit(
            params.session_id, params.terminal_id
        )
        return self.dialect.m.WaitForTerminalExitResponse(
            exit_code=status.exit_code, signal=status.signal
        )

    async def terminal_kill(self, params: Any) -> Any:
        await self._workspace("terminal/kill").kill_terminal(params.session_id, params.terminal_id)
        return self.dialect.m.KillTerminalResponse()

    async def terminal_release(self, params: Any) -> Any:
        await self._workspace("terminal/release").release_terminal(
            params.session_id, params.terminal_id
        )
        return self.dialect.m.ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: JsonValue) -> JsonValue:
        """A `_`-prefixed request from the agent (raw JSON params, None when it has none):
        -32601 unless overridden."""
        raise RpcError.method_not_found(method)

    async def ext_notification(self, method: str, params: JsonValue) -> None:
        """A `_`-prefixed notification from the agent: ignored unless overridden."""

    # -- bookkeeping -----------------------------------------------------------------------
    async def opened(self, session_id: str, roots: Sequence[str] = ()) -> RemoteSession:
        """The session of this id, opened now (it keeps the updates that came early for it)."""
        assert self.lane is not None
        session = self.sessions.get(session_id)
        if session is None:
            session = self.sessions[session_id] = RemoteSession(self, session_id, self.lane)
            session._hub._stall = self.stall_timeout
        session.roots = list(roots)
        early = [update for sid, update in self._early if sid == session_id]
        if early:
            self._early = deque(
                ((sid, u) for sid, u in self._early if sid != session_id), maxlen=_EARLY_UPDATES
            )
            for update in early:
                await session.apply(update)
        return session

    def forget(self, session: RemoteSession) -> None:
        if self.sessions.get(session.id) is session:
            del self.sessions[session.id]
        session.closed()
        if self.workspace is not None:  # its terminals end with it
            self._later(self.workspace.close_session(session.id))

    def _later(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def gone(self, when: str) -> str:
        """Why the connection ended, for an error: the agent's exit status when it was a child
        process that exited (waited for a moment), else that it closed the connection."""
        connection = self._side.connection if self._side is not None else None
        wait = getattr(connection, "wait", None)
        status = getattr(connection, "returncode", None)
        if status is None and wait is not None:
            with contextlib.suppress(TimeoutError, OSError):
                status = await asyncio.wait_for(wait(), 1.0)
        if status is None:
            return f"the agent closed the connection {when}"
        if status < 0:
            return f"the agent was killed by signal {-status} {when}"
        return f"the agent exited with status {status} {when}"

    def disconnected(self) -> None:
        for session in list(self.sessions.values()):
            session.closed()

    async def shut(self) -> None:
        """The connection is done: its sessions end, the workspace's terminals are killed."""
        self.disconnected()
        if self.workspace is not None:
            await self.workspace.close()

    def bind(self, lane: Lane, connection: Connection) -> None:
        """Speak `lane` on `connection` from now on."""
        self.lane = lane
        side: Any = _side_class(lane)(self, lane)
        connection.rebind(side)
        self._side = side


class ClientSide:
    """The handler of a connection for a `Client`, on one lane: the lane's `ClientBase` (its
    routes, -32601 for what is not served) with the client's own methods in front."""

    def __init__(self, client: Client, lane: Lane) -> None:
        self.client = client
        self.lane = lane
        for route in lane.rpc.CLIENT_ROUTES.values():
            if hasattr(type(client), route.attr):
                setattr(self, route.attr, getattr(client, route.attr))
        self.ext_method = client.ext_method
        self.ext_notification = client.ext_notification


def _side_class(lane: Lane) -> type:
    cached = _SIDES.get(lane.name)
    if cached is None:
        cached = _SIDES[lane.name] = type(
            f"ClientSide_{lane.name}", (ClientSide, lane.rpc.ClientBase), {}
        )
    return cached


_SIDES: dict[str, type] = {}


class _Unrouted(RoleBase):
    """A connection's handler until the agent answers `initialize`: nothing is served yet."""


class RemoteAgent:
    """An initialized agent: `info` is its `initialize` answer (its lane's class)."""

    def __init__(self, client: Client, info: InitializeResponse) -> None:
        self.client = client
        self.info = info

    @property
    def lane(self) -> Lane:
        assert self.client.lane is not None
        return self.client.lane

    @property
    def features(self) -> ProtocolFeatures:
        """What the protocol version spoken with this agent has."""
        return self.lane.features

    @property
    def implementation(self) -> Any:
        """The agent's name, version and title (the lane's `Implementation`: v2's `info`, v1's
        optional `agentInfo`), or None when it gave none."""
        found = getattr(self.info, "info", None) or getattr(self.info, "agent_info", None)
        return found if isinstance(found, self.lane.models.Implementation) else None

    @property
    def name(self) -> str | None:
        """The agent's name, when it gave one."""
        found = self.implementation
        return None if found is None else str(found.name)

    @property
    def connection(self) -> Connection:
        return self.client.connection

    @property
    def stub(self) -> Any:
        """Calls any method of the agent."""
        return self.client.stub

    async def new_session(
        self,
        cwd: str | os.PathLike[str] | None = None,
        *,
        mcp_servers: Sequence[McpServer] = (),
        additional_directories: Sequence[str] = (),
    ) -> RemoteSession:
        """`session/new` in `cwd` (default: this process's working directory)."""
        m = self.lane.models
        where = _absolute(cwd)
        request = m.NewSessionRequest(
            cwd=where,
            mcp_servers=self._servers(mcp_servers),
            additional_directories=list(additional_directories) or UNSET,
        )
        self.client._opening += 1
        try:
            answer = await self.stub.session_new(request)
            return await self.client.opened(answer.session_id, [where, *additional_directories])
        finally:
            self.client._opening -= 1

    async def resume_session(
        self,
        session_id: str,
        cwd: str | os.PathLike[str] | None = None,
        *,
        replay: bool = True,
        mcp_servers: Sequence[McpServer] = (),
    ) -> RemoteSession:
        """`session/resume`: the session is active again. With `replay` (where the protocol
        replays on resume: v2), its state is rebuilt from the history the agent replays."""
        where = _absolute(cwd)
        session = await self.client.opened(session_id, [where])
        if replay and self.features.state_updates:
            session.state = self.lane.session_state()
        request = self.client.dialect.resume_request(
            session_id, where, self._servers(mcp_servers), replay
        )
        await self.stub.session_resume(request)
        await self.connection.notifications_handled()
        return session

    async def load_session(
        self,
        session_id: str,
        cwd: str | os.PathLike[str] | None = None,
        *,
        mcp_servers: Sequence[McpServer] = (),
    ) -> RemoteSession:
        """The session with its state rebuilt from the conversation the agent replays: v1's
        `session/load`, v2's `session/resume` from the start."""
        if not self.features.load_session:
            return await self.resume_session(session_id, cwd, replay=True, mcp_servers=mcp_servers)
        where = _absolute(cwd)
        session = await self.client.opened(session_id, [where])
        session.state = self.lane.session_state()
        request = self.lane.models.LoadSessionRequest(
            session_id=session_id, cwd=where, mcp_servers=self._servers(mcp_servers)
        )
        await self.stub.session_load(request)
        await self.connection.notifications_handled()
        return session

    async def list_sessions(self, cwd: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
        """Every session `session/list` reports (in `cwd` only, when given), all pages."""
        m = self.lane.models
        found: list[SessionInfo] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            request = m.ListSessionsRequest(
                cwd=UNSET if cwd is None else os.path.abspath(cwd),
                cursor=UNSET if cursor is None else cursor,
            )
            page = await self.stub.session_list(request)
            found += page.sessions
            cursor = page.next_cursor if isinstance(page.next_cursor, str) else None
            if cursor is None or cursor in seen:
                return found
            seen.add(cursor)

    async def delete_session(self, session_id: str) -> None:
        """`session/delete`: the agent forgets the session."""
        m = self.lane.models
        await self.stub.session_delete(m.DeleteSessionRequest(session_id=session_id))
        session = self.client.sessions.get(session_id)
        if session is not None:
            self.client.forget(session)

    async def close(self) -> None:
        """Close the connection (a spawned agent is reaped too)."""
        await self.connection.close()
        await self.client.shut()

    def _servers(self, servers: Sequence[McpServer]) -> list[Any]:
        m = self.lane.models
        return [
            self.lane.adopt(m.McpServer, s, where=f"mcp_servers[{i}]")
            for i, s in enumerate(servers)
        ]


def _absolute(cwd: str | os.PathLike[str] | None) -> str:
    return os.path.abspath(os.getcwd() if cwd is None else cwd)


async def connect_agent(
    client: Client, connection: Connection, *, protocol: int | None = None
) -> RemoteAgent:
    """Initialize the agent at the other end of `connection` (which `client` serves from then
    on), asking for protocol version `protocol` (default: the newest the client has)."""
    offered = client.offered
    if protocol is not None and protocol not in offered:
        have = ", ".join(str(v) for v in sorted(offered))
        raise ValueError(f"protocol version {protocol} is not one this client has ({have})")
    asked = max(offered) if protocol is None else protocol
    connection.start()
    try:
        raw = await connection.request("initialize", _initialize_params(client, offered, asked))
    except RpcError as exc:
        if exc.code != UNSUPPORTED_PROTOCOL_VERSION:
            raise
        raise IncompatibleAgent(refused_version(exc, offered, asked)) from None
    try:
        lane = client_lane(raw, offered, asked)
    except UnsupportedVersion as exc:
        raise IncompatibleAgent(str(exc)) from None
    if protocol is not None and lane.version != protocol:
        raise IncompatibleAgent(
            f"the agent answered with protocol version {lane.version}; this client asked for"
            f" {protocol} only"
        )
    try:
        info = decode(lane.models.InitializeResponse, raw)
    except DecodeError as exc:
        raise IncompatibleAgent(
            f"the agent's initialize answer is not protocol version {lane.version}'s: {exc}"
        ) from None
    client.bind(lane, connection)
    asyncio.get_running_loop().create_task(_watch(client, connection))
    return RemoteAgent(client, info)


def _initialize_params(client: Client, offered: Mapping[int, Lane], asked: int) -> Any:
    """The `initialize` request for version `asked`. A client that offers methods of its own
    to v1 agents (files, terminals) also writes v1's `clientCapabilities` and `clientInfo`
    beside v2's fields: an agent that answers v1 has read them (a v2 agent ignores them)."""
    offers = client.offers()
    params = encode(
        dialect_for(offered[asked]).initialize_request(client.name, client.version, offers)
    )
    older = offered.get(1)
    if offers and older is not None and asked != 1:
        v1 = encode(dialect_for(older).initialize_request(client.name, client.version, offers))
        params.setdefault("clientCapabilities", v1.get("clientCapabilities"))
        params.setdefault("clientInfo", v1.get("clientInfo"))
    return params


async def _watch(client: Client, connection: Connection) -> None:
    """Wakes the sessions' waiters once the connection closes."""
    await connection.wait_closed()
    client.disconnected()


@contextlib.asynccontextmanager
async def spawn_agent(
    program: str,
    *args: str,
    client: Client | None = None,
    permissions: PermissionPolicy | None = None,
    workspace: Workspace | None = None,
    protocol: int | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    inherit_env: bool = False,
    stderr: int | IO[Any] | None = None,
    exit_timeout: float = EXIT_TIMEOUT,
    **options: Unpack[ConnectionOptions],
) -> AsyncIterator[RemoteAgent]:
    """Start the agent `program`, initialize it, and yield it as a RemoteAgent; leaving the
    block closes the connection and reaps the process (see `connect_process`).

    `client` serves the agent's requests (default: a new `Client`); `permissions` sets its
    policy, `workspace` its files and terminals (v1 agents use them); `protocol` forces a
    protocol version (default: the newest, falling back to what the agent answers). The
    child's environment is trimmed unless `inherit_env` (see `connect_process`). Raises
    OSError when the program cannot be started, IncompatibleAgent, RpcError or
    ConnectionClosed when initialization fails.
    """
    handler = Client() if client is None else client
    if permissions is not None:
        handler.permissions = permissions
    if workspace is not None:
        handler.workspace = workspace
    process: ProcessConnection
    async with connect_process(
        _Unrouted(), program, *args, cwd=cwd, env=env, inherit_env=inherit_env,
        stderr=stderr, exit_timeout=exit_timeout, **options,
    ) as process:  # fmt: skip
        agent = await connect_agent(handler, process, protocol=protocol)
        try:
            yield agent
        finally:
            await handler.shut()
