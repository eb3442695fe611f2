"""The toolkit's lane-neutral runtime modules, run against their source in templates/runtime
(see tests/support/runtime_package.py): `_lifecycle` (one turn at a time, held prompts,
cancellation, a close step run exactly once), `_sessions` (the session book behind
`session/list`) and `_broadcast` (subscriptions)."""

from __future__ import annotations

import asyncio
import gc
import importlib
import logging
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support import runtime_package
from tests.support.rpc_wire import run

PACKAGE = "toolkit_probe"


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    package = runtime_package.load(tmp_path_factory.mktemp("toolkit"), PACKAGE)
    yield package
    runtime_package.unload(PACKAGE)


def module(pkg: ModuleType, name: str) -> ModuleType:
    return importlib.import_module(f"{pkg.__name__}.{name}")


def test_the_toolkit_runtime_modules_are_the_source_files(pkg: ModuleType) -> None:
    for name in ("_lifecycle", "_sessions", "_broadcast"):
        assert Path(module(pkg, name).__file__ or "") == runtime_package.RUNTIME / f"{name}.py"


# -- _lifecycle ----------------------------------------------------------------------------------
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


def test_a_turn_that_returns_closes_once_with_its_value(pkg: ModuleType) -> None:
    lc = module(pkg, "_lifecycle")

    async def scenario() -> list[Any]:
        log: list[Any] = []
        fg = lc.Foreground()
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
def test_how_a_turn_ended_is_told_to_its_close_step(
    pkg: ModuleType, raised: Any, expected: str
) -> None:
    lc = module(pkg, "_lifecycle")
    jsonrpc = module(pkg, "jsonrpc")
    error = {
        "turn-cancelled": lc.TurnCancelled(),
        "closed": jsonrpc.ConnectionClosed("gone"),
    }.get(raised, raised)

    async def body() -> None:
        raise error

    async def scenario() -> list[Any]:
        log: list[Any] = []
        fg = lc.Foreground()
        await fg.admit()
        await fg.start(Steps(log, body))
        return log

    assert outcome_names(run(scenario())) == [expected]


def test_cancel_while_running_cancels_the_body_and_closes_cancelled(pkg: ModuleType) -> None:
    lc = module(pkg, "_lifecycle")

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

        fg = lc.Foreground()
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


def test_an_error_raised_while_cancelling_still_closes_cancelled(pkg: ModuleType) -> None:
    lc = module(pkg, "_lifecycle")

    async def scenario() -> list[Any]:
        log: list[Any] = []
        started = asyncio.Event()

        async def body() -> None:
            started.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                raise RuntimeError("the model client failed while aborting") from None

        fg = lc.Foreground()
        await fg.admit()
        fg.start(Steps(log, body))
        await started.wait()
        await fg.stop()
        return log

    assert outcome_names(run(scenario())) == ["Cancelled"]


def test_a_body_that_swallows_the_cancel_still_ends_cancelled(pkg: ModuleType) -> None:
    lc = module(pkg, "_lifecycle")

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

        fg = lc.Foreground()
        await fg.admit()
        fg.start(Closing(log, body))
        await started.wait()
        await fg.stop()
        return log, cancelling[0]

    log, cancelling = run(scenario())
    assert outcome_names(log) == ["Cancelled"]
    assert cancelling == 0


def test_a_turn_cancelled_before_its_first_step_opens_and_closes_without_running(
    pkg: ModuleType,
) -> None:
    lc = module(pkg, "_lifecycle")

    async def scenario() -> list[Any]:
        log: list[Any] = []
        fg = lc.Foreground()
        await fg.admit()
        task = fg.start(Steps(log))
        fg.cancel()  # same loop turn: the task has not begun
        await task
        return log

    assert run(scenario()) == [("turn", "open"), ("turn", "close", "Cancelled", None)]


def test_a_cancel_during_the_close_step_does_not_interrupt_it(pkg: ModuleType) -> None:
    lc = module(pkg, "_lifecycle")

    async def scenario() -> list[Any]:
        log: list[Any] = []
        closing = asyncio.Event()
        proceed = asyncio.Event()

        class SlowClose(Steps):
            async def close(self, outcome: Any) -> None:
                closing.set()
                await proceed.wait()
                await super().close(outcome)

        fg = lc.Foreground()
        await fg.admit()
        fg.start(SlowClose(log))
        await closing.wait()
        fg.cancel()
        proceed.set()
        await fg.wait()
        return log

    assert outcome_names(run(scenario())) == ["Ended"]


def test_a_failing_close_step_is_logged_and_frees_the_slot(
    pkg: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    lc = module(pkg, "_lifecycle")

    class BadClose(Steps):
        async def close(self, outcome: Any) -> None:
            raise KeyError("bug")

    async def scenario() -> bool:
        fg = lc.Foreground()
        await fg.admit()
        await fg.start(BadClose([]))
        await asyncio.wait_for(fg.admit(), 1)  # the slot is free again
        return fg.active

    with caplog.at_level(logging.ERROR):
        assert run(scenario()) is False
    assert [r.getMessage() for r in caplog.records] == ["closing a turn failed"]


def test_cancelling_the_task_from_outside_is_re_raised_after_the_close_step(
    pkg: ModuleType,
) -> None:
    lc = module(pkg, "_lifecycle")

    async def scenario() -> tuple[list[Any], bool]:
        log: list[Any] = []
        steps = Steps(log, lambda: asyncio.sleep(60))
        fg = lc.Foreground()
        await fg.admit()
        task = fg.start(steps)
        await steps.running.wait()
        task.cancel()  # e.g. the event loop shutting down
        await asyncio.wait({task})
        return log, task.cancelled()

    log, cancelled = run(scenario())
    assert outcome_names(log) == ["Cancelled"]
    assert cancelled


def test_prompts_are_held_in_arrival_order_while_a_turn_runs(pkg: ModuleType) -> None:
    lc = module(pkg, "_lifecycle")

    async def scenario() -> list[Any]:
        log: list[Any] = []
        release = asyncio.Event()
        fg = lc.Foreground()

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


def test_cancel_fails_every_held_prompt(pkg: ModuleType) -> None:
    lc = module(pkg, "_lifecycle")

    async def scenario() -> tuple[list[Any], int]:
        log: list[Any] = []
        fg = lc.Foreground()
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


def test_a_held_prompt_withdrawn_by_the_client_gives_up_its_place(pkg: ModuleType) -> None:
    lc = module(pkg, "_lifecycle")

    async def scenario() -> list[str]:
        order: list[str] = []
        fg = lc.Foreground()
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


def test_a_slot_handed_to_a_withdrawn_prompt_is_passed_on(pkg: ModuleType) -> None:
    lc = module(pkg, "_lifecycle")

    async def scenario() -> bool:
        fg = lc.Foreground()
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


def test_start_needs_the_slot(pkg: ModuleType) -> None:
    lc = module(pkg, "_lifecycle")

    async def scenario() -> None:
        with pytest.raises(RuntimeError, match="needs the slot admit"):
            lc.Foreground().start(Steps([]))

    run(scenario())


def test_failures_are_described_in_one_line_and_a_traceback_only_for_bugs(
    pkg: ModuleType,
) -> None:
    lc = module(pkg, "_lifecycle")
    rpc_error = module(pkg, "jsonrpc").RpcError(-32603, "Internal error", "db down")
    assert lc.describe_failure(rpc_error) == ('error Internal error (-32603): "db down"', False)
    decode_error = pkg.DecodeError("expected a string, got an integer").at("outcome")
    assert lc.describe_failure(decode_error) == (
        "the client sent an invalid answer: $.outcome: expected a string, got an integer",
        False,
    )
    assert lc.describe_failure(KeyError("x")) == ("KeyError: 'x'", True)


# -- _sessions -----------------------------------------------------------------------------------
class Listed:
    def __init__(self, id: str, cwd: str) -> None:
        self.id = id
        self.cwd = cwd


def test_the_book_pages_in_creation_order_and_filters_by_directory(pkg: ModuleType) -> None:
    sessions = module(pkg, "_sessions")
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


def test_a_full_last_page_has_no_next_cursor(pkg: ModuleType) -> None:
    sessions = module(pkg, "_sessions")
    book = sessions.SessionBook()
    book.add(Listed("s0", "/"))
    book.add(Listed("s1", "/"))
    assert [s.id for s in book.page(size=2)[0]] == ["s0", "s1"]
    assert book.page(size=2)[1] is None


def test_sessions_closed_between_pages_do_not_shift_the_pages(pkg: ModuleType) -> None:
    sessions = module(pkg, "_sessions")
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
def test_a_cursor_the_book_did_not_hand_out_is_refused(pkg: ModuleType, cursor: str) -> None:
    sessions = module(pkg, "_sessions")
    with pytest.raises(sessions.InvalidCursor, match="not a cursor this agent handed out"):
        sessions.SessionBook().page(cursor=cursor)


def test_a_session_id_is_added_once(pkg: ModuleType) -> None:
    sessions = module(pkg, "_sessions")
    book = sessions.SessionBook()
    book.add(Listed("s", "/"))
    with pytest.raises(ValueError, match="'s' is already open"):
        book.add(Listed("s", "/other"))


def test_timestamps_are_rfc3339_utc_with_milliseconds(pkg: ModuleType) -> None:
    stamp = module(pkg, "_sessions").now_rfc3339()
    assert len(stamp) == len("2026-12-01T09:43:18.123Z") and stamp.endswith("Z")
    assert stamp[10] == "T" and stamp[19] == "."


# -- _broadcast ----------------------------------------------------------------------------------
def test_callbacks_and_streams_see_every_item_in_order(pkg: ModuleType) -> None:
    bc = module(pkg, "_broadcast")

    async def scenario() -> tuple[list[Any], list[Any], list[Any]]:
        hub = bc.Broadcast()
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
    pkg: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    bc = module(pkg, "_broadcast")

    def bad(item: Any) -> None:
        raise ValueError(item)

    async def scenario() -> list[Any]:
        hub = bc.Broadcast()
        seen: list[Any] = []
        hub.subscribe(bad)
        hub.subscribe(seen.append)
        await hub.publish("x")
        return seen

    with caplog.at_level(logging.ERROR):
        assert run(scenario()) == ["x"]
    assert [r.getMessage() for r in caplog.records] == ["a subscriber failed"]


def test_unsubscribing_and_closing_a_stream_stop_delivery(pkg: ModuleType) -> None:
    bc = module(pkg, "_broadcast")

    async def scenario() -> tuple[list[Any], list[Any]]:
        hub = bc.Broadcast()
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


def test_a_full_stream_slows_the_publisher_down(pkg: ModuleType) -> None:
    bc = module(pkg, "_broadcast")

    async def scenario() -> tuple[bool, list[Any]]:
        hub = bc.Broadcast()
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


def test_a_stream_nobody_holds_is_dropped_and_never_blocks(pkg: ModuleType) -> None:
    bc = module(pkg, "_broadcast")

    async def scenario() -> int:
        hub = bc.Broadcast()
        hub.stream(buffer=1)  # not kept
        gc.collect()
        for item in range(5):
            await asyncio.wait_for(hub.publish(item), 1)
        return len(hub._streams)

    assert run(scenario()) == 0


def test_leaving_an_async_for_early_drops_the_stream(pkg: ModuleType) -> None:
    bc = module(pkg, "_broadcast")

    async def scenario() -> int:
        hub = bc.Broadcast()

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


def test_a_stream_opened_after_close_is_empty(pkg: ModuleType) -> None:
    bc = module(pkg, "_broadcast")

    async def scenario() -> tuple[list[Any], bool]:
        hub = bc.Broadcast()
        hub.close()
        return [item async for item in hub.stream()], hub.closed

    assert run(scenario()) == ([], True)


def test_close_ends_a_full_stream_after_its_buffered_items(pkg: ModuleType) -> None:
    bc = module(pkg, "_broadcast")

    async def scenario() -> list[Any]:
        hub = bc.Broadcast()
        stream = hub.stream(buffer=2)
        await hub.publish(1)
        await hub.publish(2)
        hub.close()  # the buffer is full: no room for the end marker
        return [item async for item in stream]

    assert run(scenario()) == [1, 2]
