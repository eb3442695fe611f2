"""Connections over standard streams: this process's stdin/stdout (an agent's side), or the
stdin/stdout of a child process (a client spawning its agent)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
import sys
from collections.abc import Generator, Mapping
from typing import IO, Any, Final, TypedDict, Unpack

from .connection import Connection
from .jsonrpc import ByteReader, ByteWriter, RoleBase, Tap

EXIT_TIMEOUT: Final = 2.0
"""Seconds a child gets to exit after its stdin closed (then SIGTERM, then as long again and
SIGKILL)."""


class ConnectionOptions(TypedDict, total=False):
    """The keyword options of `Connection`, accepted by `connect_stdio` and `connect_process`."""

    max_message_bytes: int
    max_running_requests: int
    max_queued_notifications: int
    max_held_messages: int
    write_buffer_bytes: int
    request_timeout: float | None
    tap: Tap | None


async def connect_stdio(
    handler: RoleBase,
    *,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
    **options: Unpack[ConnectionOptions],
) -> Connection:
    """Serve `handler` on this process's stdin and stdout; the connection is started.

    Nothing else may write to stdout: log to stderr. `options` are those of `Connection`.
    """
    loop = asyncio.get_running_loop()
    source = stdin if stdin is not None else sys.stdin.buffer
    target = stdout if stdout is not None else sys.stdout.buffer
    reader: ByteReader = _FileReader(source)
    writer: ByteWriter = _FileWriter(target)
    if _pollable(source):
        stream = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stream), source
        )
        reader = _PipeReader(stream, transport)
    if _pollable(target):
        # A StreamReaderProtocol (with a reader nobody reads) gives the writer flow control
        # and a working wait_closed().
        write_transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), target
        )
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
    connection = _StdioConnection(handler, reader, writer, **options)
    connection.start()
    return connection


def connect_process(
    handler: RoleBase,
    program: str,
    *args: str,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    stderr: int | IO[Any] | None = None,
    exit_timeout: float = EXIT_TIMEOUT,
    **options: Unpack[ConnectionOptions],
) -> _ProcessStart:
    """Start `program` and serve `handler` on its stdin/stdout.

        async with connect_process(client, "my-agent", "--flag") as agent:
            ...                      # agent: a ProcessConnection (a started Connection)

        agent = await connect_process(client, "my-agent")   # the same, closed by hand:
        await agent.close()

    Leaving the `async with` block (exceptions and cancellation included) or `close()`
    closes the connection and the child's stdin, gives the child `exit_timeout` seconds to
    exit, then terminates and at last kills it, and releases its pipes. `stderr` is passed to
    the child as is (inherited by default); `options` are those of `Connection`. Raises
    OSError when the program cannot be started.
    """
    return _ProcessStart(
        handler, program, args, cwd, env, stderr, exit_timeout, options
    )  # fmt: skip


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
        super().__init__(handler, child.stdout, child.stdin, **options)
        self._child = child
        self._exit_timeout = exit_timeout
        child.exited.add_done_callback(self._on_exit)

    def _on_exit(self, _: object) -> None:
        if self.closed:  # nothing more to read: the pipes can go
            self._child.transport.close()

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

    def _after_close(self) -> None:
        if self._child.exited.done():
            self._child.transport.close()

    def _abort_transports(self) -> None:
        super()._abort_transports()
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
        env: Mapping[str, str] | None,
        stderr: int | IO[Any] | None,
        exit_timeout: float,
        options: ConnectionOptions,
    ) -> None:
        self._start = (handler, program, args, cwd, env, stderr, exit_timeout, options)
        self._connection: ProcessConnection | None = None

    async def _open(self) -> ProcessConnection:
        handler, program, args, cwd, env, stderr, exit_timeout, options = self._start
        loop = asyncio.get_running_loop()
        transport, child = await loop.subprocess_exec(
            lambda: _ChildProtocol(loop),
            program,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            cwd=cwd,
            env=None if env is None else dict(env),
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


class _StdioConnection(Connection):
    """A Connection on this process's stdin/stdout: closing it also releases stdin's pipe."""

    def _after_close(self) -> None:
        close = getattr(self._reader, "close", None)
        if close is not None:
            close()


class _PipeReader:
    """A StreamReader on a pipe, whose transport is closed with the connection."""

    def __init__(self, stream: asyncio.StreamReader, transport: asyncio.BaseTransport) -> None:
        self.read = stream.read
        self._transport = transport

    def close(self) -> None:
        self._transport.close()


def _pollable(file: IO[bytes]) -> bool:
    """Whether the event loop can watch `file`: pipes, sockets and terminals can; regular
    files and devices such as /dev/null cannot, and are read and written directly."""
    try:
        fd = file.fileno()
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


class _FileReader:
    """Reads a file that asyncio cannot watch, in a worker thread."""

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file

    async def read(self, n: int = -1) -> bytes:
        read1 = getattr(self._file, "read1", self._file.read)
        data: bytes = await asyncio.to_thread(read1, n)
        return data


class _FileWriter:
    """Writes to a file that asyncio cannot watch (a regular file never blocks for long)."""

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file

    def write(self, data: bytes) -> None:
        self._file.write(data)

    async def drain(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.flush()
