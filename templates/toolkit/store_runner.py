"""Who calls a store's engine: `InlineRunner` at once, on the event loop (the memory engine,
which never waits), or `ThreadRunner` on a worker thread that owns the engine (SQLite,
PostgreSQL), so the event loop never waits on a disk or a server.

Writes are handed to the worker once per turn of the event loop (the writes of one step of a
turn travel together: one lock, one wake-up), and the worker takes every job queued since it
last looked: runs of writes are folded (`store_fold`) and committed in one transaction each
(a group commit of what accumulated while the previous one ran, and at most one every
`commit_interval` seconds while nobody waits: a crash loses at most that long of writes), and
calls (reads, creations, deletions, flush barriers) run in queue order between them, so a
read sees every write queued before it. Queued writes are bounded (`max_backlog` bytes of JSON):
past it, a write waits for the worker (`SessionStore.drain()` lets a coroutine wait instead).
A write that cannot be committed after retries stops the store's writes: `flush()` and every
later write raise StoreError naming the store and the cause.
"""

from __future__ import annotations

import abc
import asyncio
import atexit
import contextlib
import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from datetime import datetime
from typing import Any, Final, TypeVar, cast

from .store_engine import Engine, TransientError, WriteOp
from .store_fold import fold
from .store_types import StoreClosed, StoreError

T = TypeVar("T")
MAX_BACKLOG: Final = 64 << 20
"""Bytes of queued writes past which a write waits for the worker, by default."""
COMMIT_INTERVAL: Final = 0.005
"""Seconds between the commits of writes nobody waits for, at least, by default: a turn streaming
fast is committed in groups, not update by update; a flush or a read commits at once."""
_RETRY_DELAYS: Final = (0.05, 0.2, 0.5, 1.0, 2.0)  # seconds before each retry of a busy commit
_log: Final = logging.getLogger(__name__)


class Runner(abc.ABC):
    """Calls one engine on behalf of a `SessionStore`."""

    @property
    @abc.abstractmethod
    def backlog(self) -> int:
        """Bytes of writes queued and not yet committed."""

    @abc.abstractmethod
    async def start(self, engine: Engine, clock: Callable[[], datetime]) -> bytes:
        """Open the engine; returns its cursor secret."""

    @abc.abstractmethod
    def submit(self, op: WriteOp) -> None:
        """Queue a write (StoreError once writes have stopped)."""

    @abc.abstractmethod
    async def call(self, fn: Callable[[Engine], T]) -> T:
        """`fn(engine)` after every write submitted before it."""

    @abc.abstractmethod
    def post(self, fn: Callable[[Engine], object]) -> None:
        """`fn(engine)` in its turn, without waiting for it; a failure is logged."""

    @abc.abstractmethod
    async def flush(self) -> None: ...

    @abc.abstractmethod
    async def drain(self) -> None: ...

    @abc.abstractmethod
    async def stop(self) -> None:
        """Commit what is queued and close the engine."""


class InlineRunner(Runner):
    """Calls the engine at once: for engines that never wait (memory)."""

    __slots__ = ("_engine", "_clock")

    def __init__(self) -> None:
        self._engine: Engine | None = None
        self._clock: Callable[[], datetime] | None = None

    @property
    def backlog(self) -> int:
        return 0

    async def start(self, engine: Engine, clock: Callable[[], datetime]) -> bytes:
        secret = engine.open()
        self._engine, self._clock = engine, clock
        return secret

    def _opened(self) -> Engine:
        if self._engine is None:
            raise StoreClosed("the store is not open")
        return self._engine

    def submit(self, op: WriteOp) -> None:
        assert self._clock is not None
        self._opened().write((op,), self._clock())

    async def call(self, fn: Callable[[Engine], T]) -> T:
        return fn(self._opened())

    def post(self, fn: Callable[[Engine], object]) -> None:
        try:
            fn(self._opened())
        except Exception:
            _log.exception("%s: a background store job failed", self._opened().label)

    async def flush(self) -> None:
        self._opened()

    async def drain(self) -> None:
        self._opened()

    async def stop(self) -> None:
        if self._engine is not None:
            engine, self._engine = self._engine, None
            engine.close()


class _Call:
    __slots__ = ("fn", "future", "last")

    def __init__(
        self,
        fn: Callable[[Engine], object] | None,
        future: asyncio.Future[Any] | None,
        last: bool = False,
    ) -> None:
        self.fn = fn  # None: a flush barrier
        self.future = future  # None: posted
        self.last = last  # the worker's final job


class ThreadRunner(Runner):
    """Owns a worker thread that owns the engine; see the module docstring."""

    def __init__(
        self, *, max_backlog: int = MAX_BACKLOG, commit_interval: float = COMMIT_INTERVAL
    ) -> None:
        if type(max_backlog) is not int or max_backlog < 1:
            raise ValueError(f"max_backlog must be a positive int, got {max_backlog!r}")
        if not 0 <= commit_interval <= 1:
            raise ValueError(f"commit_interval must be 0 to 1 s, got {commit_interval!r}")
        self._max_backlog = max_backlog
        self._interval = commit_interval
        self._last_commit = 0.0  # time.monotonic() of the last commit
        self._pacing = False  # the worker waits out the interval (woken for calls only)
        lock = threading.Lock()
        self._ready = threading.Condition(lock)  # the worker waits here for jobs
        self._room = threading.Condition(lock)  # writers wait here while the backlog is full
        self._idle = False  # the worker is waiting on `_ready` (only then is it woken)
        self._crowded = 0  # writers waiting on `_room`
        self._jobs: deque[WriteOp | _Call] = deque()
        self._batch: list[WriteOp] = []  # writes of this turn of the event loop, not handed over
        self._batch_size = 0
        self._taken: list[WriteOp | _Call] = []  # the jobs the worker is going through
        self._backlog = 0
        self._failure: str | None = None  # why writes stopped
        self._accepting = False
        self._label = "session store"
        self._engine: Engine | None = None
        self._clock: Callable[[], datetime] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def backlog(self) -> int:
        return self._backlog + self._batch_size

    async def start(self, engine: Engine, clock: Callable[[], datetime]) -> bytes:
        self._engine, self._clock, self._label = engine, clock, engine.label
        self._loop = asyncio.get_running_loop()
        self._accepting, self._failure = True, None
        self._thread = threading.Thread(target=self._work, name=f"store {self._label}", daemon=True)
        self._thread.start()
        _running.add(self)
        try:
            return await self.call(lambda engine: engine.open())
        except BaseException:
            await self.stop()
            raise

    # -- the event loop's side -------------------------------------------------------------
    def _enqueue(self, job: WriteOp | _Call, size: int) -> None:
        with self._ready:
            if self._failure is not None and (size or not self._accepting):
                raise StoreError(self._failure)
            if not self._accepting:
                raise StoreClosed(f"{self._label}: the store is not open")
            if size:
                while self._backlog >= self._max_backlog and self._failure is None:
                    self._crowded += 1
                    self._room.wait()
                    self._crowded -= 1
                self._backlog += size
            self._jobs.append(job)
            if self._idle or (self._pacing and not size):  # a call does not wait the interval
                self._ready.notify()

    def submit(self, op: WriteOp) -> None:
        if self._failure is not None:
            raise StoreError(self._failure)
        if not self._accepting or self._loop is None:
            raise StoreClosed(f"{self._label}: the store is not open")
        size = op.size() + 1
        if self._batch and self._backlog + self._batch_size + size > self._max_backlog:
            self._hand_over()  # waits for room: the backlog stays within its cap
        if not self._batch:
            self._loop.call_soon(self._hand_over)
        self._batch.append(op)
        self._batch_size += size

    def _hand_over(self) -> None:
        """Give the worker this loop turn's writes (before any later call, in order)."""
        if not self._batch:
            return
        batch, size = self._batch, self._batch_size
        self._batch, self._batch_size = [], 0
        with self._ready:
            if self._failure is not None or not self._accepting:
                return  # dropped, as queued writes are when writes stop
            while (
                self._backlog and self._backlog + size > self._max_backlog and self._failure is None
            ):
                self._crowded += 1
                self._pacing = False  # commit now: a writer waits
                self._ready.notify()
                self._room.wait()
                self._crowded -= 1
            self._backlog += size
            self._jobs.extend(batch)
            if self._idle:
                self._ready.notify()

    async def call(self, fn: Callable[[Engine], T]) -> T:
        assert self._loop is not None
        future: asyncio.Future[Any] = self._loop.create_future()
        self._hand_over()
        self._enqueue(_Call(fn, future), 0)
        return cast(T, await future)

    def post(self, fn: Callable[[Engine], object]) -> None:
        self._hand_over()
        self._enqueue(_Call(fn, None), 0)

    async def flush(self) -> None:
        assert self._loop is not None
        future: asyncio.Future[Any] = self._loop.create_future()
        self._hand_over()
        self._enqueue(_Call(None, future), 0)
        await future

    async def drain(self) -> None:
        if self.backlog > self._max_backlog // 2:
            await self.flush()

    def _last_job(self, future: asyncio.Future[Any] | None) -> bool:
        """Queue the worker's final job (commit, close the engine, end); False if queued."""
        self._hand_over()
        with self._ready:
            if not self._accepting:
                return False
            self._jobs.append(_Call(_close, future, last=True))
            self._accepting = False
            self._ready.notify()
            return True

    async def stop(self) -> None:
        thread = self._thread
        if thread is None or self._loop is None:
            return
        future: asyncio.Future[Any] = self._loop.create_future()
        if not self._last_job(future):
            return
        try:
            await future
        finally:
            thread.join(timeout=5)
            _running.discard(self)

    def stop_at_exit(self) -> None:
        """Commit what is queued when the interpreter exits without `stop()`."""
        if self._last_job(None) and self._thread is not None:
            self._thread.join(timeout=10)

    # -- the worker's side -----------------------------------------------------------------
    def _work(self) -> None:
        try:
            self._serve()
        except BaseException as exc:  # a bug here must fail the callers, not leave them waiting
            _log.exception("%s: the store's worker failed", self._label)
            with self._ready:
                self._failure = f"{self._label}: the store's worker failed: {exc!r}"
                self._accepting = False
                orphans = [job for job in (*self._taken, *self._jobs) if isinstance(job, _Call)]
                self._jobs.clear()
                self._backlog = 0
                self._room.notify_all()
            for job in orphans:
                if job.future is not None and self._loop is not None:
                    with contextlib.suppress(RuntimeError):
                        error = StoreError(self._failure)
                        self._loop.call_soon_threadsafe(_settle, job.future, None, error)

    def _serve(self) -> None:
        while True:
            with self._ready:
                while not self._jobs:
                    self._idle = True
                    self._ready.wait()
                    self._idle = False
                self._pace()
                jobs = self._taken = list(self._jobs)
                self._jobs.clear()
            writes: list[WriteOp] = []
            for job in jobs:
                if not isinstance(job, _Call):
                    writes.append(job)
                    continue
                if writes:
                    self._commit(writes)
                    writes = []
                self._run(job)
                if job.last:
                    return
            if writes:
                self._commit(writes)

    def _pace(self) -> None:
        """With only writes queued, wait out the commit interval (holding `_ready`): writes
        that come meanwhile join this commit. A call, a crowded writer or the end cut it short."""
        self._pacing = True
        while self._pacing and self._accepting and self._failure is None:
            if any(isinstance(job, _Call) for job in self._jobs) or self._crowded:
                break
            left = self._last_commit + self._interval - time.monotonic()
            if left <= 0:
                break
            self._ready.wait(left)
        self._pacing = False

    def _commit(self, ops: list[WriteOp]) -> None:
        """One transaction for `ops`, tried again while the engine says it may work."""
        assert self._engine is not None and self._clock is not None
        folded = fold(ops)
        try:
            for delay in (*_RETRY_DELAYS, None):
                if self._failure is not None:
                    return  # writes have stopped: these are dropped with the rest
                try:
                    self._engine.write(folded, self._clock())
                    self._last_commit = time.monotonic()
                    return
                except TransientError as exc:
                    if delay is None:
                        self._stop_writes(str(exc))
                        return
                    time.sleep(delay)
                except StoreError as exc:
                    self._stop_writes(str(exc))
                    return
                except Exception as exc:
                    self._stop_writes(f"{self._label}: {type(exc).__name__}: {exc}")
                    return
        finally:
            with self._ready:
                self._backlog -= sum(op.size() + 1 for op in ops)
                if self._crowded:
                    self._room.notify_all()

    def _stop_writes(self, reason: str) -> None:
        _log.error("%s; the store takes no more writes", reason)
        with self._ready:
            self._failure = f"{reason}; the store takes no more writes"
            self._room.notify_all()

    def _run(self, job: _Call) -> None:
        assert self._engine is not None
        result: object = None
        error: BaseException | None = None
        if job.fn is None:
            if self._failure is not None:
                error = StoreError(self._failure)
        else:
            try:
                result = job.fn(self._engine)
            except StoreError as exc:
                error = exc
            except Exception as exc:
                error = StoreError(f"{self._label}: {type(exc).__name__}: {exc}")
        if job.future is None:
            if error is not None:
                _log.error("%s: a background store job failed: %s", self._label, error)
            return
        assert self._loop is not None
        try:
            self._loop.call_soon_threadsafe(_settle, job.future, result, error)
        except RuntimeError:  # the loop is closed: nobody waits any more
            pass


def _close(engine: Engine) -> None:
    engine.close()


def _settle(future: asyncio.Future[Any], result: object, error: BaseException | None) -> None:
    if future.done():  # cancelled by its waiter, or failed with the worker
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


_running: weakref.WeakSet[ThreadRunner] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for runner in list(_running):
        runner.stop_at_exit()
