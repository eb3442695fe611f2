"""A session as an agent built on `Agent` keeps it: its setup, its running turn, the history a
replay sends (bounded), the state it last reported, and the connection it is served on.

History is kept lane-neutral — messages, tool calls and plans as objects that render
themselves in the dialect of whichever connection replays them — so a session opened over one
protocol version can be replayed over another. It is bounded: the last `history_turns` turns,
at most `history_bytes` (see `Agent`); older entries are dropped whole, oldest first. An agent
with a session store keeps none of it in memory: each entry is written to the store as it
changes and read back for a replay (`session.stored`, see `stored_history.py`).

The client's files and terminals (`read_text_file`, `write_text_file`, `create_terminal`)
exist in protocol versions that have them (`features.client_files`, `client_terminals`): on the
others they raise NotSupported, and MissingCapability when the client did not advertise them.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol

from ..runtime._runtime import UNSET
from ..vocab import McpServer
from .book import now_rfc3339
from .lane import Lane, NotSupported
from .lifecycle import Foreground

if TYPE_CHECKING:
    from .agent import Agent, AgentSide
    from .dialect import Dialect
    from .stored_history import StoredHistory
    from .subagents import Subagent
    from .tool_call import ToolCallHandle
    from .turn import CustomStopReason, Message, Turn, TurnStopReason

__all__ = ["AgentSession", "MissingCapability", "TerminalHandle"]
State = tuple[str, str | None, Any]  # a state_update's state, stop reason and error


class Replayable(Protocol):
    """A history entry: it renders itself in a connection's dialect when replayed."""

    def replay(self, dialect: Dialect) -> list[Any]: ...


class MissingCapability(RuntimeError):
    """The client did not advertise the capability a method needs (in `initialize`)."""


class AgentSession:
    """A session as the agent keeps it; see the module docstring."""

    def __init__(
        self,
        agent: Agent,
        side: AgentSide,
        session_id: str,
        cwd: str,
        additional_directories: list[str],
        mcp_servers: list[McpServer],
    ) -> None:
        self.agent = agent
        self.id = session_id
        self.side: AgentSide | None = side
        """The connection (its lane's handler) the session is served on; None while detached."""
        self.principal = side.principal
        """Who opened it (remote transports: only they may reach it)."""
        self.cwd = cwd
        self.additional_directories = additional_directories
        self.mcp_servers = mcp_servers
        self.title: str | None = None
        self.request: Any = None
        """The `session/new` (or the last `session/load` / `session/resume`) params, in the
        lane's class: vendor `_meta` keys (`request.meta`) and unknown keys (`request.extra`)
        included."""
        self.created_at = self.updated_at = now_rfc3339()
        self.active = True
        """Whether prompts are accepted (v1: false after `session/close`, until a load or a
        resume)."""
        self.closing = False
        """`session/close` began (v2): prompts are refused, the turn is being cancelled."""
        self.turn: Turn | None = None
        """The turn running now, if any."""
        self.turns = 0
        """Turns started so far."""
        self.answering: asyncio.Future[None] | None = None
        """(v1) Done once the latest prompt's answer is written (see `V1Dialect.serve_prompt`)."""
        self.foreground: Foreground[TurnStopReason | CustomStopReason | None] = Foreground()
        self.remembered_permissions: dict[str, Any] = {}
        self.tool_calls: dict[str, ToolCallHandle] = {}
        """The tool calls of the history kept, by id (for `tool_call/cancel`)."""
        self.children: dict[str, Subagent] = {}
        """The child sessions its turns started (`turn.subagent`), by id."""
        self.state: State = ("idle", None, None)
        """The foreground state last reported, its stop reason and error."""
        self._history: OrderedDict[tuple[str, str], tuple[Replayable, int, int]] = OrderedDict()
        self._bytes = 0
        self._counters: dict[str, int] = {}
        self.stored: StoredHistory | None = None if agent.stored is None else (
            agent.stored.history(session_id)
        )  # fmt: skip
        """Where the history lives when the agent has a session store (None: in `_history`)."""
        self.touched = time.monotonic()
        """When it was last used (for eviction: see `Agent.evict`)."""

    # -- where it is served ------------------------------------------------------------------
    @property
    def dialect(self) -> Dialect:
        if self.side is None:
            raise RuntimeError(f"session {self.id} is not served on a connection now")
        return self.side.dialect

    @property
    def client(self) -> Any:
        """The client's stub (the lane's `ClientStub`) on the connection serving the session."""
        if self.side is None:
            raise RuntimeError(f"session {self.id} is not served on a connection now")
        return self.side.client

    def touch(self) -> None:
        """It is in use now (an idle session is evicted after `Agent.idle_timeout`)."""
        self.touched = time.monotonic()

    def attach(self, side: AgentSide) -> None:
        """Serve the session on `side`'s connection from now on (a load or a resume)."""
        self.side = side

    # -- ids, history, sending ---------------------------------------------------------------
    def next_id(self, prefix: str, *, width: int = 0) -> str:
        """`{prefix}_{n}`, n counting from 1 per prefix in this session."""
        n = self._counters.get(prefix, 0) + 1
        self._counters[prefix] = n
        if self.stored is not None:  # with the entry it names: a restart never reuses it
            self.stored.save(self)
        return f"{prefix}_{n:0{width}d}"

    def record(self, key: tuple[str, str], entry: Replayable, size: int) -> None:
        """Keep an entry for replay, in order of first appearance (a later record of the same
        key keeps the first); `size` is about how many bytes it holds."""
        if self.stored is not None:
            self.stored.record(entry, self.dialect.lane)
            return
        if key in self._history:
            return
        self._history[key] = (entry, self.turns, size)
        self._bytes += size
        self._trim()

    def add_block(self, message: Message, block: Any) -> None:
        """A block was streamed into a message of the history."""
        if self.stored is not None:
            self.stored.add_block(message, block)
            return
        message.blocks.append(block)
        self.grew(message, len(getattr(block, "text", "")) + 32)

    def changed(self, entry: Replayable, on: Lane, *, content: bool = False) -> None:
        """An entry's state changed in place, on a turn speaking `on` (a tool call's fields, and
        its content with `content`; a plan's entries): a store is told, memory has it already."""
        if self.stored is not None:
            self.stored.changed(entry, on, content=content)

    def add_content(self, tool: ToolCallHandle, item: Any) -> None:
        """An item was streamed into a tool call's content."""
        tool.content.append(item)
        if self.stored is not None:
            self.stored.add_content(tool, item)

    async def settle(self, state: State) -> None:
        """The turn ends in `state`: with a store, that and everything before it is written,
        and durable before the client is told when the store says so (another worker may
        serve the next request: `SessionStore.durable_turn_ends`)."""
        self.state = state
        if self.stored is not None:
            self.stored.save(self)
            if self.stored.store.durable_turn_ends:
                await self.flush()
            else:
                self.stored.spill()

    async def flush(self) -> None:
        """Return once everything reported so far is durable (at once without a store)."""
        if self.stored is not None:
            self.stored.spill()
        if self.agent.stored is not None:
            await self.agent.stored.flush()

    def grew(self, entry: Replayable, size: int) -> None:
        """An entry kept for replay grew by about `size` bytes (a message streamed on)."""
        self._bytes += size
        if self._bytes > self.agent.history_bytes:
            self._trim()

    def _trim(self) -> None:
        """Drop the oldest turns' entries past the bounds (never the running turn's)."""
        agent = self.agent
        oldest_kept = self.turns - agent.history_turns + 1
        while self._history:
            key, (entry, turn, size) = next(iter(self._history.items()))
            if turn >= oldest_kept and (self._bytes <= agent.history_bytes or turn >= self.turns):
                return
            del self._history[key]
            self._bytes -= size
            if key[0] == "tool_call":
                self.tool_calls.pop(key[1], None)

    async def send(self, update: Any) -> None:
        """Send a `session/update` for this session (nothing while it is not served)."""
        side = self.side
        if side is None or not self.active:
            return
        await side.client.session_update(side.dialect.note(self.id, update))

    async def replay(self) -> None:
        """Send the history kept: each message whole, each tool call and plan as it is."""
        dialect = self.dialect
        if self.stored is not None:
            async for stored in self.stored.entries(dialect.lane, self.tool_calls):
                for update in stored.replay(dialect):
                    await self.send(update)
            return
        for entry, _, _ in list(self._history.values()):
            for update in entry.replay(dialect):
                await self.send(update)
            after = getattr(entry, "replay_after", None)  # a child session's own history
            if after is not None:
                await after(dialect)

    async def set_title(self, title: str | None) -> None:
        """Name the session (a `session_info_update`; `session/list` shows it)."""
        self.title = title
        self.updated_at = now_rfc3339()
        if self.stored is not None:
            self.stored.store.update(self.id, title=title)
        m = self.dialect.lane.models
        await self.send(m.SessionUpdateSessionInfoUpdate(title=title, updated_at=self.updated_at))

    def info(self, lane: Lane) -> Any:
        """The session as `session/list` reports it, in `lane`'s `SessionInfo`."""
        return lane.models.SessionInfo(
            session_id=self.id,
            cwd=self.cwd,
            additional_directories=list(self.additional_directories) or UNSET,
            title=UNSET if self.title is None else self.title,
            updated_at=self.updated_at,
        )

    def forget_turn(self, turn: Turn) -> None:
        """The turn has ended (its final updates are sent)."""
        if self.turn is turn:
            self.turn = None
        self.updated_at = now_rfc3339()
        if self.stored is not None:  # its tool calls are final, and in the store
            self.stored.save(self)
            for tool in turn.tool_calls:
                if self.tool_calls.get(tool.tool_call_id) is tool:
                    del self.tool_calls[tool.tool_call_id]

    # -- the client's files and terminals ------------------------------------------------------
    async def read_text_file(
        self, path: str, *, line: int | None = None, limit: int | None = None
    ) -> str:
        """A text file as the client has it (unsaved edits included): from `line` (1-based),
        at most `limit` lines."""
        m = self._client_method("fs.readTextFile", "client_files")
        request = m.ReadTextFileRequest(
            session_id=self.id,
            path=path,
            line=UNSET if line is None else line,
            limit=UNSET if limit is None else limit,
        )
        answer = await self.client.fs_read_text_file(request)
        content: str = answer.content
        return content

    async def write_text_file(self, path: str, content: str) -> None:
        """Write a text file through the client."""
        m = self._client_method("fs.writeTextFile", "client_files")
        request = m.WriteTextFileRequest(session_id=self.id, path=path, content=content)
        await self.client.fs_write_text_file(request)

    async def create_terminal(
        self,
        command: str,
        *args: str,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        output_byte_limit: int | None = None,
    ) -> TerminalHandle:
        """Run `command` in a client terminal."""
        m = self._client_method("terminal", "client_terminals")
        request = m.CreateTerminalRequest(
            session_id=self.id,
            command=command,
            args=list(args),
            env=[m.EnvVariable(name=k, value=v) for k, v in (env or {}).items()],
            cwd=UNSET if cwd is None else cwd,
            output_byte_limit=UNSET if output_byte_limit is None else output_byte_limit,
        )
        answer = await self.client.terminal_create(request)
        return TerminalHandle(self, str(answer.terminal_id))

    def _client_method(self, capability: str, feature: str) -> Any:
        side = self.side
        if side is None:
            raise RuntimeError(f"session {self.id} is not served on a connection now")
        lane = side.dialect.lane
        if not getattr(lane.features, feature):
            raise NotSupported(f"the client's {capability}", lane)
        if capability not in side.client_offers:
            raise MissingCapability(f"the client does not advertise {capability}")
        return lane.models


class TerminalHandle:
    """A command running in a client's terminal (`AgentSession.create_terminal`): read its
    output, wait for it, kill it; release it when done (`async with` does)."""

    def __init__(self, session: AgentSession, terminal_id: str) -> None:
        self.session = session
        self.id = terminal_id

    def _request(self, name: str) -> Any:
        return getattr(self.session.dialect.lane.models, name)(
            session_id=self.session.id, terminal_id=self.id
        )

    def content(self) -> Any:
        """The terminal as tool call content: the client shows it live."""
        return self.session.dialect.lane.models.ToolCallContentTerminal(terminal_id=self.id)

    async def output(self) -> Any:
        """The output so far (`output`, `truncated`, and `exit_status` once it exited)."""
        return await self.session.client.terminal_output(self._request("TerminalOutputRequest"))

    async def wait_for_exit(self) -> Any:
        """Wait for the command to exit: its `exit_code`, or the `signal` that ended it."""
        request = self._request("WaitForTerminalExitRequest")
        return await self.session.client.terminal_wait_for_exit(request)

    async def kill(self) -> None:
        """End the command; its output stays readable until `release()`."""
        await self.session.client.terminal_kill(self._request("KillTerminalRequest"))

    async def release(self) -> None:
        """Kill the command if it still runs, and free the terminal."""
        await self.session.client.terminal_release(self._request("ReleaseTerminalRequest"))

    async def __aenter__(self) -> TerminalHandle:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.release()


DEFAULT_HISTORY_TURNS: Final = 100
"""Turns of each session kept for a replay, by default."""
DEFAULT_HISTORY_BYTES: Final = 4 * 1024 * 1024
"""About how many bytes of each session's history are kept for a replay, by default."""
