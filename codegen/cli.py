"""`acp-codegen`: generate bindings, manage schema pins, diff spec versions, replay sessions.

Exit status: 0 ok, 1 `--check` found a difference (or `diff` found a breaking change, or
`schema outdated` a newer release), 2 bad input, 3 a bug of acp-codegen's. Errors are one line
on stderr, never a traceback (ACP_CODEGEN_DEBUG=1 shows one for a bug).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from . import __version__
from .diagnostics import InputError, print_diagnostics

BUG = "3 a bug of acp-codegen's (please report it)"
# The commands, each in its own module under `codegen.commands`: (name, help, exit status).
COMMANDS = (
    (
        "generate",
        "generate the bindings (defaults from [tool.acp-codegen])",
        f"0 written (with --check: current), 1 --check found a difference, 2 bad input, {BUG}",
    ),
    ("schema", "manage the pinned upstream schemas", f"0 ok, 2 bad input, {BUG}"),
    (
        "diff",
        "what changed between two ACP schema versions, and whom it breaks",
        f"0 nothing at the --fail-on severity, 1 something is, 2 bad input, {BUG}",
    ),
    (
        "replay",
        "rebuild a session from a JSON-lines transcript of JSON-RPC messages",
        "0 replayed (bad lines are reported and skipped), 2 bad input (unreadable, binary or"
        " empty file, no session/update, unknown --session), " + BUG,
    ),
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def exit_status_epilog(text: str, before: str | None = None) -> str:
    """An epilog ending with the exit status line (`before` first, when there is one)."""
    import textwrap

    status = textwrap.fill(f"exit status: {text}", width=80, subsequent_indent="  ")
    return (before.rstrip("\n") + "\n\n" if before else "") + status


def parser(wanted: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The argument parser; only the commands named in `wanted` load their modules."""
    p = _Parser(
        prog="acp-codegen",
        description=__doc__.splitlines()[0] if __doc__ else None,
        epilog="exit status: 0 ok, 1 --check differs or diff found breaking changes,"
        f" 2 bad input, {BUG}; each command's --help says which it uses",
    )
    p.add_argument("--version", action="version", version=f"acp-codegen {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, help_text, status in COMMANDS:
        command = sub.add_parser(name, help=help_text)
        if name not in wanted:
            continue
        module = importlib.import_module(f"codegen.commands.{name}")
        if name == "schema":
            module.add_arguments(command, _Parser, exit_status_epilog(status))
        else:
            module.add_arguments(command)
        command.epilog = exit_status_epilog(status, command.epilog)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser(wanted=argv[:1]).parse_args(argv)
    try:
        code: int = importlib.import_module(f"codegen.commands.{args.command}").run(args)
        return code
    except InputError as exc:
        print_diagnostics(exc.diagnostics, verbose=False)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug: still one line, unless asked for the traceback
        if os.environ.get("ACP_CODEGEN_DEBUG"):
            raise
        from .render.ruff import RuffFailed

        detail = str(exc) if isinstance(exc, RuffFailed) else f"{type(exc).__name__}: {exc}"
        print(
            f"acp-codegen: internal error (please report it): {detail}".splitlines()[0],
            file=sys.stderr,
        )
        return 3
