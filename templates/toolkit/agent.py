"""An agent written once for every protocol version the package holds: subclass `Agent`, write
`prompt`.

    class Echo(Agent):
        name = "echo"

        async def prompt(self, turn: Turn) -> TurnStopReason:
            await turn.say(f"You said: {turn.text}")
            return "end_turn"

    run_agent(Echo())

Each connection is routed at `initialize` to the lane of the version the client asks for (see
`router.py`), and served by an `AgentSide` of that lane: it answers `initialize` (advertising
the session capabilities the toolkit implements, and the prompt content and MCP transports the
agent's class attributes name) and implements what they commit it to — `session/new`,
`session/prompt` (a turn per prompt, one at a time per session: a prompt that arrives while a
turn runs is held until it ends), `session/cancel`, `session/list` (by `cwd`, in pages),
`session/resume` and (v1) `session/load` with their replays, `session/close`, `session/delete`,
and (v2) `tool_call/cancel` for tool calls made `cancellable`. Other methods answer -32601
unless a subclass implements them (a method named after the route, `session_set_mode`, is
served with the lane's params).

Sessions are the agent's, shared by its connections; a session belongs to the connection (and
principal) that opened or last loaded/resumed it: requests for it on other connections are
answered -32002. Memory is bounded: each session keeps `history_turns` turns (at most
`history_bytes`) for replays, at most `max_sessions` sessions are kept (the least recently
used idle ones are evicted first), and a session idle for `idle_timeout` seconds is evicted;
a later load or resume of an evicted session is -32002.

`Agent(store="sessions.db")` (a SQLite file; or a `postgresql://` URL, or any `SessionStore`)
keeps the sessions in a store instead, where they outlive the process: see `stored_sessions.py`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
import uuid
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar, Final, Unpack

from ..runtime._runtime import UNSET, JsonValue, encode
from ..runtime.connection import Connection, ConnectionOptions
from ..runtime.jsonrpc import Route, RpcError
from ..runtime.stdio import connect_stdio
from ..runtime.transport import Transport
from .book import PAGE_SIZE, InvalidCursor, SessionBook, same_directory
from .dialect import invalid, listed, not_found
from .lane import Lane, ProtocolFeatures, pick
from .lifecycle import HeldPromptCancelled
from .session import DEFAULT_HISTORY_BYTES, DEFAULT_HISTORY_TURNS, AgentSession
from .store_types import StoreOpenError
from .turn import CustomStopReason, Turn, TurnStopReason

if TYPE_CHECKING:
    from .store import SessionStore
    from .stored_sessions import StoredSessions, StoreSpec

__all__ = ["Agent", "AgentSide", "run_agent", "serve_agent"]
_log: Final = logging.getLogger(__name__)
_MAX_PATH: Final = 4096


class Agent:
    """An agent whose subclass writes `prompt(turn)`; see the module docstring.

    Class attributes: `name`, `version`, `title` (its `Implementation`); `image_prompts`,
    `audio_prompts`, `embedded_context` (the prompt content it accepts beyond text and resource
    links: other blocks are refused with -32602); `mcp_transports` (the MCP servers it accepts
    in session setup beyond what every agent of a version must: `"http"`, `"sse"`, v2's
    `"stdio"`, and the unstable v2 lane's `"acp"`, whose server the agent reaches with
    `side.client.mcp_message(...)`); `sessions_per_page`; `lanes` (the lanes it serves, by
    name; None: the stable lane of every version the package holds); the bounds
    `history_turns`, `history_bytes`, `max_sessions`, `idle_timeout` (seconds).

    `store`: where sessions are kept beyond memory — a SQLite file's path (created 0600 when
    missing), a `postgresql://` URL (the `postgres` extra), or a `SessionStore`; None (the
    default) keeps them in memory only and writes nothing. `serve_agent` opens it before
    serving (`await agent.open()` does, for servers of your own) and closes it at the end.
    """

    name: ClassVar[str] = "acp-agent"
    version: ClassVar[str] = "0.0.0"
    title: ClassVar[str | None] = None
    image_prompts: ClassVar[bool] = False
    audio_prompts: ClassVar[bool] = False
    embedded_context: ClassVar[bool] = False
    mcp_transports: ClassVar[frozenset[str]] = frozenset()
    sessions_per_page: ClassVar[int] = PAGE_SIZE
    lanes: ClassVar[tuple[str, ...] | None] = None
    history_turns: ClassVar[int] = DEFAULT_HISTORY_TURNS
    history_bytes: ClassVar[int] = DEFAULT_HISTORY_BYTES
    max_sessions: ClassVar[int] = 1000
    idle_timeout: ClassVar[float] = 24 * 3600.0

    def __init__(self, *, store: StoreSpec | None = None) -> None:
        self.sessions: SessionBook[AgentSession] = SessionBook()
        """The sessions in memory (with a store: those served on live connections)."""
        self.stored: StoredSessions | None = None
        """The toolkit's side of the store (None without one)."""
        if store is not None:  # the store's modules load only for agents that have one
            from .stored_sessions import StoredSessions, make_store

            self.stored = StoredSessions(make_store(store))

    @property
    def store(self) -> SessionStore | None:
        """The session store, or None when sessions live in memory only."""
        return None if self.stored is None else self.stored.store

    async def open(self) -> None:
        """Open the session store (once; nothing without one). StoreOpenError, one line naming
        the file or server and what is wrong, when it cannot be used; nothing is changed then."""
        if self.stored is not None:
            await self.stored.open()

    async def flush(self) -> None:
        """Return once everything the sessions reported is durable (at once without a store);
        StoreError when the store could not write it."""
        if self.stored is not None:
            for session in self.sessions:
                if session.stored is not None:
                    session.stored.spill()
            await self.stored.store.flush()

    async def close(self) -> None:
        """Stop every session's work, then commit what is queued and close the store."""
        await self.shutdown()
        if self.stored is not None:
            for session in self.sessions:
                if session.stored is not None:
                    session.stored.spill()
            await self.stored.close()

    # -- what a subclass writes ----------------------------------------------------------
    async def prompt(self, turn: Turn) -> TurnStopReason | CustomStopReason | None:
        """Do the turn's work, reporting it through `turn`; return the stop reason (None:
        `end_turn`). An exception fails the turn (logged); a cancel ends it `cancelled`."""
        raise NotImplementedError(f"{type(self).__name__} does not implement prompt()")

    async def on_new_session(self, session: AgentSession) -> None:
        """Called for every `session/new` before it is answered; raise RpcError to refuse."""

    def advertise(self, lane: Lane, capabilities: Any) -> Any:
        """What `initialize` advertises on `lane` (the lane's `AgentCapabilities`, built from
        the class attributes): a subclass may change it or return another."""
        return capabilities

    async def on_ext_request(self, side: AgentSide, method: str, params: JsonValue) -> JsonValue:
        """A `_`-prefixed request (an extension): its params as raw JSON (None when it has
        none); return the result as JSON. By default -32601."""
        raise RpcError.method_not_found(method)

    async def on_ext_notification(self, side: AgentSide, method: str, params: JsonValue) -> None:
        """A `_`-prefixed notification (an extension): ignored unless overridden."""

    # -- what the toolkit does ---------------------------------------------------------------
    def features(self) -> list[ProtocolFeatures]:
        """The features of every protocol version this agent serves."""
        return [lane.features for lane in pick(self.lanes).values()]

    async def shutdown(self) -> None:
        """Stop every session's work."""
        for session in self.sessions:
            await session.foreground.stop()

    def evict(self, now: float | None = None, *, room: int = 0) -> None:
        """Forget sessions idle past `idle_timeout`, then the least recently used idle ones past
        `max_sessions` less `room` (what a session about to be added needs); a session with a
        turn running, or one prompts wait for, stays."""
        now = time.monotonic() if now is None else now
        idle = [s for s in self.sessions if s.turn is None and not s.foreground.active]
        for session in idle:
            if now - session.touched > self.idle_timeout:
                self.sessions.remove(session.id)
        excess = len(self.sessions) + room - self.max_sessions
        if excess > 0:
            idle = sorted((s for s in idle if s.id in self.sessions), key=lambda s: s.touched)
            for session in idle[:excess]:
                self.sessions.remove(session.id)


class AgentSide:
    """One connection of an `Agent`, on the lane chosen at `initialize`. `side_class(lane)`
    adds the lane's `AgentBase` (its route table, and -32601 for what is not served here)."""

    client: Any  # the lane's ClientStub (from AgentBase)
    connection: Any  # from RoleBase

    def __init__(self, agent: Agent, lane: Lane, principal: str | None = None) -> None:
        from .dialect import dialect_for

        self.agent = agent
        self.lane = lane
        self.dialect = dialect_for(lane)
        self.principal = principal
        """Who is at the other end (remote transports); None on stdio."""
        self.client_info: Any = None
        """The client's `initialize` request, once it came."""
        self.client_offers: frozenset[str] = frozenset()
        """The client's methods it advertised (`fs.readTextFile`, `terminal`, ...)."""
        for route in lane.rpc.AGENT_ROUTES.values():  # a subclass's own handlers are served too
            own = getattr(type(agent), route.attr, None)
            if own is not None and not hasattr(AgentSide, route.attr):
                setattr(self, route.attr, getattr(agent, route.attr))

    @property
    def features(self) -> ProtocolFeatures:
        return self.lane.features

    # -- initialization --------------------------------------------------------------------
    async def initialize(self, params: Any) -> Any:
        """The router passes the first `initialize` decoded; a repeated one comes as raw JSON
        (see `side_class`) and is read the same way, on this connection's lane."""
        if not isinstance(params, self.lane.models.InitializeRequest):
            from .router import read_initialize

            params = read_initialize(self.lane, params)
        self.client_info = params
        self.client_offers = self.dialect.client_offers(params)
        return self.dialect.initialize_response(self.agent, self)

    async def authenticate(self, params: Any) -> Any:
        raise invalid("$.methodId", "this agent advertises no authentication method")

    # -- sessions --------------------------------------------------------------------------
    async def session_new(self, params: Any) -> Any:
        cwd, roots, servers = self._setup(params)
        agent = self.agent
        agent.evict(room=1)
        session = AgentSession(agent, self, f"sess_{uuid.uuid4().hex}", cwd, roots, servers)
        session.request = params
        await agent.on_new_session(session)
        if agent.stored is not None:
            await agent.stored.created(session, self.lane)
        agent.sessions.add(session)
        return self.lane.models.NewSessionResponse(session_id=session.id)

    async def session_load(self, params: Any) -> Any:
        session = await self._reopen(params.session_id, params.cwd)
        _, session.additional_directories, session.mcp_servers = self._setup(params)
        session.request = params
        self._reopened(session)
        await session.replay()  # the whole conversation precedes the answer
        return self.lane.models.LoadSessionResponse()

    async def session_resume(self, params: Any) -> Any:
        m = self.lane.models
        session = await self._reopen(params.session_id, params.cwd)
        replay = getattr(params, "replay_from", UNSET)
        start = getattr(m, "ReplayFromStart", None)
        from_start = start is not None and isinstance(replay, start)
        if not (replay is None or replay is UNSET or from_start):
            cursor = encode(replay).get("type")
            raise invalid("$.replayFrom", f"unsupported replay cursor {cursor!r}")
        _, session.additional_directories, session.mcp_servers = self._setup(params)
        session.request = params
        self._reopened(session)
        if from_start:
            await session.replay()
        await self.dialect.report_state(session)
        return m.ResumeSessionResponse()

    async def session_list(self, params: Any) -> Any:
        cwd = params.cwd if isinstance(params.cwd, str) else None
        cursor = params.cursor if isinstance(params.cursor, str) else None
        if cwd is not None:
            self._check_path(cwd, "$.cwd")
        if cursor is not None and (len(cursor) > 256 or "\x00" in cursor):
            raise invalid("$.cursor", "not a cursor this agent handed out")
        self.agent.evict()
        if self.agent.stored is not None:
            return await self._stored_list(cwd, cursor)
        try:
            page, next_cursor = self.agent.sessions.page(
                cwd=cwd,
                cursor=cursor,
                size=self.agent.sessions_per_page,
                keep=lambda s: s.principal == self.principal,
            )
        except InvalidCursor as exc:
            raise invalid("$.cursor", str(exc)) from None
        return self.lane.models.ListSessionsResponse(
            sessions=[s.info(self.lane) for s in page],
            next_cursor=UNSET if next_cursor is None else next_cursor,
        )

    async def session_close(self, params: Any) -> Any:
        m = self.lane.models
        session = self.agent.sessions.get(params.session_id)
        mine = session is not None and session.side is self
        stored = self.agent.stored
        if stored is not None:  # stays stored, listed and loadable; memory lets it go
            if session is not None and mine and (session.active or self.dialect.close_forgets):
                session.closing = True
                await session.foreground.stop()
                session.active = False
                self.agent.sessions.remove(session.id)
                stored.closed(session.id)
            elif not self.dialect.close_forgets:
                raise not_found(params.session_id)
            return m.CloseSessionResponse()
        if self.dialect.close_forgets:
            if session is not None and mine:  # closing an unknown session succeeds
                session.closing = True  # a prompt that comes now is answered -32800
                await session.foreground.stop()  # the turn's final updates precede the answer
                session.active = False
                self.agent.sessions.remove(session.id)
            return m.CloseSessionResponse()
        if session is None or not mine or not session.active:
            raise not_found(params.session_id)
        await session.foreground.stop()
        session.active = False
        return m.CloseSessionResponse()

    async def session_delete(self, params: Any) -> Any:
        session = self.agent.sessions.get(params.session_id)
        if session is not None and session.principal == self.principal:
            await session.foreground.stop()
            session.active = False
            self.agent.sessions.remove(session.id)
        if self.agent.stored is not None:
            await self.agent.stored.delete(params.session_id, self.principal)
        return self.lane.models.DeleteSessionResponse()  # one that does not exist is gone already

    # -- turns -------------------------------------------------------------------------------
    async def session_prompt(self, params: Any) -> Any:
        session = self.session(params.session_id)
        self._check_prompt(params.prompt)
        if session.closing:
            raise RpcError.request_cancelled()
        try:
            await session.foreground.admit()  # held while another turn runs
        except HeldPromptCancelled:
            return self.dialect.prompt_held_answer()
        session.turns += 1
        session.touch()
        turn = Turn(session, list(params.prompt), session.next_id("msg_user"))
        session.turn = turn
        return await self.dialect.serve_prompt(self, turn)

    async def session_cancel(self, params: Any) -> None:
        session = self.agent.sessions.get(params.session_id)
        if session is not None and session.side is self:
            session.foreground.cancel()
        elif self.features.subagents:  # a child session's work, when it may be cancelled
            from .subagents import find_child

            child = find_child(self, params.session_id)
            if child is not None:
                child.request_cancel()

    async def tool_call_cancel(self, params: Any) -> Any:
        """Cancels a tool call made `cancellable` (see `ToolCallHandle.run`); -32602 for one
        that is unknown, final, or not cancellable."""
        tool = self.session(params.session_id).tool_calls.get(params.tool_call_id)
        if tool is not None and tool.request_cancel():
            return self.lane.models.CancelToolCallResponse()  # the call reports `cancelled` later
        if tool is None:
            what = "unknown"
        else:
            what = f"already {tool.status}" if tool.done else "not cancellable"
        raise invalid("$.toolCallId", f"tool call {params.tool_call_id!r} is {what}")

    async def terminal_cancel(self, params: Any) -> Any:
        """-32602: the toolkit runs no terminals (the schema's answer for an unknown one)."""
        self.session(params.session_id)
        raise invalid("$.terminalId", f"terminal {params.terminal_id!r} is unknown")

    # -- extensions --------------------------------------------------------------------------
    async def ext_method(self, method: str, params: JsonValue) -> JsonValue:
        return await self.agent.on_ext_request(self, method, params)

    async def ext_notification(self, method: str, params: JsonValue) -> None:
        await self.agent.on_ext_notification(self, method, params)

    # -- helpers -----------------------------------------------------------------------------
    def session(self, session_id: str) -> AgentSession:
        """The active session with this id on this connection; RpcError -32002 otherwise."""
        session = self.agent.sessions.get(session_id)
        if session is None or session.side is not self or not session.active:
            raise not_found(session_id)
        session.touch()
        return session

    async def disconnected(self) -> None:
        """The connection is gone: stop the work of the sessions it served, which stay (a
        later connection may load or resume them)."""
        for session in self.agent.sessions:
            if session.side is self:
                await session.foreground.stop()
                session.side = None
                if self.agent.stored is not None:  # it is in the store: memory lets it go
                    self.agent.sessions.remove(session.id)

    async def _reopen(self, session_id: str, cwd: str) -> AgentSession:
        self._check_path(cwd, "$.cwd")
        session = self.agent.sessions.get(session_id)
        if self.agent.stored is not None and (session is None or session.side is None):
            session = await self._restore(session_id, cwd)
        if session is None or session.principal != self.principal:
            raise not_found(session_id)
        if not same_directory(cwd, session.cwd):
            raise invalid("$.cwd", f"the session's working directory is {session.cwd}")
        if session.side is not None and session.side is not self and session.foreground.active:
            session.foreground.cancel()  # served elsewhere until now: that turn ends there
        session.attach(self)
        session.closing = False
        session.touch()
        return session

    async def _restore(self, session_id: str, cwd: str) -> AgentSession:
        """A session not served on a live connection here, as the store has it now (another
        worker may have gone on with it), in memory from now on; -32002 when there is none."""
        agent = self.agent
        assert agent.stored is not None
        restored = await agent.stored.restore(self, session_id)
        if restored is None:
            raise not_found(session_id)
        if not same_directory(cwd, restored.cwd):
            raise invalid("$.cwd", f"the session's working directory is {restored.cwd}")
        found = agent.sessions.get(session_id)  # again: a load may have come meanwhile
        if found is not None and found.side is not None:
            return found
        if found is not None:
            agent.sessions.remove(session_id)
        agent.evict()
        agent.sessions.add(restored)
        return restored

    def _reopened(self, session: AgentSession) -> None:
        """A load or a resume set the session up again (its directories and servers)."""
        session.active = True
        if self.agent.stored is not None:
            self.agent.stored.reopened(session)

    async def _stored_list(self, cwd: str | None, cursor: str | None) -> Any:
        from .store_types import InvalidCursor as StoredCursor
        from .stored_sessions import session_info

        stored = self.agent.stored
        assert stored is not None
        try:
            page = await stored.page(self.principal, cwd, cursor, self.agent.sessions_per_page)
        except StoredCursor as exc:
            raise invalid("$.cursor", str(exc)) from None
        return self.lane.models.ListSessionsResponse(
            sessions=[session_info(record, self.lane) for record in page.sessions],
            next_cursor=UNSET if page.next_cursor is None else page.next_cursor,
        )

    def _setup(self, params: Any) -> tuple[str, list[str], list[Any]]:
        """The working directory, the extra roots and the MCP servers, once every path is
        absolute and every server one this agent accepts."""
        cwd: str = params.cwd
        self._check_path(cwd, "$.cwd")
        roots = [str(r) for r in listed(getattr(params, "additional_directories", None))]
        for index, root in enumerate(roots):
            self._check_path(root, f"$.additionalDirectories[{index}]")
        servers = listed(getattr(params, "mcp_servers", None))
        baseline = {"stdio"} if self.lane.dialect == "v1" else set()
        unknown = getattr(self.lane.models, "McpServerOther", ())  # a transport of no schema
        for index, server in enumerate(servers):
            transport = encode(server).get("type", "stdio")
            if isinstance(server, unknown) and not str(transport).startswith("_"):
                reason = f"protocol version {self.lane.version} has no {transport!r} MCP servers"
                raise invalid(f"$.mcpServers[{index}]", reason)
            if transport not in baseline and transport not in self.agent.mcp_transports:
                reason = f"this agent does not accept {transport!r} MCP servers"
                raise invalid(f"$.mcpServers[{index}]", reason)
        return cwd, roots, servers

    @staticmethod
    def _check_path(path: str, where: str) -> None:
        if "\x00" in path:
            raise invalid(where, "a path may not hold a NUL byte")
        if len(path) > _MAX_PATH:
            raise invalid(where, f"a path of {len(path)} characters is over {_MAX_PATH}")
        if not os.path.isabs(path):
            raise invalid(where, f"not an absolute path: {path[:200]!r}")

    def _check_prompt(self, prompt: Iterable[Any]) -> None:
        agent = self.agent
        accepted = {"text", "resource_link"}
        accepted |= {"image"} if agent.image_prompts else set()
        accepted |= {"audio"} if agent.audio_prompts else set()
        accepted |= {"resource"} if agent.embedded_context else set()
        for index, block in enumerate(prompt):
            kind = getattr(block, "TAG", None)
            if kind not in accepted:
                kind = encode(block).get("type")
                raise invalid(f"$.prompt[{index}]", f"this agent does not accept {kind!r} content")


@cache
def side_class(lane: Lane) -> type[AgentSide]:
    """`AgentSide` with the lane's `AgentBase` under it; its `initialize` takes raw JSON, as the
    router's does (a repeated request is read as leniently as the first)."""
    base = lane.rpc.AgentBase
    routes = {**base.ROUTES, ("initialize", "request"): Route("initialize", "request", None, None)}
    made: type[AgentSide] = type(f"AgentSide_{lane.name}", (AgentSide, base), {"ROUTES": routes})
    return made


async def serve_agent(
    agent: Agent, transport: Transport | None = None, **options: Unpack[ConnectionOptions]
) -> None:
    """Serve `agent` on `transport` (default: this process's stdin and stdout) until the
    client closes it; both protocol versions, chosen at `initialize`. Its session store, if
    it has one, is opened first (StoreOpenError before anything is read; connections served
    at once share it) and flushed at the end: everything written is durable when this returns
    (`agent.close()` closes it; `run_agent` does)."""
    from .router import AgentRouter

    await agent.open()
    router = AgentRouter(agent)
    if transport is None:
        connection = await connect_stdio(router, **options)
    else:
        connection = Connection(router, transport, **options)
        connection.start()
    try:
        await connection.wait_closed()
    finally:
        await router.disconnected()
        await connection.close()
        await agent.flush()


async def _serve_then_close(agent: Agent, options: ConnectionOptions) -> None:
    try:
        await serve_agent(agent, **options)
    finally:
        await agent.close()


def run_agent(agent: Agent, **options: Unpack[ConnectionOptions]) -> None:
    """Run `agent` on stdin/stdout until the client closes them, then return.

    Logs go to stderr (warnings and up, unless logging was configured already): nothing but
    ACP may be written to stdout. Ctrl-C exits with status 130, without a traceback; a
    session store that cannot be used (corrupted, read-only, a newer schema, no server) is one
    line on stderr and exit status 2, before anything is served.
    """
    if not logging.getLogger().handlers:
        logging.basicConfig(
            stream=sys.stderr, level=logging.WARNING, format=f"[{agent.name}] %(message)s"
        )
    try:
        asyncio.run(_serve_then_close(agent, options))
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except StoreOpenError as exc:
        print(f"{agent.name}: the session store cannot be used: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
