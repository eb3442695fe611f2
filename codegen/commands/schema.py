"""`acp-codegen schema sync | pin | list | outdated`: manage the pinned upstream schemas."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from typing import TYPE_CHECKING

from ..config import load_config
from ..diagnostics import InputError
from ..pins import Lock, check_ref, pin_ref, read_lock, sync
from ..refs import by_version, ref_key

if TYPE_CHECKING:
    from ..outdated import Line

OUTDATED_STATUS = (
    "exit status: 0 nothing newer, 1 a newer release exists, 2 bad input or no source"
    " reachable, 3 a bug of acp-codegen's (please report it)"
)
OUTDATED_HELP = """\
Lists, for each release line the lock pins (the SDK on the npm registry; each
protocol version of upstream's tags), its newest pin and the newer releases its
source lists. Pre-releases count only on a line whose newest pin is one. Where
a source cannot be reached, one line says so and the rest is still checked.

sources (each can be pointed elsewhere, e.g. to a stand-in):
  $ACP_CODEGEN_NPM_REGISTRY  the registry (default https://registry.npmjs.org)
  $ACP_CODEGEN_UPSTREAM_GIT  upstream's git repository (default: its GitHub one)
"""
PIN_HELP = """\
REF is an upstream tag (schema-v2.0.0-beta.1, schema-v1.25.0, v0.12.2: every
schema and meta file of the release) or npm-sdk-X.Y.Z (the schema files shipped
in that version of @agentclientprotocol/sdk: its tarball is downloaded from the
npm registry, checked against the registry's integrity digest, and each file is
recorded as TARBALL#MEMBER so any clone fetches it again with no mirror). With
$ACP_SCHEMA_MIRROR set, files come from DIR/REF/ (an npm-sdk release the mirror
lacks comes from the registry).
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The sub-commands; the command's epilog (the exit status) goes on each one's help."""
    p.description = "Manage the pinned upstream schemas: fill the cache, pin a release, list."
    epilog = p.epilog
    sub = p.add_subparsers(dest="schema_command", metavar="COMMAND", parser_class=type(p))
    sync_p = sub.add_parser(
        "sync",
        help="fill the cache from $ACP_SCHEMA_MIRROR or the pinned URLs, checking sha256",
        epilog=epilog,
    )
    sync_p.add_argument("refs", nargs="*", help="only these refs (default: every pin)")
    pin_p = sub.add_parser(
        "pin",
        help="pin every schema file of a release (creates the lock file if needed)",
        description=PIN_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=epilog,
    )
    pin_p.add_argument(
        "ref", help="a release: schema-v2.0.0-alpha.3, v0.12.2 (upstream) or npm-sdk-2.4.0 (npm)"
    )
    pin_p.add_argument("--no-default", action="store_true", help="do not make it the default ref")
    sub.add_parser("list", help="list the pins by version (* marks the default ref)", epilog=epilog)
    outdated_p = sub.add_parser(
        "outdated",
        help="the newer releases of what the lock pins (npm registry, upstream tags)",
        description=OUTDATED_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=textwrap.fill(OUTDATED_STATUS, width=80, subsequent_indent="  "),
    )
    outdated_p.add_argument("--json", action="store_true", help="print the report as JSON")
    outdated_p.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long to wait for each source (default 10)",
    )


def run(args: argparse.Namespace) -> int:
    if args.schema_command is None:
        raise InputError(
            "schema needs a command: sync, pin or list (see acp-codegen schema --help)"
        )
    config = load_config()
    if args.schema_command == "pin":
        check_ref(args.ref)  # before the lock is even read: nothing is written for a bad ref
        lock = read_lock(config.lock, missing_ok=True, unpinned_default_ok=True)
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
    if args.schema_command == "outdated":
        return _outdated(args, read_lock(config.lock, missing_ok=True))
    lock = read_lock(config.lock)
    if args.schema_command == "sync":
        for ref in args.refs:
            check_ref(ref)
        unknown = set(args.refs) - set(lock.refs())
        if unknown:
            raise InputError(f"not pinned in {lock.path}: {', '.join(by_version(unknown))}")
        written = sync(lock, args.refs or None)
        print(
            f"acp-codegen: {len(lock.pins)} pinned file(s) verified, {len(written)} fetched",
            file=sys.stderr,
        )
        return 0
    for pin in sorted(lock.pins, key=lambda p: (ref_key(p.ref), p.path)):
        mark = "*" if pin.ref == lock.default_ref else " "
        print(f"{mark} {pin.ref}/{pin.path} {pin.sha256}")
    return 0


def _outdated(args: argparse.Namespace, lock: Lock) -> int:
    from .. import npm, upstream  # the network path only: off every other start-up
    from ..outdated import Source, as_json, look, report, text

    if not args.timeout > 0:
        raise InputError(f"--timeout must be a positive number of seconds, not {args.timeout}")
    registry = Source(
        "npm registry",
        f"{npm.registry()}/{npm.PACKAGE}",
        lambda timeout: [f"npm-sdk-{v}" for v in npm.versions(timeout)],
    )
    tags = Source("upstream tags", upstream.repository(), upstream.tags)
    seen_registry, seen_upstream = look([registry, tags], args.timeout)
    found = report(lock.refs(), seen_registry, seen_upstream)
    if found.checked_nothing:
        reasons = "; ".join(f"{s.source.name}: {s.problem}" for s in found.unreachable)
        raise InputError(f"cannot check for newer releases, no source reachable ({reasons})")
    for seen in found.unreachable:
        print(f"acp-codegen: note: {seen.source.name} not checked: {seen.problem}", file=sys.stderr)
    if args.json:
        print(json.dumps(as_json(found, lock.default_ref), indent=2))
    else:
        for row in text(found, lock.default_ref):
            print(row)
    if not found.outdated:
        return 0
    hint = _bump_hint(found.lines, lock.default_ref)
    print(f"acp-codegen: newer releases exist{hint}", file=sys.stderr)
    return 1


def _bump_hint(lines: list[Line], default: str | None) -> str:
    """The commands that move the default ref to the newest release of its line."""
    for line in lines:
        if default is not None and default in line.pinned and line.newer:
            new, lane = line.newer[-1], ":v1" if line.name == "v1" else ":v2"
            return (
                f"; to move the default: `acp-codegen schema pin {new}`, then"
                f" `acp-codegen diff {default}{lane} {new}{lane}`, then `acp-codegen generate`"
            )
    return ""
