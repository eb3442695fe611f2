"""What a workspace asks before it writes a file or runs a command, and the ready-made answers.

An `Approval` is a function (plain or async) of a `ProposedWrite` or a `ProposedCommand`; only
`True` approves (anything else, an exception included, refuses). A proposal shows exactly
what will happen: the path after its symbolic links, the argv, the program found on PATH, the
working folder and the whole environment. `describe()` is that as text for a person, with
what is not printable escaped, so that an agent's escape sequences are shown, not played.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
import sys
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Final, TypeAlias

from .files import shown

_log: Final = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ProposedWrite:
    """A write waiting for approval: `path` is where the bytes will go (links resolved)."""

    session_id: str
    path: str
    size: int
    replaces: bool

    def describe(self) -> str:
        what = "replacing the file" if self.replaces else "a new file"
        return (
            f"The agent (session {shown(self.session_id)}) asks to write {self.size} bytes"
            f" to {shown(self.path)} ({what})."
        )


@dataclass(frozen=True, slots=True)
class ProposedCommand:
    """A command waiting for approval: exactly what will run, and the environment it gets
    (`agent_env`: the part of `env` the agent asked for). The mappings are read-only."""

    session_id: str
    argv: tuple[str, ...]
    executable: str
    cwd: str
    env: Mapping[str, str]
    agent_env: Mapping[str, str]

    def describe(self) -> str:
        lines = [
            f"The agent (session {shown(self.session_id)}) asks to run:",
            f"  command: {shown(shlex.join(self.argv), 2000)}",
            f"  program: {shown(self.executable)}",
            f"  in: {shown(self.cwd)}",
            "  environment:",
        ]
        for name, value in sorted(self.env.items()):
            origin = " (asked by the agent)" if name in self.agent_env else ""
            lines.append(f"    {shown(name)}={shown(value)}{origin}")
        return "\n".join(lines)


Proposal: TypeAlias = ProposedWrite | ProposedCommand
Approval: TypeAlias = Callable[[Proposal], bool | Awaitable[bool]]
"""Decides a write or a command: only True (returned or awaited) approves it."""


def approve_always(proposal: Proposal) -> bool:
    """Approve every write and command the workspace serves (inside the roots, under caps)."""
    return True


def approve_never(proposal: Proposal) -> bool:
    """Refuse every write and command."""
    return False


class _Asker:
    """One question at a time on this process's terminal, per event loop."""

    def __init__(self) -> None:
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        self._told = False

    async def __call__(self, proposal: Proposal) -> bool:
        if not sys.stdin.isatty():
            level = logging.DEBUG if self._told else logging.WARNING
            self._told = True
            _log.log(level, "refused, stdin is not a terminal: %s", proposal.describe())
            return False
        lock = self._locks.setdefault(asyncio.get_running_loop(), asyncio.Lock())
        await lock.acquire()
        print(proposal.describe(), file=sys.stderr)
        print("Allow? [y/N] ", end="", file=sys.stderr, flush=True)
        reading = asyncio.ensure_future(asyncio.to_thread(sys.stdin.readline))
        try:
            answer = await asyncio.shield(reading)
        except asyncio.CancelledError:
            # Withdrawn: the line typed for this question must not answer the next one, so
            # the next waits for it (and it approves nothing).
            print("(withdrawn: the answer will be ignored)", file=sys.stderr, flush=True)
            reading.add_done_callback(lambda done: _release(lock, done))
            raise
        lock.release()
        return answer.strip().lower() in ("y", "yes")


def _release(lock: asyncio.Lock, reading: asyncio.Future[str]) -> None:
    if not reading.cancelled():
        reading.exception()  # retrieved: a failed read of a withdrawn question is no error
    lock.release()


approve_by_asking: Final[Approval] = _Asker()
"""Ask on the terminal (the question on stderr, one at a time, `y` or `yes` from stdin
approves); refused when stdin is not a terminal (logged once as a warning) or on any other
answer."""
