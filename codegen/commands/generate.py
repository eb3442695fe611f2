"""`acp-codegen generate`: the configured packages from the pinned schemas, or one schema file
into a folder of the user's choosing."""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import TemplateSyntaxError

from ..config import Config, default_templates, load_config
from ..diagnostics import Diagnostics, InputError, print_diagnostics
from ..emit import Writer, refusals
from ..emit import diff as diff_files
from ..pins import (
    Lock,
    NotPinned,
    Pin,
    check_ref,
    ensure_with_meta,
    missing_in_mirror,
    read_lock,
)
from ..pipeline import Sink, Target, generate_package
from ..render.ruff import RuffFailed


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Generate the packages configured under [tool.acp-codegen] from the pinned schemas,"
        " or one schema file (--schema) into a folder of your choosing. A folder already at"
        " the target is replaced only when acp-codegen wrote it and nobody changed it since."
    )
    p.add_argument(
        "--check", action="store_true", help="print a diff and exit 1 if the output would change"
    )
    p.add_argument(
        "--schema",
        type=Path,
        action="append",
        help="an ACP-shaped schema.json (meta.json beside it is used); give it again for a"
        " package of several lanes (v1/, v2/ subpackages)",
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
    targets, out, templates, user_templates = _targets(args)
    packages = [package.name for package in targets]
    if not args.check:
        with Writer(out, packages) as writer:  # files are written as they are made
            files, notes = _generate(targets, templates, user_templates, args.verbose, writer.add)
            writer.finish(files)
        _say(notes)
        return 0
    files, notes = _generate(targets, templates, user_templates, args.verbose, None)
    text = diff_files(files, out, packages)
    if text:
        sys.stdout.write(text)
        refused = refusals(files, out, packages) if out.is_dir() else []
        for reason in refused:
            print(f"acp-codegen: `acp-codegen generate` would stop: {reason}", file=sys.stderr)
        if not refused:
            print(
                f"acp-codegen: {out} is not current: run `acp-codegen generate`",
                file=sys.stderr,
            )
        return 1
    _say(notes)
    return 0


def _generate(
    targets: list[Package], templates: Path, user_templates: bool, verbose: bool, sink: Sink | None
) -> tuple[dict[str, str], list[str]]:
    """Every package's files, and the notes to say once they are written (or found current).
    The garbage collector is off meanwhile: what the generation makes lives until it ends."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _generate_all(targets, templates, user_templates, verbose, sink)
    finally:
        if collecting:
            gc.enable()


def _generate_all(
    targets: list[Package], templates: Path, user_templates: bool, verbose: bool, sink: Sink | None
) -> tuple[dict[str, str], list[str]]:
    diags = Diagnostics()
    files: dict[str, str] = {}
    notes: list[str] = []
    try:
        for package in targets:
            made = generate_package(
                package.name, package.lanes, templates, diags, flat=package.flat, sink=sink
            )
            files.update(made.files)
            notes += made.skipped
    except InputError as exc:  # main() prints the errors; the rest is printed just below
        raise InputError(exc.diagnostics.errors_only()) from None
    except RuffFailed as exc:  # our templates: a bug of ours (exit 3); the project's: its own
        if user_templates:
            raise InputError(
                f"the templates in {templates} make code ruff rejects: {exc}"
            ) from None
        raise
    except jinja2.TemplateError as exc:  # the same split for a template that does not render
        if user_templates:
            where = f"{exc.filename}:{exc.lineno}: " if isinstance(exc, TemplateSyntaxError) else ""
            raise InputError(
                f"the templates in {templates} do not render: {where}{type(exc).__name__}: {exc}"
            ) from None
        raise
    finally:
        print_diagnostics(diags, verbose, skip_errors=True)
    return files, notes


def _say(notes: list[str]) -> None:
    for note in notes:
        print(f"acp-codegen: note: {note}", file=sys.stderr)


@dataclass(frozen=True)
class Package:
    """One package to generate: its lanes, and whether its one lane sits at the root."""

    name: str
    lanes: list[Target]
    flat: bool


def _targets(args: argparse.Namespace) -> tuple[list[Package], Path, Path, bool]:
    """What to generate, where to, with which templates (and whether they are the project's)."""
    overrides = _read_overrides(args.names) if args.names else None
    if args.schema is not None:
        if args.out is None or args.package is None:
            raise InputError("--schema needs --out and --package")
        if args.ref is not None:
            raise InputError("--ref picks a pinned schema: it does not go with --schema")
        schemas: list[Path] = list(args.schema)
        name = str(args.package)
        if len(schemas) == 1:  # one lane at the root (and its unstable lane as PKG_unstable)
            packages = [Package(name, [_file_target(name, schemas[0], overrides)], True)]
            if args.unstable:
                unstable = _unstable_path(schemas[0])
                packages.append(
                    Package(name + "_unstable", [_file_target(name, unstable, overrides)], True)
                )
            return packages, args.out, default_templates(), False
        if args.unstable:
            schemas += [_unstable_path(s) for s in schemas]
        lanes = [_file_target(name, path, overrides) for path in schemas]
        return [Package(name, lanes, False)], args.out, default_templates(), False
    if args.out is not None or args.package is not None:
        raise InputError("--out and --package go with --schema")
    config: Config = load_config(hint="pass --schema and --out")
    if not config.packages:
        raise InputError(
            f"no packages configured in {config.root / 'pyproject.toml'}: add"
            " [[tool.acp-codegen.packages]] tables (package, schema or lanes)"
        )
    if config.user_templates:
        config.check_templates()
    lock = read_lock(config.lock)
    if args.ref is not None:
        check_ref(args.ref)
    if overrides is None and config.names is not None:
        overrides = _read_overrides(config.names)
    planned: list[tuple[str, bool, list[tuple[str, str]]]] = []  # (package, flat, [(ref, path)])
    for pkg in config.packages:
        ref = args.ref or pkg.ref or lock.default_ref
        if ref is None:
            raise InputError(f"{lock.path} has no default ref: run `acp-codegen schema pin REF`")
        paths = list(pkg.schemas)
        if pkg.flat:
            planned.append((pkg.package, True, [(ref, paths[0])]))
            if args.unstable:
                planned.append((pkg.package + "_unstable", True, [(ref, _unstable(paths[0]))]))
            continue
        if args.unstable:
            paths += [_unstable(p) for p in paths if _unstable(p) not in paths]
        planned.append((pkg.package, False, [(ref, path) for path in paths]))
    wanted = [(name, ref, path) for name, _, refs in planned for ref, path in refs]
    packages = []
    for name, flat, refs in planned:
        targets: list[Target] = []
        for ref, path in refs:
            pin = _find(lock, ref, path, wanted)
            schema = ensure_with_meta(lock, pin)
            targets.append(Target(name, schema, ref, pin.path, pin.sha256, overrides))
        packages.append(Package(name, targets, flat))
    return packages, config.out, config.templates, config.user_templates


def _unstable(path: str) -> str:
    return path.replace(".json", ".unstable.json") if ".unstable." not in path else path


def _unstable_path(schema: Path) -> Path:
    return schema.with_name(_unstable(schema.name))


def _find(lock: Lock, ref: str, path: str, wanted: list[tuple[str, str, str]]) -> Pin:
    """The pin of `path` at `ref`. For a ref not pinned yet, the advice to pin it is given only
    when the mirror (if one is set) has every file this run needs from it."""
    try:
        return lock.find(ref, path)
    except NotPinned:
        needed = [p for _, r, p in wanted if r == ref]
        problem = missing_in_mirror(ref, needed)
        if problem is not None:
            raise InputError(problem) from None
        raise


def _file_target(package: str, schema: Path, overrides: dict[str, Any] | None) -> Target:
    """A `--schema` file: pinned when it is a cache entry of a lock (its ref in the banner)."""
    pinned = _as_pinned(schema)
    if pinned is None:
        return Target(package, schema, "local", schema.name, None, overrides)
    return Target(package, schema, pinned.ref, pinned.path, pinned.sha256, overrides)


def _as_pinned(schema: Path) -> Pin | None:
    """The pin `schema` is the cached copy of, in the lock beside the cache folder it sits in
    or the project's lock; None for any other file (or one whose bytes differ from the pin).
    The lock beside the cache is asked first: when it has the pin, the project's
    pyproject.toml is not read (a pin of the file in both gives the same ref, path and
    sha256)."""
    try:
        resolved = schema.resolve(strict=True)
        digest = hashlib.sha256(resolved.read_bytes()).hexdigest()
    except OSError:
        return None  # the loader reports it
    locks = [p.parent / "pins.lock.json" for p in resolved.parents if p.name == "cache"]
    for lock_path in locks:
        pin = _pinned_in(lock_path, resolved, digest)
        if pin is not None:
            return pin
    try:
        project = load_config().lock
    except InputError:
        return None  # no project here: only the lock beside the cache
    return None if project in locks else _pinned_in(project, resolved, digest)


def _pinned_in(lock_path: Path, resolved: Path, digest: str) -> Pin | None:
    if not lock_path.is_file():
        return None
    try:
        lock = read_lock(lock_path)
        relative = resolved.relative_to(lock.cache_dir.resolve()).as_posix()
    except (InputError, ValueError, OSError):
        return None
    ref, _, path = relative.partition("/")
    for pin in lock.pins:
        if (pin.ref, pin.path, pin.sha256) == (ref, path, digest):
            return pin
    return None


def _read_overrides(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read names overrides {path}: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"names overrides {path} must be a JSON object")
    return data
