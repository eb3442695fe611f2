"""The worker thread behind the SQLite and PostgreSQL stores, on an engine that records what
it is asked (the memory engine underneath): group commits, retries, a worker that fails."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import pytest

from templates.toolkit import store_runner
from templates.toolkit.store import SessionSetup, SessionStore, StoreClosed, StoreError
from templates.toolkit.store_engine import TransientError, WriteOp
from templates.toolkit.store_memory import MemoryEngine
from templates.toolkit.store_runner import ThreadRunner
from templates.toolkit.store_types import MEMORY_RETENTION


class Recording(MemoryEngine):
    """Records each commit's size; can hold the first commit, fail some, or break."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []
        self.hold: threading.Event | None = None
        self.busy_times = 0
        self.broken: BaseException | None = None
        self.thread: str | None = None

    def write(self, ops: Sequence[WriteOp], now: str) -> None:
        self.thread = threading.current_thread().name
        if self.broken is not None:
            raise self.broken
        if self.busy_times:
            self.busy_times -= 1
            raise TransientError(f"{self.label}: busy")
        self.batches.append(len(ops))
        if self.hold is not None and len(self.batches) == 1:
            self.hold.wait(10)
        super().write(ops, now)


def store_on(engine: Recording) -> SessionStore:
    return SessionStore(engine, ThreadRunner(), retention=MEMORY_RETENTION)


def run(work: Any) -> Any:
    return asyncio.run(work)


def test_writes_queued_during_a_commit_go_in_the_next_one() -> None:
    engine = Recording()
    engine.hold = threading.Event()

    async def body() -> tuple[int, ...]:
        async with store_on(engine) as store:
            await store.create(SessionSetup("s", "/p", protocol_version=2))
            store.append("s", "m", "a", 0)
            while not engine.batches:  # the worker is in its first commit, held
                await asyncio.sleep(0.01)
            for n in range(1, 101):
                store.append("s", "m", "a", n)
            engine.hold.set()
            await store.flush()
            entries = [e async for e in store.history("s")]
            return entries[0].items

    items = run(body())
    assert items == tuple(range(101))
    assert engine.batches == [1, 100]
    assert engine.thread is not None and engine.thread.startswith("store ")


def test_a_busy_commit_is_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_runner, "_RETRY_DELAYS", (0.0, 0.0, 0.0))
    engine = Recording()

    async def body() -> int:
        async with store_on(engine) as store:
            await store.create(SessionSetup("s", "/p", protocol_version=2))
            engine.busy_times = 3  # as many as there are retries: the last try works
            store.put("s", "k", "x", 1)
            await store.flush()
            return len([e async for e in store.history("s")])

    assert run(body()) == 1
    assert engine.batches == [1]


def test_a_worker_that_breaks_fails_its_callers_instead_of_hanging() -> None:
    engine = Recording()

    async def body() -> tuple[str, str]:
        store = await store_on(engine).open()
        await store.create(SessionSetup("s", "/p", protocol_version=2))
        engine.broken = KeyboardInterrupt()
        store.put("s", "k", "x", 1)
        with pytest.raises(StoreError) as flushed:
            await asyncio.wait_for(store.flush(), 10)
        with pytest.raises(StoreError) as later:
            store.put("s", "k", "y", 2)
        assert not isinstance(later.value, StoreClosed)
        return str(flushed.value), str(later.value)

    flushed, later = run(body())
    expected = "memory session store: the store's worker failed: KeyboardInterrupt()"
    assert expected in (flushed, later)
    assert later == expected
