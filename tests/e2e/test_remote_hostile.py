"""Our remote agent server against a hostile HTTP / WebSocket client: no or a wrong token,
another connection's (or principal's) session, oversized bodies and messages, malformed JSON
and frames, floods of streams, a client that stops reading, abrupt disconnects — each answered
with the exact status and one-line body, nothing reaching the agent that should not, and no
traceback in the log."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import socket
import subprocess
import sys
from typing import Any

import acp_kit as acp
import httpx
import pytest
import websockets
from acp_kit.transports.limits import ServerLimits
from acp_kit.transports.security import Request
from acp_kit.transports.server import AgentApp
from websockets.asyncio.client import connect as ws_connect

from tests.support.remote import REPO, serving
from tests.support.rpc_wire import run

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON = {"Content-Type": "application/json"}
ELSEWHERE = (
    "The session is not attached to this connection: session/load or session/resume it first"
)
REFUSED_BIND = "refusing to serve on 0.0.0.0 without authentication: pass token= or authenticate="
SSE = {"Accept": "text/event-stream"}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "t", "version": "1"}, "capabilities": {}},
}


class Chatty(acp.Agent):
    """Says `turn.text` words, one chunk each (the prompt `flood N` says N chunks)."""

    async def prompt(self, turn: acp.Turn) -> acp.TurnStopReason:
        words = turn.text.split()
        count = int(words[1]) if words[:1] == ["flood"] else 0
        for word in words if not count else (f"chunk{i} " * 8 for i in range(count)):
            await turn.say(word)
        return "end_turn"


@pytest.fixture(autouse=True)
def no_tracebacks(caplog: pytest.LogCaptureFixture) -> Any:
    caplog.set_level(logging.INFO)
    yield
    text = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert "Traceback" not in text
    assert not [r for r in caplog.records if r.exc_info], text


async def initialize(http: httpx.AsyncClient, url: str, headers: dict[str, str] = AUTH) -> str:
    answer = await http.post(url, json=INIT, headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["protocolVersion"] == 2
    return answer.headers["acp-connection-id"]


async def new_session(
    http: httpx.AsyncClient, url: str, connection: str, headers: dict[str, str] = AUTH
) -> str:
    """session/new on `connection`, its answer read from the connection's stream."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/new",
        "params": {"cwd": "/", "mcpServers": []},
    }
    posted = await http.post(
        url, json=request, headers={**headers, "Acp-Connection-Id": connection}
    )
    assert posted.status_code == 202, posted.text
    stream_headers = {**headers, **SSE, "Acp-Connection-Id": connection}
    async with http.stream("GET", url, headers=stream_headers) as stream:
        async for line in stream.aiter_lines():
            if line.startswith("data: "):
                session: str = json.loads(line[6:])["result"]["sessionId"]
                return session
    raise AssertionError("no answer to session/new")


def post(http: httpx.AsyncClient, url: str, body: Any, **headers: str) -> Any:
    return http.post(url, content=json.dumps(body), headers={**AUTH, **JSON, **headers})


def test_requests_without_the_token_are_401_with_one_line() -> None:
    async def main() -> None:
        async with serving(Chatty(), token=TOKEN) as (_, url, _ws), httpx.AsyncClient() as http:
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic x"}):
                for method in ("POST", "GET", "DELETE"):
                    answer = await http.request(method, url, json=INIT, headers=headers)
                    assert (answer.status_code, answer.text) == (
                        401,
                        "Missing or invalid credentials",
                    )
                    assert answer.headers["www-authenticate"] == "Bearer"
            assert (
                await http.post(url.replace("/acp", "/other"), json=INIT, headers=AUTH)
            ).status_code == 404

    run(main())


def test_malformed_posts_get_exact_statuses() -> None:
    async def main() -> None:
        limits = ServerLimits(max_message_bytes=1024)
        async with (
            serving(Chatty(), token=TOKEN, limits=limits) as (_, url, _ws),
            httpx.AsyncClient() as http,
        ):
            cases = [
                (
                    {"Content-Type": "text/plain"},
                    b"{}",
                    415,
                    "Unsupported Media Type: send application/json",
                ),
                (JSON, b"{not json", 400, "Invalid JSON"),
                (JSON, b"[1, 2]", 501, "JSON-RPC batches are not supported"),
                (JSON, b"5", 400, "Invalid JSON-RPC message"),
                (JSON, b'{"a":"' + b"x" * 2000 + b'"}', 413, "The request body is over 1024 bytes"),
                (
                    JSON,
                    b'{"jsonrpc":"2.0","id":1,"method":"session/list"}',
                    400,
                    "Missing Acp-Connection-Id",
                ),
            ]
            for headers, body, status, text in cases:
                answer = await http.post(url, content=body, headers={**AUTH, **headers})
                assert (answer.status_code, answer.text) == (status, text)

            async def chunked() -> Any:  # no Content-Length: counted as it comes
                yield b'{"a":"'
                yield b"x" * 2000

            answer = await http.post(url, content=chunked(), headers={**AUTH, **JSON})
            assert (answer.status_code, answer.text) == (413, "The request body is over 1024 bytes")
            unknown = await post(
                http,
                url,
                {"jsonrpc": "2.0", "id": 1, "method": "session/list"},
                **{"Acp-Connection-Id": "nope"},
            )
            assert (unknown.status_code, unknown.text) == (404, "Unknown Acp-Connection-Id")
            connection = await initialize(http, url)
            again = await post(http, url, INIT, **{"Acp-Connection-Id": connection})
            assert (again.status_code, again.text) == (
                400,
                "Initialize not allowed on existing connection",
            )
            wrong = await http.put(url, headers=AUTH)
            assert (wrong.status_code, wrong.text, wrong.headers["allow"]) == (
                405,
                "Method Not Allowed",
                "GET, POST, DELETE",
            )
            plain = await http.get(url, headers={**AUTH, "Acp-Connection-Id": connection})
            assert (plain.status_code, plain.text) == (
                406,
                "Not Acceptable: accept text/event-stream",
            )
            sse = {**AUTH, "Acp-Connection-Id": connection, "Accept": "text/event-stream"}
            bogus = await http.get(url, headers={**sse, "Last-Event-ID": "abc"})
            assert (bogus.status_code, bogus.text) == (409, "Unknown Last-Event-ID 'abc'")
            gone = await http.delete(url, headers={**AUTH, "Acp-Connection-Id": connection})
            assert gone.status_code == 202
            after = await http.delete(url, headers={**AUTH, "Acp-Connection-Id": connection})
            assert (after.status_code, after.text) == (404, "Unknown Acp-Connection-Id")

    run(main())


def test_session_headers_are_checked_before_the_agent_sees_a_message() -> None:
    async def main() -> None:
        async with serving(Chatty(), token=TOKEN) as (_, url, _ws), httpx.AsyncClient() as http:
            connection = await initialize(http, url)
            session = await new_session(http, url, connection)
            prompt = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/prompt",
                "params": {"sessionId": session, "prompt": []},
            }
            missing = await post(http, url, prompt, **{"Acp-Connection-Id": connection})
            assert (missing.status_code, missing.text) == (400, "Missing Acp-Session-Id")
            other = await post(
                http,
                url,
                prompt,
                **{"Acp-Connection-Id": connection, "Acp-Session-Id": "sess_other"},
            )
            assert (other.status_code, other.text) == (400, "Mismatched Acp-Session-Id")
            long_id = {**prompt, "params": {"sessionId": "s" * 300, "prompt": []}}
            too_long = await post(
                http, url, long_id, **{"Acp-Connection-Id": connection, "Acp-Session-Id": "s" * 300}
            )
            assert (too_long.status_code, too_long.text) == (
                400,
                "The session id is over 256 characters",
            )
            unknown = {**prompt, "params": {"sessionId": "sess_nobody", "prompt": []}}
            nobody = await post(
                http,
                url,
                unknown,
                **{"Acp-Connection-Id": connection, "Acp-Session-Id": "sess_nobody"},
            )
            assert (nobody.status_code, nobody.text) == (404, "Unknown Acp-Session-Id")

    run(main())


def two_principals(request: Request) -> str | None:
    token = request.headers.get("authorization", "")
    return {"Bearer alice": "alice", "Bearer bob": "bob"}.get(token)


def test_another_connections_session_is_refused() -> None:
    async def main() -> None:
        alice, bob = {"Authorization": "Bearer alice"}, {"Authorization": "Bearer bob"}
        async with (
            serving(Chatty(), authenticate=two_principals) as (app, url, _ws),
            httpx.AsyncClient() as http,
        ):
            first = await initialize(http, url, alice)
            session = await new_session(http, url, first, alice)
            second = await initialize(http, url, alice)  # the same principal, another connection
            prompt = {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "session/prompt",
                "params": {"sessionId": session, "prompt": []},
            }
            scoped = {**JSON, "Acp-Session-Id": session}
            elsewhere = await http.post(
                url,
                content=json.dumps(prompt),
                headers={**alice, **scoped, "Acp-Connection-Id": second},
            )
            assert (elsewhere.status_code, elsewhere.text) == (
                409, ELSEWHERE
            )  # fmt: skip
            theirs = await initialize(http, url, bob)
            for method in ("session/prompt", "session/load", "session/resume", "session/delete"):
                body = {
                    "jsonrpc": "2.0",
                    "id": 6,
                    "method": method,
                    "params": {"sessionId": session, "cwd": "/", "prompt": []},
                }
                refused = await http.post(
                    url,
                    content=json.dumps(body),
                    headers={**bob, **scoped, "Acp-Connection-Id": theirs},
                )
                assert (refused.status_code, refused.text) == (404, "Unknown Acp-Session-Id"), (
                    method
                )
            stream = await http.get(
                url,
                headers={
                    **bob,
                    "Accept": "text/event-stream",
                    "Acp-Connection-Id": theirs,
                    "Acp-Session-Id": session,
                },
            )
            assert (stream.status_code, stream.text) == (404, "Unknown Acp-Session-Id")
            stolen = await http.post(
                url,
                content=json.dumps(prompt),
                headers={**bob, **scoped, "Acp-Connection-Id": first},
            )
            assert (stolen.status_code, stolen.text) == (404, "Unknown Acp-Connection-Id")
            # alice's own second connection may take the session over
            resume = {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "session/resume",
                "params": {"sessionId": session, "cwd": "/"},
            }
            taken = await http.post(
                url,
                content=json.dumps(resume),
                headers={**alice, **scoped, "Acp-Connection-Id": second},
            )
            assert taken.status_code == 202
            for _ in range(100):
                if app.owners.attached(session, app.connections[second]):
                    break
                await asyncio.sleep(0.02)
            assert app.owners.attached(session, app.connections[second])

    run(main())


def test_a_flood_of_streams_is_capped_and_recovers() -> None:
    async def main() -> None:
        limits = ServerLimits(max_session_streams=4)
        async with (
            serving(Chatty(), token=TOKEN, limits=limits) as (_, url, _ws),
            httpx.AsyncClient() as http,
        ):
            connection = await initialize(http, url)
            sse = {**AUTH, "Acp-Connection-Id": connection, "Accept": "text/event-stream"}
            opened = []
            for index in range(4):
                request = http.build_request(
                    "GET", url, headers={**sse, "Acp-Session-Id": f"s{index}"}
                )
                response = await http.send(request, stream=True)
                assert response.status_code == 200
                opened.append(response)
            fifth = await http.get(url, headers={**sse, "Acp-Session-Id": "s4"})
            assert (fifth.status_code, fifth.text) == (
                429,
                "Over 4 session streams on this connection",
            )
            for response in opened:
                await response.aclose()
            await asyncio.sleep(0.2)  # the server sees the streams go
            async with http.stream("GET", url, headers={**sse, "Acp-Session-Id": "s4"}) as later:
                assert later.status_code == 200

    run(main())


def test_a_client_that_stops_reading_is_closed_and_memory_stays_bounded() -> None:
    async def main() -> None:
        limits = ServerLimits(
            max_buffered_bytes=64 * 1024, max_output_stall=1.0, replay_bytes=16 * 1024
        )
        async with (
            serving(Chatty(), token=TOKEN, limits=limits) as (app, url, _ws),
            httpx.AsyncClient() as http,
        ):
            connection = await initialize(http, url)
            session = await new_session(http, url, connection)
            hosted = app.connections[connection]
            prompt = {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "session/prompt",
                "params": {
                    "sessionId": session,
                    "prompt": [{"type": "text", "text": "flood 20000"}],
                },
            }
            scoped = {"Acp-Connection-Id": connection, "Acp-Session-Id": session}
            assert (await post(http, url, prompt, **scoped)).status_code == 202
            peak = 0
            for _ in range(200):  # nobody reads the session's stream
                peak = max(peak, hosted.buffered)
                if connection not in app.connections:
                    break
                await asyncio.sleep(0.05)
            assert connection not in app.connections
            assert (
                peak <= limits.max_buffered_bytes + 64 * 1024
            )  # the cap, and one write of the agent
            later = await post(http, url, prompt, **scoped)
            assert (later.status_code, later.text) == (404, "Unknown Acp-Connection-Id")

    run(main(), timeout=30)


def test_abrupt_disconnects_leave_the_server_serving() -> None:
    async def main() -> None:
        async with serving(Chatty(), token=TOKEN) as (app, url, _ws), httpx.AsyncClient() as http:
            connection = await initialize(http, url)
            host, port = url.split("//")[1].split("/")[0].split(":")
            for payload in (
                b"POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN.encode()
                + b"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"",
                b"GET /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN.encode()
                + b"\r\nAccept: text/event-stream\r\nAcp-Connection-Id: " + connection.encode()
                + b"\r\n\r\n",
            ):  # fmt: skip
                reader, writer = await asyncio.open_connection(host, int(port))
                writer.write(payload)
                await writer.drain()
                await asyncio.sleep(0.1)
                writer.transport.abort()
            await asyncio.sleep(0.2)
            session = await new_session(http, url, connection)  # the connection's stream reopens
            assert session.startswith("sess_")
            assert connection in app.connections

    run(main())


def test_host_origin_and_loopback_checks() -> None:
    async def call(app: AgentApp, **scope: Any) -> tuple[int, bytes]:
        sent: list[dict[str, Any]] = []
        base = {"type": "http", "method": "GET", "path": "/acp",
                "headers": [(b"host", b"127.0.0.1:9")],
                "server": ("127.0.0.1", 9), "client": ("127.0.0.1", 5000)}  # fmt: skip

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b""}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await app({**base, **scope}, receive, send)
        return sent[0]["status"], sent[1]["body"]

    async def main() -> None:
        app = AgentApp(Chatty())  # no authentication: loopback clients only
        remote_client = await call(
            app, client=("10.1.2.3", 5000), server=("10.0.0.1", 9), headers=[(b"host", b"agent")]
        )
        assert remote_client == (403, b"This server serves loopback clients only")
        rebound = await call(app, headers=[(b"host", b"evil.example:9")])
        assert rebound == (403, b"Host not allowed")
        cross = await call(
            app, headers=[(b"host", b"127.0.0.1:9"), (b"origin", b"http://evil.example")]
        )
        assert cross == (403, b"Origin not allowed")
        same = await call(
            app, headers=[(b"host", b"127.0.0.1:9"), (b"origin", b"http://127.0.0.1:9")]
        )
        assert same == (406, b"Not Acceptable: accept text/event-stream")  # past the checks
        listed = AgentApp(Chatty(), allowed_origins=["https://editor.example"])
        assert (
            await call(
                listed, headers=[(b"host", b"127.0.0.1:9"), (b"origin", b"https://editor.example")]
            )
        )[0] == 406

    run(main())


def test_serving_beyond_loopback_needs_authentication() -> None:
    with pytest.raises(
        ValueError,
        match=f"^{re.escape(REFUSED_BIND)}$",
    ):
        asyncio.run(acp.serve_remote(Chatty(), "0.0.0.0:0"))
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "echo_agent.py"), "--listen", "0.0.0.0:0"],
        capture_output=True, text=True, timeout=30,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "generated")},
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"error: {REFUSED_BIND}\n"


def test_websocket_refusals_and_malformed_frames() -> None:
    async def main() -> None:
        limits = ServerLimits(max_message_bytes=4096)
        async with serving(Chatty(), token=TOKEN, limits=limits) as (app, _url, ws_url):
            for headers, status, body in (
                ({}, 401, b"Missing or invalid credentials"),
                ({**AUTH, "Origin": "http://evil.example"}, 403, b"Origin not allowed"),
            ):
                with pytest.raises(websockets.InvalidStatus) as refused:
                    await ws_connect(ws_url, additional_headers=headers)
                assert (refused.value.response.status_code, refused.value.response.body) == (
                    status,
                    body,
                )
            async with ws_connect(ws_url, additional_headers=AUTH) as socket:
                assert socket.response.headers["acp-connection-id"] in app.connections
                await socket.send(b"\x00binary")  # ignored
                await socket.send("not json")
                answer = json.loads(await asyncio.wait_for(socket.recv(), 5))
                assert answer["id"] is None and answer["error"]["code"] == -32700
                await socket.send(json.dumps(INIT))
                answer = json.loads(await asyncio.wait_for(socket.recv(), 5))
                assert answer["id"] == 0 and answer["result"]["protocolVersion"] == 2
                await socket.send("x" * 5000)
                with pytest.raises(websockets.ConnectionClosed):
                    await asyncio.wait_for(socket.recv(), 5)
                assert socket.close_code == 1009
            for _ in range(100):
                if not app.connections:
                    break
                await asyncio.sleep(0.02)
            assert not app.connections

    run(main())


def test_websocket_refuses_another_connections_session() -> None:
    async def main() -> None:
        async with serving(Chatty(), token=TOKEN) as (app, _url, ws_url):
            async with (
                ws_connect(ws_url, additional_headers=AUTH) as first,
                ws_connect(ws_url, additional_headers=AUTH) as second,
            ):
                for socket in (first, second):
                    await socket.send(json.dumps(INIT))
                    await asyncio.wait_for(socket.recv(), 5)
                await first.send(
                    json.dumps(
                        {
                            "jsonrpc": "2.0",
                            "id": 1,
                            "method": "session/new",
                            "params": {"cwd": "/", "mcpServers": []},
                        }
                    )
                )
                session = json.loads(await asyncio.wait_for(first.recv(), 5))["result"]["sessionId"]
                prompt = {
                    "jsonrpc": "2.0",
                    "id": 9,
                    "method": "session/prompt",
                    "params": {"sessionId": session, "prompt": []},
                }
                await second.send(json.dumps(prompt))
                answer = json.loads(await asyncio.wait_for(second.recv(), 5))
                assert answer == {"jsonrpc": "2.0", "id": 9, "error": {
                    "code": -32002,
                    "message": ELSEWHERE,
                    "data": {"status": 409},
                }}  # fmt: skip
                first.transport.abort()  # an abrupt disconnect: the server closes that connection
                for _ in range(100):
                    if len(app.connections) == 1:
                        break
                    await asyncio.sleep(0.02)
                assert len(app.connections) == 1

    run(main())


class GarbledStreams(AgentApp):
    """A hostile server: `initialize` is answered, then the connection's stream holds events
    that are not JSON-RPC, one message, and an event over the client's limit."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "GET":
            await super().__call__(scope, receive, send)
            return
        head = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": head})
        body = b"data: not json\n\ndata: [1, 2]\n\n: a comment\n\nretry: 10\n\n"
        body += b'id: 1\ndata: {"jsonrpc":"2.0","method":"_hostile/note","params":{}}\n\n'
        body += b"data: " + b"x" * 2000 + b"\n\n"
        await send({"type": "http.response.body", "body": body})


def test_our_client_against_malformed_event_streams(caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> tuple[list[bytes], str | None]:
        async with serving(GarbledStreams(Chatty())) as (_, url, _ws):
            transport = acp.HttpTransport(url, max_message_bytes=1024)
            await transport.send(json.dumps(INIT).encode() + b"\n")
            lines = []
            while data := await transport.receive():
                lines += data.splitlines()
            await transport.close()
            return lines, transport.error

    lines, error = run(main())
    assert [json.loads(line).get("method", "answer") for line in lines] == [
        "answer",
        "_hostile/note",
    ]
    assert error == "the event stream broke a limit: an event is over 1024 bytes"
    skipped = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert skipped == ["skipped an event that is not a JSON-RPC message"] * 2


def test_a_port_in_use_is_one_line_and_exit_2() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, str(REPO / "examples" / "echo_agent.py"), "--listen",
             f"127.0.0.1:{port}"],
            capture_output=True, text=True, timeout=30,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "generated")},
        )  # fmt: skip
    expected = f"error: cannot listen on 127.0.0.1:{port}: Address already in use\n"
    assert (done.returncode, done.stdout, done.stderr) == (2, "", expected)


def test_our_client_names_an_agent_it_cannot_reach() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]  # closed again before the client tries
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "generated")}
    client = [sys.executable, str(REPO / "examples" / "client.py")]
    for url, why in (
        (f"http://127.0.0.1:{port}/acp", "All connection attempts failed"),
        (f"ws://127.0.0.1:{port}/acp", f"[Errno 111] Connect call failed ('127.0.0.1', {port})"),
    ):
        done = subprocess.run([*client, url], capture_output=True, text=True, timeout=30, env=env)
        expected = f"client.py: error: cannot reach {url}: {why}\n"
        assert (done.returncode, done.stdout, done.stderr) == (1, "", expected)
