"""What a client lets an agent do on this machine: read and write text files in a session's
folders, run commands in terminals. Lane-neutral: plain values in, plain values out.

    Workspace()                                        # reads inside the session's folders only
    Workspace(write=True, terminals=True)              # each write and command asked on the tty
    Workspace(write=True, approve=approve_always)      # every write inside the folders

Deny by default. Reads are served inside the session's roots (its `cwd` and additional
folders); writes and terminals only when turned on, and then each write and each command goes
to `approve` first, which sees the exact path (symbolic links resolved) or the exact command
(argv, program, cwd, environment) and approves only by returning True. `capabilities()` says
exactly what is served; a method turned off is answered -32601.

A terminal's environment is HOME, LOGNAME, PATH, SHELL, TERM and USER from this process, then
the `env` given to the Workspace, then the agent's `env` entries (each overriding the one
before); `approve` sees the result, so approving a command approves the environment the agent
asked for. Caps (none of which an agent can raise): `read_limit` bytes a read returns,
`write_limit` bytes a write writes, `output_limit` bytes of output a terminal keeps (the
agent's `outputByteLimit` can only lower it), `max_terminals` unreleased terminals a session
holds.

Every refusal is an `RpcError` with `data` `{"path": <the parameter>, "reason": ...}`: -32602
for a path or command refused (relative, outside the roots, NUL bytes, a special file, over a
cap, not approved), -32002 for what does not exist (a file, an unknown session or terminal),
-32603 when the system fails. POSIX only (process groups, `O_NOFOLLOW`).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import inspect
import logging
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from ..runtime.jsonrpc import RpcError
from . import files
from .approvals import (
    Approval,
    Proposal,
    ProposedCommand,
    ProposedWrite,
    approve_always,
    approve_by_asking,
    approve_never,
)
from .files import check_text, failed, invalid, not_found, shown
from .terminals import ExitStatus, Terminal, TerminalOutput

__all__ = [
    "BASE_ENV",
    "Approval",
    "Capabilities",
    "Proposal",
    "ExitStatus",
    "ProposedCommand",
    "ProposedWrite",
    "TerminalOutput",
    "Workspace",
    "approve_always",
    "approve_by_asking",
    "approve_never",
]

BASE_ENV: Final = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
"""The variables of this process's environment a terminal gets."""
READ_LIMIT: Final = 16 * 1024 * 1024
WRITE_LIMIT: Final = 16 * 1024 * 1024
OUTPUT_LIMIT: Final = 1024 * 1024
MAX_TERMINALS: Final = 16
_log: Final = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a workspace serves: `fs.readTextFile`, `fs.writeTextFile` and `terminal`."""

    read_text_file: bool
    write_text_file: bool
    terminal: bool


# -- the workspace -----------------------------------------------------------------------------
class Workspace:
    """Files and terminals for a client's sessions; see the module docstring. `roots` are a
    session's folders (empty: the client does not know the session, answered -32002)."""

    def __init__(
        self,
        *,
        read: bool = True,
        write: bool = False,
        terminals: bool = False,
        approve: Approval = approve_by_asking,
        env: Mapping[str, str] | None = None,
        read_limit: int = READ_LIMIT,
        write_limit: int = WRITE_LIMIT,
        output_limit: int = OUTPUT_LIMIT,
        max_terminals: int = MAX_TERMINALS,
    ) -> None:
        caps = {"read_limit": read_limit, "write_limit": write_limit}
        caps |= {"output_limit": output_limit, "max_terminals": max_terminals}
        for name, value in caps.items():
            if value < 0:
                raise ValueError(f"{name} must be 0 or more, not {value}")
        self.read = read
        self.write = write
        self.terminals = terminals
        self.approve = approve
        self.env = dict(env or {})
        try:
            _check_env(self.env)
        except RpcError as exc:
            reason = exc.data.get("reason") if isinstance(exc.data, dict) else exc.message
            raise ValueError(f"env: {reason}") from None
        self.read_limit = read_limit
        self.write_limit = write_limit
        self.output_limit = output_limit
        self.max_terminals = max_terminals
        self._terminals: dict[str, Terminal] = {}
        self._starting: dict[str, int] = {}  # per session: creations waiting for approval
        self._count = 0
        self._closes = 0

    def capabilities(self) -> Capabilities:
        """What the client's `initialize` advertises."""
        return Capabilities(self.read, self.write, self.terminals)

    # -- files -------------------------------------------------------------------------------
    async def read_text_file(
        self,
        session_id: str,
        roots: Sequence[str],
        path: str,
        line: int | None = None,
        limit: int | None = None,
    ) -> str:
        """Lines `line` (1-based, default 1) to `line + limit - 1` (default: to the end) of a
        UTF-8 file; a line ends at `\\n` (so `\\r\\n` too), nothing else."""
        self._serving(self.read, "fs/read_text_file", session_id, roots)
        first = 1 if line is None else line
        if first < 1:
            raise invalid("$.line", f"lines are numbered from 1, not {first}")
        if limit is not None and limit < 0:
            raise invalid("$.limit", f"a number of lines is 0 or more, not {limit}")
        return await asyncio.to_thread(files.read_text, roots, path, first, limit, self.read_limit)

    async def write_text_file(
        self, session_id: str, roots: Sequence[str], path: str, content: str
    ) -> None:
        """Write `content` (UTF-8) to `path`, atomically, once `approve` said yes."""
        self._serving(self.write, "fs/write_text_file", session_id, roots)
        data = check_text("$.content", "content", content)
        if len(data) > self.write_limit:
            reason = f"the content is {len(data)} bytes, over the write cap of {self.write_limit}"
            raise invalid("$.content", reason)
        place, replaces = await asyncio.to_thread(files.inspect_target, roots, path)
        proposal = ProposedWrite(session_id, place.path, len(data), replaces)
        if not await self._approved(proposal):
            raise invalid("$.path", f"the user did not approve writing {shown(place.path)}")
        await asyncio.to_thread(files.write_text, roots, path, data, place)

    # -- terminals ---------------------------------------------------------------------------
    async def create_terminal(
        self,
        session_id: str,
        roots: Sequence[str],
        command: str,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
    ) -> str:
        """Start `command` with `args` once `approve` said yes; returns the terminal's id."""
        self._serving(self.terminals, "terminal/create", session_id, roots)
        argv = _check_command(command, args)
        agent_env = dict(env or {})
        _check_env(agent_env)
        if output_byte_limit is not None and output_byte_limit < 0:
            raise invalid("$.outputByteLimit", f"a byte count is 0 or more: {output_byte_limit}")
        held = sum(1 for t in self._terminals.values() if t.session_id == session_id)
        held += self._starting.get(session_id, 0)
        if held >= self.max_terminals:
            reason = f"the session holds {held} terminals, the cap; release one first"
            raise invalid("$.sessionId", reason)
        self._starting[session_id] = self._starting.get(session_id, 0) + 1
        try:
            return await self._start(session_id, roots, argv, agent_env, cwd, output_byte_limit)
        finally:
            self._starting[session_id] -= 1
            if not self._starting[session_id]:
                del self._starting[session_id]

    async def _start(
        self,
        session_id: str,
        roots: Sequence[str],
        argv: tuple[str, ...],
        agent_env: dict[str, str],
        cwd: str | None,
        output_byte_limit: int | None,
    ) -> str:
        command, closes = argv[0], self._closes
        full_env = {name: os.environ[name] for name in BASE_ENV if name in os.environ}
        full_env.update(self.env)
        full_env.update(agent_env)
        path = full_env.get("PATH", os.defpath)
        folder = roots[0] if cwd is None else cwd
        where, program = await asyncio.to_thread(_place_command, roots, folder, command, path)
        shown_env = MappingProxyType(full_env)
        proposal = ProposedCommand(
            session_id, argv, program, where, shown_env, MappingProxyType(agent_env)
        )
        if not await self._approved(proposal):
            raise invalid("$.command", f"the user did not approve running {shown(command)}")
        if closes != self._closes:
            raise failed("$.sessionId", "the workspace was closed while this waited for approval")
        keep = self.output_limit
        if output_byte_limit is not None:
            keep = min(keep, output_byte_limit)
        try:
            terminal = Terminal(
                session_id, argv, executable=program, cwd=where, env=full_env, limit=keep
            )
        except OSError as exc:
            raise _spawn_failure(exc, command, where) from None
        self._count += 1
        terminal_id = f"term_{self._count}"
        self._terminals[terminal_id] = terminal
        return terminal_id

    async def terminal_output(self, session_id: str, terminal_id: str) -> TerminalOutput:
        """The output kept so far, whether it was cut, and the exit status once exited."""
        return self._terminal("terminal/output", session_id, terminal_id).text()

    async def wait_for_exit(self, session_id: str, terminal_id: str) -> ExitStatus:
        """Wait for the command to exit (not for its background children or its pipe)."""
        return await self._terminal("terminal/wait_for_exit", session_id, terminal_id).wait()

    async def kill_terminal(self, session_id: str, terminal_id: str) -> None:
        """Kill the command's process group; its output and exit status stay available."""
        terminal = self._terminal("terminal/kill", session_id, terminal_id)
        terminal.kill()
        with contextlib.suppress(TimeoutError):  # SIGKILL is quick, unless stuck in the kernel
            await asyncio.wait_for(terminal.wait(), 1.0)

    async def release_terminal(self, session_id: str, terminal_id: str) -> None:
        """Kill the command's process group if it still runs, and forget the terminal."""
        terminal = self._terminal("terminal/release", session_id, terminal_id)
        del self._terminals[terminal_id]
        await terminal.stop()

    async def close_session(self, session_id: str) -> None:
        """Release every terminal of the session (it closed, or the client forgot it)."""
        ids = [i for i, t in self._terminals.items() if t.session_id == session_id]
        await self._stop([self._terminals.pop(i) for i in ids])

    async def close(self) -> None:
        """Release every terminal (the client's connection is gone). The workspace can serve
        another connection afterwards."""
        terminals, self._terminals = list(self._terminals.values()), {}
        self._closes += 1
        await self._stop(terminals)

    @staticmethod
    async def _stop(terminals: list[Terminal]) -> None:
        for terminal in terminals:
            terminal.kill()
        await asyncio.gather(*(terminal.stop() for terminal in terminals))

    # -- checks ------------------------------------------------------------------------------
    def _serving(self, on: bool, method: str, session_id: str, roots: Sequence[str]) -> None:
        if not on:
            raise RpcError.method_not_found(method)
        if not roots:
            raise not_found("$.sessionId", f"no session {shown(session_id)} on this client")

    def _terminal(self, method: str, session_id: str, terminal_id: str) -> Terminal:
        if not self.terminals:
            raise RpcError.method_not_found(method)
        terminal = self._terminals.get(terminal_id)
        if terminal is None or terminal.session_id != session_id:
            reason = f"no terminal {shown(terminal_id)} in session {shown(session_id)}"
            raise not_found("$.terminalId", reason)
        return terminal

    async def _approved(self, proposal: Proposal) -> bool:
        try:
            answer = self.approve(proposal)
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as exc:
            _log.warning("refused, the approval failed (%s: %s)", type(exc).__name__, exc)
            return False
        return answer is True


def _check_command(command: str, args: Sequence[str]) -> tuple[str, ...]:
    check_text("$.command", "command", command)
    if not command:
        raise invalid("$.command", "the command is empty")
    for n, arg in enumerate(args):
        check_text(f"$.args[{n}]", "argument", arg)
    return (command, *args)


def _check_env(env: Mapping[str, str]) -> None:
    for name, value in env.items():
        check_text("$.env", f"name of the variable {shown(name)}", name)
        check_text("$.env", f"value of {shown(name)}", value)
        if not name or "=" in name:
            raise invalid("$.env", f"not a variable name: {shown(name)}")


def _place_command(roots: Sequence[str], folder: str, command: str, path: str) -> tuple[str, str]:
    """The working folder (inside the roots) and the program `command` runs there."""
    place = files.locate(roots, folder, "$.cwd")
    if not os.path.isdir(place.path):
        raise not_found("$.cwd", f"no such folder: {shown(folder)}")
    return place.path, _find_program(command, place.path, path)


def _find_program(command: str, cwd: str, path: str) -> str:
    """The file `command` runs (searched on the terminal's PATH, relative entries from `cwd`)."""
    if "/" in command:
        found = os.path.join(cwd, command)
        if not (os.path.isfile(found) and os.access(found, os.X_OK)):
            raise invalid("$.command", f"not an executable file: {shown(command)}")
        return os.path.normpath(found)
    folders = [os.path.join(cwd, entry) for entry in path.split(os.pathsep)]
    found_on_path = shutil.which(command, path=os.pathsep.join(folders))
    if found_on_path is None:
        raise invalid("$.command", f"no command {shown(command)} on the terminal's PATH")
    return found_on_path


def _spawn_failure(exc: OSError, command: str, cwd: str) -> RpcError:
    if exc.filename == cwd:
        return failed("$.cwd", f"cannot enter {shown(cwd)}: {exc.strerror or exc}")
    if exc.errno == errno.E2BIG:
        return invalid("$.args", "the command line and environment are too long to run")
    return invalid("$.command", f"cannot run {shown(command)}: {exc.strerror or exc}")
