"""A connection to a child process's stdin and stdout (a client spawning its agent):
`connect_process` starts the child and returns a `ProcessConnection`, which owns it, over a
`ProcessTransport` of its pipes.

The child gets a trimmed environment: only DEFAULT_ENVIRONMENT's variables of this process
(HOME, LOGNAME, PATH, SHELL, TERM, USER, as the official Python SDK keeps; on Windows the set
Windows programs need to start; and PYTHONHOME and PYTHONPATH, which a Python child of this
interpreter needs to start and find its packages), plus what the caller passes as `env=`;
`inherit_env=True` passes the whole environment.
Bounds: closing gives the child `exit_timeout` seconds to exit after its stdin closed, then
SIGTERM and as long again, then SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Generator, Mapping
from typing import IO, Any, Final, Unpack

from .connection import Connection, ConnectionOptions, RoleBase
from .transport import READ_CHUNK

EXIT_TIMEOUT: Final = 2.0
"""Seconds a child gets to exit after its stdin closed (then SIGTERM, then as long again and
SIGKILL)."""

_WINDOWS_ENVIRONMENT: Final = (
    "APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT",
    "PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE",
)  # fmt: skip
_POSIX_ENVIRONMENT: Final = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
DEFAULT_ENVIRONMENT: Final = (
    *(_WINDOWS_ENVIRONMENT if os.name == "nt" else _POSIX_ENVIRONMENT),
    "PYTHONHOME",
    "PYTHONPATH",
)
"""The variables of this process's environment a child process gets by default: those the
official Python SDK keeps, and the two a Python child of this interpreter needs to start and
to find the packages this process found (PYTHONHOME, PYTHONPATH; passed only when this process
has them). Secrets, tokens and everything else stay behind."""


def child_environment(
    env: Mapping[str, str] | None = None, *, inherit_env: bool = False
) -> dict[str, str]:
    """The environment of a child process: this process's DEFAULT_ENVIRONMENT variables (a
    value that is a shell function, `() {...`, left out), or all of them with `inherit_env`,
    then `env` on top (adding and overriding)."""
    if inherit_env:
        out = dict(os.environ)
    else:
        out = {
            name: value
            for name in DEFAULT_ENVIRONMENT
            if (value := os.environ.get(name)) is not None and not value.startswith("()")
        }
    if env is not None:
        out.update(env)
    return out


def connect_process(
    handler: RoleBase,
    program: str,
    *args: str,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    inherit_env: bool = False,
    stderr: int | IO[Any] | None = None,
    exit_timeout: float = EXIT_TIMEOUT,
    **options: Unpack[ConnectionOptions],
) -> _ProcessStart:
    """Start `program` and serve `handler` on its stdin/stdout.

        async with connect_process(client, "my-agent", "--flag") as agent:
            ...                      # agent: a ProcessConnection (a started Connection)

        agent = await connect_process(client, "my-agent")   # the same, closed by hand:
        await agent.close()

    The child's environment is trimmed (see `child_environment`): HOME, LOGNAME, PATH, SHELL,
    TERM, USER, PYTHONHOME and PYTHONPATH of this process, plus `env` (which adds and
    overrides); `inherit_env=True` passes this process's whole environment (so does
    `env=os.environ`). Leaving the
    `async with` block (exceptions and cancellation included) or `close()` closes the
    connection and the child's stdin, gives the child `exit_timeout` seconds to exit, then
    terminates and at last kills it, and releases its pipes. `stderr` is passed to the child
    as is (inherited by default); `options` are those of `Connection`. Raises OSError when the
    program cannot be started.
    """
    environment = child_environment(env, inherit_env=inherit_env)
    return _ProcessStart(handler, program, args, cwd, environment, stderr, exit_timeout, options)


class ProcessConnection(Connection):
    """A Connection to a child process's stdin/stdout, which owns the process: closing it
    reaps the child (see `connect_process`). `pid` and `returncode` are the child's; `wait()`
    waits for it to exit; `terminate()`, `kill()` and `send_signal()` signal it."""

    def __init__(
        self,
        handler: RoleBase,
        child: _ChildProtocol,
        exit_timeout: float,
        options: ConnectionOptions,
    ) -> None:
        super().__init__(handler, ProcessTransport(child), **options)
        self._child = child
        self._exit_timeout = exit_timeout

    @property
    def pid(self) -> int:
        return self._child.transport.get_pid()

    @property
    def returncode(self) -> int | None:
        """The child's exit status (negative: the signal that ended it), None while it runs."""
        return self._child.transport.get_returncode()

    async def wait(self) -> int:
        """Wait for the child to exit; returns its exit status."""
        await asyncio.shield(self._child.exited)
        code = self.returncode
        assert code is not None
        return code

    def send_signal(self, signum: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._child.transport.send_signal(signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    async def close(self) -> None:
        """Close the connection (the child's stdin with it), then reap the child: it has
        `exit_timeout` seconds to exit, then it is terminated, then killed."""
        try:
            await super().close()
        finally:
            await self._reap()

    async def _reap(self) -> None:
        try:
            for stop in (None, self.terminate, self.kill):
                if stop is not None:
                    stop()
                try:
                    await asyncio.wait_for(self.wait(), self._exit_timeout)
                    break
                except TimeoutError:
                    continue
        finally:
            self._child.transport.close()  # kills a child still alive, releases the pipes


class ProcessTransport:
    """The Transport of a child's pipes: it receives the child's stdout and sends to its
    stdin; `close()` closes the stdin, and the pipes are released once the child has exited
    too (`abort()` releases them at once, killing a child still alive)."""

    def __init__(self, child: _ChildProtocol) -> None:
        self._child = child
        self._read = child.stdout.read
        self._closed = False
        child.exited.add_done_callback(self._on_exit)

    async def receive(self) -> bytes:
        return await self._read(READ_CHUNK)

    async def send(self, data: bytes) -> None:
        stdin = self._child.stdin
        stdin.write(data)
        await stdin.drain()

    async def close(self) -> None:
        self._closed = True
        try:
            self._child.stdin.close()
            await self._child.stdin.wait_closed()
        finally:
            if self._child.exited.done():
                self._child.transport.close()

    def abort(self) -> None:
        self._closed = True
        self._child.transport.close()

    def _on_exit(self, _: object) -> None:
        if self._closed:  # nothing more to read: the pipes can go
            self._child.transport.close()


class _ProcessStart:
    """What `connect_process` returns: await it for the ProcessConnection, or use it with
    `async with`, which closes the connection and reaps the child on the way out."""

    def __init__(
        self,
        handler: RoleBase,
        program: str,
        args: tuple[str, ...],
        cwd: str | os.PathLike[str] | None,
        env: dict[str, str],
        stderr: int | IO[Any] | None,
        exit_timeout: float,
        options: ConnectionOptions,
    ) -> None:
        self._start = (handler, program, args, cwd, env, stderr, exit_timeout, options)
        self._connection: ProcessConnection | None = None

    async def _open(self) -> ProcessConnection:
        handler, program, args, cwd, env, stderr, exit_timeout, options = self._start
        loop = asyncio.get_running_loop()
        _, child = await loop.subprocess_exec(
            lambda: _ChildProtocol(loop),
            program,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            cwd=cwd,
            env=env,
        )
        connection = ProcessConnection(handler, child, exit_timeout, options)
        connection.start()
        self._connection = connection
        return connection

    def __await__(self) -> Generator[Any, None, ProcessConnection]:
        return self._open().__await__()

    async def __aenter__(self) -> ProcessConnection:
        return await self._open()

    async def __aexit__(self, *exc: object) -> None:
        if self._connection is not None:
            await self._connection.close()


class _ChildProtocol(asyncio.SubprocessProtocol):
    """The child's pipes: stdout feeds a StreamReader (which pauses the pipe when full), stdin
    is a writer with flow control, and `exited` completes when the child exits."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.stdout = asyncio.StreamReader(loop=loop)
        self.stdin = _ChildStdin(loop)
        self.exited: asyncio.Future[None] = loop.create_future()
        self._transport: asyncio.SubprocessTransport | None = None

    @property
    def transport(self) -> asyncio.SubprocessTransport:
        assert self._transport is not None, "the child process has not started"
        return self._transport

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self._transport = transport
        stdout = transport.get_pipe_transport(1)
        stdin = transport.get_pipe_transport(0)
        assert isinstance(stdin, asyncio.WriteTransport) and stdout is not None  # both PIPEs
        self.stdout.set_transport(stdout)
        self.stdin.pipe = stdin

    def pipe_data_received(self, fd: int, data: bytes | bytearray) -> None:
        if fd == 1:
            self.stdout.feed_data(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self.stdout.feed_eof()
        elif fd == 0:
            self.stdin.lost(exc)

    def pause_writing(self) -> None:
        self.stdin.pause()

    def resume_writing(self) -> None:
        self.stdin.resume()

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)


class _ChildStdin:
    """The writing end of the child's stdin, with `drain()` waiting while the pipe is full."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.pipe: asyncio.WriteTransport | None = None
        self._paused = False
        self._resumed: asyncio.Future[None] | None = None
        self._closed: asyncio.Future[None] = loop.create_future()
        self._error: Exception | None = None

    def write(self, data: bytes) -> None:
        if self._error is not None or self.pipe is None or self.pipe.is_closing():
            raise BrokenPipeError("the child's stdin is closed")
        self.pipe.write(data)

    async def drain(self) -> None:
        if self._error is not None:
            raise ConnectionResetError(f"the child's stdin is closed: {self._error}")
        if self._paused:
            self._resumed = self._loop.create_future()
            await self._resumed
            if self._error is not None:
                raise ConnectionResetError(f"the child's stdin is closed: {self._error}")

    def close(self) -> None:
        if self.pipe is not None:
            self.pipe.close()

    async def wait_closed(self) -> None:
        await asyncio.shield(self._closed)

    def pause(self) -> None:
        self._paused = True

    def resume(self) -> None:
        self._paused = False
        if self._resumed is not None and not self._resumed.done():
            self._resumed.set_result(None)

    def lost(self, exc: Exception | None) -> None:
        if exc is not None:
            self._error = exc
        elif self._error is None:
            self._error = BrokenPipeError("closed")
        self.resume()
        if not self._closed.done():
            self._closed.set_result(None)
