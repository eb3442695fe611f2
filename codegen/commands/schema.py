"""`acp-codegen schema sync | pin | list`: manage the pinned upstream schemas."""

from __future__ import annotations

import argparse
import sys

from ..config import load_config
from ..diagnostics import InputError
from ..pins import pin_ref, read_lock, sync


def add_arguments(p: argparse.ArgumentParser, parser_class: type[argparse.ArgumentParser]) -> None:
    sub = p.add_subparsers(dest="schema_command", required=True, parser_class=parser_class)
    sync_p = sub.add_parser(
        "sync", help="fill the cache from $ACP_SCHEMA_MIRROR or upstream, checking sha256"
    )
    sync_p.add_argument("refs", nargs="*", help="only these refs (default: every pin)")
    pin_p = sub.add_parser("pin", help="pin every schema file of an upstream release")
    pin_p.add_argument("ref")
    pin_p.add_argument("--no-default", action="store_true", help="do not make it the default ref")
    sub.add_parser("list", help="list the pins")


def run(args: argparse.Namespace) -> int:
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
