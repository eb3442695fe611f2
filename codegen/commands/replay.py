"""`acp-codegen replay TRANSCRIPT`: rebuild a session from a JSON-lines capture.

Every `session/update` notification of the transcript is decoded with the generated `acp_v2`
package and applied to its `SessionState`; the result is printed for a person, or with
`--json` as the snapshot. Other messages are ignored. A line that is not JSON, not an object or
not a decodable update is reported with its line number and skipped.
"""

from __future__ import annotations

import argparse
import base64
import importlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from ..config import find_project, load_config
from ..diagnostics import InputError

UPDATE_METHOD = "session/update"
BINDINGS = "acp_v2"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("transcript", type=Path, help="JSON-lines file of JSON-RPC messages")
    parser.add_argument("--json", action="store_true", help="print the snapshot as JSON")
    parser.add_argument(
        "--session", help="replay this session id (default: the first one in the transcript)"
    )
    parser.description = (
        "Rebuild a session from the session/update notifications of a JSON-lines transcript."
    )
    parser.epilog = (
        "Exit status: 0 (bad lines are reported and skipped), 2 the file cannot be read."
    )


def run(args: argparse.Namespace) -> int:
    acp = load_bindings()
    try:
        raw = args.transcript.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {args.transcript}: {exc.strerror or exc}") from None
    result = replay(acp, raw, args.session)
    for line, reason in result.skipped:
        print(f"acp-codegen: {args.transcript}:{line}: {reason}; skipped", file=sys.stderr)
    if result.other_sessions:
        print(
            f"acp-codegen: {result.other_sessions} update(s) of other sessions ignored"
            " (choose one with --session)",
            file=sys.stderr,
        )
    snapshot: dict[str, Any] = result.state.snapshot()
    if args.json:
        text = json.dumps(snapshot, indent=2, ensure_ascii=False) + "\n"
    else:
        text = render_text(snapshot, result.session_id, result.applied)
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        sys.stdout = open(os.devnull, "w")  # keeps the flush at exit from failing again
    return 0  # skipping a bad line is the documented behaviour, not a failure


@dataclass
class Replay:
    """What a transcript replay produced: the state and the skipped lines."""

    state: Any  # acp_v2.SessionState
    session_id: str | None = None
    applied: int = 0
    other_sessions: int = 0
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (line number, reason)


def replay(acp: ModuleType, raw: bytes, session_id: str | None = None) -> Replay:
    """Apply every `session/update` of one session in `raw` (JSON lines) to a new state."""
    result = Replay(acp.SessionState(), session_id)
    # Frames end at b"\n" only: U+2028 and friends may appear raw inside JSON strings.
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except (ValueError, RecursionError) as exc:
            result.skipped.append((number, f"not JSON ({_reason(exc)})"))
            continue
        if not isinstance(message, dict):
            result.skipped.append((number, f"not a JSON-RPC message (a JSON {_kind(message)})"))
            continue
        if message.get("method") != UPDATE_METHOD:
            continue
        params = message.get("params")
        if not isinstance(params, dict) or "update" not in params:
            result.skipped.append((number, "session/update without params.update"))
            continue
        target = params.get("sessionId")
        if isinstance(target, str):
            if result.session_id is None:
                result.session_id = target
            elif target != result.session_id:
                result.other_sessions += 1
                continue
        try:
            result.state.apply(acp.decode(acp.SessionUpdate, params["update"]))
        except acp.DecodeError as exc:
            where = "$.params.update" + exc.path[1:]
            result.skipped.append((number, f"bad update: {where}: {exc.reason}"))
            continue
        except ValueError as exc:
            result.skipped.append((number, f"bad update: {exc}"))
            continue
        result.applied += 1
    return result


def _reason(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at column {exc.colno}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc)


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    return "null" if value is None else "number"


def load_bindings() -> ModuleType:
    """The generated `acp_v2`: importable as is, else from the project's output folder."""
    try:
        return _checked(importlib.import_module(BINDINGS))
    except ModuleNotFoundError as exc:
        if exc.name != BINDINGS:
            raise
    for folder in _output_folders():
        if (folder / BINDINGS / "__init__.py").is_file():
            sys.path.insert(0, str(folder))
            return _checked(importlib.import_module(BINDINGS))
    raise InputError(f"cannot find the generated {BINDINGS} package: run `acp-codegen generate`")


def _output_folders() -> list[Path]:
    folders = []
    root = find_project(Path.cwd())
    if root is not None:
        try:
            folders.append(load_config(root).out)
        except InputError:
            pass
    folders.append(Path(__file__).resolve().parents[2] / "generated")
    return folders


def _checked(module: ModuleType) -> ModuleType:
    if not hasattr(module, "SessionState"):
        raise InputError(
            f"{module.__name__} ({module.__file__}) has no SessionState: regenerate it"
        )
    return module


# -- the text view -----------------------------------------------------------------------------


def render_text(snapshot: dict[str, Any], session_id: str | None, applied: int) -> str:
    out: list[str] = [f"session {session_id or '(unknown)'}: {applied} update(s) applied"]
    info = snapshot["sessionInfo"]
    if "title" in info:
        out.append(f"title: {info['title']}")
    if snapshot["messages"]:
        out.append("")
        for message in snapshot["messages"]:
            out.append(f"{message['role']} ({message['messageId']}):")
            out.extend(_indent(_blocks(message["content"]), 2) or ["  (no content)"])
    if snapshot["toolCalls"]:
        out += ["", "tool calls:"]
        for call in snapshot["toolCalls"].values():
            title = f" {call['title']}" if "title" in call else ""
            kind = f" ({call['kind']})" if "kind" in call else ""
            out.append(f"  {call['toolCallId']}{title}{kind}: {call.get('status', 'no status')}")
            out.extend(_indent(_tool_content(call["content"]), 4))
    if snapshot["plans"]:
        out += ["", "plans:"]
        for plan_id, plan in snapshot["plans"].items():
            out.append(f"  {plan_id} ({plan.get('type')}):")
            for entry in plan.get("entries") or []:
                out.append(
                    f"    [{entry.get('status')}] {entry.get('content')} ({entry.get('priority')})"
                )
    if snapshot["terminals"]:
        out += ["", "terminals:"]
        for terminal in snapshot["terminals"].values():
            out.append(f"  {terminal['terminalId']}: {_terminal(terminal)}")
    if snapshot["availableCommands"]:
        names = ", ".join(f"/{c.get('name')}" for c in snapshot["availableCommands"])
        out += ["", f"commands: {names}"]
    if snapshot["unknown"]:
        kinds = ", ".join(str(u.get("sessionUpdate")) for u in snapshot["unknown"])
        out += ["", f"unknown updates: {kinds}"]
    out += ["", f"usage: {_usage(snapshot['usage'])}"]
    stop = f" ({snapshot['stopReason']})" if snapshot["stopReason"] is not None else ""
    out.append(f"state: {snapshot['state']}{stop}")
    return "\n".join(out) + "\n"


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
