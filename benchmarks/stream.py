"""A deterministic, realistic stream of ACP v2 `session/update` notifications.

The stream is a session of complete prompt turns, shaped like the v2 prompt lifecycle:
`user_message`, `state_update` running, a plan, streamed agent text and thoughts, tool calls
(pending -> in_progress -> content chunks -> completed), `usage_update` with cost, permission
pauses (`requires_action`), and `state_update` idle with a stop reason. Most messages are
`agent_message_chunk`, as in a real turn.

    python benchmarks/stream.py [--seed N] [--messages N] [--stats]

prints one JSON-RPC notification per line. Same seed and size, same bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[1]


def _default_v2_schema() -> str:
    """The pinned v2 schema of the lock file's default ref, as `make sync` caches it: the one
    `generated/acp_v2` (the package the benchmark decodes with) is generated from."""
    lock = json.loads((_REPO / "schema" / "pins.lock.json").read_text(encoding="utf-8"))
    return str(_REPO / "schema" / "cache" / lock["default"] / "v2" / "schema.json")


# The schema every message of the stream conforms to, and the `$defs` type of its params.
V2_SCHEMA = os.environ.get("ACP_V2_SCHEMA") or _default_v2_schema()
PARAMS_TYPE = "UpdateSessionNotification"  # the $def with x-method "session/update"

DEFAULT_SEED = 20260101
DEFAULT_MESSAGES = 1200  # lower bound; the stream always ends on a whole turn

Message = dict[str, Any]

# --- text material --------------------------------------------------------------------------

_PROSE = [
    "I'll start by looking at how the configuration is loaded.",
    "The failing test expects the parser to keep unknown fields, but the current code drops them.",
    "Let me check where `load_settings` is called before changing its signature.",
    "This looks like an off-by-one error in the pagination logic.",
    "The retry loop never resets its backoff, so the delay keeps growing after a success.",
    "There are two call sites that rely on the old behaviour; both are in the CLI module.",
    "I ran the suite again and all 214 tests pass now.",
    "The simplest fix is to validate the input once, at the boundary, and trust it afterwards.",
    "Note that `datetime.utcnow()` is deprecated — I'll switch to `datetime.now(UTC)`.",
    "Here's a summary of what changed and why.",
    "The cache key includes the user id, so entries never collide across accounts.",
    "I couldn't reproduce the crash on Linux; it seems specific to paths with spaces on Windows.",
    "Renaming the module would break imports for downstream users, so I kept an alias.",
    "The benchmark shows the new version is about 3× faster on large inputs.",
    "If you'd prefer, I can split this into two smaller pull requests.",
    "I also added a regression test so this doesn't come back.",
    "The error message now names the offending field and its JSON pointer.",
    "Unicode handling was the culprit: the length was counted in bytes — “naïve” broke it.",
    "配置文件的路径在 Windows 上需要转义。",
    "Everything else in the diff is formatting from the linter. ✅",
]

_BULLETS = [
    "- Moved the validation into `Settings.from_env`",
    "- Replaced the bare `except:` with `except OSError`",
    "- Added `--dry-run` to the sync command",
    "- Removed the unused `legacy_mode` flag",
    "- Documented the new environment variables in the README",
    "- Pinned `httpx` to a version without the proxy regression",
    "1. Reproduce the bug with a minimal test",
    "2. Fix the boundary check",
    "3. Run the full suite and the type checker",
]

_CODE = [
    "def load_settings(path: Path) -> Settings:",
    '    data = tomllib.loads(path.read_text(encoding="utf-8"))',
    '    return Settings(**data["tool"]["app"])',
    "for page in range(1, total_pages + 1):",
    "    items.extend(fetch(page, per_page=PAGE_SIZE))",
    "if not isinstance(value, int) or isinstance(value, bool):",
    '    raise TypeError(f"expected int, got {type(value).__name__}")',
    "async with httpx.AsyncClient(timeout=10.0) as client:",
    '    response = await client.get(url, params={"q": query})',
    'assert result == {"status": "ok", "count": 3}',
]

_THOUGHTS = [
    "The user wants the flaky test fixed, not rewritten.",
    "I should read the fixture before assuming the clock is mocked.",
    "Two options: patch the caller or make the helper tolerant. The helper is shared.",
    "Need to confirm the migration ran before touching the model.",
    "The stack trace points at the serializer, not the view.",
]

_PROMPTS = [
    "Can you find out why `test_pagination` fails intermittently and fix it?",
    "Please add a `--dry-run` flag to the sync command.",
    "Refactor the settings loader so it validates the config once.",
    "Why is the import of `app.cli` so slow? Make it faster if you can.",
    "Update the README with the new environment variables.",
    "Fix the Windows path bug reported in issue #412.",
]

_FILES = [
    "/home/dev/project/src/app/settings.py",
    "/home/dev/project/src/app/cli.py",
    "/home/dev/project/src/app/sync.py",
    "/home/dev/project/tests/test_pagination.py",
    "/home/dev/project/tests/conftest.py",
    "/home/dev/project/README.md",
    "/home/dev/project/pyproject.toml",
]

_COMMANDS = ["pytest -q tests/test_pagination.py", "pytest -q", "ruff check src", "mypy src"]

_PLAN_STEPS = [
    "Reproduce the failure with a focused test",
    "Read the code paths involved",
    "Implement the fix",
    "Update the affected call sites",
    "Run the test suite and the type checker",
    "Summarize the changes",
]

_STOP_REASONS = ["end_turn"] * 16 + ["max_tokens", "cancelled", "refusal", "max_turn_requests"]


# --- the generator --------------------------------------------------------------------------


class _TurnWriter:
    """Writes the notifications of one session; holds the seeded RNG and running counters."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.session_id = f"sess_{rng.getrandbits(48):012x}"
        self.tokens_used = rng.randint(4_000, 9_000)
        self.cost = 0.0
        self.tool_calls = 0

    # envelope

    def notify(self, update: dict[str, Any]) -> Message:
        return {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": self.session_id, "update": update},
        }

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{self.rng.getrandbits(40):010x}"

    # text

    def reply_text(self, min_chars: int) -> str:
        """A markdown-ish answer: sentences, sometimes a list or a code block."""
        rng, parts, size = self.rng, [], 0
        while size < min_chars:
            roll = rng.random()
            if roll < 0.65:
                part = " ".join(rng.sample(_PROSE, rng.randint(1, 3)))
            elif roll < 0.85:
                part = "\n".join(rng.sample(_BULLETS, rng.randint(2, 4)))
            else:
                part = "```python\n" + "\n".join(rng.sample(_CODE, rng.randint(2, 5))) + "\n```"
            parts.append(part)
            size += len(part) + 2
        return "\n\n".join(parts)

    def chunk_sizes(self) -> Iterator[int]:
        """Streamed chunk lengths: mostly a few tokens, sometimes a line, rarely a burst."""
        rng = self.rng
        while True:
            roll = rng.random()
            if roll < 0.70:
                yield rng.randint(2, 24)
            elif roll < 0.95:
                yield rng.randint(25, 120)
            else:
                yield rng.randint(121, 600)

    def text_chunks(self, kind: str, message_id: str, text: str) -> list[Message]:
        out, start = [], 0
        for size in self.chunk_sizes():
            if start >= len(text):
                break
            piece = text[start : start + size]
            start += size
            out.append(
                self.notify(
                    {
                        "sessionUpdate": kind,
                        "messageId": message_id,
                        "content": {"type": "text", "text": piece},
                    }
                )
            )
        return out

    # updates

    def state(self, state: str, stop_reason: str | None = None) -> Message:
        update: dict[str, Any] = {"sessionUpdate": "state_update", "state": state}
        if stop_reason is not None:
            update["stopReason"] = stop_reason
        return self.notify(update)

    def usage(self) -> Message:
        self.tokens_used += self.rng.randint(800, 6_000)
        self.cost += self.tokens_used * 3e-6 + self.rng.random() * 0.002
        return self.notify(
            {
                "sessionUpdate": "usage_update",
                "used": self.tokens_used,
                "size": 200_000,
                "cost": {"amount": round(self.cost, 6), "currency": "USD"},
            }
        )

    def plan(self, plan_id: str, steps: list[str], done: int) -> Message:
        entries = []
        for index, step in enumerate(steps):
            status = "completed" if index < done else "in_progress" if index == done else "pending"
            priority = "high" if index < 2 else "medium" if index < 4 else "low"
            entries.append({"content": step, "priority": priority, "status": status})
        return self.notify(
            {
                "sessionUpdate": "plan_update",
                "plan": {"type": "items", "planId": plan_id, "entries": entries},
            }
        )

    def tool_call(self) -> list[Message]:
        """One tool call from announcement to completion, with a permission pause for writes."""
        rng = self.rng
        self.tool_calls += 1
        call_id = f"call_{self.tool_calls:03d}_{rng.getrandbits(24):06x}"
        kind = rng.choice(["read", "read", "search", "execute", "execute", "edit"])
        path = rng.choice(_FILES)
        command = rng.choice(_COMMANDS)
        title, raw_input, tool_name = {
            "read": (f"Read {path.rsplit('/', 1)[-1]}", {"file_path": path}, "Read"),
            "search": ("Search for `load_settings`", {"pattern": "load_settings"}, "Grep"),
            "execute": (f"`{command}`", {"command": command}, "Bash"),
            "edit": (f"Edit {path.rsplit('/', 1)[-1]}", {"file_path": path}, "Edit"),
        }[kind]

        announce: dict[str, Any] = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": call_id,
            "title": title,
            "kind": kind,
            "status": "pending",
            "rawInput": raw_input,
            "_meta": {"claudeCode": {"toolName": tool_name}},
        }
        if kind in ("read", "edit"):
            announce["locations"] = [{"path": path, "line": rng.randint(1, 400)}]
        out = [self.notify(announce)]

        if kind in ("execute", "edit") and rng.random() < 0.5:
            out += [self.state("requires_action"), self.state("running")]

        progress = {"sessionUpdate": "tool_call_update", "toolCallId": call_id}
        out.append(self.notify(progress | {"status": "in_progress"}))

        for _ in range(rng.randint(0, 6) if kind == "execute" else rng.randint(0, 2)):
            out.append(
                self.notify(
                    {
                        "sessionUpdate": "tool_call_content_chunk",
                        "toolCallId": call_id,
                        "content": self.tool_content(kind, path),
                    }
                )
            )

        failed = rng.random() < 0.08
        done: dict[str, Any] = progress | {
            "status": "failed" if failed else "completed",
            "content": [self.tool_content(kind, path, final=True)],
        }
        if kind == "execute":
            done["rawOutput"] = {
                "exit_code": 1 if failed else 0,
                "duration_ms": rng.randint(40, 9000),
            }
        out.append(self.notify(done))
        return out

    def tool_content(self, kind: str, path: str, final: bool = False) -> dict[str, Any]:
        rng = self.rng
        if kind == "edit":
            hunk = rng.choice(_CODE)
            return {
                "type": "diff",
                "changes": [{"operation": "modify", "path": path, "fileType": "text"}],
                "patch": {
                    "format": "git_patch",
                    "text": f"--- {path}\n+++ {path}\n@@ -10,3 +10,3 @@\n"
                    f"-{hunk}\n+{hunk.rstrip(':')}  # fixed\n",
                },
            }
        if kind == "execute" and not final:
            lines = [
                f"tests/test_pagination.py::test_page_{rng.randint(1, 40)} "
                + rng.choice(["PASSED", "PASSED", "PASSED", "FAILED"])
                for _ in range(rng.randint(1, 12))
            ]
            text = "\n".join(lines) + "\n"
        elif kind == "execute":
            passed, failed_count = rng.randint(20, 214), rng.randint(0, 2)
            text = f"{passed} passed, {failed_count} failed in {rng.random() * 9:.2f}s"
        elif kind == "search":
            text = "\n".join(
                f"{rng.choice(_FILES)}:{rng.randint(1, 300)}" for _ in range(rng.randint(1, 6))
            )
        else:
            text = "\n".join(rng.sample(_CODE, rng.randint(3, 8)))
        return {"type": "content", "content": {"type": "text", "text": text}}

    def turn(self) -> list[Message]:
        rng = self.rng
        out = [
            self.notify(
                {
                    "sessionUpdate": "user_message",
                    "messageId": self.new_id("msg_user"),
                    "content": [{"type": "text", "text": rng.choice(_PROMPTS)}],
                }
            ),
            self.state("running"),
        ]
        thought = " ".join(rng.sample(_THOUGHTS, rng.randint(1, 3)))
        out += self.text_chunks("agent_thought_chunk", self.new_id("msg_thought"), thought)

        steps = _PLAN_STEPS[: rng.randint(3, 6)] if rng.random() < 0.7 else []
        plan_id = self.new_id("plan")
        if steps:
            out.append(self.plan(plan_id, steps, done=0))

        for step in range(rng.randint(2, 5)):
            text = self.reply_text(rng.randint(250, 1400))
            out += self.text_chunks("agent_message_chunk", self.new_id("msg_agent"), text)
            out.append(self.usage())
            for _ in range(rng.randint(0, 3)):
                out += self.tool_call()
            if steps and step + 1 < len(steps):
                out.append(self.plan(plan_id, steps, done=step + 1))

        summary = self.reply_text(rng.randint(600, 3000))
        out += self.text_chunks("agent_message_chunk", self.new_id("msg_agent"), summary)
        if steps:
            out.append(self.plan(plan_id, steps, done=len(steps)))
        out.append(self.usage())
        out.append(self.state("idle", rng.choice(_STOP_REASONS)))
        return out


def generate_messages(
    seed: int = DEFAULT_SEED, min_messages: int = DEFAULT_MESSAGES
) -> list[Message]:
    """Whole prompt turns of one session until at least `min_messages` notifications."""
    writer = _TurnWriter(random.Random(seed))
    messages: list[Message] = []
    while len(messages) < min_messages:
        messages += writer.turn()
    return messages


def to_line(message: Message) -> str:
    """The wire form used throughout the benchmarks: compact JSON, UTF-8 kept as is."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


def generate_lines(seed: int = DEFAULT_SEED, min_messages: int = DEFAULT_MESSAGES) -> list[str]:
    return [to_line(message) for message in generate_messages(seed, min_messages)]


def kind_counts(messages: list[Message]) -> Counter[str]:
    """Messages per `sessionUpdate` tag (state updates split by state)."""
    counts: Counter[str] = Counter()
    for message in messages:
        update = message["params"]["update"]
        tag = update["sessionUpdate"]
        counts[f"{tag}:{update['state']}" if tag == "state_update" else tag] += 1
    return counts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--messages", type=int, default=DEFAULT_MESSAGES, help="minimum count")
    parser.add_argument("--stats", action="store_true", help="print counts per kind instead")
    args = parser.parse_args(argv)
    messages = generate_messages(args.seed, args.messages)
    if args.stats:
        total = len(messages)
        for kind, count in kind_counts(messages).most_common():
            print(f"{kind:32} {count:6} {count / total:6.1%}")
        print(f"{'total':32} {total:6}  {sum(len(to_line(m)) + 1 for m in messages)} bytes")
        return
    sys.stdout.writelines(to_line(message) + "\n" for message in messages)


if __name__ == "__main__":
    main()
