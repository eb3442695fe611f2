"""A raw client for tests of the agent toolkit, on either protocol version: it drives an
`acp_kit.Agent` (behind the version router, as `run_agent` serves it) over in-memory pipes with
exact JSON, keeps every message the agent writes, and answers the agent's requests as a test
says. `ProcessWire` does the same with an agent program over its real stdin and stdout.

The `lane` fixture (re-exported by tests/e2e/conftest.py) runs a test once per protocol
version: it is a `WireLane`, which knows that version's `initialize` and session setup."""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import acp_kit as kit
import pytest
from acp_kit.toolkit.router import AgentRouter

from tests.support.rpc_wire import TIMEOUT, RawPeer, notification, request

Script = Callable[[kit.Turn], Awaitable[Any]]


class LineSource(Protocol):
    """What the agent's output is read from: a RawPeer, or a child's stdout stream."""

    async def readline(self) -> bytes: ...


@dataclass(frozen=True)
class WireLane:
    """One protocol version as a raw client speaks it."""

    name: str
    version: int
    initialize: dict[str, Any]
    session_defaults: dict[str, Any] = field(default_factory=dict)

    @property
    def v1(self) -> bool:
        return self.name == "v1"

    @property
    def acp(self) -> Any:
        """The lane's subpackage (`acp_kit.v1`, `acp_kit.v2`): its models."""
        return importlib.import_module(f"acp_kit.{self.name}")

    def pick(self, *, v1: Any, v2: Any) -> Any:
        """The value of this lane."""
        return v1 if self.v1 else v2


V1 = WireLane(
    "v1",
    1,
    {
        "protocolVersion": 1,
        "clientCapabilities": {},
        "clientInfo": {"name": "test-client", "version": "1.0"},
    },
    {"mcpServers": []},  # required in v1's NewSessionRequest
)
V2 = WireLane("v2", 2, {"protocolVersion": 2, "info": {"name": "test-client", "version": "1.0"}})
LANES = {"v1": V1, "v2": V2}


@pytest.fixture(params=["v1", "v2"])
def lane(request: pytest.FixtureRequest) -> WireLane:
    """Each protocol version the toolkit serves, in turn."""
    return LANES[request.param]


class ScriptAgent(kit.Agent):
    """An Agent whose `prompt` runs the test's script (default: say "ok")."""

    name = "script-agent"
    version = "1.0"

    def __init__(self, script: Script | None = None) -> None:
        super().__init__()
        self.script = script

    async def prompt(self, turn: kit.Turn) -> Any:
        if self.script is None:
            await turn.say("ok")
            return "end_turn"
        return await self.script(turn)


class Wire:
    """The client end: `call` sends a request and returns its answer; every request and
    notification the agent writes is kept in `seen`, every message in `wire`, in order (one
    task reads them all). `open` initializes on the lane given and forgets that exchange, so
    a test's own first request has id 1."""

    def __init__(self, agent: kit.Agent, lane: WireLane = V2) -> None:
        self.agent = agent
        self.lane = lane
        self.router = AgentRouter(agent)
        self.peer = RawPeer(self.router)
        self._open(self.peer, self.peer.send_bytes)

    @classmethod
    async def open(cls, agent: kit.Agent, lane: WireLane = V2) -> Wire:
        wire = cls(agent, lane)
        answer = await wire.initialize()
        assert answer["result"]["protocolVersion"] == lane.version, answer
        wire.take()
        wire.wire.clear()
        return wire

    def _open(self, reader: LineSource, write: Callable[[bytes], object]) -> None:
        self._source = reader
        self.send_bytes = write
        self.seen: list[Any] = []
        self.wire: list[Any] = []  # everything the agent wrote, answers included, in order
        self._cursor = 0  # the next message next_message() returns
        self._ids = iter(range(1, 1_000_000))
        self._waiting: dict[Any, asyncio.Future[Any]] = {}
        self._answers: dict[Any, Any] = {}  # answers nobody waited for
        self._arrived = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read())

    @property
    def side(self) -> Any:
        """The agent's handler of this connection (the lane's `AgentSide`), once initialized."""
        return self.router.side

    def session(self, sid: str) -> kit.AgentSession:
        """The agent's session of this id."""
        session = self.agent.sessions.get(sid)
        assert session is not None, sid
        return session

    async def _read(self) -> None:
        while True:
            line = await self._source.readline()
            if not line:
                self._arrived.set()
                return
            message = json.loads(line)
            self.wire.append(message)
            if "method" in message:
                self.seen.append(message)
            else:
                waiter = self._waiting.pop(message.get("id"), None)
                if waiter is not None:
                    waiter.set_result(message)
                else:
                    self._answers[message.get("id")] = message
            self._arrived.set()

    async def _wait(self) -> None:
        self._arrived.clear()
        await asyncio.wait_for(self._arrived.wait(), TIMEOUT)

    async def call(self, method: str, params: Any = None, *, rid: Any = None) -> Any:
        rid = next(self._ids) if rid is None else rid
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = waiter
        self.send_message(request(rid, method, params))
        return await asyncio.wait_for(waiter, TIMEOUT)

    def call_later(self, method: str, params: Any = None) -> asyncio.Future[Any]:
        """Send a request; its answer is the future's result."""
        return asyncio.ensure_future(self.call(method, params))

    async def answer_to(self, rid: Any) -> Any:
        """The answer to a request sent with `send_bytes` (waiting for it)."""
        while rid not in self._answers:
            await self._wait()
        return self._answers.pop(rid)

    def send_message(self, message: Any) -> None:
        self.send_bytes(json.dumps(message).encode() + b"\n")

    def send(self, method: str, params: Any = None) -> None:
        self.send_message(notification(method, params))

    def reply(self, rid: Any, result: Any) -> None:
        self.send_message({"jsonrpc": "2.0", "id": rid, "result": result})

    async def next_message(self) -> Any:
        """The next request or notification from the agent not yet returned by this."""
        while len(self.seen) <= self._cursor:
            await self._wait()
        self._cursor += 1
        return self.seen[self._cursor - 1]

    async def until(self, test: Callable[[Any], bool]) -> Any:
        """The first request or notification kept that passes `test` (waiting for it)."""
        checked = 0
        while True:
            for message in self.seen[checked:]:
                if test(message):
                    return message
            checked = len(self.seen)
            await self._wait()

    async def idle(self) -> dict[str, Any]:
        """The first idle state_update kept (waiting for it)."""
        message = await self.until(is_idle)
        update: dict[str, Any] = message["params"]["update"]
        return update

    async def initialize(self, params: Any = None) -> Any:
        return await self.call("initialize", self.lane.initialize if params is None else params,
                               rid=0)  # fmt: skip

    async def new_session(self, cwd: str = "/work", **params: Any) -> str:
        answer = await self.call(
            "session/new", {**self.lane.session_defaults, "cwd": cwd, **params}
        )
        sid: str = answer["result"]["sessionId"]
        return sid

    async def prompt(self, sid: str, text: str = "hi") -> Any:
        """The answer to a prompt: at once on v2, when the turn ended on v1."""
        params = {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
        return await self.call("session/prompt", params)

    def prompt_later(self, sid: str, text: str = "hi") -> asyncio.Future[Any]:
        """Send a prompt; its answer is the future's result."""
        return asyncio.ensure_future(self.prompt(sid, text))

    async def ended(self, pending: asyncio.Future[Any]) -> Any:
        """The answer of a prompt once its turn ended: v1's answer; v2's once an idle
        state_update came after it."""
        answer = await pending
        if not self.lane.v1:
            start = self.wire.index(answer)
            while not any(is_idle(m) for m in self.wire[start:]):
                await self._wait()
        return answer

    async def turn(self, sid: str, text: str = "hi") -> Any:
        """Prompt and wait for the turn's end; the prompt's answer."""
        return await self.ended(self.prompt_later(sid, text))

    def updates(self, sid: str | None = None) -> list[dict[str, Any]]:
        """The session/update bodies kept (of one session, when given)."""
        return [
            m["params"]["update"]
            for m in self.seen
            if m.get("method") == "session/update"
            and (sid is None or m["params"]["sessionId"] == sid)
        ]

    def take(self) -> list[Any]:
        """The messages kept so far; forgets them."""
        seen, self.seen, self._cursor = self.seen, [], 0
        return seen

    async def quiet(self) -> list[Any]:
        """What the agent writes from now on within a short while (for "nothing more")."""
        before = len(self.seen)
        answers = dict(self._answers)
        await asyncio.sleep(0.1)
        late = [a for rid, a in self._answers.items() if rid not in answers]
        return self.seen[before:] + late


class ProcessWire(Wire):
    """A Wire to an agent program over its real stdin/stdout; `stderr` is what it logged."""

    def __init__(self, process: asyncio.subprocess.Process, lane: WireLane = V2) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.lane = lane
        self._stdin = process.stdin
        self._open(process.stdout, process.stdin.write)

    @classmethod
    async def spawn(cls, *command: str, lane: WireLane = V2) -> ProcessWire:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        return cls(process, lane)

    async def finish(self) -> tuple[int, str]:
        """Close the agent's stdin; its exit status and everything it wrote on stderr."""
        self._stdin.close()
        assert self.process.stderr is not None
        stderr = await asyncio.wait_for(self.process.stderr.read(), TIMEOUT)
        code = await asyncio.wait_for(self.process.wait(), TIMEOUT)
        await self._reader
        return code, stderr.decode()


def is_idle(message: Any) -> bool:
    update = message.get("params", {}).get("update", {}) if isinstance(message, dict) else {}
    return update.get("sessionUpdate") == "state_update" and update.get("state") == "idle"


def is_request(method: str) -> Callable[[Any], bool]:
    return lambda message: message.get("method") == method and "id" in message


def is_update(kind: str) -> Callable[[Any], bool]:
    def test(message: Any) -> bool:
        update = message.get("params", {}).get("update", {})
        return message.get("method") == "session/update" and update.get("sessionUpdate") == kind

    return test


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_text(value: str) -> dict[str, Any]:
    return {"type": "content", "content": text(value)}


def state(name: str, **extra: Any) -> dict[str, Any]:
    return {"sessionUpdate": "state_update", "state": name, **extra}


def chunk(kind: str, message_id: str, value: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "messageId": message_id, "content": text(value)}


def selected(option_id: str) -> dict[str, Any]:
    return {"outcome": {"outcome": "selected", "optionId": option_id}}


def invalid(path: str, reason: str) -> dict[str, Any]:
    return {"code": -32602, "message": "Invalid params", "data": {"path": path, "reason": reason}}


def not_found(session_id: str) -> dict[str, Any]:
    return {"code": -32002, "message": "Resource not found", "data": {"sessionId": session_id}}


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
