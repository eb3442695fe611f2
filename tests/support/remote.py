"""Helpers of the remote-transport tests: our server in this event loop (`serving`), a program
that prints `listening: URL` lines (`listening`), and a TCP proxy that can cut every connection
through it at once (`CuttingProxy`: a dropped stream, as a network drops it). Everything on
loopback, ephemeral ports, bounded in time."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import acp_kit as acp
from acp_kit.transports.server import AgentApp

REPO = Path(__file__).resolve().parents[2]


@contextlib.asynccontextmanager
async def serving(agent: Any, **options: Any) -> AsyncIterator[tuple[AgentApp, str, str]]:
    """`agent` (or an AgentApp) served on 127.0.0.1:0 in this loop: the app, its http:// and
    ws:// URLs."""
    app = agent if isinstance(agent, AgentApp) else AgentApp(agent, **options)
    urls: list[str] = []
    ready = asyncio.Event()

    def announce(found: list[str]) -> None:
        urls.extend(found)
        ready.set()

    task = asyncio.create_task(acp.serve_remote(app, "127.0.0.1:0", ready=announce))
    waiter = asyncio.create_task(ready.wait())
    await asyncio.wait([task, waiter], timeout=10, return_when=asyncio.FIRST_COMPLETED)
    if not ready.is_set():
        waiter.cancel()
        task.cancel()
        raise AssertionError(f"the server did not start: {task.exception() if task.done() else ''}")
    try:
        yield app, urls[0], urls[-1]
    finally:
        task.cancel()
        await asyncio.wait_for(asyncio.gather(task, return_exceptions=True), 10)


@contextlib.contextmanager
def listening(
    argv: list[str], count: int = 2, **kwargs: Any
) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    """Start `argv`, read its `listening: URL` lines (stdout), stop it afterwards (stdin closed,
    then SIGTERM, then SIGKILL). Its stderr is kept in a file: `proc.stderr_text()`."""
    log = kwargs.pop("stderr_path")
    with open(log, "w") as err:
        proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True, cwd=REPO,
            **kwargs,
        )  # fmt: skip
    try:
        urls: list[str] = []
        deadline = time.monotonic() + 20
        assert proc.stdout is not None
        while len(urls) < count and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith("listening: "):
                urls.append(line.split(" ", 1)[1].strip())
        assert len(urls) == count, f"{argv} printed {urls}; stderr: {Path(log).read_text()}"
        yield proc, urls
    finally:
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


class CuttingProxy:
    """Forwards 127.0.0.1:<port> to a target; `cut()` drops every connection through it."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self.cuts = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> CuttingProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def url(self, url: str) -> str:
        return url.replace(f":{self.target_port}/", f":{self.port}/")

    def cut(self) -> None:
        self.cuts += 1
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def close(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        self._writers |= {writer, up_writer}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(Exception):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self._writers -= {writer, up_writer}


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/", 1)[0])
