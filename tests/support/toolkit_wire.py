"""A raw client for tests of the agent toolkit: it drives an `acp_v2.Agent` over in-memory
pipes with exact JSON, keeps every message the agent writes, and answers the agent's requests
as a test says."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import acp_kit as kit

from tests.support.rpc_wire import INITIALIZE_PARAMS, TIMEOUT, RawPeer, notification, request

Script = Callable[[kit.Turn], Awaitable[Any]]


class LineSource(Protocol):
    """What the agent's output is read from: a RawPeer, or a child's stdout stream."""

    async def readline(self) -> bytes: ...


class ScriptAgent(kit.Agent):
    """An Agent whose `prompt` runs the test's script."""

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
    notification the agent writes is kept in `seen`, in order (one task reads them all)."""

    def __init__(self, agent: kit.Agent) -> None:
        self.agent = agent
        self.peer = RawPeer(agent)
        self._open(self.peer, self.peer.send_bytes)

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

    async def call(self, method: str, params: Any = None) -> Any:
        rid = next(self._ids)
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = waiter
        self.send_message(request(rid, method, params))
        return await asyncio.wait_for(waiter, TIMEOUT)

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

    async def new_session(self, cwd: str = "/work", **params: Any) -> str:
        answer = await self.call("session/new", {"cwd": cwd, **params})
        sid: str = answer["result"]["sessionId"]
        return sid

    async def prompt(self, sid: str, text: str = "hi") -> Any:
        params = {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
        return await self.call("session/prompt", params)

    async def initialize(self) -> Any:
        return await self.call("initialize", INITIALIZE_PARAMS)

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

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self._stdin = process.stdin
        self._open(process.stdout, process.stdin.write)

    @classmethod
    async def spawn(cls, *command: str) -> ProcessWire:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        return cls(process)

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


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_text(value: str) -> dict[str, Any]:
    return {"type": "content", "content": text(value)}


def state(name: str, **extra: Any) -> dict[str, Any]:
    return {"sessionUpdate": "state_update", "state": name, **extra}


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
