"""The workspace's terminals: one command each, in its own process group, its output bounded.

A `Terminal` starts its command with stdin closed and stdout and stderr on one pipe, as the
leader of a new session (so of a new process group, whose id is its pid). Its exit is watched
on the process itself (a pidfd on Linux, else a thread in `waitid`), never on the pipe: a
command that leaves a background child holding the pipe (`sh -c "sleep 30 &"`) has exited
when its shell has. The leader is left a zombie (`WNOWAIT`) until the terminal is released,
so its pid, the group's id, cannot be reused while the group may still be signalled: `kill`,
`release` and interpreter exit (atexit) send SIGKILL to the whole group, orphans included.

The pipe is read as data comes and only the last `limit` bytes are kept (the output is shown
from the first whole character after a cut); reading goes on after the exit, for what the
group still writes, until end of file or release.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import Final, NamedTuple

_READ: Final = 262144
_DRAIN_LIMIT: Final = 4 * 1024 * 1024
"""At exit, what is already in the pipe is read at once, up to this much."""
REAP_TIMEOUT: Final = 5.0
"""How long `release` waits for a killed command to be gone (one stuck in the kernel)."""


class ExitStatus(NamedTuple):
    """How a command ended: its exit code, or the name of the signal that ended it."""

    exit_code: int | None
    signal: str | None


class TerminalOutput(NamedTuple):
    """What `terminal/output` answers: the output kept, whether some was cut, the exit."""

    output: str
    truncated: bool
    exit_status: ExitStatus | None


class Output:
    """The last `limit` bytes a command wrote."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.truncated = False

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        over = len(self.data) - self.limit
        if over > 0:
            del self.data[:over]
            self.truncated = True

    def text(self, *, complete: bool) -> str:
        """The bytes kept as text, from the first whole character after a cut; unless
        `complete`, without a character still being written at the end."""
        data = self.data
        start = 0
        if self.truncated:
            while start < min(3, len(data)) and data[start] & 0xC0 == 0x80:
                start += 1
        end = len(data) if complete else _whole(data)
        return bytes(data[start:end]).decode("utf-8", errors="replace")


def _whole(data: bytearray) -> int:
    """The length of `data` without a UTF-8 sequence cut short at its end."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:
            continue
        if byte >= 0xC0:
            needed = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return len(data) - back if needed > back else len(data)
        return len(data)
    return len(data)


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


_LIVE: Final[set[Terminal]] = set()
"""Terminals whose group may still be signalled, for the kill at interpreter exit."""


@atexit.register
def _kill_all() -> None:
    for terminal in list(_LIVE):
        terminal.kill()


class Terminal:
    """One command, started in the running loop; see the module docstring."""

    def __init__(
        self,
        session_id: str,
        argv: Sequence[str],
        *,
        executable: str,
        cwd: str,
        env: Mapping[str, str],
        limit: int,
    ) -> None:
        self.session_id = session_id
        self.output = Output(limit)
        self.exit_status: ExitStatus | None = None
        self._loop = asyncio.get_running_loop()
        self._exited = asyncio.Event()
        self._process = subprocess.Popen(  # raises OSError: cannot run it
            list(argv),
            executable=executable,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.pid = self._process.pid
        self._released = False
        _LIVE.add(self)
        self._pipe: int | None = None
        try:
            assert self._process.stdout is not None
            self._pipe = self._process.stdout.fileno()
            os.set_blocking(self._pipe, False)
            self._loop.add_reader(self._pipe, self._readable)
            self._watch()
        except BaseException:  # e.g. a loop without add_reader: nothing must be left running
            self.kill()
            self._close_pipe()
            self._process.wait()
            _LIVE.discard(self)
            raise

    # -- output ------------------------------------------------------------------------------
    def _readable(self) -> None:
        self._read(_READ)

    def _read(self, most: int) -> None:
        """Read up to `most` bytes of what the pipe holds now, without waiting for more."""
        taken = 0
        while self._pipe is not None and taken < most:
            try:
                chunk = os.read(self._pipe, _READ)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._close_pipe()
                return
            self.output.add(chunk)
            taken += len(chunk)

    def _close_pipe(self) -> None:
        if self._pipe is not None:
            self._loop.remove_reader(self._pipe)
            self._pipe = None
            assert self._process.stdout is not None
            self._process.stdout.close()

    def text(self) -> TerminalOutput:
        complete = self.exit_status is not None and self._pipe is None
        return TerminalOutput(
            self.output.text(complete=complete), self.output.truncated, self.exit_status
        )

    # -- exit --------------------------------------------------------------------------------
    def _watch(self) -> None:
        if sys.platform == "linux":
            try:
                pidfd = os.pidfd_open(self.pid)
            except OSError:  # a kernel before 5.3
                pass
            else:
                self._loop.add_reader(pidfd, self._pidfd_ready, pidfd)
                return
        threading.Thread(target=self._wait_in_thread, daemon=True).start()

    def _pidfd_ready(self, pidfd: int) -> None:
        self._loop.remove_reader(pidfd)
        os.close(pidfd)
        self._ended(self._peek(block=False))

    def _wait_in_thread(self) -> None:
        status = self._peek(block=True)
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
            self._loop.call_soon_threadsafe(self._ended, status)

    def _peek(self, *, block: bool) -> ExitStatus:
        """The leader's exit status, leaving it unreaped."""
        options = os.WEXITED | os.WNOWAIT | (0 if block else os.WNOHANG)
        try:
            result = os.waitid(os.P_PID, self.pid, options)
        except ChildProcessError:  # reaped by someone else: the status is lost
            return ExitStatus(None, None)
        if result is None:
            return ExitStatus(None, None)
        if result.si_code == os.CLD_EXITED:
            return ExitStatus(result.si_status, None)
        return ExitStatus(None, signal_name(result.si_status))

    def _ended(self, status: ExitStatus) -> None:
        if self.exit_status is None:
            self._read(_DRAIN_LIMIT)
            self.exit_status = status
            self._exited.set()
        if self._released:  # it outlived `stop`'s wait: reap it now
            self._reap()

    async def wait(self) -> ExitStatus:
        await self._exited.wait()
        assert self.exit_status is not None
        return self.exit_status

    # -- ending ------------------------------------------------------------------------------
    def kill(self) -> None:
        """SIGKILL to the command's whole group (nothing once it was reaped)."""
        if self in _LIVE:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)

    async def stop(self) -> None:
        """Kill the group, wait (a bounded time) for the leader, reap it, close the pipe."""
        self._released = True
        self.kill()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._exited.wait(), REAP_TIMEOUT)
        if self._exited.is_set():
            self._reap()
        self._close_pipe()

    def _reap(self) -> None:
        if self._process.poll() is not None:
            _LIVE.discard(self)
