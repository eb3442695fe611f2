"""The toolkit's protocol-free modules, run against their source in templates/toolkit (a
package: they import the runtime's modules beside them): `lifecycle` (one turn at a time, held
prompts, cancellation, a close step run exactly once), `book` (the session book behind
`session/list`) and `broadcast` (subscriptions)."""

from __future__ import annotations

import asyncio
import gc
import logging
from typing import Any

import pytest

from templates.runtime import jsonrpc
from templates.runtime._runtime import DecodeError
from templates.toolkit import book as sessions
from templates.toolkit import broadcast, lifecycle
from tests.support.rpc_wire import run


# -- lifecycle ----------------------------------------------------------------------------------
class Steps:
    """A turn whose body is `body`; records what happened in `log`."""

    def __init__(self, log: list[Any], body: Any = None, name: str = "turn") -> None:
        self.log = log
        self.body = body
        self.name = name
        self.running = asyncio.Event()

    async def open(self) -> None:
        self.log.append((self.name, "open"))

    async def run(self) -> Any:
        self.log.append((self.name, "run"))
        self.running.set()
        if self.body is None:
            return "end_turn"
        return await self.body()

    async def close(self, outcome: Any) -> None:
        self.log.append(
            (self.name, "close", type(outcome).__name__, getattr(outcome, "value", None))
        )


def outcome_names(log: list[Any]) -> list[str]:
    return [entry[2] for entry in log if entry[1] == "close"]


def test_a_turn_that_returns_closes_once_with_its_value() -> None:
    async def scenario() -> list[Any]:
        log: list[Any] = []
        fg = lifecycle.Foreground()
        await fg.admit()
        task = fg.start(Steps(log))
        assert fg.active
        await task
        assert not fg.active
        return log

    assert run(scenario()) == [
        ("turn", "open"),
        ("turn", "run"),
        ("turn", "close", "Ended", "end_turn"),
    ]


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (ValueError("boom"), "Failed"),
        ("turn-cancelled", "Cancelled"),
        ("closed", "Disconnected"),
    ],
)
def test_how_a_turn_ended_is_told_to_its_close_step(raised: Any, expected: str) -> None:
    error = {
        "turn-cancelled": lifecycle.TurnCancelled(),
        "closed": jsonrpc.ConnectionClosed("gone"),
    }.get(raised, raised)

    async def body() -> None:
        raise error

    async def scenario() -> list[Any]:
        log: list[Any] = []
        fg = lifecycle.Foreground()
        await fg.admit()
        await fg.start(Steps(log, body))
        return log

    assert outcome_names(run(scenario())) == [expected]


def test_cancel_while_running_cancels_the_body_and_closes_cancelled() -> None:
    async def scenario() -> tuple[list[Any], bool]:
        log: list[Any] = []
        started = asyncio.Event()

        async def body() -> None:
            started.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                log.append("body cancelled")
                raise

        fg = lifecycle.Foreground()
        await fg.admit()
        fg.start(Steps(log, body))
        await started.wait()
        assert fg.cancel() is True
        assert fg.cancel_requested
        await fg.wait()
        return log, fg.cancel()

    log, again = run(scenario())
    assert log[-2:] == ["body cancelled", ("turn", "close", "Cancelled", None)]
    assert again is False  # nothing left to cancel


def test_an_error_raised_while_cancelling_still_closes_cancelled() -> None:
    async def scenario() -> list[Any]:
        log: list[Any] = []
        started = asyncio.Event()

        async def body() -> None:
            started.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                raise RuntimeError("the model client failed while aborting") from None

        fg = lifecycle.Foreground()
        await fg.admit()
        fg.start(Steps(log, body))
        await started.wait()
        await fg.stop()
        return log

    assert outcome_names(run(scenario())) == ["Cancelled"]


def test_a_body_that_swallows_the_cancel_still_ends_cancelled() -> None:
    async def scenario() -> tuple[list[Any], int]:
        log: list[Any] = []
        started = asyncio.Event()
        cancelling: list[int] = []

        async def body() -> str:
            started.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                pass
            return "end_turn"

        class Closing(Steps):
            async def close(self, outcome: Any) -> None:
                task = asyncio.current_task()
                assert task is not None
                cancelling.append(task.cancelling())
                await asyncio.sleep(0)  # the close step can await: its cancel was handled
                await super().close(outcome)

        fg = lifecycle.Foreground()
        await fg.admit()
        fg.start(Closing(log, body))
        await started.wait()
        await fg.stop()
        return log, cancelling[0]

    log, cancelling = run(scenario())
    assert outcome_names(log) == ["Cancelled"]
    assert cancelling == 0


def test_a_turn_cancelled_before_its_first_step_opens_and_closes_without_running() -> None:
    async def scenario() -> list[Any]:
        log: list[Any] = []
        fg = lifecycle.Foreground()
        await fg.admit()
        task = fg.start(Steps(log))
        fg.cancel()  # same loop turn: the task has not begun
        await task
        return log

    assert run(scenario()) == [("turn", "open"), ("turn", "close", "Cancelled", None)]


def test_a_cancel_during_the_close_step_does_not_interrupt_it() -> None:
    async def scenario() -> list[Any]:
        log: list[Any] = []
        closing = asyncio.Event()
        proceed = asyncio.Event()

        class SlowClose(Steps):
            async def close(self, outcome: Any) -> None:
                closing.set()
                await proceed.wait()
                await super().close(outcome)

        fg = lifecycle.Foreground()
        await fg.admit()
        fg.start(SlowClose(log))
        await closing.wait()
        fg.cancel()
        proceed.set()
        await fg.wait()
        return log

    assert outcome_names(run(scenario())) == ["Ended"]


def test_a_failing_close_step_is_logged_and_frees_the_slot(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class BadClose(Steps):
        async def close(self, outcome: Any) -> None:
            raise KeyError("bug")

    async def scenario() -> bool:
        fg = lifecycle.Foreground()
        await fg.admit()
        await fg.start(BadClose([]))
        await asyncio.wait_for(fg.admit(), 1)  # the slot is free again
        return fg.active

    with caplog.at_level(logging.ERROR):
        assert run(scenario()) is False
    assert [r.getMessage() for r in caplog.records] == ["closing a turn failed"]


def test_cancelling_the_task_from_outside_is_re_raised_after_the_close_step() -> None:
    async def scenario() -> tuple[list[Any], bool]:
        log: list[Any] = []
        steps = Steps(log, lambda: asyncio.sleep(60))
        fg = lifecycle.Foreground()
        await fg.admit()
        task = fg.start(steps)
        await steps.running.wait()
        task.cancel()  # e.g. the event loop shutting down
        await asyncio.wait({task})
        return log, task.cancelled()

    log, cancelled = run(scenario())
    assert outcome_names(log) == ["Cancelled"]
    assert cancelled


def test_prompts_are_held_in_arrival_order_while_a_turn_runs() -> None:
    async def scenario() -> list[Any]:
        log: list[Any] = []
        release = asyncio.Event()
        fg = lifecycle.Foreground()

        async def prompt(name: str, body: Any = None) -> None:
            await fg.admit()
            log.append((name, "admitted"))
            await fg.start(Steps(log, body, name))

        first = asyncio.ensure_future(prompt("first", release.wait))
        await asyncio.sleep(0)
        second = asyncio.ensure_future(prompt("second"))
        third = asyncio.ensure_future(prompt("third"))
        await asyncio.sleep(0.01)
        assert fg.held == 2
        release.set()
        await asyncio.gather(first, second, third)
        return [entry for entry in log if entry[1] in ("admitted", "close")]

    assert [e[:2] for e in run(scenario())] == [
        ("first", "admitted"),
        ("first", "close"),
        ("second", "admitted"),
        ("second", "close"),
        ("third", "admitted"),
        ("third", "close"),
    ]


def test_cancel_fails_every_held_prompt() -> None:
    async def scenario() -> tuple[list[Any], int]:
        log: list[Any] = []
        fg = lifecycle.Foreground()
        await fg.admit()
        steps = Steps(log, lambda: asyncio.sleep(60))
        fg.start(steps)
        held = [asyncio.ensure_future(fg.admit()) for _ in range(2)]
        await steps.running.wait()
        fg.cancel()
        results = await asyncio.gather(*held, return_exceptions=True)
        await fg.wait()
        await asyncio.wait_for(fg.admit(), 1)  # free for the next prompt
        return [type(r).__name__ for r in results], fg.held

    names, held = run(scenario())
    assert names == ["HeldPromptCancelled", "HeldPromptCancelled"]
    assert held == 0


def test_a_held_prompt_withdrawn_by_the_client_gives_up_its_place() -> None:
    async def scenario() -> list[str]:
        order: list[str] = []
        fg = lifecycle.Foreground()
        await fg.admit()  # a turn's slot, released below
        withdrawn = asyncio.ensure_future(fg.admit())
        kept = asyncio.ensure_future(fg.admit())
        await asyncio.sleep(0)
        withdrawn.cancel()
        await asyncio.sleep(0)
        fg._release()  # the turn ended
        await asyncio.wait_for(kept, 1)
        order.append("kept admitted")
        return order

    assert run(scenario()) == ["kept admitted"]


def test_a_slot_handed_to_a_withdrawn_prompt_is_passed_on() -> None:
    async def scenario() -> bool:
        fg = lifecycle.Foreground()
        await fg.admit()
        withdrawn = asyncio.ensure_future(fg.admit())
        kept = asyncio.ensure_future(fg.admit())
        await asyncio.sleep(0)
        fg._release()  # hands the slot to `withdrawn`...
        withdrawn.cancel()  # ...which is cancelled before it could take it
        await asyncio.gather(withdrawn, return_exceptions=True)
        await asyncio.wait_for(kept, 1)
        return kept.done()

    assert run(scenario())


def test_start_needs_the_slot() -> None:
    async def scenario() -> None:
        with pytest.raises(RuntimeError, match="needs the slot admit"):
            lifecycle.Foreground().start(Steps([]))

    run(scenario())


def test_failures_are_described_in_one_line_and_a_traceback_only_for_bugs() -> None:
    rpc_error = jsonrpc.RpcError(-32603, "Internal error", "db down")
    assert lifecycle.describe_failure(rpc_error) == (
        'error Internal error (-32603): "db down"',
        False,
    )
    decode_error = DecodeError("expected a string, got an integer").at("outcome")
    assert lifecycle.describe_failure(decode_error) == (
        "the client sent an invalid answer: $.outcome: expected a string, got an integer",
        False,
    )
    assert lifecycle.describe_failure(KeyError("x")) == ("KeyError: 'x'", True)


# -- book -----------------------------------------------------------------------------------
class Listed:
    def __init__(self, id: str, cwd: str) -> None:
        self.id = id
        self.cwd = cwd


def test_the_book_pages_in_creation_order_and_filters_by_directory() -> None:
    book = sessions.SessionBook()
    for n, cwd in enumerate(["/a", "/b", "/a/", "/a/./", "/a/sub", "/a"]):
        book.add(Listed(f"s{n}", cwd))
    page, cursor = book.page(size=4)
    assert [s.id for s in page] == ["s0", "s1", "s2", "s3"]
    page, end = book.page(cursor=cursor, size=4)
    assert ([s.id for s in page], end) == (["s4", "s5"], None)
    # Only the same directory matches, normalized; subdirectories do not.
    page, cursor = book.page(cwd="/a", size=2)
    assert [s.id for s in page] == ["s0", "s2"]
    page, end = book.page(cwd="/a", cursor=cursor, size=2)
    assert ([s.id for s in page], end) == (["s3", "s5"], None)
    assert book.page(cwd="/nowhere") == ([], None)


def test_a_full_last_page_has_no_next_cursor() -> None:
    book = sessions.SessionBook()
    book.add(Listed("s0", "/"))
    book.add(Listed("s1", "/"))
    assert [s.id for s in book.page(size=2)[0]] == ["s0", "s1"]
    assert book.page(size=2)[1] is None


def test_sessions_closed_between_pages_do_not_shift_the_pages() -> None:
    book = sessions.SessionBook()
    for n in range(5):
        book.add(Listed(f"s{n}", "/"))
    _, cursor = book.page(size=2)
    assert book.remove("s1") is not None and book.remove("s2") is not None
    assert book.remove("s2") is None
    page, _ = book.page(cursor=cursor, size=2)
    assert [s.id for s in page] == ["s3", "s4"]
    assert [s.id for s in book] == ["s0", "s3", "s4"] and len(book) == 3 and "s3" in book


@pytest.mark.parametrize("cursor", ["", "7", "after:", "after:x", "after:-1", "after:١"])
def test_a_cursor_the_book_did_not_hand_out_is_refused(cursor: str) -> None:
    with pytest.raises(sessions.InvalidCursor, match="not a cursor this agent handed out"):
        sessions.SessionBook().page(cursor=cursor)


def test_a_session_id_is_added_once() -> None:
    book = sessions.SessionBook()
    book.add(Listed("s", "/"))
    with pytest.raises(ValueError, match="'s' is already open"):
        book.add(Listed("s", "/other"))


def test_timestamps_are_rfc3339_utc_with_milliseconds() -> None:
    stamp = sessions.now_rfc3339()
    assert len(stamp) == len("2026-12-01T09:43:18.123Z") and stamp.endswith("Z")
    assert stamp[10] == "T" and stamp[19] == "."


# -- broadcast ----------------------------------------------------------------------------------
def test_callbacks_and_streams_see_every_item_in_order() -> None:
    async def scenario() -> tuple[list[Any], list[Any], list[Any]]:
        hub = broadcast.Broadcast()
        plain: list[Any] = []
        awaited: list[Any] = []

        async def slow(item: Any) -> None:
            await asyncio.sleep(0)
            awaited.append(item)

        hub.subscribe(plain.append)
        hub.subscribe(slow)
        stream = hub.stream()
        for item in range(3):
            await hub.publish(item)
        hub.close()
        streamed = [item async for item in stream]
        return plain, awaited, streamed

    assert run(scenario()) == ([0, 1, 2], [0, 1, 2], [0, 1, 2])


def test_a_failing_callback_is_logged_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def bad(item: Any) -> None:
        raise ValueError(item)

    async def scenario() -> list[Any]:
        hub = broadcast.Broadcast(name="session s1")
        seen: list[Any] = []
        hub.subscribe(bad)
        hub.subscribe(seen.append)
        await hub.publish("x")
        return seen

    with caplog.at_level(logging.ERROR):
        assert run(scenario()) == ["x"]
    assert [r.getMessage() for r in caplog.records] == ["a subscriber of session s1 failed"]


def test_unsubscribing_and_closing_a_stream_stop_delivery() -> None:
    async def scenario() -> tuple[list[Any], list[Any]]:
        hub = broadcast.Broadcast()
        seen: list[Any] = []
        unsubscribe = hub.subscribe(seen.append)
        async with hub.stream() as stream:
            await hub.publish(1)
            first = await stream.__anext__()
        unsubscribe()
        unsubscribe()  # twice is fine
        await hub.publish(2)
        rest = [item async for item in stream]
        return seen, [first, *rest]

    assert run(scenario()) == ([1], [1])


def test_a_full_stream_slows_the_publisher_down() -> None:
    async def scenario() -> tuple[bool, list[Any]]:
        hub = broadcast.Broadcast()
        stream = hub.stream(buffer=2)
        await hub.publish(1)
        await hub.publish(2)
        third = asyncio.ensure_future(hub.publish(3))
        await asyncio.sleep(0.01)
        blocked = not third.done()
        got = [await stream.__anext__()]
        await asyncio.wait_for(third, 1)
        got += [await stream.__anext__(), await stream.__anext__()]
        return blocked, got

    assert run(scenario()) == (True, [1, 2, 3])


def test_a_stream_kept_full_past_the_stall_timeout_is_dropped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> tuple[list[Any], list[Any], int]:
        hub = broadcast.Broadcast[int](stall_timeout=0.05, name="session s1")
        held = hub.stream(buffer=2)  # never read
        read = hub.stream(buffer=10)
        for n in range(5):
            await hub.publish(n)  # waits 0.05 s once at the third, then goes on without `held`
        hub.close()
        return [n async for n in held], [n async for n in read], held.buffered

    with caplog.at_level(logging.WARNING):
        held, read, left = run(scenario())
    assert (held, read, left) == ([0, 1], [0, 1, 2, 3, 4], 0)  # its buffered items, then the end
    assert [r.getMessage() for r in caplog.records] == [
        "an updates() stream of session s1 was not read for 0.05 s with 2 items waiting:"
        " dropped (read it, or leave its `async for`)"
    ]


def test_an_async_callback_that_holds_publishing_up_is_unsubscribed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> tuple[list[Any], list[Any]]:
        hub = broadcast.Broadcast[int](stall_timeout=0.05, name="session s1")
        slow: list[Any] = []
        fast: list[Any] = []

        async def stuck(item: int) -> None:
            slow.append(item)
            await asyncio.sleep(60)

        hub.subscribe(stuck)
        hub.subscribe(fast.append)
        for n in range(3):
            await hub.publish(n)
        return slow, fast

    with caplog.at_level(logging.WARNING):
        assert run(scenario()) == ([0], [0, 1, 2])
    assert [r.getMessage() for r in caplog.records] == [
        "a subscriber of session s1 took over 0.05 s: unsubscribed it"
    ]


def test_a_stream_nobody_holds_is_dropped_and_never_blocks() -> None:
    async def scenario() -> int:
        hub = broadcast.Broadcast()
        hub.stream(buffer=1)  # not kept
        gc.collect()
        for item in range(5):
            await asyncio.wait_for(hub.publish(item), 1)
        return len(hub._streams)

    assert run(scenario()) == 0


def test_leaving_an_async_for_early_drops_the_stream() -> None:
    async def scenario() -> int:
        hub = broadcast.Broadcast()

        async def first_item() -> Any:
            async for item in hub.stream(buffer=1):
                return item
            return None

        reader = asyncio.ensure_future(first_item())
        await asyncio.sleep(0)
        await hub.publish("a")
        assert await reader == "a"
        gc.collect()
        for item in range(3):
            await asyncio.wait_for(hub.publish(item), 1)
        return len(hub._streams)

    assert run(scenario()) == 0


def test_a_stream_opened_after_close_is_empty() -> None:
    async def scenario() -> tuple[list[Any], bool]:
        hub = broadcast.Broadcast()
        hub.close()
        return [item async for item in hub.stream()], hub.closed

    assert run(scenario()) == ([], True)


def test_close_ends_a_full_stream_after_its_buffered_items() -> None:
    async def scenario() -> list[Any]:
        hub = broadcast.Broadcast()
        stream = hub.stream(buffer=2)
        await hub.publish(1)
        await hub.publish(2)
        hub.close()  # the buffer is full: no room for the end marker
        return [item async for item in stream]

    assert run(scenario()) == [1, 2]
