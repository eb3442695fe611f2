"""`acp-codegen generate`: the configured packages from the pinned schemas, or one schema file
into a folder of the user's choosing."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..config import Config, default_templates, load_config
from ..diagnostics import Diagnostics, InputError, print_diagnostics
from ..emit import diff as diff_files
from ..emit import write
from ..parse.load import ensure_meta_beside
from ..pins import ensure, read_lock
from ..pipeline import Target, generate


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--check", action="store_true", help="print a diff and exit 1 if the output would change"
    )
    p.add_argument(
        "--schema", type=Path, help="an ACP-shaped schema.json (meta.json beside it is used)"
    )
    p.add_argument("--out", type=Path, help="output directory (with --schema)")
    p.add_argument("--package", help="package name (with --schema)")
    p.add_argument("--ref", help="a pinned ref instead of the lock file's default")
    p.add_argument(
        "--unstable", action="store_true", help="also generate the unstable lanes (PKG_unstable)"
    )
    p.add_argument(
        "--names", type=Path, help="JSON overrides of variant names: {Union: {tag: Name}}"
    )
    p.add_argument("-v", "--verbose", action="store_true", help="also print info diagnostics")


def run(args: argparse.Namespace) -> int:
    targets, out, templates = _targets(args)
    diags = Diagnostics()
    files: dict[str, str] = {}
    try:
        for target in targets:
            files.update(generate(target, templates, diags).files)
    except InputError as exc:  # main() prints the errors; the rest is printed just below
        raise InputError(exc.diagnostics.errors_only()) from None
    finally:
        print_diagnostics(diags, args.verbose, skip_errors=True)
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
            ensure_meta_beside(lock, ref, path)
            targets.append(Target(package, ensure(lock, pin), ref, path, pin.sha256, overrides))
    return targets, config.out, config.templates


def _read_overrides(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read names overrides {path}: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"names overrides {path} must be a JSON object")
    return data
