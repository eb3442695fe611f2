"""`acp-codegen schema sync | pin | list`: manage the pinned upstream schemas."""

from __future__ import annotations

import argparse
import sys

from ..config import load_config
from ..diagnostics import InputError
from ..pins import check_ref, pin_ref, read_lock, sync


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The sub-commands; the command's epilog (the exit status) goes on each one's help."""
    p.description = "Manage the pinned upstream schemas: fill the cache, pin a release, list."
    epilog = p.epilog
    sub = p.add_subparsers(dest="schema_command", metavar="COMMAND", parser_class=type(p))
    sync_p = sub.add_parser(
        "sync",
        help="fill the cache from $ACP_SCHEMA_MIRROR or upstream, checking sha256",
        epilog=epilog,
    )
    sync_p.add_argument("refs", nargs="*", help="only these refs (default: every pin)")
    pin_p = sub.add_parser(
        "pin",
        help="pin every schema file of an upstream release (creates the lock file if needed)",
        epilog=epilog,
    )
    pin_p.add_argument("ref", help="a release tag, e.g. schema-v2.0.0-alpha.3 or v0.12.2")
    pin_p.add_argument("--no-default", action="store_true", help="do not make it the default ref")
    sub.add_parser("list", help="list the pins (* marks the default ref)", epilog=epilog)


def run(args: argparse.Namespace) -> int:
    if args.schema_command is None:
        raise InputError(
            "schema needs a command: sync, pin or list (see acp-codegen schema --help)"
        )
    config = load_config()
    if args.schema_command == "pin":
        check_ref(args.ref)  # before the lock is even read: nothing is written for a bad ref
        lock = read_lock(config.lock, missing_ok=True)
        pinned = pin_ref(lock, args.ref, make_default=not args.no_default)
        for done in sorted(pinned, key=lambda d: d.pin.path):
            pin = done.pin
            print(f"{pin.ref}/{pin.path} {pin.sha256}")
            if done.previous_sha256 not in (None, pin.sha256):
                print(
                    f"acp-codegen: warning: {pin.ref}/{pin.path} changed upstream since it was"
                    f" pinned (was {done.previous_sha256})",
                    file=sys.stderr,
                )
        return 0
    lock = read_lock(config.lock)
    if args.schema_command == "sync":
        for ref in args.refs:
            check_ref(ref)
        unknown = set(args.refs) - set(lock.refs())
        if unknown:
            raise InputError(f"not pinned in {lock.path}: {', '.join(sorted(unknown))}")
        written = sync(lock, args.refs or None)
        print(
            f"acp-codegen: {len(lock.pins)} pinned file(s) verified, {len(written)} fetched",
            file=sys.stderr,
        )
        return 0
    for pin in lock.pins:
        mark = "*" if pin.ref == lock.default_ref else " "
        print(f"{mark} {pin.ref}/{pin.path} {pin.sha256}")
    return 0
