"""`acp-codegen replay TRANSCRIPT`: rebuild a session from a JSON-lines capture.

Every `session/update` notification of one session is decoded with a generated package of the
transcript's lane (v1 or v2: `--lane`, else what its first lines say, else v2) and applied to
its `SessionState` (see `codegen/replay.py`); the result is printed for a person, or with
`--format json` (`--json`) as the snapshot. Other messages are ignored (a v1 model follows the
session's prompts); a line that is not JSON, not an object or not a decodable update is
reported with its line number and skipped.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, BinaryIO

from ..config import default_bindings, find_project, load_config
from ..diagnostics import InputError
from ..replay import (
    KEPT_PROBLEMS,
    MAX_LINE_BYTES,
    Peeked,
    Replay,
    detect_lane,
    load_bindings,
    package_lanes,
    replay,
)

LANES = ("v1", "v2", "v2_unstable")
DEFAULT_LANE = "v2"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Rebuild a session from the session/update notifications of a JSON-lines transcript"
        " (one JSON-RPC message a line; `-` reads standard input)."
    )
    parser.add_argument("transcript", help="JSON-lines file of JSON-RPC messages, or -")
    output = parser.add_mutually_exclusive_group()
    output.add_argument(
        "--format",
        choices=("text", "json"),
        help="text for a person (the default), or json: the snapshot",
    )
    output.add_argument(
        "--json", dest="format", action="store_const", const="json", help="short for --format json"
    )
    parser.add_argument(
        "--session", help="replay this session id (default: the first one in the transcript)"
    )
    parser.add_argument(
        "--lane",
        choices=LANES,
        help="the protocol lane the transcript speaks (default: the protocolVersion of its"
        " initialize, else the first update kind only one version has, else v2; the unstable"
        " lane when an update of its own kinds, such as subagent_update, comes early)",
    )
    parser.add_argument(
        "--bindings",
        type=Path,
        metavar="PACKAGE_DIR",
        help="the folder of a generated package to decode with (default: the project's"
        " configured package of the lane, else the one shipped with acp-codegen)",
    )
    parser.add_argument(
        "--max-line",
        type=int,
        default=MAX_LINE_BYTES,
        metavar="BYTES",
        help=f"skip longer lines (default: {MAX_LINE_BYTES})",
    )


def run(args: argparse.Namespace) -> int:
    if args.max_line < 1:
        raise InputError("--max-line must be a positive number of bytes")
    name = "<stdin>" if args.transcript == "-" else args.transcript
    if args.transcript == "-":
        result = _replay(args, sys.stdin.buffer, name)
    else:
        try:
            with open(args.transcript, "rb") as stream:
                result = _replay(args, stream, name)
        except OSError as exc:
            raise InputError(f"cannot read {name}: {exc.strerror or exc}") from None
    _report(result, name)
    refusal = result.refusal(name)
    if refusal:
        raise InputError(refusal)
    snapshot: dict[str, Any] = result.state.snapshot()
    if args.format == "json":
        text = json.dumps(snapshot, indent=2, ensure_ascii=False) + "\n"
    else:
        text = render_text(snapshot, result.session_id, result.applied)
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        sys.stdout = open(os.devnull, "w")  # keeps the flush at exit from failing again
    state = snapshot.get("state")
    if result.applied and state not in (None, "idle"):
        print(
            f"acp-codegen: {name}: warning: the transcript ends mid-turn (state: {state}):"
            " the turn's last updates are missing",
            file=sys.stderr,
        )
        return 1
    return 0  # skipping a bad line is the documented behaviour, not a failure


def _replay(args: argparse.Namespace, stream: BinaryIO, name: str) -> Replay:
    """Replay with `--bindings`, else with the package of the transcript's lane."""
    source: BinaryIO | Peeked = stream
    lane = args.lane
    if args.bindings is not None:
        among = package_lanes(args.bindings)
        if lane is None and len(among) > 1:  # a package of several lanes: the transcript's
            found = _LaneKinds(lambda lane: load_bindings(args.bindings, lane), among)
            detected, source = detect_lane(stream, lambda: found, args.max_line)
            lane = detected if detected in among else max(among)
        bindings = load_bindings(args.bindings, lane)
        return replay(bindings, source, name, args.session, args.max_line)
    if lane is None:
        known = _LaneKinds(lambda lane: load_bindings(_default_bindings(lane)), LANES)
        detected, source = detect_lane(stream, lambda: known, args.max_line)
        lane = detected if detected in LANES else DEFAULT_LANE
    acp = load_bindings(_default_bindings(lane))
    return replay(acp, source, name, args.session, args.max_line)


class _LaneKinds(Mapping[str, frozenset[str]]):
    """The update kinds of each of `lanes` that `load` finds a package of; a lane is loaded
    only when it is asked for (the check for an unstable lane's kinds asks for two)."""

    def __init__(self, load: Callable[[str], ModuleType], lanes: Sequence[str]) -> None:
        self._load = load
        self._lanes = tuple(lanes)
        self._found: dict[str, frozenset[str] | None] = {}

    def __getitem__(self, lane: str) -> frozenset[str]:
        if lane not in self._found:
            if lane not in self._lanes:
                raise KeyError(lane)
            try:
                acp = self._load(lane)
            except InputError:
                self._found[lane] = None
            else:
                self._found[lane] = frozenset(acp.session_state.KNOWN_KINDS)
        found = self._found[lane]
        if found is None:
            raise KeyError(lane)
        return found

    def __iter__(self) -> Iterator[str]:
        return (lane for lane in self._lanes if lane in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _report(result: Replay, name: str) -> None:
    for line, reason in result.problems:
        print(f"acp-codegen: {name}:{line}: {reason}; skipped", file=sys.stderr)
    if result.bad_lines > KEPT_PROBLEMS:
        more = result.bad_lines - KEPT_PROBLEMS
        print(f"acp-codegen: {name}: {more} more bad line(s) skipped", file=sys.stderr)
    if result.other_sessions:
        print(
            f"acp-codegen: {result.other_sessions} update(s) of other sessions ignored"
            " (choose one with --session)",
            file=sys.stderr,
        )


def _default_bindings(lane: str) -> Path:
    """The project's configured package of `lane`, else the one shipped with the tool."""
    if find_project(Path.cwd()) is not None:
        configured = load_config().lane_package(lane)
        if configured is not None:
            if not (configured / "__init__.py").is_file():
                raise InputError(
                    f"the project's {lane} package {configured} is not generated yet: run"
                    " `acp-codegen generate`, or pass --bindings PACKAGE_DIR"
                )
            return configured
    shipped = default_bindings(lane)
    if shipped is None:
        raise InputError(f"no generated {lane} package to replay with: pass --bindings PACKAGE_DIR")
    return shipped


# -- the text view -----------------------------------------------------------------------------


def render_text(snapshot: dict[str, Any], session_id: str | None, applied: int) -> str:
    out: list[str] = [f"session {session_id or '(unknown)'}: {applied} update(s) applied"]
    info = snapshot["sessionInfo"]
    if "title" in info:
        out.append(f"title: {info['title']}")
    if snapshot["messages"]:
        out.append("")
        for message in snapshot["messages"]:
            label = "" if message["messageId"] is None else f" ({message['messageId']})"
            out.append(f"{message['role']}{label}{_between(message)}:")
            out.extend(_indent(_blocks(message["content"]), 2) or ["  (no content)"])
    if snapshot["toolCalls"]:
        out += ["", "tool calls:"]
        for call in snapshot["toolCalls"].values():
            title = f" {call['title']}" if "title" in call else ""
            kind = f" ({call['kind']})" if "kind" in call else ""
            out.append(f"  {call['toolCallId']}{title}{kind}: {call.get('status', 'no status')}")
            out.extend(_indent(_tool_content(call["content"]), 4))
    if snapshot.get("plans"):
        out += ["", "plans:"]
        for plan_id, plan in snapshot["plans"].items():
            out.append(f"  {plan_id} ({plan.get('type')}):")
            out.extend(_indent(_entries(plan), 4))
    if snapshot.get("plan"):  # v1: one plan
        out += ["", "plan:"]
        out.extend(_indent(_entries(snapshot["plan"]), 2))
    if snapshot.get("terminals"):
        out += ["", "terminals:"]
        for terminal in snapshot["terminals"].values():
            out.append(f"  {terminal['terminalId']}: {_terminal(terminal)}")
    if snapshot["availableCommands"]:
        names = ", ".join(f"/{c.get('name')}" for c in snapshot["availableCommands"])
        out += ["", f"commands: {names}"]
    if snapshot.get("currentModeId") is not None:
        out += ["", f"mode: {snapshot['currentModeId']}"]
    if snapshot.get("notices"):
        out += ["", "notices:"]
        out.extend(f"  [{n.get('severity')}] {n.get('title')}" for n in snapshot["notices"])
    if snapshot.get("compactions"):
        out += ["", "compactions:"]
        for compaction in snapshot["compactions"].values():
            out.append(f"  {compaction['compactionId']}: {compaction.get('status')}")
            out.extend(_indent(_blocks(compaction.get("summary") or []), 4))
    if snapshot.get("children"):
        out += ["", "child sessions:"]
        for child in snapshot["children"].values():
            out.extend(_indent(_child(child), 2))
    if snapshot["unknown"]:
        kinds = ", ".join(str(u.get("sessionUpdate")) for u in snapshot["unknown"])
        out += ["", f"unknown updates: {kinds}"]
    out += ["", f"usage: {_usage(snapshot['usage'])}"]
    stop = f" ({snapshot['stopReason']})" if snapshot["stopReason"] is not None else ""
    out.append(f"state: {snapshot['state']}{stop}")
    return "\n".join(out) + "\n"


def _between(message: dict[str, Any]) -> str:
    """An inter-session message's sender and recipient (` sess_a → sess_b`)."""
    sender, recipient = message.get("senderSessionId"), message.get("recipientSessionId")
    if sender is None and recipient is None:
        return ""
    return f" {sender or '?'} → {recipient or '?'}"


def _child(child: dict[str, Any]) -> list[str]:
    """A child session: its title and state, then its own conversation, indented."""
    title = f" ({child['title']})" if "title" in child else ""
    session = child["session"]
    stop = f" ({session['stopReason']})" if session.get("stopReason") is not None else ""
    lines = [f"{child['sessionId']}{title}: {session['state']}{stop}"]
    for message in session["messages"]:
        lines.append(f"  {message['role']} ({message['messageId']}){_between(message)}:")
        lines.extend(_indent(_blocks(message["content"]), 4) or ["    (no content)"])
    for call in session["toolCalls"].values():
        lines.append(f"  tool call {call['toolCallId']}: {call.get('status', 'no status')}")
    for grandchild in (session.get("children") or {}).values():
        lines.extend(_indent(_child(grandchild), 2))
    return lines


def _entries(plan: dict[str, Any]) -> list[str]:
    return [
        f"[{entry.get('status')}] {entry.get('content')} ({entry.get('priority')})"
        for entry in plan.get("entries") or []
    ]


def _indent(lines: list[str], width: int) -> list[str]:
    return [" " * width + line for line in lines]


def _blocks(blocks: list[Any]) -> list[str]:
    """Content blocks as lines: adjacent text joined (chunks split words), the rest summarised."""
    parts: list[str] = []
    text: str | None = None
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            text = (text or "") + str(block.get("text"))
            continue
        if text is not None:
            parts.append(text)
            text = None
        if kind == "resource_link":
            parts.append(f"[link {block.get('uri')}]")
        elif kind == "resource":
            parts.append(f"[resource {(block.get('resource') or {}).get('uri')}]")
        elif kind in ("image", "audio"):
            parts.append(f"[{kind} {block.get('mimeType')}]")
        else:
            parts.append(f"[{kind}]")
    if text is not None:
        parts.append(text)
    return [line for part in parts for line in part.split("\n")]


def _tool_content(items: list[Any]) -> list[str]:
    lines: list[str] = []
    for item in items:
        kind = item.get("type")
        if kind == "content":
            lines.extend(_blocks([item.get("content") or {}]))
        elif kind == "diff":
            lines.append(f"[diff {item.get('path')}]")
        elif kind == "terminal":
            lines.append(f"[terminal {item.get('terminalId')}]")
        else:
            lines.append(f"[{kind}]")
    return lines


def _terminal(terminal: dict[str, Any]) -> str:
    parts = [str(terminal.get("command", "(no command)"))]
    exit_status = terminal.get("exitStatus")
    if isinstance(exit_status, dict):
        code, signal = exit_status.get("exitCode"), exit_status.get("signal")
        parts.append(f"exited ({signal})" if signal else f"exited with {code}")
    output = terminal.get("output")
    parts.append(f"{len(base64.b64decode(output))} byte(s) of output" if output else "no output")
    return ", ".join(parts)


def _usage(usage: dict[str, Any] | None) -> str:
    if usage is None:
        return "none reported"
    text = f"{usage['used']} / {usage['size']} tokens"
    cost = usage.get("cost")
    if isinstance(cost, dict):
        text += f", cost {cost.get('amount')} {cost.get('currency')}"
    return text
