"""`Agent(store=...)` in one process, on both protocol versions and every store: a replay from
the store is exactly a replay from memory, and exactly the same after a new agent opened the
same store (a restart); ids go on where they stopped; session/list reads the store (cwd,
pages, titles, updatedAt, principals); close keeps a session stored and delete removes it;
memory holds no history; the argument's forms."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import acp_kit as kit
import pytest
from acp_kit.toolkit.store_memory import MemoryStore
from acp_kit.toolkit.store_postgres import PostgresStore
from acp_kit.toolkit.store_sqlite import SQLiteStore

from tests.support.rpc_wire import run
from tests.support.store_backends import postgres_fixture  # noqa: F401 (a fixture)
from tests.support.toolkit_wire import V1, V2, Wire, WireLane, invalid, not_found, selected

CWD = "/work"


class Rich(kit.Agent):
    """A turn with every kind of history entry: a plan changed, a message streamed, a thought,
    a tool call streamed into and completed behind a permission request, usage, a title."""

    name = "rich-agent"
    version = "1.0"

    async def prompt(self, turn: kit.Turn) -> kit.TurnStopReason:
        plan = await turn.plan("look", "answer")
        await turn.think("hmm")
        await turn.say("Hel")
        await turn.say("lo ")
        await turn.say(turn.text)
        await plan.complete(0)
        tool = await turn.tool_call("Read", kind="read", raw_input={"path": "/work/a"})
        if await turn.ask_permission(tool):
            await tool.stream("part 1")
            await tool.complete("all of it")
        await turn.usage(10, 100)
        await turn.session.set_title(f"about {turn.text}")
        return "end_turn"


def replay_call(lane: WireLane, sid: str) -> tuple[str, dict[str, Any]]:
    if lane.v1:
        return "session/load", {"sessionId": sid, "cwd": CWD, "mcpServers": []}
    return "session/resume", {"sessionId": sid, "cwd": CWD, "replayFrom": {"type": "start"}}


async def allowing(wire: Wire, pending: asyncio.Future[Any]) -> Any:
    """The turn's answer, its permission request allowed."""
    asked = await wire.until(lambda m: m.get("method") == "session/request_permission")
    wire.reply(asked["id"], selected("allow-once"))
    return await wire.ended(pending)


async def new_turn(wire: Wire, text: str = "x") -> str:
    sid = await wire.new_session(CWD)
    await allowing(wire, wire.prompt_later(sid, text))
    return sid


async def replay(wire: Wire, sid: str) -> list[Any]:
    wire.take()
    answer = await wire.call(*replay_call(wire.lane, sid))
    assert "result" in answer, answer
    return wire.updates(sid)


async def session_then_replay(agent: kit.Agent, lane: WireLane) -> tuple[str, list[Any]]:
    await agent.open()
    wire = await Wire.open(agent, lane)
    sid = await new_turn(wire)
    return sid, await replay(wire, sid)


def stores(tmp_path: Path, name: str, dsn: str | None) -> Any:
    if name == "memory":
        made = MemoryStore()
        return lambda: made  # one store: "restarting" keeps it (it lives in this process)
    if name == "sqlite":
        return lambda: tmp_path / "sessions.db"
    assert dsn is not None
    schema = f"t_{tmp_path.name[-12:].lower().replace('-', '_')}"
    return lambda: PostgresStore(dsn, schema="s" + "".join(c for c in schema if c.isalnum()))


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store_of(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    dsn = request.getfixturevalue("postgres_dsn") if request.param == "postgres" else None
    return stores(tmp_path, request.param, dsn)


@pytest.mark.parametrize("lane", [V1, V2], ids=["v1", "v2"])
def test_a_stored_replay_is_the_memory_replay_before_and_after_a_restart(
    lane: WireLane, store_of: Any
) -> None:
    async def scenario() -> tuple[list[Any], list[Any], list[Any]]:
        _, in_memory = await session_then_replay(Rich(), lane)
        first = Rich(store=store_of())
        sid, live = await session_then_replay(first, lane)
        if not isinstance(first.store, MemoryStore):  # which a restart would empty
            await first.close()
        again = Rich(store=store_of())
        await again.open()
        after = await replay(await Wire.open(again, lane), sid)
        await again.close()
        return in_memory, live, after

    in_memory, live, after = run(scenario())
    assert live == in_memory and after == in_memory
    assert [u["sessionUpdate"] for u in after] == lane.pick(
        v1=["user_message_chunk", "plan", "agent_thought_chunk", "agent_message_chunk",
            "tool_call"],
        v2=["user_message", "plan_update", "agent_thought", "agent_message",
            "tool_call_update", "state_update"],
    )  # fmt: skip


def test_a_v2_session_loads_on_v1_and_resumes_on_v2_after_a_restart(tmp_path: Path) -> None:
    """Item 4: the same stored session through the router on both versions, exact JSON."""
    db = tmp_path / "sessions.db"

    async def scenario() -> tuple[list[Any], list[Any]]:
        first = Rich(store=db)
        await first.open()
        sid = await new_turn(await Wire.open(first, V2), "hi")
        await first.close()
        again = Rich(store=db)
        await again.open()
        v1 = await replay(await Wire.open(again, V1), sid)
        v2 = await replay(await Wire.open(again, V2), sid)
        await again.close()
        return v1, v2

    v1, v2 = run(scenario())
    user = {"type": "text", "text": "hi"}
    entries = [
        {"content": "look", "priority": "medium", "status": "completed"},
        {"content": "answer", "priority": "medium", "status": "pending"},
    ]
    done = [{"type": "content", "content": {"type": "text", "text": "all of it"}}]
    tool = {"toolCallId": "call_001", "title": "Read", "kind": "read", "status": "completed",
            "content": done, "rawInput": {"path": "/work/a"}}  # fmt: skip
    assert v1 == [
        {"sessionUpdate": "user_message_chunk", "messageId": "msg_user_1", "content": user},
        {"sessionUpdate": "plan", "entries": entries},
        {"sessionUpdate": "agent_thought_chunk", "messageId": "msg_thought_1",
         "content": {"type": "text", "text": "hmm"}},
        {"sessionUpdate": "agent_message_chunk", "messageId": "msg_agent_1",
         "content": {"type": "text", "text": "Hello hi"}},
        {"sessionUpdate": "tool_call", **tool},
    ]  # fmt: skip
    assert v2 == [
        {"sessionUpdate": "user_message", "messageId": "msg_user_1", "content": [user]},
        {"sessionUpdate": "plan_update",
         "plan": {"type": "items", "planId": "plan_1", "entries": entries}},
        {"sessionUpdate": "agent_thought", "messageId": "msg_thought_1",
         "content": [{"type": "text", "text": "hmm"}]},
        {"sessionUpdate": "agent_message", "messageId": "msg_agent_1",
         "content": [{"type": "text", "text": "Hello hi"}]},
        {"sessionUpdate": "tool_call_update", **tool},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
    ]  # fmt: skip


@pytest.mark.parametrize("lane", [V1, V2], ids=["v1", "v2"])
def test_ids_go_on_after_a_restart(lane: WireLane, tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"

    async def scenario() -> list[Any]:
        first = Rich(store=db)
        await first.open()
        sid = await new_turn(await Wire.open(first, lane))
        await first.close()
        again = Rich(store=db)
        await again.open()
        wire = await Wire.open(again, lane)
        await replay(wire, sid)
        wire.take()
        await allowing(wire, wire.prompt_later(sid, "y"))
        updates = wire.updates(sid)
        await again.close()
        return updates

    ids = {u.get("messageId") or u.get("toolCallId") or u.get("plan", {}).get("planId")
           for u in run(scenario())} - {None}  # fmt: skip
    expected = {"msg_agent_2", "msg_thought_2", "call_002"}
    expected |= {"msg_user_2", "plan_2"} if not lane.v1 else set()
    assert ids == expected


def test_session_list_reads_the_store_across_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"

    class Paged(Rich):
        sessions_per_page = 2

    async def scenario() -> tuple[list[str], list[Any], Any, Any, Any, Any]:
        first = Paged(store=db)
        await first.open()
        wire = await Wire.open(first, V2)
        made = [await wire.new_session(cwd) for cwd in ("/a", "/b", "/a/", "/a")]
        await allowing(wire, wire.prompt_later(made[0], "one"))
        await first.close()
        again = Paged(store=db)
        await again.open()
        wire = await Wire.open(again, V1)
        page1 = (await wire.call("session/list", {"cwd": "/a"}))["result"]
        cursor = page1["nextCursor"]
        page2 = (await wire.call("session/list", {"cwd": "/a", "cursor": cursor}))["result"]
        wrong = await wire.call("session/list", {"cursor": cursor})  # other filters
        alice = Wire(again, V2)  # another principal sees none of them
        alice.router.principal = "alice"
        await alice.initialize()
        theirs = (await alice.call("session/list", {}))["result"]
        await again.close()
        return made, page1["sessions"], page2, wrong, theirs, first

    made, page1, page2, wrong, theirs, _ = run(scenario())
    assert [s["sessionId"] for s in page1] == [made[3], made[2]]  # newest first
    assert set(page1[0]) == {"sessionId", "cwd", "updatedAt"} and page1[1]["cwd"] == "/a/"
    titled = page2["sessions"]
    assert [s["sessionId"] for s in titled] == [made[0]] and "nextCursor" not in page2
    assert titled[0]["title"] == "about one" and titled[0]["cwd"] == "/a"
    assert titled[0]["updatedAt"].endswith("Z") and len(titled[0]["updatedAt"]) == 24
    assert wrong["error"]["code"] == -32602 and wrong["error"]["data"]["path"] == "$.cursor"
    assert theirs == {"sessions": []}


@pytest.mark.parametrize("lane", [V1, V2], ids=["v1", "v2"])
def test_close_keeps_a_stored_session_and_delete_removes_it(lane: WireLane, tmp_path: Path) -> None:
    async def scenario() -> list[Any]:
        agent = Rich(store=tmp_path / "sessions.db")
        await agent.open()
        wire = await Wire.open(agent, lane)
        sid = await new_turn(wire)
        seen = [await wire.call("session/close", {"sessionId": sid})]
        seen.append(await wire.prompt(sid))
        seen.append(sid in agent.sessions)
        seen.append(
            [s["sessionId"] for s in (await wire.call("session/list", {}))["result"]["sessions"]]
        )
        seen.append(len(await replay(wire, sid)))
        seen.append(await wire.call("session/delete", {"sessionId": sid}))
        seen.append((await wire.call("session/list", {}))["result"])
        seen.append(await wire.call(*replay_call(lane, sid)))
        seen.append(await agent.store.get(sid) if agent.store else None)  # type: ignore[func-returns-value]
        await agent.close()
        return [sid, *seen]

    sid, closed, prompted, in_memory, listed, replayed, deleted, after, load, record = run(
        scenario()
    )
    assert closed["result"] == {} and prompted["error"] == not_found(sid)
    assert (in_memory, listed, replayed) == (False, [sid], lane.pick(v1=5, v2=6))
    assert deleted["result"] == {} and after == {"sessions": []}
    assert load["error"] == not_found(sid) and record is None


def test_memory_holds_no_history_and_lets_a_disconnected_session_go(tmp_path: Path) -> None:
    async def scenario() -> tuple[int, int, bool]:
        agent = Rich(store=tmp_path / "sessions.db")
        await agent.open()
        wire = await Wire.open(agent, V2)
        sid = await new_turn(wire)
        session = wire.session(sid)
        await session.foreground.stop()  # the turn's close step has returned
        held = len(session._history), len(session.tool_calls)
        await wire.router.disconnected()
        gone = sid not in agent.sessions
        await agent.close()
        return *held, gone

    assert run(scenario()) == (0, 0, True)


def test_resume_after_a_restart_reports_the_stored_state(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"

    async def scenario() -> list[Any]:
        first = Rich(store=db)
        await first.open()
        sid = await new_turn(await Wire.open(first, V2))
        await first.close()
        again = Rich(store=db)
        await again.open()
        wire = await Wire.open(again, V2)
        answer = await wire.call("session/resume", {"sessionId": sid, "cwd": CWD})
        moved = await wire.call("session/resume", {"sessionId": sid, "cwd": "/elsewhere"})
        await again.close()
        return [answer, wire.updates(sid), moved]

    answer, updates, moved = run(scenario())
    assert answer["result"] == {}
    assert updates == [{"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}]
    assert moved["error"] == invalid("$.cwd", "the session's working directory is /work")


class Quick(kit.Agent):
    """A turn that never waits on the client: a message and a tool call."""

    name = "quick-agent"

    async def prompt(self, turn: kit.Turn) -> kit.TurnStopReason:
        await turn.say("done")
        tool = await turn.tool_call("Read", kind="read")
        await tool.complete("ok")
        return "end_turn"


@pytest.mark.parametrize("lane", [V1, V2], ids=["v1", "v2"])
@pytest.mark.parametrize("durable", [False, True], ids=["queued", "durable"])
def test_a_turn_end_waits_for_its_commit_only_when_the_store_says_so(
    lane: WireLane, durable: bool, tmp_path: Path
) -> None:
    """Another connection holds the file's write lock during the turn: with
    `durable_turn_ends` (the default) the client is told the turn ended only once it could be
    committed; without, at once, and the commit follows when the lock goes."""
    db = tmp_path / "sessions.db"

    async def scenario() -> tuple[bool, list[str]]:
        agent = Quick(store=SQLiteStore(db, durable_turn_ends=durable, busy_timeout=30))
        await agent.open()
        wire = await Wire.open(agent, lane)
        sid = await wire.new_session(CWD)
        holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
        holder.execute("BEGIN IMMEDIATE")
        ending = asyncio.ensure_future(wire.ended(wire.prompt_later(sid, "go")))
        done, _ = await asyncio.wait([ending], timeout=0.5)
        ended_while_locked = ending in done
        holder.execute("COMMIT")
        holder.close()
        await ending
        await agent.close()
        reader = SQLiteStore(db)
        await reader.open()
        kinds = [entry.kind async for entry in reader.history(sid)]
        await reader.close()
        return ended_while_locked, kinds

    ended_while_locked, kinds = run(scenario())
    assert ended_while_locked is not durable
    assert kinds == ["message", "message", "tool_call"]


def test_the_store_argument(tmp_path: Path) -> None:
    mine = MemoryStore()
    assert kit.Agent(store=mine).store is mine
    assert kit.Agent().store is None
    assert isinstance(kit.Agent(store=str(tmp_path / "a.db")).store, SQLiteStore)
    assert isinstance(kit.Agent(store=tmp_path / "a.db").store, SQLiteStore)
    assert isinstance(kit.Agent(store="postgresql://agent@db/agents").store, PostgresStore)
    # A turn's end waits for its commit unless told otherwise.
    stored = kit.Agent(store=tmp_path / "a.db").store
    assert stored is not None and stored.durable_turn_ends is True
    assert PostgresStore("postgresql://agent@db/agents").durable_turn_ends is True
    assert SQLiteStore(tmp_path / "a.db", durable_turn_ends=False).durable_turn_ends is False
    with pytest.raises(TypeError, match="durable_turn_ends must be a bool, got 1"):
        SQLiteStore(tmp_path / "a.db", durable_turn_ends=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="store must be a SessionStore, a path or a postgresql"):
        kit.Agent(store=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="store: an empty path"):
        kit.Agent(store="")
    assert not (tmp_path / "a.db").exists()  # nothing is opened before `open()`
