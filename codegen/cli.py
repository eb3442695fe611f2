"""`acp-codegen`: generate bindings, manage schema pins, diff spec versions, replay sessions.

Exit status: 0 ok, 1 `--check` found a difference (or `diff` found a breaking change, or
`schema outdated` a newer release), 2 bad input, 3 a bug of acp-codegen's. Errors are one line
on stderr, never a traceback (ACP_CODEGEN_DEBUG=1 shows one for a bug).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import textwrap
from collections.abc import Sequence
from typing import Any, NoReturn

from . import __version__
from .diagnostics import InputError, print_diagnostics

DESCRIPTION = "Generate ACP bindings, manage schema pins, diff spec versions, replay sessions."
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
    """One parser class for the tool and every command: errors are one line naming the help
    to read; arguments it does not know are refused by the parser they were given to;
    descriptions and epilogs are printed as written (`parser` wraps the descriptions)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"acp-codegen: error: {message} (see {self.prog} --help)\n")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, unknown = super().parse_known_args(args, namespace)
        if unknown:  # named here, so the error points at this command's --help
            self.error(f"unrecognized arguments: {' '.join(unknown)}")
        return parsed, unknown


def exit_status_epilog(text: str, before: str | None = None) -> str:
    """An epilog ending with the exit status line (`before` first, when there is one)."""
    status = textwrap.fill(f"exit status: {text}", width=80, subsequent_indent="  ")
    return (before.rstrip("\n") + "\n\n" if before else "") + status


def parser(wanted: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The argument parser; only the commands named in `wanted` load their modules.

    Every command is built the same way: `add_arguments(parser)` of its module, on a parser
    whose epilog is already its exit status (a module adds its own text before it, and
    gives the same epilog and parser class to any sub-commands it has)."""
    p = _Parser(
        prog="acp-codegen",
        description=DESCRIPTION,
        epilog=exit_status_epilog(
            "0 ok, 1 --check differs or diff found breaking changes,"
            f" 2 bad input, {BUG}; each command's --help says which it uses"
        ),
    )
    p.add_argument("--version", action="version", version=f"acp-codegen {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, help_text, status in COMMANDS:
        command = sub.add_parser(name, help=help_text, epilog=exit_status_epilog(status))
        if name not in wanted:
            continue
        importlib.import_module(f"codegen.commands.{name}").add_arguments(command)
        if command.description:
            command.description = textwrap.fill(command.description, width=80)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = parser(wanted=argv[:1])
    args = p.parse_args(argv)
    if args.command is None:
        p.error(f"a command is required: {', '.join(name for name, _, _ in COMMANDS)}")
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


def run() -> NoReturn:
    """The program (`acp-codegen`, `python -m codegen`): `main`, then the process ends at once,
    its output flushed: freeing every object of the run one by one would only cost time.

    The command's modules are imported first with the garbage collector off, then kept out of
    its later rounds (`gc.freeze`): what importing makes lives until the end anyway."""
    name = sys.argv[1] if len(sys.argv) > 1 else ""
    if name in {command for command, _, _ in COMMANDS}:
        gc.disable()
        try:
            importlib.import_module(f"codegen.commands.{name}")
        except Exception:  # noqa: BLE001, S110 (main imports it again and reports it as a bug)
            pass
        gc.freeze()
        gc.enable()
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # a closed pipe: as Python's own exit reports it
        code = code or 120
    os._exit(code)
