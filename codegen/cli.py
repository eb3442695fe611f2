"""`acp-codegen`: generate bindings, manage schema pins, diff spec versions, replay sessions.

Exit status: 0 ok, 1 `--check` found a difference (or `diff` found a breaking change),
2 bad input, 3 a bug of acp-codegen's. Errors are one line on stderr, never a traceback
(ACP_CODEGEN_DEBUG=1 shows one for a bug).
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

# The commands, each in its own module under `codegen.commands`: (name, help).
COMMANDS = (
    ("generate", "generate the bindings (defaults from [tool.acp-codegen])"),
    ("schema", "manage the pinned upstream schemas"),
    ("diff", "what changed between two ACP schema versions, and whom it breaks"),
    ("replay", "rebuild a session from a JSON-lines transcript of JSON-RPC messages"),
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def parser(wanted: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The argument parser; only the commands named in `wanted` load their modules."""
    p = _Parser(
        prog="acp-codegen",
        description=__doc__.splitlines()[0] if __doc__ else None,
        epilog="exit status: 0 ok, 1 --check differs or diff found breaking changes,"
        " 2 bad input, 3 a bug of acp-codegen's (please report it)",
    )
    p.add_argument("--version", action="version", version=f"acp-codegen {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, help_text in COMMANDS:
        command = sub.add_parser(name, help=help_text)
        if name not in wanted:
            continue
        module = importlib.import_module(f"codegen.commands.{name}")
        if name == "schema":
            module.add_arguments(command, _Parser)
        else:
            module.add_arguments(command)
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
        print(f"acp-codegen: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 3
