"""The remote transports' parts on their own: the SSE parser (line endings split anywhere,
limits), `peek` (its prefix branch gives what a full decode gives), and an SSE stream's outbox
(numbered events, replays after `Last-Event-ID`, takeovers)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from acp_kit.transports.outbox import Conflict, Outbox, Replaced
from acp_kit.transports.protocol import classify, peek
from acp_kit.transports.sse import Event, SseError, SseParser, event

from tests.support.remote import REPO
from tests.support.rpc_wire import run


def test_sse_parser_reads_events_split_anywhere() -> None:
    stream = (
        b'\xef\xbb\xbf: comment\r\nid: 7\r\ndata: {"a":1}\r\n\r\n'
        b"event: ignored\rdata: one\rdata: two\r\rretry: 5\n\nid: 9\ndata:x\n\n"
    )
    expected = [Event(b'{"a":1}', "7"), Event(b"one\ntwo", "7"), Event(b"x", "9")]
    for size in (1, 2, 3, 7, len(stream)):
        parser = SseParser(1024)
        found = []
        for start in range(0, len(stream), size):
            found += parser.feed(stream[start : start + size])
        assert found == expected, size


def test_sse_parser_reads_the_usual_shape_split_anywhere() -> None:
    """Our server's events (`id:` then one `data:`), the shape the parser reads fastest,
    mixed with others: the same events however the bytes are cut."""
    stream = b"".join(event(b'{"n":%d}' % n, n) for n in range(1, 40)) + b"data: a\ndata: b\n\n"
    stream += event(b"{}", 40) + b":\n\n" + event(b"{}", 41)
    expected = [Event(b'{"n":%d}' % n, str(n)) for n in range(1, 40)]
    expected += [Event(b"a\nb", "39"), Event(b"{}", "40"), Event(b"{}", "41")]
    for size in range(1, 14):
        parser = SseParser(1024)
        found = []
        for start in range(0, len(stream), size):
            found += parser.feed(stream[start : start + size])
        assert found == expected, size


def test_sse_parser_refuses_oversized_lines_and_events() -> None:
    parser = SseParser(16)
    assert parser.feed(b"data: {}\n\ndata: " + b"x" * 20) == [Event(b"{}", None)]
    assert str(parser.error) == "an event stream line is over 16 bytes"
    with pytest.raises(SseError):  # the stream is over
        parser.feed(b"\n\n")
    parser = SseParser(16)
    assert parser.feed(b"data: 12345678\ndata: 12345678\n") == []
    assert str(parser.error) == "an event is over 16 bytes"
    assert event(b"{}", 3) == b"id: 3\ndata: {}\n\n"


LINES = [
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{}}}',
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s\\"1","update":{}}}',
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","u":{"id":3}}}',
    b'{"jsonrpc":"2.0","method":"x","params":{"sessionId":"s1"},"id":5}',
    b'{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s"}}',
    b'{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m"}}',
    b'{"jsonrpc":"2.0","id":"a","method":"session/request_permission","params":{"sessionId":"s"}}',
    b'{"jsonrpc":"2.0","id":12,"result":null}',
    b'{"jsonrpc":"2.0","method":"session/cancel"}',
    b"[1]",
    b"not json",
]


@pytest.mark.parametrize("line", LINES)
def test_peek_gives_what_a_full_decode_gives(line: bytes) -> None:
    try:
        value = json.loads(line)
    except ValueError:
        value = None
    assert peek(line) == classify(value)


class Account:
    def __init__(self) -> None:
        self.buffered = 0
        self.kept = 0
        self.replay_bytes = 63
        self.progress = 0

    def progressed(self) -> None:
        self.progress += 1


def test_an_outbox_replays_what_followed_the_last_event_id() -> None:
    async def main() -> None:
        account = Account()
        outbox = Outbox(account)
        for n in range(1, 6):
            outbox.push(b'{"n":%d}' % n)
        outbox.attach(1, None)
        batch = await outbox.take(1, 0.1)
        assert [n for n, _ in batch] == [1, 2, 3, 4, 5]
        assert account.buffered == 0 and account.progress == 1
        outbox.sent(batch)  # kept within 63 bytes: the last three (21 bytes each)
        assert account.kept == 63
        with pytest.raises(Conflict, match="^Cannot resume after event 1: later events are gone$"):
            outbox.attach(2, "1")
        with pytest.raises(Conflict, match="^Unknown Last-Event-ID '9'$"):
            outbox.attach(2, "9")
        outbox.attach(2, "3")  # a newer GET takes the stream over
        with pytest.raises(Replaced):
            await outbox.take(1, 0.1)
        again = await outbox.take(2, 0.1)
        assert [n for n, _ in again] == [4, 5] and again[0][1] == b'id: 4\ndata: {"n":4}\n\n'
        assert await outbox.take(2, 0.01) == []  # nothing more: a keep-alive is due
        outbox.close()
        assert (account.buffered, account.kept) == (0, 0)
        with pytest.raises(Replaced):
            await outbox.take(2, 0.1)

    run(main())


WITHOUT_EXTRAS = """
import asyncio, sys
for name in ("httpx", "websockets", "uvicorn"):
    sys.modules[name] = None  # as if not installed: importing it raises ImportError
import acp_kit as acp
from acp_kit.transports import connect, http_client, serve, server, ws_client  # noqa: F401

app = acp.AgentApp(acp.Agent(), token="t")  # the ASGI app needs no library
for attempt in (
    lambda: acp.HttpTransport("http://127.0.0.1:1/acp"),
    lambda: acp.WebSocketTransport("ws://127.0.0.1:1/acp"),
    lambda: asyncio.run(acp.serve_remote(app, "127.0.0.1:0")),
):
    try:
        attempt()
    except acp.MissingExtra as exc:
        print(exc)
"""


def test_the_package_imports_without_the_extras_and_names_what_to_install() -> None:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "generated")}
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTRAS], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr
    extra = "(acp-codegen's 'remote' extra installs uvicorn, httpx and websockets)"
    assert done.stdout.splitlines() == [
        f"an http(s):// agent needs httpx: pip install httpx {extra}",
        f"a ws(s):// agent needs websockets: pip install websockets {extra}",
        f"serve_remote runs under uvicorn: pip install uvicorn {extra}",
    ]
