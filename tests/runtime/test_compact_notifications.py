"""A notification that starts with the compact envelope of the notification method read last
is handed on after parsing only its params (the first branch of the reading step,
`LineReader.take`). Every line that starts that way but is not exactly such a notification
must get what the general way gives it: a request, a parse error with its reason, the last of
two `params`, whitespace allowed around the value. These tests run with the fast paths off
too (test_fast_paths_off.py), with the same results."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from acp_kit import v2 as acp

from tests.support.rpc_wire import RawPeer, run

START = b'{"jsonrpc":"2.0","method":"session/update","params":'


def chunk_params(text: str) -> bytes:
    params = {
        "sessionId": "s",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m",
            "content": {"type": "text", "text": text},
        },
    }
    return json.dumps(params, separators=(",", ":")).encode()


class Client(acp.ClientBase):
    def __init__(self) -> None:
        self.texts: list[str] = []

    async def session_update(self, params: acp.UpdateSessionNotification) -> None:
        update = params.update
        assert isinstance(update, acp.SessionUpdateAgentMessageChunk)
        assert isinstance(update.content, acp.ContentBlockText)
        self.texts.append(update.content.text)


async def outcome(lines: list[bytes]) -> tuple[list[str], list[Any]]:
    """The texts the handler got and the messages written back, for `lines` sent after two
    compact notifications, which make their envelope the one looked for."""
    client = Client()
    peer = RawPeer(client)
    for text in ("first", "second"):
        peer.send_bytes(START + chunk_params(text) + b"}\n")
    while len(client.texts) < 2:
        await asyncio.sleep(0.001)
    for line in lines:
        peer.send_bytes(line + b"\n")
    peer.eof()
    await peer.connection.wait_closed()
    written = [json.loads(line) for line in (await peer.rest()).splitlines()]
    assert client.texts[:2] == ["first", "second"]
    return client.texts[2:], written


def parse_error(reason: str) -> dict[str, Any]:
    error = {"code": -32700, "message": "Parse error", "data": reason}
    return {"jsonrpc": "2.0", "id": None, "error": error}


def test_compact_notifications_reach_the_handler_in_order() -> None:
    lines = [START + chunk_params(f"t{i}") + b"}" for i in range(300)]
    texts, written = run(outcome(lines))
    assert texts == [f"t{i}" for i in range(300)]
    assert written == []


@pytest.mark.parametrize(
    ("line", "texts"),
    [
        (START + chunk_params("spaced") + b"} \t", ["spaced"]),  # whitespace after the value
        (START + chunk_params("crlf") + b"}\r", ["crlf"]),
        # A second `params` replaces the first, as json.loads does.
        (START + chunk_params("one") + b',"params":' + chunk_params("two") + b"}", ["two"]),
        (START + b" " + chunk_params("space before") + b"}", ["space before"]),
    ],
)
def test_lines_that_start_compact_but_are_not_are_read_the_general_way(
    line: bytes, texts: list[str]
) -> None:
    assert run(outcome([line])) == (texts, [])


def test_a_long_compact_line_goes_the_general_way_to_the_same_end() -> None:
    from acp_kit.runtime._reading import COMPACT_MAX_BYTES

    text = "x" * COMPACT_MAX_BYTES
    line = START + chunk_params(text) + b"}"
    assert len(line) > COMPACT_MAX_BYTES
    assert run(outcome([line, START + chunk_params("after") + b"}"])) == ([text, "after"], [])


def test_a_compact_start_with_an_id_is_a_request() -> None:
    texts, written = run(outcome([START + chunk_params("asked") + b',"id":7}']))
    assert texts == []
    assert written == [
        {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {
                "code": -32601,
                "message": "Method not found",
                "data": "session/update",
            },
        }
    ]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (START + chunk_params("x") + b"}x", "Extra data at character 172"),
        (START + chunk_params("x") + b"}}", "Extra data at character 172"),
        (START + b'{"sessionId":"s","n":1e400}}', "the number 1e400 is out of range"),
        (START + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
        (START + b'{"sessionId":"\xff"}}', "invalid UTF-8 at byte 66"),
        (START + chunk_params("cut short"), "Expecting ',' delimiter at character 179"),
    ],
)
def test_broken_lines_that_start_compact_get_the_parse_error_of_the_general_way(
    line: bytes, reason: str
) -> None:
    texts, written = run(outcome([line, START + chunk_params("after") + b"}"]))
    assert texts == ["after"]
    assert written == [parse_error(reason)]


def test_invalid_params_in_a_compact_line_are_logged_and_the_stream_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bad = START + b'{"sessionId":5}}'
    texts, written = run(outcome([bad, START + chunk_params("after") + b"}"]))
    assert texts == ["after"] and written == []
    assert "ignored the notification session/update with invalid params" in caplog.text
