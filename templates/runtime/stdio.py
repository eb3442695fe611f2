"""A connection on this process's standard streams (an agent's side): `connect_stdio`, over a
`StreamTransport` of its stdin and stdout. Pipes, sockets and terminals are watched by the event
loop; regular files and devices (a stdin redirected from a file, /dev/null) are read in a
worker thread and written directly.

A child process's standard streams are process.py's; its names are re-exported here.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from typing import IO, Unpack

from .connection import Connection, RoleBase
from .connection import ConnectionOptions as ConnectionOptions
from .process import EXIT_TIMEOUT as EXIT_TIMEOUT
from .process import ProcessConnection as ProcessConnection
from .process import connect_process as connect_process
from .transport import ByteReader, ByteWriter, StreamTransport


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
    connection = Connection(handler, StreamTransport(reader, writer), **options)
    connection.start()
    return connection


class _PipeReader:
    """A StreamReader on a pipe, whose transport is closed with the connection (a
    StreamTransport closes a reader that has `close()`)."""

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
