"""Remote interop with the official TypeScript SDK 2.4.0's experimental transports, on
loopback, both ways and over both transports:

- its Streamable HTTP and WebSocket clients (interop/remote_client.mjs) against our server
  (examples/echo_agent.py --listen);
- our clients (examples/client.py URL, and `connect_remote` directly) against its server
  (interop/ts_agent.mjs --listen, the SDK's AcpServer with its Node adapter).

Full and cancelled turns, two sessions on one connection, a dropped stream and a reconnect, an
oversized message, a wrong or missing token; the SDK prints nothing on either side (its
console is copied to stderr as `... SDK console.<level>: ...`, of which there must be none).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import acp_kit as acp
import pytest

from tests.support import echo_turn
from tests.support.echo_turn import FULL_TURN, TS_AGENT_TURN
from tests.support.remote import REPO, CuttingProxy, listening, port_of
from tests.support.rpc_wire import run

NODE = shutil.which("node")
INTEROP = REPO / "interop"
if NODE is None or not (INTEROP / "node_modules" / "ws").is_dir():
    pytest.skip(
        "remote interop: node or `npm ci --prefix interop` missing", allow_module_level=True
    )

TOKEN = "interop-token"
OUR_SERVER = [sys.executable, str(REPO / "examples" / "echo_agent.py"), "--listen", "127.0.0.1:0"]
SDK_SERVER = [str(NODE), str(INTEROP / "ts_agent.mjs"), "--listen", "127.0.0.1:0"]
SDK_CLIENT = [str(NODE), str(INTEROP / "remote_client.mjs")]
OUR_CLIENT = [sys.executable, str(REPO / "examples" / "client.py")]


@pytest.fixture(scope="module")
def our_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    log = tmp_path_factory.mktemp("our") / "stderr.txt"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "generated")}
    with listening([*OUR_SERVER, "--token", TOKEN], stderr_path=log, env=env) as (_, urls):
        yield urls
    assert "Traceback" not in log.read_text()


@pytest.fixture(scope="module")
def sdk_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    log = tmp_path_factory.mktemp("sdk") / "stderr.txt"
    with listening([*SDK_SERVER, "--token", TOKEN], stderr_path=log) as (_, urls):
        yield urls, log
    assert "SDK console." not in log.read_text()


def run_program(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=90, cwd=REPO)


def succeeded(argv: list[str]) -> dict[str, Any]:
    done = run_program(argv)
    assert done.returncode == 0, done.stderr
    assert "SDK console." not in done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def kinds(updates: list[dict[str, Any]]) -> list[str]:
    return [update["sessionUpdate"] for update in updates]


def assert_cancelled(stop_reason: object, updates: list[str]) -> None:
    """Cancelled at its first message chunk (how many more come first depends on timing)."""
    assert stop_reason == "cancelled"
    assert updates[:4] == ["user_message", "state_update", "plan_update", "agent_message_chunk"]
    assert updates[-1] == "state_update" and "usage_update" not in updates


# -- the SDK's clients, our server ------------------------------------------------------------
@pytest.mark.parametrize("scheme", ["http", "ws"])
def test_sdk_client_runs_two_sessions_on_one_connection(our_server: list[str], scheme: str) -> None:
    url = our_server[0] if scheme == "http" else our_server[1]
    result = succeeded([*SDK_CLIENT, "--token", TOKEN, "--sessions", "2", url])
    turn = {"stopReason": "end_turn", "updates": FULL_TURN}
    assert result == {"protocol": 2, "sessions": [turn, turn]}


@pytest.mark.parametrize("scheme", ["http", "ws"])
def test_sdk_client_cancels_a_turn_of_our_server(our_server: list[str], scheme: str) -> None:
    url = our_server[0] if scheme == "http" else our_server[1]
    result = succeeded([*SDK_CLIENT, "--token", TOKEN, "--cancel", "--prompt", "slow a b c", url])
    [session] = result["sessions"]
    assert_cancelled(session["stopReason"], session["updates"])


@pytest.mark.parametrize(
    ("scheme", "token", "error"),
    [
        (
            "http",
            "wrong",
            "ACP initialize failed: 401 Unauthorized: Missing or invalid credentials",
        ),
        ("http", None, "ACP initialize failed: 401 Unauthorized: Missing or invalid credentials"),
        ("ws", "wrong", "Unexpected server response: 401"),
        ("ws", None, "Unexpected server response: 401"),
    ],
)
def test_sdk_client_without_the_token_is_refused(
    our_server: list[str], scheme: str, token: str | None, error: str
) -> None:
    url = our_server[0] if scheme == "http" else our_server[1]
    done = run_program([*SDK_CLIENT, *(["--token", token] if token else []), url])
    assert (done.returncode, done.stdout, done.stderr) == (
        1,
        "",
        f"remote_client: error: {error}\n",
    )


def test_sdk_client_oversized_message_over_http(our_server: list[str]) -> None:
    """A 17 MB prompt: our server answers 413; the SDK fails that request only."""
    result = succeeded([*SDK_CLIENT, "--token", TOKEN, "--oversize", "17000000", our_server[0]])
    body = "The request body is over 16777216 bytes"
    assert result == {
        "error": {
            "code": -32603,
            "message": f"ACP POST failed: 413 Request Entity Too Large: {body}",
            "data": {"status": 413, "body": body},
        }
    }


def test_sdk_client_oversized_message_over_websocket(our_server: list[str]) -> None:
    """Over the 16 MiB message cap, the socket is closed (1009): the SDK's connection ends."""
    done = run_program([*SDK_CLIENT, "--token", TOKEN, "--oversize", "17000000", our_server[1]])
    assert (done.returncode, done.stderr) == (1, "remote_client: error: ACP connection closed\n")


# -- our clients, the SDK's server --------------------------------------------------------------
@pytest.mark.parametrize("scheme", ["http", "ws"])
def test_our_client_runs_a_full_and_a_cancelled_turn_with_the_sdk_server(
    sdk_server: tuple[list[str], Path], scheme: str
) -> None:
    urls, _ = sdk_server
    url = urls[0] if scheme == "http" else urls[1]
    full = succeeded([*OUR_CLIENT, "--token", TOKEN, url])
    assert (full["protocol"], full["stopReason"], kinds(full["updates"])) == (
        2,
        "end_turn",
        TS_AGENT_TURN,
    )
    cancelled = succeeded([*OUR_CLIENT, "--token", TOKEN, "--cancel", "--prompt", "slow hi", url])
    assert_cancelled(cancelled["stopReason"], kinds(cancelled["updates"]))


@pytest.mark.parametrize(
    ("scheme", "token", "error"),
    [
        ("http", "wrong", "HTTP 401: Unauthorized"),
        ("http", None, "HTTP 401: Unauthorized"),
        ("ws", "wrong", "HTTP 401"),
        ("ws", None, "HTTP 401"),
    ],
)
def test_our_client_without_the_token_is_refused_by_the_sdk_server(
    sdk_server: tuple[list[str], Path], scheme: str, token: str | None, error: str
) -> None:
    urls, _ = sdk_server
    url = urls[0] if scheme == "http" else urls[1]
    done = run_program([*OUR_CLIENT, *(["--token", token] if token else []), url])
    expected = f"client.py: error: the agent refused the connection: {error}\n"
    assert (done.returncode, done.stdout, done.stderr) == (1, "", expected)


async def two_sessions(url: str) -> list[tuple[str | None, list[str]]]:
    async with acp.connect_remote(url, token=TOKEN, permissions=acp.allow) as agent:
        sessions = [await agent.new_session(), await agent.new_session()]
        results = await asyncio.gather(*(s.prompt("hello") for s in sessions))
        return [(r.stop_reason, kinds([acp.encode(u) for u in r.updates])) for r in results]


@pytest.mark.parametrize("scheme", ["http", "ws"])
def test_our_client_runs_two_sessions_on_one_connection_with_the_sdk_server(
    sdk_server: tuple[list[str], Path], scheme: str
) -> None:
    urls, _ = sdk_server
    url = urls[0] if scheme == "http" else urls[1]
    assert run(two_sessions(url), 30) == [("end_turn", TS_AGENT_TURN), ("end_turn", TS_AGENT_TURN)]


def test_our_client_oversized_message_to_the_sdk_server(sdk_server: tuple[list[str], Path]) -> None:
    """The SDK's Node adapter refuses a body over 16 MiB (413): that request fails, with the
    status and the body in `data`; the connection carries on."""

    async def main() -> tuple[Any, str | None]:
        async with acp.connect_remote(
            sdk_server[0][0], token=TOKEN, permissions=acp.allow
        ) as agent:
            session = await agent.new_session()
            with pytest.raises(acp.RpcError) as failed:
                await session.prompt("x" * 17_000_000)
            after = await session.prompt("still here")
            return failed.value.data, after.stop_reason

    data, after = run(main(), 60)
    assert data == {"status": 413, "body": "Request body exceeds 16777216 bytes"}
    assert after == "end_turn"


@pytest.mark.parametrize("scheme", ["http", "ws"])
def test_our_client_reconnects_to_the_sdk_server_after_a_drop(
    sdk_server: tuple[list[str], Path], scheme: str
) -> None:
    """Every TCP connection cut between two turns: the streams (or the socket, then the
    session, with session/resume) come back and the next turn is whole."""
    urls, _ = sdk_server
    url = urls[0] if scheme == "http" else urls[1]

    async def main() -> list[tuple[str | None, list[str]]]:
        proxy = await CuttingProxy(port_of(url)).start()
        try:
            async with acp.connect_remote(
                proxy.url(url), token=TOKEN, permissions=acp.allow
            ) as agent:
                session = await agent.new_session()
                first = await session.prompt("one")
                proxy.cut()
                await asyncio.sleep(0.3)
                second = await session.prompt("two")
                return [
                    (r.stop_reason, kinds([acp.encode(u) for u in r.updates]))
                    for r in (first, second)
                ]
        finally:
            await proxy.close()

    assert run(main(), 30) == [("end_turn", TS_AGENT_TURN), ("end_turn", TS_AGENT_TURN)]


@pytest.mark.parametrize("scheme", ["http", "ws"])
@pytest.mark.parametrize("version", [1, 2])
def test_our_client_plays_the_child_process_turn_with_our_server(
    our_server: list[str], scheme: str, version: int
) -> None:
    """examples/client.py against the remote echo agent prints what it prints against the
    child process: every update exactly, and the permission request."""
    url = our_server[0] if scheme == "http" else our_server[1]
    argv = [*OUR_CLIENT, "--token", TOKEN, "--protocol", str(version), url]
    assert succeeded(argv) == {
        "protocol": version,
        "stopReason": "end_turn",
        "updates": echo_turn.updates(version),
        "permissions": echo_turn.permissions("allowed"),
    }
