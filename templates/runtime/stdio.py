"""Connections over standard streams: this process's stdin/stdout (an agent's side), or the
stdin/stdout of a child process (a client spawning its agent)."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from typing import IO

from .connection import Connection
from .jsonrpc import ByteReader, ByteWriter, RoleBase


async def connect_stdio(
    handler: RoleBase, *, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None
) -> Connection:
    """Serve `handler` on this process's stdin and stdout; the connection is started.

    Nothing else may write to stdout: log to stderr.
    """
    loop = asyncio.get_running_loop()
    source = stdin if stdin is not None else sys.stdin.buffer
    target = stdout if stdout is not None else sys.stdout.buffer
    reader: ByteReader = _FileReader(source)
    writer: ByteWriter = _FileWriter(target)
    if _pollable(source):
        stream = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), source)
        reader = stream
    if _pollable(target):
        # A StreamReaderProtocol (with a reader nobody reads) gives the writer flow control
        # and a working wait_closed().
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), target
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
    connection = Connection(handler, reader, writer)
    connection.start()
    return connection


async def connect_process(
    handler: RoleBase,
    program: str,
    *args: str,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> tuple[Connection, asyncio.subprocess.Process]:
    """Start `program` and serve `handler` on its stdin/stdout (its stderr is inherited).

    The connection closes when the program exits; closing it closes the program's stdin.
    Raises OSError when the program cannot be started.
    """
    process = await asyncio.create_subprocess_exec(
        program,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=env,
    )
    if process.stdin is None or process.stdout is None:  # pragma: no cover - PIPE was asked
        raise OSError("the child process has no stdin/stdout pipes")
    connection = Connection(handler, process.stdout, process.stdin)
    connection.start()
    return connection, process


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
