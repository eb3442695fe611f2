"""TranscriptRecorder and message taps: every message is handed to the OS as it passes, a file
it creates is 0600, the connection it taps closes it, a full disk is reported once and never
raised again, and a tap that raises is reported in one line and removed while the connection
carries on. (A recorder killed with SIGKILL mid-stream: tests/e2e/test_process_lifecycle.py.)"""

from __future__ import annotations

import errno
import io
import logging
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from acp_kit import v2 as acp

from tests.support.rpc_wire import RawPeer, request, run

NEW = request(1, "session/new", {"cwd": "/"})


class Agent(acp.AgentBase):
    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        return acp.NewSessionResponse(session_id="s1")


async def one_call(peer: RawPeer, rid: int = 1) -> Any:
    return await peer.call(request(rid, "session/new", {"cwd": "/"}))


def test_each_message_is_in_the_file_as_soon_as_it_passes(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    recorder = acp.TranscriptRecorder(path)

    async def scenario() -> list[bytes]:
        peer = RawPeer(Agent(), tap=recorder)
        await one_call(peer)
        seen = path.read_bytes().splitlines()  # the connection is still open
        await peer.connection.close()
        return seen

    seen = run(scenario())
    assert [line[:26] for line in seen] == [
        b'{"jsonrpc": "2.0", "id": 1',
        b'{"jsonrpc":"2.0","id":1,"r',
    ]
    assert recorder.count == 2 and recorder.closed and recorder.error is None


def test_a_new_transcript_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    old = os.umask(0)
    try:
        acp.TranscriptRecorder(path).close()
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_connection_closes_the_recorder_it_taps(tmp_path: Path) -> None:
    recorders = [acp.TranscriptRecorder(tmp_path / "a.jsonl") for _ in range(3)]

    async def scenario() -> list[bool]:
        first = RawPeer(Agent(), tap=recorders[0])
        second = RawPeer(Agent())
        second.connection.add_tap(recorders[1])
        remove = second.connection.add_tap(recorders[2])
        remove()  # leaving a connection closes it too
        states = [r.closed for r in recorders]
        first.eof()  # the peer goes: the connection closes on its own
        await first.connection.wait_closed()
        await second.connection.close()
        return states + [r.closed for r in recorders]

    assert run(scenario()) == [False, False, True, True, True, True]


def test_a_recorder_tapping_two_connections_closes_with_the_last() -> None:
    sink = io.BytesIO()
    recorder = acp.TranscriptRecorder(sink, directions=("out",))

    async def scenario() -> list[bool]:
        one, two = RawPeer(Agent(), tap=recorder), RawPeer(Agent(), tap=recorder)
        await one_call(one)
        await one.connection.close()
        still_open = recorder.closed
        await one_call(two, 2)
        await two.connection.close()
        return [still_open, recorder.closed]

    assert run(scenario()) == [False, True]
    assert sink.getvalue().count(b'"result":{"sessionId":"s1"}') == 2
    assert not sink.closed  # a file passed in is flushed, not closed


class FullDisk(io.RawIOBase):
    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("target", ["/dev/full", "file object"])
def test_a_full_disk_is_reported_once_and_never_raised(
    target: str, caplog: pytest.LogCaptureFixture
) -> None:
    if target == "/dev/full" and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    recorder = acp.TranscriptRecorder(target if target == "/dev/full" else FullDisk())

    async def scenario() -> list[Any]:
        peer = RawPeer(Agent(), tap=recorder)
        answers = [await one_call(peer), await one_call(peer, 2)]
        await peer.connection.close()
        return answers

    with caplog.at_level(logging.WARNING):
        answers = run(scenario())
    assert [a["result"] for a in answers] == [{"sessionId": "s1"}] * 2  # the connection went on
    assert isinstance(recorder.error, OSError) and recorder.error.errno == errno.ENOSPC
    assert recorder.count == 0 and recorder.closed
    recorder.close()  # again: nothing raised
    messages = [r.getMessage() for r in caplog.records if "transcript" in r.getMessage()]
    assert len(messages) == 1 and "No space left on device" in messages[0]
    assert messages[0].endswith("recording stopped after 0 message(s)")


def test_a_tap_that_raises_is_reported_in_one_line_and_removed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[str] = []

    def fragile(direction: str, line: bytes) -> None:
        calls.append(direction)
        raise ValueError("disk on fire\nsecond line")

    async def scenario() -> list[Any]:
        peer = RawPeer(Agent(), tap=fragile)
        answers = [await one_call(peer), await one_call(peer, 2)]
        await peer.connection.close()
        return answers

    with caplog.at_level(logging.WARNING, logger="acp_kit.runtime.connection"):
        answers = run(scenario())
    assert [a["id"] for a in answers] == [1, 2]
    assert calls == ["in"]
    [record] = [r for r in caplog.records if "tap" in r.getMessage()]
    assert record.getMessage() == (
        "removed the message tap "
        "test_a_tap_that_raises_is_reported_in_one_line_and_removed.<locals>.fragile: "
        "it raised ValueError: disk on fire second line"
    )
    assert record.exc_info is None
