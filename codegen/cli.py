"""`acp-codegen`: generate bindings, manage schema pins, diff spec versions, replay sessions.

Exit status: 0 ok, 1 `--check` found a difference (or `diff` found a breaking change),
2 bad input. Errors are one line on stderr, never a traceback (ACP_CODEGEN_DEBUG=1 shows one).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from . import __version__
from .config import Config, default_templates, load_config
from .diagnostics import Diagnostics, InputError
from .emit import diff as diff_files
from .emit import write
from .pins import Lock, ensure, pin_ref, read_lock, sync
from .pipeline import Target, generate

# Subcommands that live in their own modules: (name, module, help).
PLUGINS = (
    (
        "diff",
        "codegen.specdiff.command",
        "what changed between two ACP schema versions, and whom it breaks",
    ),
    (
        "replay",
        "codegen.replay",
        "rebuild a session from a JSON-lines transcript of JSON-RPC messages",
    ),
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def parser(wanted: Sequence[str] = ()) -> argparse.ArgumentParser:
    p = _Parser(prog="acp-codegen", description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--version", action="version", version=f"acp-codegen {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    g = sub.add_parser("generate", help="generate the bindings (defaults from [tool.acp-codegen])")
    g.add_argument(
        "--check", action="store_true", help="print a diff and exit 1 if the output would change"
    )
    g.add_argument(
        "--schema", type=Path, help="an ACP-shaped schema.json (meta.json beside it is used)"
    )
    g.add_argument("--out", type=Path, help="output directory (with --schema)")
    g.add_argument("--package", help="package name (with --schema)")
    g.add_argument("--ref", help="a pinned ref instead of the lock file's default")
    g.add_argument(
        "--unstable", action="store_true", help="also generate the unstable lanes (PKG_unstable)"
    )
    g.add_argument(
        "--names", type=Path, help="JSON overrides of variant names: {Union: {tag: Name}}"
    )
    g.add_argument("-v", "--verbose", action="store_true", help="also print info diagnostics")

    s = sub.add_parser("schema", help="manage the pinned upstream schemas")
    ssub = s.add_subparsers(dest="schema_command", required=True, parser_class=_Parser)
    sync_p = ssub.add_parser(
        "sync", help="fill the cache from $ACP_SCHEMA_MIRROR or upstream, checking sha256"
    )
    sync_p.add_argument("refs", nargs="*", help="only these refs (default: every pin)")
    pin_p = ssub.add_parser("pin", help="pin every schema file of an upstream release")
    pin_p.add_argument("ref")
    pin_p.add_argument("--no-default", action="store_true", help="do not make it the default ref")
    ssub.add_parser("list", help="list the pins")

    for name, module, help_text in PLUGINS:
        plugin = sub.add_parser(name, help=help_text)
        plugin.set_defaults(plugin=module)
        if name not in wanted:  # only the command being run loads its module
            continue
        try:
            importlib.import_module(module).add_arguments(plugin)
        except ImportError:
            plugin.set_defaults(plugin_missing=True)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser(wanted=argv[:1]).parse_args(argv)
    try:
        if args.command == "generate":
            return _generate(args)
        if args.command == "schema":
            return _schema(args)
        if getattr(args, "plugin_missing", False):
            raise InputError(f"the {args.command!r} command is not available in this build")
        code: int = importlib.import_module(args.plugin).run(args)
        return code
    except InputError as exc:
        _print_diagnostics(exc.diagnostics, verbose=False)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug: still one line, unless asked for the traceback
        if os.environ.get("ACP_CODEGEN_DEBUG"):
            raise
        print(f"acp-codegen: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 3


def _print_diagnostics(diags: Diagnostics, verbose: bool, skip_errors: bool = False) -> None:
    seen: set[str] = set()
    for d in diags.items:
        line = str(d)
        if (
            (d.level == "info" and not verbose)
            or line in seen
            or (skip_errors and d.level == "error")
        ):
            continue
        seen.add(line)
        print(f"acp-codegen: {line}", file=sys.stderr)


def _errors_only(diags: Diagnostics) -> Diagnostics:
    return Diagnostics([d for d in diags.items if d.level == "error"])


def _targets(args: argparse.Namespace) -> tuple[list[Target], Path, Path]:
    overrides = _read_overrides(args.names) if args.names else None
    if args.schema is not None:
        if args.out is None or args.package is None:
            raise InputError("--schema needs --out and --package")
        schema = args.schema
        targets = [Target(args.package, schema, "local", schema.name, None, overrides)]
        if args.unstable:
            unstable = schema.with_name(schema.name.replace(".json", ".unstable.json"))
            targets.append(
                Target(
                    args.package + "_unstable", unstable, "local", unstable.name, None, overrides
                )
            )
        return targets, args.out, default_templates()
    if args.out is not None or args.package is not None:
        raise InputError("--out and --package go with --schema")
    config: Config = load_config()
    lock = read_lock(config.lock)
    if overrides is None and config.names is not None:
        overrides = _read_overrides(config.names)
    targets = []
    for pkg in config.packages:
        lanes = [(pkg.package, pkg.schema)]
        if args.unstable:
            lanes.append((pkg.package + "_unstable", pkg.schema.replace(".json", ".unstable.json")))
        for package, path in lanes:
            ref = args.ref or pkg.ref or lock.default_ref
            pin = lock.find(ref, path)
            _meta_beside(lock, ref, path)
            targets.append(Target(package, ensure(lock, pin), ref, path, pin.sha256, overrides))
    return targets, config.out, config.templates


def _meta_beside(lock: Lock, ref: str, path: str) -> None:
    """Make sure the meta file(s) next to a pinned schema are in the cache too."""
    folder, _, name = path.rpartition("/")
    prefix = f"{folder}/" if folder else ""
    for meta in {name.replace("schema", "meta", 1), "meta.json"}:
        for pin in lock.pins:
            if pin.ref == ref and pin.path == prefix + meta:
                ensure(lock, pin)


def _read_overrides(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read names overrides {path}: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"names overrides {path} must be a JSON object")
    return data


def _generate(args: argparse.Namespace) -> int:
    targets, out, templates = _targets(args)
    diags = Diagnostics()
    files: dict[str, str] = {}
    try:
        for target in targets:
            files.update(generate(target, templates, diags).files)
    except InputError as exc:  # main() prints the errors; the rest is printed just below
        raise InputError(_errors_only(exc.diagnostics)) from None
    finally:
        _print_diagnostics(diags, args.verbose, skip_errors=True)
    packages = [t.package for t in targets]
    if args.check:
        text = diff_files(files, out, packages)
        if text:
            sys.stdout.write(text)
            print(f"acp-codegen: {out} is not current: run `acp-codegen generate`", file=sys.stderr)
            return 1
        return 0
    write(files, out, packages)
    return 0


def _schema(args: argparse.Namespace) -> int:
    lock = read_lock(load_config().lock)
    if args.schema_command == "sync":
        unknown = set(args.refs) - set(lock.refs())
        if unknown:
            raise InputError(f"not pinned: {', '.join(sorted(unknown))}")
        written = sync(lock, args.refs or None)
        print(
            f"acp-codegen: {len(lock.pins)} pinned file(s) verified, {len(written)} fetched",
            file=sys.stderr,
        )
        return 0
    if args.schema_command == "pin":
        added = pin_ref(lock, args.ref, make_default=not args.no_default)
        for pin in added:
            print(f"{pin.ref}/{pin.path} {pin.sha256}")
        return 0
    for pin in lock.pins:
        mark = "*" if pin.ref == lock.default_ref else " "
        print(f"{mark} {pin.ref}/{pin.path} {pin.sha256}")
    return 0
