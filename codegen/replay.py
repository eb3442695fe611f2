"""Replay a JSON-lines transcript of JSON-RPC messages into a generated `SessionState`.

The transcript is read line by line (a line is bounded; nothing reads the whole file), and the
session model comes from the generated package it is pointed at, loaded from that folder with
importlib (`load_bindings`). Which protocol lane a transcript speaks, and so which package to
load, `detect_lane` reads from its first lines. Bad lines are counted and the first few kept
for the report. A file that is not UTF-8 text is an InputError; one that holds nothing, or no
`session/update` of the chosen session that could be applied, has a `Replay.refusal`.

A v1 session model (one with `prompt_started`) also follows the session's `session/prompt`
requests and their answers: v1 reports the turn's end only in the prompt's answer.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, BinaryIO

from .diagnostics import InputError

UPDATE_METHOD = "session/update"
PROMPT_METHOD = "session/prompt"
MAX_LINE_BYTES = 32 * 1024 * 1024  # a longer line is reported and skipped, never held whole
KEPT_PROBLEMS = 20  # bad lines reported one by one; the rest are counted
KEPT_REQUESTS = 1024  # v1: pending requests of other methods remembered (ids can collide)
_CHUNK = 1024 * 1024


@dataclass
class Replay:
    """What a transcript replay produced: the state, and what was skipped or ignored."""

    state: Any  # the bindings' SessionState
    session_id: str | None = None
    applied: int = 0
    updates: int = 0  # session/update notifications of the replayed session, applied or not
    other_sessions: int = 0
    sessions: dict[str, None] = field(default_factory=dict)  # the first 10 session ids seen
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line, reason), the first few
    bad_lines: int = 0
    empty: bool = False  # no line but blank ones
    # v1: the ids of the session's unanswered session/prompt requests, and of other requests
    prompts: dict[Any, str] = field(default_factory=dict)
    other_requests: dict[Any, None] = field(default_factory=dict)

    def refusal(self, name: str) -> str | None:
        """Why this replay shows nothing worth a 0 exit status (None when it does)."""
        if self.empty:
            return f"{name} is empty: nothing to replay"
        which = f" of session {self.session_id!r}" if self.session_id is not None else ""
        if self.updates == 0:
            seen = ", ".join(self.sessions)
            others = f" (sessions in it: {seen})" if which and seen else ""
            return f"{name} has no JSON-RPC {UPDATE_METHOD} notification{which}{others}"
        if self.applied == 0:
            return (
                f"{name}: none of its {self.updates} {UPDATE_METHOD} notification(s){which}"
                " could be applied"
            )
        return None

    def skip(self, number: int, reason: str) -> None:
        self.bad_lines += 1
        if len(self.problems) < KEPT_PROBLEMS:
            self.problems.append((number, reason))


def replay(
    acp: ModuleType,
    stream: BinaryIO | Peeked,
    name: str,
    session_id: str | None = None,
    max_line: int = MAX_LINE_BYTES,
) -> Replay:
    """Apply every `session/update` of one session in `stream` (JSON lines) to a new state.

    `name` is how errors name the input. Raises InputError for a stream that is not UTF-8
    text; `Replay.refusal` says whether what was found is worth showing."""
    result = Replay(acp.SessionState(), session_id)
    blank = True
    number = 0
    while line := stream.readline(max_line + 1):
        number += 1
        if number == 1 and line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]  # a UTF-8 byte order mark
        _check_text(line, name, number)
        if len(line) > max_line and not line.endswith(b"\n"):
            _read_past_line(stream, name, number)
            result.skip(number, f"longer than {max_line} bytes")
            blank = False
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(
                f"{name}:{number}: not UTF-8 text: this is not a JSON-lines transcript"
            ) from None
        if text.strip():
            blank = False
            _apply_line(acp, result, number, text)
    result.empty = blank
    return result


def _check_text(data: bytes, name: str, number: int) -> None:
    if b"\0" in data:
        raise InputError(f"{name}:{number}: a NUL byte: this is not a JSON-lines transcript")


def _read_past_line(stream: BinaryIO | Peeked, name: str, number: int) -> None:
    """Read to the end of an overlong line, a chunk at a time (a NUL in it still stops us)."""
    while chunk := stream.readline(_CHUNK):
        _check_text(chunk, name, number)
        if chunk.endswith(b"\n"):
            return


def _apply_line(acp: ModuleType, result: Replay, number: int, text: str) -> None:
    try:
        message = json.loads(text)
    except (ValueError, RecursionError) as exc:
        result.skip(number, f"not JSON ({_reason(exc)})")
        return
    if not isinstance(message, dict):
        result.skip(number, f"not a JSON-RPC message (a JSON {_kind(message)})")
        return
    if hasattr(result.state, "prompt_started") and message.get("method") != UPDATE_METHOD:
        _follow_prompts(result, message)
        return
    if message.get("method") != UPDATE_METHOD:
        return
    if message.get("jsonrpc") != "2.0":
        result.skip(number, f'{UPDATE_METHOD} without "jsonrpc": "2.0"')
        return
    params = message.get("params")
    target = params.get("sessionId") if isinstance(params, dict) else None
    if not isinstance(params, dict) or "update" not in params:
        result.skip(number, f"{UPDATE_METHOD} without params.update")
        return
    if not isinstance(target, str):
        result.skip(number, f"{UPDATE_METHOD} without a string params.sessionId")
        return
    if len(result.sessions) < 10:
        result.sessions.setdefault(target)
    child = None  # a child session of the replayed one (subagent sessions)
    if result.session_id is None:
        result.session_id = target
    elif target != result.session_id:
        find = getattr(result.state, "child", None)
        child = None if find is None else find(target)
        if child is None:
            result.other_sessions += 1
            return
    result.updates += 1
    try:
        update = acp.decode(acp.SessionUpdate, params["update"])
        (result.state if child is None else child).apply(update)
    except acp.DecodeError as exc:
        result.skip(number, f"bad update: $.params.update{exc.path[1:]}: {exc.reason}")
        return
    except ValueError as exc:
        result.skip(number, f"bad update: {exc}")
        return
    result.applied += 1


def _follow_prompts(result: Replay, message: dict[str, Any]) -> None:
    """v1: a session/prompt of the replayed session starts a turn, its answer ends it (an
    error answer with no stop reason). The peers number their requests apart, so an id can be
    pending twice: an error answer is not taken for the prompt's while another request of the
    same id is pending (the last KEPT_REQUESTS other requests are remembered)."""
    request_id, method = message.get("id"), message.get("method")
    key = _key(request_id)
    if isinstance(method, str):
        params = message.get("params")
        target = params.get("sessionId") if isinstance(params, dict) else None
        if method == PROMPT_METHOD and isinstance(target, str) and request_id is not None:
            if result.session_id is None:
                result.session_id = target
            if target == result.session_id:
                result.prompts[key] = target
                result.state.prompt_started()
                return
        if request_id is not None:
            result.other_requests[key] = None
            if len(result.other_requests) > KEPT_REQUESTS:
                del result.other_requests[next(iter(result.other_requests))]
        return
    if key in result.prompts:
        answer = message.get("result")
        if isinstance(answer, dict) and isinstance(answer.get("stopReason"), str):
            del result.prompts[key]
            result.state.prompt_finished(answer["stopReason"])
            return
        if "error" in message and key not in result.other_requests:
            del result.prompts[key]
            result.state.prompt_finished(None)
            return
    result.other_requests.pop(key, None)


def _key(request_id: Any) -> Any:
    """Ids as the peers pair them: `1` and `"1"` differ, and so do `1` and `true`."""
    return (type(request_id).__name__, request_id) if _hashable(request_id) else None


def _hashable(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) or value is None


# -- which lane a transcript speaks ------------------------------------------------------------

PEEK_LINES = 1000  # how far detect_lane looks for an initialize or a telling update


class Peeked:
    """A binary stream that first gives back the lines `detect_lane` read from it."""

    def __init__(self, lines: list[bytes], stream: BinaryIO) -> None:
        self._lines = lines
        self._stream = stream

    def readline(self, size: int = -1) -> bytes:
        if self._lines:
            return self._lines.pop(0)
        return self._stream.readline(size)


def detect_lane(
    stream: BinaryIO,
    kinds: Callable[[], Mapping[str, frozenset[str]]],
    max_line: int = MAX_LINE_BYTES,
) -> tuple[str | None, Peeked]:
    """The lane ("v1", "v2", "v2_unstable", ...) a transcript speaks, from its first lines, and
    the stream to replay (those lines given back first). The agent's `initialize` answer
    decides the version (`protocolVersion` N is lane vN), else the client's `initialize`
    request, else the first `session/update` whose kind only one version knows (`kinds()`: each
    lane's update kinds, asked for only then). A version's unstable lane is chosen when an
    update in those lines has a kind only it knows (`subagent_update`, ...). None when the first
    lines tell nothing."""
    lines: list[bytes] = []
    asked: str | None = None
    answered: str | None = None
    telling: str | None = None
    while len(lines) < PEEK_LINES and (line := stream.readline(max_line + 1)):
        lines.append(line)
        if len(line) > max_line and not line.endswith(b"\n"):
            break  # the replay reads past it, and reports it
        message = _parsed(line)
        if message is None:
            continue
        if message.get("method") == "initialize":
            asked = _lane_of(message.get("params")) or asked
        elif "method" not in message and answered is None:
            answered = _lane_of(message.get("result"))
        elif message.get("method") == UPDATE_METHOD:
            tag = _tag_of(message)
            if tag is None:
                continue
            known = answered or asked or telling
            if known is None:
                telling = _telling_lane(tag, kinds)
            elif tag in kinds().get(f"{known}_unstable", frozenset()) and tag not in kinds().get(
                known, frozenset()
            ):
                return f"{known}_unstable", Peeked(lines, stream)
            if telling is not None and telling.endswith("_unstable"):
                return telling, Peeked(lines, stream)
    return answered or asked or telling, Peeked(lines, stream)


def _parsed(line: bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


def _lane_of(body: Any) -> str | None:
    version = body.get("protocolVersion") if isinstance(body, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and 0 < version < 100:
        return f"v{version}"
    return None


def _tag_of(message: dict[str, Any]) -> str | None:
    params = message.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    tag = update.get("sessionUpdate") if isinstance(update, dict) else None
    return tag if isinstance(tag, str) else None


def _telling_lane(tag: str, kinds: Callable[[], Mapping[str, frozenset[str]]]) -> str | None:
    """The lane an update kind tells: the stable lane of the one version that knows it, or
    that version's unstable lane when only it knows it."""
    lanes = [lane for lane, known in kinds().items() if tag in known]
    versions = {lane.removesuffix("_unstable") for lane in lanes}
    if len(versions) != 1:
        return None
    (version,) = versions
    return version if version in lanes else lanes[0]


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


# -- the generated package ---------------------------------------------------------------------

NEEDED = ("SessionState", "SessionUpdate", "DecodeError", "decode")


def package_lanes(folder: Path) -> list[str]:
    """The lanes (`v1`, `v2`, ...) of the generated package in `folder`, sorted; none when
    `folder` is a lane's own folder or not a package."""
    if (folder / "models.py").is_file() or not (folder / "__init__.py").is_file():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / "models.py").is_file())


def load_bindings(folder: Path, lane: str | None = None) -> ModuleType:
    """The lane of a generated package, imported from `folder` under a private module name
    (the package's own name, and `sys.path`, are left alone). `folder` is a lane's own folder
    (`acp_kit/v2`), or a package: its one lane, or the lane named `lane` among several."""
    if (folder / "models.py").is_file() and (folder.parent / "__init__.py").is_file():
        package_dir, lane_dir = folder.parent, folder
    elif (folder / "__init__.py").is_file():
        lanes = sorted(p for p in folder.iterdir() if (p / "models.py").is_file())
        chosen = [p for p in lanes if lane is None or p.name == lane]
        if not chosen:
            which = f"a {lane} lane" if lanes else "lanes (no folder with models.py)"
            raise InputError(
                f"{folder} has no {which}: pass --bindings with the folder of a package"
                " acp-codegen generated from a v1 or v2 schema"
            )
        package_dir, lane_dir = folder, chosen[0]
    else:
        raise InputError(
            f"{folder} is not a generated package (no __init__.py): pass --bindings with the"
            " folder of a package acp-codegen generated from a v1 or v2 schema"
        )
    resolved = package_dir.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    name = f"_acp_codegen_bindings_{digest}"
    if name not in sys.modules:
        _import(name, resolved)
    try:
        module = importlib.import_module(f"{name}.{lane_dir.name}")
    except Exception as exc:  # whatever is in that folder: bad input, one line
        raise InputError(f"cannot import {lane_dir}: {type(exc).__name__}: {exc}") from None
    missing = [n for n in NEEDED if not hasattr(module, n)]
    if missing:
        raise InputError(
            f"{folder} has no {missing[0]}: replay needs a package generated from a v1 or v2"
            " schema (with session_state.py)"
        )
    return module


def _import(name: str, folder: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # whatever is in that folder: bad input, one line
        for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[loaded]
        raise InputError(f"cannot import {folder}: {type(exc).__name__}: {exc}") from None
    return module
