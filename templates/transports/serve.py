"""`serve_remote` and `run_remote`: an agent on a URL in one line, under uvicorn (imported when
used).

    run_remote(MyAgent(), "127.0.0.1:8000")                    # loopback: no token needed
    run_remote(MyAgent(), "0.0.0.0:8443", token=secret,
               ssl_certfile="cert.pem", ssl_keyfile="key.pem")  # elsewhere: a token (or hook)

Both transports share the endpoint: `http://HOST:PORT/acp` and `ws://HOST:PORT/acp`. A server
bound beyond loopback without `token=` or `authenticate=` refuses to start (ValueError, one
line); TLS is uvicorn's (`ssl_certfile`, `ssl_keyfile`), and then the URLs are https:// and
wss://.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sys
from collections.abc import Callable
from typing import Any

from ..toolkit.agent import Agent
from ._extras import MissingExtra, require
from .security import is_loopback
from .server import AgentApp, Factory

__all__ = ["run_remote", "serve_remote"]


def parse_listen(listen: str) -> tuple[str, int]:
    """`HOST:PORT` (`[::1]:PORT` for IPv6) as a host and a port; ValueError otherwise."""
    host, sep, port = listen.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"not HOST:PORT: {listen[:100]!r}")
    return host, int(port)


async def serve_remote(
    agent: Agent | Factory | AgentApp,
    listen: str = "127.0.0.1:8000",
    *,
    ready: Callable[[list[str]], None] | None = None,
    ssl_certfile: str | None = None,
    ssl_keyfile: str | None = None,
    log_level: str = "warning",
    **app_options: Any,
) -> None:
    """Serve `agent` (or an `AgentApp`) on `listen` until the process is told to stop
    (SIGINT/SIGTERM: uvicorn's graceful shutdown). `ready(urls)` is called once listening,
    with the endpoint's URLs (the real port when `listen` asked for port 0). `app_options` go
    to `AgentApp` (`token`, `authenticate`, `allowed_origins`, `limits`, ...)."""
    host, port = parse_listen(listen)
    if isinstance(agent, AgentApp) and app_options:
        raise ValueError(f"pass {', '.join(sorted(app_options))} to the AgentApp")
    app = agent if isinstance(agent, AgentApp) else AgentApp(agent, **app_options)
    if app.authenticate is None and not is_loopback(host):
        raise ValueError(
            f"refusing to serve on {host} without authentication: pass token= or authenticate="
        )
    uvicorn = require("uvicorn")
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        lifespan="on",
        log_level=log_level,
        access_log=False,
        ws_max_size=app.limits.max_message_bytes,
        ws_per_message_deflate=False,
        ssl_certfile=ssl_certfile,
        ssl_keyfile=ssl_keyfile,
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    logging.getLogger("uvicorn.error").addFilter(_denials_are_complete)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:  # bound here, so that a port in use is one OSError, not uvicorn's exit
        listener = socket.create_server((host, port), family=family)
    except OSError as exc:
        why = os.strerror(exc.errno) if exc.errno else str(exc)
        raise OSError(f"cannot listen on {listen}: {why}") from None
    task = asyncio.get_running_loop().create_task(_serve(server, listener))
    while not server.started and not task.done():
        await asyncio.sleep(0.02)
    if server.started and ready is not None:
        bound = listener.getsockname()
        shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        secure = ssl_certfile is not None
        where = f"{shown}:{bound[1]}{app.path}"
        urls = [f"{'https' if secure else 'http'}://{where}"] if app.http else []
        urls += [f"{'wss' if secure else 'ws'}://{where}"] if app.websocket else []
        ready(urls)
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:  # stop as SIGTERM would: connections closed, lifespan ended
        server.should_exit = True
        await task
        raise
    if not server.started:
        raise OSError(f"could not listen on {listen}")


async def _serve(server: Any, listener: socket.socket) -> None:
    try:
        await server.serve(sockets=[listener])
    except SystemExit as exc:  # uvicorn exits when it cannot start (its log said why)
        raise OSError(f"the server could not start (uvicorn exit status {exc.code})") from None
    finally:
        listener.close()


def run_remote(
    agent: Agent | Factory | AgentApp, listen: str = "127.0.0.1:8000", **options: Any
) -> None:
    """`serve_remote` in its own event loop; prints `listening: URL` (one line per transport)
    unless `ready=` is given. A bad setup is one line on stderr and exit status 2."""
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(message)s")
    options.setdefault("ready", _announce)
    try:
        asyncio.run(serve_remote(agent, listen, **options))
    except (ValueError, MissingExtra, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None


def _denials_are_complete(record: logging.LogRecord) -> bool:
    """uvicorn's sans-I/O WebSocket side logs an error after every refused upgrade answered
    with an HTTP status (the denial-response extension), though it sent the answer whole."""
    return record.msg != "ASGI callable returned without completing handshake."


def _announce(urls: list[str]) -> None:
    for url in urls:
        print(f"listening: {url}", flush=True)
