"""`acp-codegen diff OLD NEW`: what changed between two ACP schema versions, and whom it breaks.

Exit status: 0 when nothing reaches the `--fail-on` severity (default: breaking), 1 when
something does, 2 on bad input (printed as one line by the CLI).
"""

from __future__ import annotations

import argparse
import sys

from ..diagnostics import InputError
from ..specdiff.compare import compare
from ..specdiff.finding import Finding, judge
from ..specdiff.load import Input, load_input
from ..specdiff.report import render
from ..specdiff.rules import RANK, SEVERITIES, table_markdown

EPILOG = """inputs:
  path/to/schema.json  a schema file (with the meta.json beside it, if any)
  path/to/folder       its schema.json (schema.unstable.json with --unstable)
  REF:LANE             a pinned ref and lane, e.g. schema-v2.0.0-alpha.3:v2
                       (a flat release before v2 may leave it out: v0.12.2)

examples:
  acp-codegen diff schema-v2.0.0-alpha.1:v2 schema-v2.0.0-alpha.3:v2
  acp-codegen diff v0.12.2 schema-v2.0.0-alpha.3:v1 --format markdown
  acp-codegen diff old/schema.json new/schema.json --json --fail-on warning
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "What changed between two ACP schema versions, and whom it breaks."
    parser.epilog = EPILOG + "\n" + (parser.epilog or "")
    parser.add_argument("old", nargs="?", help="the schema before (path or REF:LANE)")
    parser.add_argument("new", nargs="?", help="the schema after (path or REF:LANE)")
    parser.add_argument(
        "--unstable",
        action="store_true",
        help="compare the unstable lanes (schema.unstable.json) of refs and folders",
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument(
        "--format", choices=("text", "markdown", "json"), help="output format (default: text)"
    )
    output.add_argument(
        "--json", dest="format", action="store_const", const="json", help="short for --format json"
    )
    parser.add_argument(
        "--fail-on",
        choices=SEVERITIES,
        default="breaking",
        help="exit 1 when a finding is at least this severe (default: breaking)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="also list description-only changes"
    )
    parser.add_argument(
        "--rules", action="store_true", help="print the severity table (Markdown) and exit"
    )


def run(args: argparse.Namespace) -> int:
    if args.rules:
        sys.stdout.write(table_markdown())
        return 0
    if not args.old or not args.new:
        raise InputError("diff needs two inputs: OLD NEW (see --help)")
    old = load_input(args.old, args.unstable)
    new = load_input(args.new, args.unstable)
    findings = diff(old, new)
    sys.stdout.write(render(args.format or "text", findings, old.label, new.label, args.verbose))
    threshold = RANK[args.fail_on]
    return 1 if any(RANK[f.severity] >= threshold for f in findings) else 0


def diff(old: Input, new: Input) -> list[Finding]:
    """Every change between two loaded inputs, judged (duplicates dropped)."""
    seen: set[tuple[str, str, str]] = set()
    out: list[Finding] = []
    for change in compare(old, new):
        finding = judge(change, old.reach, new.reach)
        key = (finding.kind, finding.path, finding.message)
        if key not in seen:
            seen.add(key)
            out.append(finding)
    return out
