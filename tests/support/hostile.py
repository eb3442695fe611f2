"""A hostile peer over real pipes: a subprocess (our agent, our client, or a script) driven by
raw bytes from the test, with bounded reads, a writer thread for floods, and memory samples.

Every wait is bounded (`TIMEOUT`); nothing asserts on time."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
TIMEOUT = 60.0


def python_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "generated"), str(REPO)])
    return env


class Peer:
    """A child process whose stdin the test writes and whose stdout it reads line by line."""

    def __init__(self, argv: list[str], *, cwd: Path = REPO) -> None:
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=python_env(),
        )
        assert self.process.stdin and self.process.stdout and self.process.stderr
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._reading = threading.Event()  # cleared: the test stops reading the peer's output
        self._reading.set()
        self._stderr: list[bytes] = []
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()
        self._writer: threading.Thread | None = None

    @classmethod
    def agent(cls, *args: str) -> Peer:
        return cls([sys.executable, str(EXAMPLES / "echo_agent.py"), *args])

    @classmethod
    def script(cls, source: str) -> Peer:
        return cls([sys.executable, "-c", source])

    def _pump(self) -> None:
        assert self.process.stdout
        while self._reading.wait():
            line = self.process.stdout.readline()
            if not line:
                break
            self._lines.put(line)
        self._lines.put(None)

    def stop_reading(self) -> None:
        """Read nothing more of the peer's output (at most one more line) until `recv`."""
        self._reading.clear()

    def _pump_stderr(self) -> None:
        assert self.process.stderr
        for line in self.process.stderr:
            self._stderr.append(line)

    # -- writing -----------------------------------------------------------------------------
    def send_bytes(self, data: bytes) -> None:
        assert self.process.stdin
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_bytes(json.dumps(message).encode() + b"\n")

    def flood(self, lines: Iterable[bytes]) -> None:
        """Write `lines` from a thread (the write blocks while the peer does not read)."""

        def write() -> None:
            assert self.process.stdin
            try:
                for line in lines:
                    self.process.stdin.write(line)
                self.process.stdin.flush()
            except (BrokenPipeError, ValueError):
                pass

        self._writer = threading.Thread(target=write, daemon=True)
        self._writer.start()

    @property
    def flooding(self) -> bool:
        return self._writer is not None and self._writer.is_alive()

    def wait_flood(self) -> None:
        assert self._writer is not None
        self._writer.join(TIMEOUT)
        assert not self._writer.is_alive(), "the flood did not get through"

    def close_stdin(self) -> None:
        assert self.process.stdin
        try:
            self.process.stdin.close()
        except BrokenPipeError:
            pass

    # -- reading -----------------------------------------------------------------------------
    def recv_line(self, timeout: float = TIMEOUT) -> bytes | None:
        """The next line, or None at EOF."""
        self._reading.set()
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no line within {timeout} s; stderr: {self.stderr}") from None

    def recv(self, timeout: float = TIMEOUT) -> Any:
        line = self.recv_line(timeout)
        assert line is not None, f"EOF; stderr: {self.stderr}"
        return json.loads(line)

    def call(self, message: Any) -> Any:
        self.send(message)
        return self.recv()

    def rest(self) -> list[Any]:
        """Every message until EOF."""
        out = []
        while (line := self.recv_line()) is not None:
            out.append(json.loads(line))
        return out

    # -- the process -------------------------------------------------------------------------
    def rss_kib(self) -> int:
        with open(f"/proc/{self.process.pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def finish(self, timeout: float = TIMEOUT) -> int:
        """Close stdin, wait for the exit; returns the exit code."""
        self.close_stdin()
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"the peer did not exit; stderr: {self.stderr}") from None

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode(errors="replace")

    def assert_clean_stderr(self) -> None:
        text = self.stderr
        assert "Traceback" not in text, text
        assert "Exception ignored" not in text, text

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(TIMEOUT)


def request(rid: Any, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return message


def line(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


INITIALIZE = request(
    "init", "initialize", {"protocolVersion": 2, "info": {"name": "hostile", "version": "1"}}
)
