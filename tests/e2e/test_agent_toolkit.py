"""The agent toolkit (`acp_kit.Agent`, `Turn`, `ToolCallHandle`) on each protocol version, one
test per requirement, with the exact JSON each lane sends (in-memory pipes, behind the version
router). What the lanes share runs on both (the `lane` fixture); what one lane has runs there.

The rules come from the schemas' descriptions (npm-sdk-2.4.0): the prompt lifecycle — v2's
PromptRequest, StateUpdate, IdleStateUpdate, RequiresActionStateUpdate,
CancelSessionNotification; v1's PromptResponse and StopReason (`cancelled` after
session/cancel, even when the cancellation raises) — and RequestPermissionOutcome (v1: the
cancelling client answers `cancelled` itself; v2: the agent withdraws the request). Sessions are
in test_agent_sessions.py, `initialize` in test_version_router.py."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import acp_kit as kit
import pytest

from tests.support.rpc_wire import run
from tests.support.toolkit_wire import (
    V1,
    V2,
    ScriptAgent,
    Wire,
    WireLane,
    chunk,
    invalid,
    is_idle,
    is_request,
    not_found,
    selected,
    state,
    text,
    tool_text,
)

PERMISSION_OPTIONS = [
    {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
]
INTERNAL_ERROR = {"code": -32603, "message": "Internal error"}
END_TURN = {"stopReason": "end_turn"}  # how `framed` ends a turn that returned `end_turn`
LOGGER = "acp_kit.toolkit.agent"


def tool(**fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", **fields}


def messages(wire: Wire, sid: str) -> list[Any]:
    """What the agent wrote after `session/new`: each update's body, `("answer", result or
    error)` for an answer, `(method, params)` for a request of the agent's."""
    out: list[Any] = []
    for m in wire.wire[1:]:
        if m.get("method") == "session/update":
            assert m["params"]["sessionId"] == sid
            out.append(m["params"]["update"])
        elif "method" in m:
            out.append((m["method"], m.get("params")))
        else:
            out.append(("answer", m.get("result", m.get("error"))))
    return out


def framed(lane: WireLane, updates: list[Any], ending: Any, user: Any = None) -> list[Any]:
    """A turn's messages as `lane` frames them: v2 answers with the user message's id, echoes
    it, reports running, and ends idle with `ending`; v1 answers with `ending` last."""
    if lane.v1:
        return [*updates, ("answer", ending)]
    echo = {"sessionUpdate": "user_message", "messageId": "msg_user_1", "content": [text("hi")]}
    return [("answer", {"messageId": "msg_user_1"}), user or echo, state("running"), *updates,
            {"sessionUpdate": "state_update", "state": "idle", **ending}]  # fmt: skip


async def one_turn(lane: WireLane, script: Any, text: str = "hi") -> tuple[Wire, str, Any]:
    """A session of an agent running `script`, after one turn: the wire, the session id, the
    prompt's answer."""
    wire = await Wire.open(ScriptAgent(script), lane)
    sid = await wire.new_session()
    answer = await wire.turn(sid, text)
    return wire, sid, answer


# -- what a turn reports -------------------------------------------------------------------------
def test_a_turns_chunks_are_framed_by_its_lane(lane: WireLane) -> None:
    async def script(turn: kit.Turn) -> kit.TurnStopReason:
        await turn.say("Hello")
        await turn.think("hmm")
        await turn.say(" world")
        return "end_turn"

    async def scenario() -> list[Any]:
        wire, sid, _ = await one_turn(lane, script, "hi there")
        return messages(wire, sid)

    echo = {"sessionUpdate": "user_message", "messageId": "msg_user_1",
            "content": [text("hi there")]}  # fmt: skip
    assert run(scenario()) == framed(
        lane,
        [
            chunk("agent_message_chunk", "msg_agent_1", "Hello"),
            chunk("agent_thought_chunk", "msg_thought_1", "hmm"),
            chunk("agent_message_chunk", "msg_agent_1", " world"),
        ],
        END_TURN,
        user=echo,
    )


def test_new_message_gives_the_next_chunks_a_new_message_id(lane: WireLane) -> None:
    async def script(turn: kit.Turn) -> None:
        await turn.say("one")
        turn.new_message()
        await turn.say("two")
        await turn.think("t")

    async def scenario() -> list[Any]:
        wire, sid, _ = await one_turn(lane, script)
        return [(u["sessionUpdate"], u.get("messageId")) for u in wire.updates(sid)]

    skipped = 0 if lane.v1 else 2  # the echo and `running`
    assert run(scenario())[skipped : skipped + 3] == [
        ("agent_message_chunk", "msg_agent_1"),
        ("agent_message_chunk", "msg_agent_2"),
        ("agent_thought_chunk", "msg_thought_1"),
    ]


def test_message_ids_count_per_session_across_turns(lane: WireLane) -> None:
    async def scenario() -> list[Any]:
        wire = await Wire.open(ScriptAgent(), lane)
        sid = await wire.new_session()
        other = None
        ids = []
        for target in ("first", "first", "other"):
            if target == "other":
                other = await wire.new_session("/other")
            session = sid if other is None else other
            answer = await wire.turn(session)
            says = [u for u in wire.updates(session) if u["sessionUpdate"] == "agent_message_chunk"]
            ids.append((answer["result"].get("messageId"), says[-1]["messageId"]))
            wire.take()
        return ids

    users = ["msg_user_1", "msg_user_2", "msg_user_1"]
    agents = ["msg_agent_1", "msg_agent_2", "msg_agent_1"]
    v2 = list(zip(users, agents, strict=True))
    assert run(scenario()) == lane.pick(v1=[(None, a) for a in agents], v2=v2)


def test_a_tool_call_reports_and_tracks_its_state(lane: WireLane) -> None:
    acp = lane.acp
    statuses: list[Any] = []

    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call(
            "Read file", kind="read", raw_input={"path": "/a"},
            locations=[acp.ToolCallLocation(path="/a", line=3)],
        )  # fmt: skip
        statuses.append(tool.status)
        await tool.stream("line 1")  # starts it
        statuses.append(tool.status)
        await tool.stream(acp.ContentBlockText(text="line 2"))
        await tool.update(title="Read /a")
        await tool.complete(["done", acp.ContentBlockText(text="!")], raw_output={"lines": 2})
        statuses.append((tool.status, tool.done, tool.title, len(tool.content)))
        with pytest.raises(kit.TurnEnded, match="call_001 is already completed"):
            await tool.stream("late")

    async def scenario() -> list[Any]:
        wire, sid, _ = await one_turn(lane, script)
        return messages(wire, sid)

    first = {"title": "Read file", "kind": "read", "status": "pending",
             "locations": [{"path": "/a", "line": 3}], "rawInput": {"path": "/a"}}  # fmt: skip
    final = tool(status="completed", content=[tool_text("done"), tool_text("!")],
                 rawOutput={"lines": 2})  # fmt: skip
    if lane.v1:  # `tool_call` first; an update carries the whole content so far
        updates = [
            {"sessionUpdate": "tool_call", "toolCallId": "call_001", **first},
            tool(status="in_progress", content=[tool_text("line 1")]),
            tool(content=[tool_text("line 1"), tool_text("line 2")]),
            tool(title="Read /a"),
            final,
        ]
    else:  # content chunks

        def content_chunk(value: str) -> dict[str, Any]:
            return {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "call_001",
                    "content": tool_text(value)}  # fmt: skip

        updates = [tool(**first), tool(status="in_progress"), content_chunk("line 1"),
                   content_chunk("line 2"), tool(title="Read /a"), final]  # fmt: skip
    assert run(scenario()) == framed(lane, updates, END_TURN)
    assert statuses == ["pending", "in_progress", ("completed", True, "Read /a", 2)]


def test_content_built_with_the_other_lanes_classes_is_converted(lane: WireLane) -> None:
    other = lane.pick(v1=V2, v2=V1).acp

    async def script(turn: kit.Turn) -> None:
        await turn.say(other.ContentBlockText(text="from the other lane"))
        tool = await turn.tool_call("T", locations=[other.ToolCallLocation(path="/x")])
        await tool.complete(other.ContentBlockText(text="done"))

    async def scenario() -> list[Any]:
        wire, sid, _ = await one_turn(lane, script)
        return [u for u in wire.updates(sid) if u["sessionUpdate"] != "state_update"][-3:]

    opened = {"title": "T", "kind": "other", "status": "pending", "locations": [{"path": "/x"}]}
    assert run(scenario()) == [
        chunk("agent_message_chunk", "msg_agent_1", "from the other lane"),
        {"sessionUpdate": lane.pick(v1="tool_call", v2="tool_call_update"),
         "toolCallId": "call_001", **opened},
        tool(status="completed", content=[tool_text("done")]),
    ]  # fmt: skip


def test_a_plan_sends_the_whole_plan_on_each_change(lane: WireLane) -> None:
    acp = lane.acp

    async def script(turn: kit.Turn) -> None:
        plan = await turn.plan(
            "Look", acp.PlanEntry(content="Fix", priority="high", status="pending")
        )
        await plan.start(0)
        await plan.complete(0)
        await plan.replace("Only this")

    async def scenario() -> list[Any]:
        wire, sid, _ = await one_turn(lane, script)
        return [u for u in wire.updates(sid) if u["sessionUpdate"].startswith("plan")]

    def plan(*entries: tuple[str, str, str]) -> dict[str, Any]:
        rows = [{"content": c, "priority": p, "status": s} for c, p, s in entries]
        if lane.v1:  # one plan per session, which the client replaces
            return {"sessionUpdate": "plan", "entries": rows}
        items = {"type": "items", "planId": "plan_1", "entries": rows}
        return {"sessionUpdate": "plan_update", "plan": items}

    assert run(scenario()) == [
        plan(("Look", "medium", "pending"), ("Fix", "high", "pending")),
        plan(("Look", "medium", "in_progress"), ("Fix", "high", "pending")),
        plan(("Look", "medium", "completed"), ("Fix", "high", "pending")),
        plan(("Only this", "medium", "pending")),
    ]


def test_usage_reports_tokens_and_an_optional_cost(lane: WireLane) -> None:
    async def script(turn: kit.Turn) -> None:
        await turn.usage(10, 100)
        await turn.usage(20, 100, cost=0.5, currency="EUR")
        await turn.usage(30, 100, cost=lane.acp.Cost(amount=1, currency="USD"))

    async def scenario() -> list[Any]:
        wire, sid, _ = await one_turn(lane, script)
        return [u for u in wire.updates(sid) if u["sessionUpdate"] == "usage_update"]

    assert run(scenario()) == [
        {"sessionUpdate": "usage_update", "used": 10, "size": 100},
        {"sessionUpdate": "usage_update", "used": 20, "size": 100,
         "cost": {"amount": 0.5, "currency": "EUR"}},
        {"sessionUpdate": "usage_update", "used": 30, "size": 100,
         "cost": {"amount": 1, "currency": "USD"}},
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda t, tool, plan: t.tool_call("X", kind="reed"),
         "tool call call_002: kind: 'reed' is not a ToolKind of protocol version {v}: one of"
         " 'delete', 'edit', 'execute', 'fetch', 'move', 'other', 'read', 'search',"
         " 'switch_mode', 'think'{custom}"),
        (lambda t, tool, plan: tool.update(status="compleet"),
         "tool call call_001: status: 'compleet' is not a ToolCallStatus of protocol version {v}:"
         " one of {statuses}{custom}"),
        (lambda t, tool, plan: plan.mark(0, "dun"),
         "plan entry 0: status: 'dun' is not a PlanEntryStatus of protocol version {v}: one of"
         " {entries}{custom}"),
        (lambda t, tool, plan: t.plan_entry("x", priority="urgent"),
         "plan entry: priority: 'urgent' is not a PlanEntryPriority of protocol version {v}: one"
         " of 'high', 'low', 'medium'{custom}"),
    ],
    ids=["tool-kind", "tool-status", "plan-status", "plan-priority"],
)  # fmt: skip
def test_a_misspelled_value_raises_at_the_call_naming_what_the_lane_allows(
    lane: WireLane, call: Any, message: str
) -> None:
    raised: list[str] = []

    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call("T")
        plan = await turn.plan("a")
        try:
            await call(turn, tool, plan)
        except ValueError as exc:
            raised.append(str(exc))
        await tool.complete()

    async def scenario() -> list[Any]:
        wire, sid, _ = await one_turn(lane, script)
        return [u["sessionUpdate"] for u in wire.updates(sid)]

    kinds = run(scenario())
    statuses = lane.pick(
        v1="'completed', 'failed', 'in_progress', 'pending'",
        v2="'cancelled', 'completed', 'failed', 'in_progress', 'paused', 'pending'",
    )
    entries = lane.pick(v1="'completed', 'in_progress', 'pending'",
                        v2="'cancelled', 'completed', 'in_progress', 'pending'")  # fmt: skip
    custom = lane.pick(v1="", v2=" (or OpenStr(...) for a custom value)")  # v2's are open
    expected = message.format(v=lane.version, statuses=statuses, entries=entries, custom=custom)
    assert raised == [expected]
    plan_kind = lane.pick(v1="plan", v2="plan_update")
    opened = lane.pick(v1="tool_call", v2="tool_call_update")
    assert [k for k in kinds if k != "state_update" and k != "user_message"] == [
        opened, plan_kind, "tool_call_update"  # nothing was sent for the misspelled call
    ]  # fmt: skip


def test_values_only_v2_has_are_refused_on_v1() -> None:
    raised: list[str] = []

    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call("T")
        plan = await turn.plan("a")
        for attempt in (tool.update(status="cancelled"), plan.mark(0, "cancelled")):
            try:
                await attempt
            except ValueError as exc:
                raised.append(str(exc))
        await tool.complete()

    run(one_turn(V1, script))
    assert raised == [
        "tool call call_001: status: 'cancelled' is not a ToolCallStatus of protocol version 1:"
        " one of 'completed', 'failed', 'in_progress', 'pending'",
        "plan entry 0: status: 'cancelled' is not a PlanEntryStatus of protocol version 1: one of"
        " 'completed', 'in_progress', 'pending'",
    ]


def test_a_custom_value_goes_out_where_the_lanes_enum_is_open(lane: WireLane) -> None:
    raised: list[str] = []

    async def script(turn: kit.Turn) -> None:
        try:
            tool = await turn.tool_call("T", kind=kit.OpenStr("_deploy"))
        except ValueError as exc:
            raised.append(str(exc))
        else:
            await tool.complete()

    async def scenario() -> list[Any]:
        wire, sid, _ = await one_turn(lane, script)
        return [u for u in wire.updates(sid) if u["sessionUpdate"].startswith("tool_call")]

    sent = run(scenario())
    if lane.v1:
        assert (sent, raised) == ([], [
            "tool call call_001: kind: ToolKind is closed in protocol version 1: no custom value"
            " '_deploy'; one of 'delete', 'edit', 'execute', 'fetch', 'move', 'other', 'read',"
            " 'search', 'switch_mode', 'think'"
        ])  # fmt: skip
    else:
        opened = tool(title="T", kind="_deploy", status="pending")
        assert (sent, raised) == ([opened, tool(status="completed")], [])


# -- how a turn ends -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("returned", "v1", "v2"),
    [
        (None, {"stopReason": "end_turn"}, {"stopReason": "end_turn"}),
        ("refusal", {"stopReason": "refusal"}, {"stopReason": "refusal"}),
        ("max_tokens", {"stopReason": "max_tokens"}, {"stopReason": "max_tokens"}),
        ("max_turn_requests", {"stopReason": "max_turn_requests"},
         {"stopReason": "max_turn_requests"}),
        (kit.CustomStopReason("_budget"), INTERNAL_ERROR, {"stopReason": "_budget"}),
        ("finished", INTERNAL_ERROR, {"stopReason": "error", "error": INTERNAL_ERROR}),
    ],
    ids=["none", "refusal", "max_tokens", "max_turn_requests", "custom", "unknown"],
)  # fmt: skip
def test_the_returned_stop_reason_ends_the_turn(
    lane: WireLane, returned: Any, v1: Any, v2: Any
) -> None:
    async def script(turn: kit.Turn) -> Any:
        return returned

    async def scenario() -> Any:
        wire, sid, _ = await one_turn(lane, script)
        return messages(wire, sid)[-1]

    assert run(scenario()) == lane.pick(v1=("answer", v1), v2=state("idle", **v2))


@pytest.mark.parametrize(
    ("returned", "logged"),
    [
        (kit.CustomStopReason("_budget"),
         "NotSupported: a custom stop reason ('_budget') is not part of protocol version 1 (v1)"),
        ("finished",
         "ValueError: prompt() returned 'finished', not a stop reason of protocol version 1"
         " (cancelled, end_turn, max_tokens, max_turn_requests, refusal)"),
    ],
    ids=["custom", "unknown"],
)  # fmt: skip
def test_a_stop_reason_v1_does_not_have_fails_the_turn_in_one_log_line(
    returned: Any, logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def script(turn: kit.Turn) -> Any:
        return returned

    with caplog.at_level(logging.ERROR, logger=LOGGER):
        run(one_turn(V1, script))
    [record] = caplog.records
    assert record.getMessage().split(" failed: ", 1)[1] == logged


def test_an_exception_fails_open_tool_calls_and_ends_the_turn_once(
    lane: WireLane, caplog: pytest.LogCaptureFixture
) -> None:
    async def script(turn: kit.Turn) -> None:
        await turn.tool_call("Search")
        raise KeyError("index")

    async def scenario() -> list[Any]:
        wire, sid, _ = await one_turn(lane, script)
        return messages(wire, sid)[-2:] + await wire.quiet()

    with caplog.at_level(logging.ERROR, logger=LOGGER):
        tail = run(scenario())
    ending = lane.pick(v1=("answer", INTERNAL_ERROR),
                       v2=state("idle", stopReason="error", error=INTERNAL_ERROR))  # fmt: skip
    assert tail == [tool(status="failed"), ending]
    [record] = caplog.records
    assert record.getMessage().endswith("failed: KeyError: 'index'")
    assert record.exc_info is not None  # a bug in the agent: the traceback helps


def test_an_rpc_error_ends_the_turn_with_its_code_and_message_in_one_log_line(
    lane: WireLane, caplog: pytest.LogCaptureFixture
) -> None:
    async def script(turn: kit.Turn) -> None:
        raise kit.RpcError(-32000, "Authentication required")

    async def scenario() -> Any:
        wire, sid, _ = await one_turn(lane, script)
        return messages(wire, sid)[-1]

    with caplog.at_level(logging.ERROR, logger=LOGGER):
        last = run(scenario())
    error = {"code": -32000, "message": "Authentication required"}
    assert last == lane.pick(
        v1=("answer", error), v2=state("idle", stopReason="error", error=error)
    )
    [record] = caplog.records
    assert record.exc_info is None


def test_tool_calls_left_open_by_a_turn_that_returns_are_logged(
    lane: WireLane, caplog: pytest.LogCaptureFixture
) -> None:
    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call("Build")
        await tool.start()

    async def scenario() -> list[Any]:
        wire, sid, _ = await one_turn(lane, script)
        return messages(wire, sid)[-2:]

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        tail = run(scenario())
    # v2 fails them; v1 leaves them as they are (its answer carries no tool call states)
    assert tail == lane.pick(
        v1=[tool(status="in_progress"), ("answer", {"stopReason": "end_turn"})],
        v2=[tool(status="failed"), state("idle", stopReason="end_turn")],
    )
    assert [r.getMessage() for r in caplog.records] == [
        "the turn ended with tool calls still open: ['call_001']"
    ]


def test_nothing_can_be_reported_for_a_turn_that_has_ended(lane: WireLane) -> None:
    kept: list[kit.Turn] = []

    async def script(turn: kit.Turn) -> None:
        kept.append(turn)

    async def scenario() -> None:
        wire, _, _ = await one_turn(lane, script)
        [turn] = kept
        assert turn.ended
        with pytest.raises(kit.TurnEnded, match="this turn has ended"):
            await turn.say("late")
        assert await wire.quiet() == []

    run(scenario())


# -- permission requests -------------------------------------------------------------------------
async def ask_and_answer(
    lane: WireLane, answer: Any, remember: bool = True
) -> tuple[list[Any], list[Any]]:
    """A turn that asks permission for a tool call; the client answers `answer`. What the agent
    wrote after session/new, and what the turn got."""
    got: list[Any] = []

    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call("Run tests", kind="execute")
        permission = await turn.ask_permission(tool, remember=remember)
        got.append((bool(permission), permission.option and permission.option.option_id))
        await (tool.complete("ok") if permission else tool.fail("not allowed"))

    wire = await Wire.open(ScriptAgent(script), lane)
    sid = await wire.new_session()
    pending = wire.prompt_later(sid)
    asked = await wire.until(is_request("session/request_permission"))
    wire.reply(asked["id"], answer)
    await wire.ended(pending)
    return messages(wire, sid), got


def test_a_permission_request_names_the_tool_call_and_offers_the_default_options(
    lane: WireLane,
) -> None:
    seen, got = run(ask_and_answer(lane, selected("allow-once")))
    opened = {"sessionUpdate": lane.pick(v1="tool_call", v2="tool_call_update"),
              "toolCallId": "call_001", "title": "Run tests", "kind": "execute",
              "status": "pending"}  # fmt: skip
    subject = {"toolCallId": "call_001", "title": "Run tests"}
    done = tool(status="completed", content=[tool_text("ok")])
    if lane.v1:
        request = {"toolCall": subject, "options": PERMISSION_OPTIONS}
        updates = [opened, ("session/request_permission", request), done]
    else:  # bracketed by requires_action and running
        request = {"title": 'Allow "Run tests" to run?', "options": PERMISSION_OPTIONS,
                   "subject": {"type": "tool_call", "toolCall": subject}}  # fmt: skip
        updates = [opened, state("requires_action"), ("session/request_permission", request),
                   state("running"), done]  # fmt: skip
    for message in seen:
        if isinstance(message, tuple) and message[0] == "session/request_permission":
            message[1].pop("sessionId")
    assert seen == framed(lane, updates, END_TURN)
    assert got == [(True, "allow-once")]


@pytest.mark.parametrize(
    "answer",
    [
        selected("reject-once"),
        selected("no-such-option"),  # "MUST treat the request as not approved"
    ],
    ids=["rejected", "unknown-option"],
)
def test_an_answer_that_is_not_an_allow_is_a_refusal(lane: WireLane, answer: Any) -> None:
    seen, got = run(ask_and_answer(lane, answer))
    refused = tool(status="failed", content=[tool_text("not allowed")])
    assert seen[-2:] == [refused, lane.pick(v1=("answer", {"stopReason": "end_turn"}),
                                            v2=state("idle", stopReason="end_turn"))]  # fmt: skip
    picked = answer["outcome"]["optionId"]
    assert got == [(False, "reject-once" if picked == "reject-once" else None)]


def test_an_outcome_v2_does_not_know_is_a_refusal() -> None:
    seen, got = run(ask_and_answer(V2, {"outcome": {"outcome": "_defer"}}))
    assert seen[-2] == tool(status="failed", content=[tool_text("not allowed")])
    assert got == [(False, None)]


def test_an_outcome_v1_does_not_have_fails_the_turn(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        seen, got = run(ask_and_answer(V1, {"outcome": {"outcome": "_defer"}}))
    assert seen[-2:] == [tool(status="failed"), ("answer", INTERNAL_ERROR)]
    assert got == []  # never taken for an approval
    [record] = caplog.records
    assert "the client sent an invalid answer: $.outcome" in record.getMessage()


def test_a_cancelled_answer_ends_the_turn_cancelled(lane: WireLane) -> None:
    seen, got = run(ask_and_answer(lane, {"outcome": {"outcome": "cancelled"}}))
    # v2 closes the tool call; on v1 the client, which answered `cancelled`, marks it
    if lane.v1:
        assert seen[-2][0] == "session/request_permission"
        assert seen[-1] == ("answer", {"stopReason": "cancelled"})
    else:
        assert seen[-2:] == [tool(status="cancelled"), state("idle", stopReason="cancelled")]
    assert got == []


def test_session_cancel_stops_waiting_for_the_permission_answer(lane: WireLane) -> None:
    """v2 withdraws the request ($/cancel_request); v1 leaves it to the client, which must
    answer it `cancelled`, and answers the prompt at once. A late answer changes nothing."""

    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call("Deploy")
        await turn.ask_permission(tool)
        raise AssertionError("the turn went on after its cancel")

    async def scenario() -> tuple[list[Any], Any, str]:
        wire = await Wire.open(ScriptAgent(script), lane)
        sid = await wire.new_session()
        pending = wire.prompt_later(sid)
        asked = await wire.until(is_request("session/request_permission"))
        before = len(wire.wire)
        wire.send("session/cancel", {"sessionId": sid})
        await wire.ended(pending)
        after = wire.wire[before:]
        wire.reply(asked["id"], selected("allow-once"))  # the late answer
        return after + await wire.quiet(), asked["id"], sid

    after, rid, sid = run(scenario())

    def update(body: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "method": "session/update",
                "params": {"sessionId": sid, "update": body}}  # fmt: skip

    assert after == lane.pick(
        v1=[{"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "cancelled"}}],
        v2=[{"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": rid}},
            update(tool(status="cancelled")), update(state("idle", stopReason="cancelled"))],
    )  # fmt: skip


def test_an_always_answer_is_remembered_for_the_session(lane: WireLane) -> None:
    async def scenario() -> tuple[list[Any], int]:
        got: list[Any] = []

        async def script(turn: kit.Turn) -> None:
            tool = await turn.tool_call("Run tests")
            permission = await turn.ask_permission(tool)
            got.append((permission.allowed, permission.remembered))
            await tool.complete()

        wire = await Wire.open(ScriptAgent(script), lane)
        sid = await wire.new_session()
        pending = wire.prompt_later(sid)
        asked = await wire.until(is_request("session/request_permission"))
        wire.reply(asked["id"], selected("allow-always"))
        await wire.ended(pending)
        wire.take()
        await wire.turn(sid)
        return got, len([m for m in wire.seen if "id" in m])

    got, requests = run(scenario())
    assert got == [(True, False), (True, True)]
    assert requests == 0  # the second turn did not ask


# -- cancellation and held prompts ---------------------------------------------------------------
def test_a_cancel_that_arrives_with_the_prompt_still_ends_the_turn_cancelled(
    lane: WireLane,
) -> None:
    async def scenario() -> list[Any]:
        wire = await Wire.open(ScriptAgent(), lane)
        sid = await wire.new_session()
        prompt = {"sessionId": sid, "prompt": [text("hi")]}
        lines = [
            {"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": prompt},
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}},
        ]
        wire.send_bytes(b"".join(json.dumps(m).encode() + b"\n" for m in lines))  # one read
        await wire.answer_to(7)
        if not lane.v1:
            await wire.idle()
        await wire.quiet()
        return messages(wire, sid)

    echo = {"sessionUpdate": "user_message", "messageId": "msg_user_1", "content": [text("hi")]}
    assert run(scenario()) == lane.pick(
        v1=[("answer", {"stopReason": "cancelled"})],  # its body never ran: nothing to report
        v2=[("answer", {"messageId": "msg_user_1"}), echo, state("idle", stopReason="cancelled")],
    )


def test_a_prompt_during_a_turn_is_held_until_the_turn_ends(lane: WireLane) -> None:
    release = asyncio.Event()
    started: list[str] = []

    async def script(turn: kit.Turn) -> None:
        started.append(turn.text)
        if turn.text == "first":
            await release.wait()
        await turn.say(turn.text)

    async def scenario() -> list[Any]:
        wire = await Wire.open(ScriptAgent(script), lane)
        sid = await wire.new_session()
        first = wire.prompt_later(sid, "first")
        if not lane.v1:
            await first  # answered at once
        second = wire.prompt_later(sid, "second")
        await asyncio.sleep(0.05)
        assert started == ["first"] and not second.done()  # held: not inserted yet
        release.set()
        await first
        await wire.ended(second)
        if not lane.v1:
            await wire.until(lambda m: is_idle(m) and len(wire.updates()) == 8)
        return messages(wire, sid)

    def echo(n: int, value: str) -> dict[str, Any]:
        return {"sessionUpdate": "user_message", "messageId": f"msg_user_{n}",
                "content": [text(value)]}  # fmt: skip

    first = chunk("agent_message_chunk", "msg_agent_1", "first")
    second = chunk("agent_message_chunk", "msg_agent_2", "second")
    done = state("idle", stopReason="end_turn")
    assert run(scenario()) == lane.pick(
        v1=[first, ("answer", {"stopReason": "end_turn"}),
            second, ("answer", {"stopReason": "end_turn"})],
        v2=[("answer", {"messageId": "msg_user_1"}), echo(1, "first"), state("running"), first,
            done, ("answer", {"messageId": "msg_user_2"}), echo(2, "second"), state("running"),
            second, done],
    )  # fmt: skip
    assert started == ["first", "second"]


def test_session_cancel_answers_held_prompts_without_running_them(lane: WireLane) -> None:
    started: list[str] = []

    async def script(turn: kit.Turn) -> None:
        started.append(turn.text)
        await asyncio.sleep(60)

    async def scenario() -> tuple[Any, Any]:
        wire = await Wire.open(ScriptAgent(script), lane)
        sid = await wire.new_session()
        first = wire.prompt_later(sid, "first")
        await asyncio.sleep(0.05)
        held = wire.prompt_later(sid, "held")
        await asyncio.sleep(0.05)
        wire.send("session/cancel", {"sessionId": sid})
        answer = await held
        ended = await wire.ended(first)
        return answer, ended if lane.v1 else await wire.idle()

    held, ended = run(scenario())
    assert held == lane.pick(
        v1={"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "cancelled"}},
        v2={"jsonrpc": "2.0", "id": 3, "error": {"code": -32800, "message": "Request cancelled"}},
    )
    assert ended == lane.pick(
        v1={"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "cancelled"}},
        v2=state("idle", stopReason="cancelled"),
    )
    assert started == ["first"]


def test_cancelling_an_idle_or_unknown_session_sends_nothing(lane: WireLane) -> None:
    async def scenario() -> list[Any]:
        wire = await Wire.open(ScriptAgent(), lane)
        sid = await wire.new_session()
        wire.send("session/cancel", {"sessionId": sid})
        wire.send("session/cancel", {"sessionId": "unknown"})
        return await wire.quiet()

    assert run(scenario()) == []


def test_an_error_raised_by_aborting_work_is_reported_cancelled(lane: WireLane) -> None:
    # v1: "This stop reason MUST be returned when the client sends a session/cancel
    # notification, even if the cancellation causes exceptions in underlying operations."
    async def script(turn: kit.Turn) -> None:
        await turn.say("working")
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            raise ConnectionResetError("the model stream was torn down") from None

    async def scenario() -> Any:
        wire = await Wire.open(ScriptAgent(script), lane)
        sid = await wire.new_session()
        pending = wire.prompt_later(sid)
        await wire.until(lambda m: m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        wire.send("session/cancel", {"sessionId": sid})
        await wire.ended(pending)
        return messages(wire, sid)[-1]

    assert run(scenario()) == lane.pick(
        v1=("answer", {"stopReason": "cancelled"}), v2=state("idle", stopReason="cancelled")
    )


def test_updates_sent_while_cancelling_precede_the_turns_end(lane: WireLane) -> None:
    async def script(turn: kit.Turn) -> None:
        await turn.think("start")
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await turn.say("stopped")
            raise

    async def scenario() -> list[Any]:
        wire = await Wire.open(ScriptAgent(script), lane)
        sid = await wire.new_session()
        pending = wire.prompt_later(sid)
        await wire.until(lambda m: m["params"]["update"]["sessionUpdate"] == "agent_thought_chunk")
        wire.send("session/cancel", {"sessionId": sid})
        await wire.ended(pending)
        return messages(wire, sid)[-2:]

    assert run(scenario()) == [
        chunk("agent_message_chunk", "msg_agent_1", "stopped"),
        lane.pick(v1=("answer", {"stopReason": "cancelled"}),
                  v2=state("idle", stopReason="cancelled")),
    ]  # fmt: skip


def test_cancel_request_for_a_v1_prompt_cancels_its_turn() -> None:
    async def script(turn: kit.Turn) -> Any:
        await asyncio.sleep(30)

    async def scenario() -> Any:
        wire = await Wire.open(ScriptAgent(script), V1)
        sid = await wire.new_session()
        pending = wire.prompt_later(sid)
        await asyncio.sleep(0.05)
        wire.send("$/cancel_request", {"requestId": 2})  # the prompt is request 2
        return await pending

    assert run(scenario())["result"] == {"stopReason": "cancelled"}


# -- what a prompt may contain -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("block", "accepts"),
    [
        ({"type": "image", "data": "AA==", "mimeType": "image/png"}, "image_prompts"),
        ({"type": "audio", "data": "AA==", "mimeType": "audio/wav"}, "audio_prompts"),
        ({"type": "resource", "resource": {"uri": "file:///a", "text": "x"}}, "embedded_context"),
    ],
    ids=["image", "audio", "resource"],
)
def test_prompt_content_beyond_the_baseline_needs_its_capability(
    lane: WireLane, block: dict[str, Any], accepts: str
) -> None:
    async def scenario(agent: kit.Agent) -> tuple[Any, list[Any]]:
        wire = await Wire.open(agent, lane)
        sid = await wire.new_session()
        prompt = [text("look"), {"type": "resource_link", "name": "a", "uri": "file:///a"}, block]
        answer = await wire.call("session/prompt", {"sessionId": sid, "prompt": prompt})
        return answer, await wire.quiet()

    answer, after = run(scenario(ScriptAgent()))
    kind = block["type"]
    assert answer["error"] == invalid("$.prompt[2]", f"this agent does not accept '{kind}' content")
    assert after == []  # nothing was inserted

    class Accepting(ScriptAgent):
        pass

    setattr(Accepting, accepts, True)
    answer, _ = run(scenario(Accepting()))
    assert answer["result"] == lane.pick(v1={"stopReason": "end_turn"},
                                         v2={"messageId": "msg_user_1"})  # fmt: skip


def test_an_unknown_content_block_type_is_refused(lane: WireLane) -> None:
    async def scenario() -> Any:
        wire = await Wire.open(ScriptAgent(), lane)
        sid = await wire.new_session()
        prompt = [{"type": "_hologram", "x": 1}]
        return await wire.call("session/prompt", {"sessionId": sid, "prompt": prompt})

    # v1's ContentBlock is closed: the request does not decode; v2's takes other types
    assert run(scenario())["error"] == lane.pick(
        v1=invalid("$.prompt[0].type", 'unknown tag "_hologram"; expected one of text, image,'
                   " audio, resource_link, resource"),
        v2=invalid("$.prompt[0]", "this agent does not accept '_hologram' content"),
    )  # fmt: skip


def test_a_prompt_for_an_unknown_session_is_resource_not_found(lane: WireLane) -> None:
    async def scenario() -> Any:
        return await (await Wire.open(ScriptAgent(), lane)).prompt("nope")

    assert run(scenario())["error"] == not_found("nope")


# -- what exists in one protocol version only ----------------------------------------------------
def test_a_cancellable_tool_call_is_not_supported_on_v1() -> None:
    raised: list[Any] = []

    async def script(turn: kit.Turn) -> None:
        assert not turn.features.cancellable_tool_calls
        try:
            await turn.tool_call("Build", cancellable=True)
        except kit.NotSupported as exc:
            raised.append((str(exc), exc.feature, exc.version))

    async def scenario() -> list[Any]:
        wire, sid, _ = await one_turn(V1, script)
        await wire.call("tool_call/cancel", {"sessionId": sid, "toolCallId": "call_001"})
        return messages(wire, sid)

    assert run(scenario()) == [
        ("answer", {"stopReason": "end_turn"}),  # nothing was reported for the refused call
        ("answer", {"code": -32601, "message": "Method not found", "data": "tool_call/cancel"}),
    ]
    assert raised == [(
        "a cancellable tool call is not part of protocol version 1 (v1)",
        "a cancellable tool call",
        1,
    )]  # fmt: skip


def test_the_clients_files_and_terminals_are_not_supported_on_v2() -> None:
    raised: list[tuple[str, str]] = []

    async def script(turn: kit.Turn) -> None:
        session = turn.session
        for call in (
            session.read_text_file("/a"),
            session.write_text_file("/a", "x"),
            session.create_terminal("ls"),
        ):
            try:
                await call
            except kit.NotSupported as exc:
                raised.append((exc.feature, str(exc)))

    run(one_turn(V2, script))
    assert raised == [
        ("the client's fs.readTextFile",
         "the client's fs.readTextFile is not part of protocol version 2 (v2)"),
        ("the client's fs.writeTextFile",
         "the client's fs.writeTextFile is not part of protocol version 2 (v2)"),
        ("the client's terminal", "the client's terminal is not part of protocol version 2 (v2)"),
    ]  # fmt: skip


def test_the_clients_files_on_v1_need_its_capability() -> None:
    raised: list[str] = []
    read: list[str] = []

    async def script(turn: kit.Turn) -> None:
        session = turn.session
        try:
            await session.write_text_file("/a", "x")  # not advertised
        except kit.MissingCapability as exc:
            raised.append(str(exc))
        try:
            await session.create_terminal("ls")
        except kit.MissingCapability as exc:
            raised.append(str(exc))
        read.append(await session.read_text_file("/w/a.txt", line=2, limit=1))

    async def scenario() -> Any:
        wire = Wire(ScriptAgent(script), V1)
        offers = {**V1.initialize, "clientCapabilities": {"fs": {"readTextFile": True}}}
        await wire.initialize(offers)
        wire.take()
        sid = await wire.new_session()
        pending = wire.prompt_later(sid)
        asked = await wire.until(is_request("fs/read_text_file"))
        wire.reply(asked["id"], {"content": "line two"})
        await pending
        return asked["params"], sid

    params, sid = run(scenario())
    assert params == {"sessionId": sid, "path": "/w/a.txt", "line": 2, "limit": 1}
    assert read == ["line two"]
    assert raised == [
        "the client does not advertise fs.writeTextFile",
        "the client does not advertise terminal",
    ]


def test_turn_features_say_what_the_connections_protocol_version_has(lane: WireLane) -> None:
    seen: list[kit.ProtocolFeatures] = []

    async def script(turn: kit.Turn) -> None:
        seen.append(turn.features)

    run(one_turn(lane, script))
    [features] = seen
    assert (features.version, features.lane) == (lane.version, lane.name)
    flags = (features.state_updates, features.cancellable_tool_calls,
             features.custom_stop_reasons, features.client_files, features.client_terminals,
             features.load_session)  # fmt: skip
    assert flags == lane.pick(v1=(False, False, False, True, True, True),
                              v2=(True, True, True, False, False, False))  # fmt: skip


# -- tool_call/cancel (v2), terminal/cancel ------------------------------------------------------
def test_cancelling_a_tool_call_or_terminal_that_is_not_cancellable_is_invalid_params() -> None:
    async def script(turn: kit.Turn) -> None:
        done = await turn.tool_call("Done")
        await done.complete()
        running = await turn.tool_call("Running")
        await running.start()
        await asyncio.sleep(60)

    async def scenario() -> list[Any]:
        wire = await Wire.open(ScriptAgent(script), V2)
        sid = await wire.new_session()
        await wire.prompt(sid)
        await wire.until(lambda m: m["params"]["update"].get("status") == "in_progress")
        answers = [
            await wire.call("tool_call/cancel", {"sessionId": sid, "toolCallId": call_id})
            for call_id in ("call_001", "call_002", "call_999")
        ]
        answers.append(await wire.call("terminal/cancel", {"sessionId": sid, "terminalId": "t1"}))
        answers.append(await wire.call("tool_call/cancel", {"sessionId": "x", "toolCallId": "c"}))
        return [a["error"]["data"] if a["error"]["code"] == -32602 else a["error"] for a in answers]

    assert run(scenario()) == [
        {"path": "$.toolCallId", "reason": "tool call 'call_001' is already completed"},
        {"path": "$.toolCallId", "reason": "tool call 'call_002' is not cancellable"},
        {"path": "$.toolCallId", "reason": "tool call 'call_999' is unknown"},
        {"path": "$.terminalId", "reason": "terminal 't1' is unknown"},
        not_found("x"),
    ]


def test_a_cancellable_tool_call_is_cancelled_by_the_client_and_the_turn_goes_on() -> None:
    work_cancelled: list[bool] = []

    async def build() -> str:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            work_cancelled.append(True)
            raise
        return "built"

    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call("Build", kind="execute", cancellable=True)
        try:
            await tool.run(build())
        except kit.ToolCallCancelled:
            await turn.say("Build skipped.")

    async def scenario() -> tuple[Any, list[Any]]:
        wire = await Wire.open(ScriptAgent(script), V2)
        sid = await wire.new_session()
        await wire.prompt(sid)
        await wire.until(lambda m: m["params"]["update"].get("status") == "in_progress")
        answer = await wire.call("tool_call/cancel", {"sessionId": sid, "toolCallId": "call_001"})
        await wire.idle()
        return answer["result"], wire.updates()[2:]

    result, updates = run(scenario())
    assert result == {}
    assert updates == [
        tool(title="Build", kind="execute", status="pending", capabilities={"cancel": {}}),
        tool(status="in_progress"),
        tool(status="cancelled", capabilities=None),
        chunk("agent_message_chunk", "msg_agent_1", "Build skipped."),
        state("idle", stopReason="end_turn"),
    ]
    assert work_cancelled == [True]


def test_a_cancellable_tool_call_stops_advertising_cancel_once_final() -> None:
    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call("Build", cancellable=True)
        assert await tool.run(asyncio.sleep(0, result="built")) == "built"
        await tool.complete("built")

    async def scenario() -> tuple[list[Any], Any]:
        wire = await Wire.open(ScriptAgent(script), V2)
        sid = await wire.new_session()
        await wire.turn(sid)
        late = await wire.call("tool_call/cancel", {"sessionId": sid, "toolCallId": "call_001"})
        return wire.updates()[-2], late["error"]["data"]

    final, late = run(scenario())
    assert final == tool(status="completed", content=[tool_text("built")], capabilities=None)
    assert late == {"path": "$.toolCallId", "reason": "tool call 'call_001' is already completed"}


def test_a_tool_cancel_left_uncaught_ends_the_turn_cancelled() -> None:
    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call("Build", cancellable=True)
        await tool.run(asyncio.sleep(60))

    async def scenario() -> Any:
        wire = await Wire.open(ScriptAgent(script), V2)
        sid = await wire.new_session()
        await wire.prompt(sid)
        await wire.until(lambda m: m["params"]["update"].get("status") == "in_progress")
        await wire.call("tool_call/cancel", {"sessionId": sid, "toolCallId": "call_001"})
        return await wire.idle()

    assert run(scenario()) == state("idle", stopReason="cancelled")


def test_cancelling_the_turn_cancels_the_work_a_tool_call_runs() -> None:
    work_cancelled: list[bool] = []

    async def work() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            work_cancelled.append(True)
            raise

    async def script(turn: kit.Turn) -> None:
        tool = await turn.tool_call("Build", cancellable=True)
        await tool.run(work())

    async def scenario() -> list[Any]:
        wire = await Wire.open(ScriptAgent(script), V2)
        sid = await wire.new_session()
        await wire.prompt(sid)
        await wire.until(lambda m: m["params"]["update"].get("status") == "in_progress")
        wire.send("session/cancel", {"sessionId": sid})
        await wire.idle()
        return wire.updates()[-2:]

    assert run(scenario()) == [
        tool(status="cancelled", capabilities=None),
        state("idle", stopReason="cancelled"),
    ]
    assert work_cancelled == [True]
