"""`TranscriptRecorder`: a tap that writes every message it sees as one JSON line, exactly as
it was on the wire, the moment it passes: what `acp-codegen replay` reads.

Each line is handed to the operating system as it passes (one write, no buffer of ours), so a
process killed at any moment (even `kill -9`) loses no message that reached the wire. A file
it creates is readable by its owner only (0600): a transcript holds prompts and file
contents. A write that fails (a full disk) is reported once, in one line, kept as `error`, and
ends the recording; nothing is raised into the connection, and `close()` never raises it again.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection
from typing import IO

from .jsonrpc import Direction

_log = logging.getLogger(f"{__package__}.transcript")


class TranscriptRecorder:
    """Records raw messages as JSON lines.

        recorder = TranscriptRecorder("session.jsonl")
        connection.add_tap(recorder)   # or Connection(..., tap=recorder)

    The connection closes the recorder when it closes (or when the recorder is removed from
    it; with several connections, when the last one lets go); `close()` and `with` close it by
    hand. `target` is a path (opened for appending; created 0600) or an open binary file
    (written and flushed per line, not closed). `directions` limits it to `"in"` or `"out"`.
    `count` is the number of lines written, `error` the error that stopped it, if any.
    """

    def __init__(
        self,
        target: str | os.PathLike[str] | IO[bytes],
        *,
        directions: Collection[Direction] = ("in", "out"),
    ) -> None:
        self._fd: int | None = None
        self._file: IO[bytes] | None = None
        if isinstance(target, str | os.PathLike):
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
            self._fd = os.open(target, flags, 0o600)
            self.name = os.fsdecode(target)
        else:
            self._file = target
            self.name = str(getattr(target, "name", type(target).__name__))
        self._directions = frozenset(directions)
        self._attached = 0
        self.closed = False
        self.count = 0
        """Lines written so far."""
        self.error: Exception | None = None
        """The error that stopped the recording (already reported), if any."""

    def __call__(self, direction: Direction, line: bytes) -> None:
        if self.closed or direction not in self._directions:
            return
        data = line if line.endswith(b"\n") else line + b"\n"
        try:
            if self._fd is not None:
                written = os.write(self._fd, data)
                while written < len(data):  # a short write: the rest, from where it stopped
                    written += os.write(self._fd, memoryview(data)[written:])
            else:
                assert self._file is not None
                self._file.write(data)
                self._file.flush()
        except (OSError, ValueError) as exc:  # ValueError: a file passed in was closed
            self._stop(exc)
            return
        self.count += 1

    def tap_attached(self) -> None:
        """Called by a connection the recorder joins as a tap."""
        self._attached += 1

    def tap_detached(self) -> None:
        """Called by a connection the recorder leaves: the last one closes it."""
        self._attached -= 1
        if self._attached <= 0:
            self.close()

    def close(self) -> None:
        """Close the file (a file passed in is flushed, not closed). Never raises: a failure
        is reported once and kept as `error`."""
        if self.closed:
            return
        self.closed = True
        try:
            if self._fd is not None:
                fd, self._fd = self._fd, None
                os.close(fd)
            elif self._file is not None and not self._file.closed:
                self._file.flush()
        except OSError as exc:
            self._report(exc)

    def _stop(self, exc: Exception) -> None:
        self._report(exc)
        self.close()

    def _report(self, exc: Exception) -> None:
        if self.error is not None:
            return
        self.error = exc
        _log.warning(
            "transcript %s: cannot write (%s); recording stopped after %d message(s)",
            self.name,
            " ".join(str(exc).split()) or type(exc).__name__,
            self.count,
        )

    def __del__(self) -> None:  # a recorder dropped unclosed: its file descriptor goes too
        fd, self._fd = getattr(self, "_fd", None), None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> TranscriptRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
