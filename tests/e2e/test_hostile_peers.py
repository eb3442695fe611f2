# ruff: noqa: E501 - the scripts embedded here keep their long lines
"""Hostile peers over real pipes: a raw client against examples/echo_agent.py, a raw agent
against examples/client.py. Framing, bad bytes, odd numbers, nesting, batches, ids, huge
lines, floods with a peer that does not read, cancellations, EOF and peer death; every case
ends with the program still answering (or exiting cleanly) and no traceback on stderr.

The heaviest cases (64 MiB lines, 100,000 requests, 200,000 updates) are marked `heavy`:
`make adversarial` runs them; `make test` runs the rest."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import pytest

from tests.support.hostile import EXAMPLES, INITIALIZE, Peer, line, request

NO_BATCHES = "this protocol version has no batches: send one message per line"
MAX_GROWTH_KIB = 40 * 1024  # "tens of MB": the old runtime grew by 408 MB on 100,000


def error(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": body}


def still_serves(peer: Peer, version: int = 2) -> None:
    """The agent answers an initialize (again: in the version it speaks on this connection)."""
    answer = peer.call(INITIALIZE)
    assert answer["id"] == "init" and answer["result"]["protocolVersion"] == version


@pytest.fixture
def agent() -> Any:
    peer = Peer.agent()
    yield peer
    peer.kill()


ODD_INPUT = [
    (b"\xff\xfe garbage\n", error(None, -32700, "Parse error", "invalid UTF-8 at byte 0")),
    # JSON grammar with an id that reads: answered under that id, saying where and why.
    (b'{"jsonrpc":"2.0","id":1,"method":"x","params":1e400}\n',
     error(1, -32602, "Invalid params", {"path": "$", "reason": "the number 1e400 is out of range"})),
    (b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":-1e400}}\n',
     error(1, -32602, "Invalid params", {"path": "$.a", "reason": "the number -1e400 is out of range"})),
    (b'{"jsonrpc":"2.0","id":1,"method":"x","params":NaN}\n',
     error(1, -32602, "Invalid params", {"path": "$", "reason": "NaN is not JSON"})),
    (b'{"jsonrpc":"2.0","id":1,"method":"x","params":' + b"[" * 50_000 + b"]" * 50_000 + b"}\n",
     error(1, -32602, "Invalid params", {"path": "$", "reason": "nested too deeply"})),
    (b'{"jsonrpc":"2.0","method":"x","params":1e400}\n',  # a notification: no id to answer under
     error(None, -32700, "Parse error", "the number 1e400 is out of range")),
    (b'{"jsonrpc":"2.0","id":1,"method"\n', error(None, -32700, "Parse error",
     "Expecting ':' delimiter at character 32")),
    (b"true\n", error(None, -32600, "Invalid request", "a message must be a JSON object")),
    (b'{"jsonrpc":"2.0","id":[1],"method":"initialize"}\n',
     error(None, -32600, "Invalid request", "the id must be a string, an integer or null")),
    (b'{"jsonrpc":"2.0","id":7,"method":"no/such"}\r\n',
     error(7, -32601, "Method not found", "no/such")),
    (b"[]\n", error(None, -32600, "Invalid request", NO_BATCHES)),
]  # fmt: skip


@pytest.mark.parametrize(("raw", "answer"), ODD_INPUT, ids=lambda v: repr(v)[:30])
def test_odd_input_is_answered_and_the_agent_carries_on(
    agent: Peer, raw: bytes, answer: Any
) -> None:
    agent.send_bytes(raw)
    assert agent.recv() == answer
    still_serves(agent)
    assert agent.finish() == 0
    agent.assert_clean_stderr()


def test_a_prompt_holding_a_number_beyond_a_double_is_answered_under_its_id(agent: Peer) -> None:
    still_serves(agent)
    session = agent.call(request("new", "session/new", {"cwd": "/", "mcpServers": []}))
    sid = session["result"]["sessionId"]
    prompt = (
        b'{"jsonrpc":"2.0","id":"p1","method":"session/prompt","params":{"sessionId":"'
        + sid.encode()
        + b'","prompt":[{"type":"text","text":"hi"}],"_meta":{"n":1e400}}}\n'
    )
    agent.send_bytes(prompt)
    reason = "the number 1e400 is out of range"
    assert agent.recv() == error(
        "p1", -32602, "Invalid params", {"path": "$._meta.n", "reason": reason}
    )
    still_serves(agent)
    assert agent.finish() == 0
    agent.assert_clean_stderr()


def test_blank_lines_and_a_batch_and_duplicate_ids(agent: Peer) -> None:
    agent.send_bytes(b"\n\r\n   \n")
    batch = [request(1, "no/such"), {"jsonrpc": "2.0", "method": "_x/note"}, 5]
    # The default lane (npm-sdk-2.4.0) has no batches: one error for the whole array.
    assert agent.call(batch) == error(None, -32600, "Invalid request", NO_BATCHES)
    still_serves(agent)
    assert agent.finish() == 0
    agent.assert_clean_stderr()


def test_unparseable_lines_are_answered_and_logged_once_in_a_while(agent: Peer) -> None:
    agent.send_bytes(b"nope\n" * 200)
    answers = [agent.recv() for _ in range(200)]
    assert answers == [error(None, -32700, "Parse error", "Expecting value at character 0")] * 200
    still_serves(agent)
    assert agent.finish() == 0
    logged = [x for x in agent.stderr.splitlines() if "unreadable message" in x]
    assert logged == [
        "[acp-codegen-echo-agent] ignored an unreadable message from the peer "
        "(4 bytes: Expecting value at character 0)"
    ]


def test_a_10_mb_line_is_read_and_a_line_over_the_limit_is_skipped_and_answered() -> None:
    script = (
        "import asyncio\nfrom acp_kit import v2 as acp\n"
        "async def main():\n"
        "    c = await acp.connect_stdio(acp.AgentBase(), max_message_bytes=10_500_000)\n"
        "    await c.wait_closed()\n"
        "asyncio.run(main())\n"
    )
    peer = Peer.script(script)
    try:
        pad = "x" * 10_000_000
        peer.send(request(1, "_x/big", {"pad": pad}))
        assert peer.recv() == error(1, -32601, "Method not found", "_x/big")
        too_long = line(request(2, "_x/big", {"pad": pad + "y" * 600_000}))
        peer.send_bytes(too_long)
        size = len(too_long) - 1  # without its newline
        got = peer.recv()
        assert got["id"] is None and got["error"]["code"] == -32600
        assert got["error"]["data"] == (
            f"the message is {size} bytes long, over the limit of 10500000 bytes; skipped"
        )
        peer.send(request(3, "_x/small"))
        assert peer.recv() == error(3, -32601, "Method not found", "_x/small")
        assert peer.finish() == 0
        peer.assert_clean_stderr()
    finally:
        peer.kill()


@pytest.mark.parametrize("version", [1, 2])
def test_20000_pipelined_requests_and_5000_cancelled_ones(agent: Peer, version: int) -> None:
    init = INITIALIZE if version == 2 else request("init", "initialize", {"protocolVersion": 1})
    assert agent.call(init)["result"]["protocolVersion"] == version
    lines = [line(request(i, "session/list", {})) for i in range(20_000)]
    for i in range(20_000, 25_000):
        lines.append(line(request(i, "session/list", {})))
        lines.append(line({"jsonrpc": "2.0", "method": "$/cancel_request",
                           "params": {"requestId": i}}))  # fmt: skip
    agent.flood(lines)
    answers = [agent.recv() for _ in range(25_000)]
    agent.wait_flood()
    assert sorted(a["id"] for a in answers) == list(range(25_000))
    for answer in answers:  # each answered once: a result, or -32800 if the cancel came first
        assert answer.get("result") == {"sessions": []} or answer.get("error") == {
            "code": -32800,
            "message": "Request cancelled",
        }, answer
    still_serves(agent, version)
    assert agent.finish() == 0
    agent.assert_clean_stderr()


def test_requests_before_initialize_and_bad_initializes_are_answered_and_it_carries_on(
    agent: Peer,
) -> None:
    before = [line(request(i, "session/new", {"cwd": "/", "mcpServers": []})) for i in range(2000)]
    bad = [
        {"protocolVersion": 10**30},
        {"protocolVersion": [[[2]]]},
        {"protocolVersion": 2, "info": "x" * 100_000},
        {"protocolVersion": 2, "info": {"name": 1, "version": 2}},
    ]
    agent.flood([*before, *(line(request(f"bad{n}", "initialize", p)) for n, p in enumerate(bad))])
    answers = [agent.recv() for _ in range(2000 + len(bad))]
    agent.wait_flood()
    assert [a["error"]["code"] for a in answers[:2000]] == [-32601] * 2000
    assert [(a["id"], a["error"]["code"]) for a in answers[2000:]] == [
        (f"bad{n}", -32602) for n in range(len(bad))
    ]
    still_serves(agent)  # never routed by a refused initialize
    assert agent.finish() == 0
    agent.assert_clean_stderr()


@pytest.mark.parametrize("cut", [5, 40, 200])
def test_eof_in_the_middle_of_a_turn(agent: Peer, cut: int) -> None:
    still_serves(agent)
    new = agent.call(request(1, "session/new", {"cwd": "/", "mcpServers": []}))
    prompt = line(request(2, "session/prompt", {
        "sessionId": new["result"]["sessionId"], "prompt": [{"type": "text", "text": "hi"}]
    }))  # fmt: skip
    agent.send_bytes(prompt + prompt[:cut])  # then the client is gone
    assert agent.finish() == 0
    agent.assert_clean_stderr()


def test_a_client_that_stops_reading_keeps_the_agent_bounded(agent: Peer) -> None:
    flood_requests_and_read_later(agent, 30_000)


@pytest.mark.heavy
def test_100000_requests_with_a_client_that_stops_reading(agent: Peer) -> None:
    flood_requests_and_read_later(agent, 100_000)


def flood_requests_and_read_later(agent: Peer, count: int) -> None:
    still_serves(agent)
    before = agent.rss_kib()
    agent.stop_reading()
    agent.flood(line(request(i, "session/list", {})) for i in range(count))
    peak = 0
    for _ in range(40):  # the flood stalls: the agent stopped reading, its memory stays put
        peak = max(peak, agent.rss_kib())
        time.sleep(0.05)
    assert agent.flooding, "the agent read everything without answering: no backpressure"
    assert peak - before < MAX_GROWTH_KIB, f"RSS grew from {before} to {peak} KiB"
    ids = set()
    for _ in range(count):  # now read: every request is answered
        ids.add(agent.recv()["id"])
    agent.wait_flood()
    assert ids == set(range(count))
    assert agent.finish() == 0
    agent.assert_clean_stderr()


@pytest.mark.heavy
def test_a_64_mib_line_is_skipped_and_answered(agent: Peer) -> None:
    big = b'{"jsonrpc":"2.0","id":1,"method":"_x","params":"' + b"x" * (64 * 1024 * 1024) + b'"}\n'
    agent.flood([big, line(INITIALIZE)])
    got = agent.recv()
    assert got == error(None, -32600, "Invalid request",
                        f"the message is {len(big) - 1} bytes long, over the limit of "
                        f"{64 * 1024 * 1024} bytes; skipped")  # fmt: skip
    assert agent.recv()["id"] == "init"
    assert agent.finish() == 0
    agent.assert_clean_stderr()


# -- a hostile agent against examples/client.py ----------------------------------------------

HOSTILE_AGENT = r"""
import json, sys
MODE = sys.argv[1]
out = sys.stdout.buffer
def send(message):
    out.write(json.dumps(message).encode() + b"\n"); out.flush()
def update(u):
    send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": u}})
for raw in sys.stdin.buffer:
    msg = json.loads(raw)
    rid, method = msg.get("id"), msg.get("method")
    if method == "initialize":
        if MODE == "die-at-initialize":
            sys.exit(3)
        out.write(b"\xff\xfe\n" + b"[1e400]\n" + b"[" * 30000 + b"\n" + b'{"jsonrpc":"2.0","method":"session/update","params":{"x":1e400}}\n')
        send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": 2, "info": {"name": "h", "version": "1"}}})
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": 999, "result": {}})  # an id nobody asked for
        send({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": "s"}})
    elif method == "session/prompt":
        if MODE == "never-answer":
            continue
        send({"jsonrpc": "2.0", "id": rid, "result": {"messageId": "u1"}})
        update({"sessionUpdate": "user_message", "messageId": "u1", "content": [{"type": "text", "text": "hi"}]})
        if MODE == "die-mid-turn":
            update({"sessionUpdate": "state_update", "state": "running"})
            sys.exit(0)
        n = int(MODE) if MODE.isdigit() else 3
        chunk = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"}}}}\n'
        out.write(chunk * n); out.flush()
        update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})
"""


def run_client(mode: str, *flags: str) -> tuple[int, str, str]:
    import subprocess

    from tests.support.hostile import REPO, python_env

    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "client.py"), *flags, "--",
         sys.executable, "-c", HOSTILE_AGENT, mode],
        capture_output=True, text=True, timeout=120, env=python_env(), cwd=REPO,
    )  # fmt: skip
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr


def test_a_hostile_agent_with_odd_bytes_still_gets_a_full_turn() -> None:
    code, out, err = run_client("3")
    assert code == 0, err
    result = json.loads(out)
    assert (result["protocol"], result["stopReason"], result["permissions"]) == (2, "end_turn", [])
    kinds = [u["sessionUpdate"] for u in result["updates"]]
    assert kinds == ["user_message"] + ["agent_message_chunk"] * 3 + ["state_update"]
    assert "dropped a response to the unknown request id 999" in err


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("die-at-initialize", "client.py: error: the agent exited before the turn ended"),
        ("die-mid-turn", "client.py: error: the agent exited before the turn ended"),
        ("never-answer", "client.py: error: timeout after 1s"),
    ],
)
def test_an_agent_that_dies_or_hangs_ends_the_client_with_one_line(mode: str, message: str) -> None:
    # Only the hanging agent needs the short timeout: the others must be seen to exit, however
    # long starting them takes on a busy machine.
    code, out, err = run_client(mode, "--timeout", "1" if mode == "never-answer" else "30")
    assert (code, out) == (1, "")
    assert err.strip().splitlines()[-1].startswith(message), err


@pytest.mark.heavy
def test_a_flood_of_200000_updates_reaches_the_client_in_order() -> None:
    code, out, err = run_client("200000", "--timeout", "120")
    assert code == 0, err[-2000:]
    updates = [u["sessionUpdate"] for u in json.loads(out)["updates"]]
    assert len(updates) == 200_002 and (updates[0], updates[-1]) == ("user_message", "state_update")
