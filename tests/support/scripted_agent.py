"""A scripted ACP v2 agent on stdio, speaking raw JSON lines: the bad peer that proves the interop
harness (interop/ts_client.mjs) fails when the official SDK refuses or complains about what an
agent sends.

    python tests/support/scripted_agent.py SCENARIO

It answers `initialize`, `session/new` and `session/prompt`, then plays one short turn
(user_message, state_update running, agent_message_chunk, state_update idle `end_turn`), and
exits at EOF. Every scenario but `clean` makes one message of that run deliberately wrong.
"""

from __future__ import annotations

import json
import sys
from typing import Any

SESSION = "sess_scripted"
USER_MESSAGE = "msg_user_1"


def update(body: dict[str, Any]) -> dict[str, Any]:
    params = {"sessionId": SESSION, "update": body}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


# The message each scenario slips into the turn, right after state_update running.
EXTRA: dict[str, dict[str, Any] | None] = {
    "clean": None,
    # The SDK logs it ("Got response to unknown request") and nothing else happens.
    "unknown-response-id": {"jsonrpc": "2.0", "id": 999, "result": {}},
    # A known kind with a broken payload: the SDK logs it and drops the notification.
    "broken-update": update(
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p", "entries": "x"}}
    ),
    # The answer to session/prompt is wrong instead (alpha.3's `{}`, no `messageId`).
    "empty-prompt-response": None,
}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request: dict[str, Any], scenario: str) -> dict[str, Any]:
    method = request.get("method")
    if method == "initialize":
        info = {"name": "scripted-agent", "version": "0"}
        result: dict[str, Any] = {"protocolVersion": 2, "info": info, "capabilities": {}}
    elif method == "session/new":
        result = {"sessionId": SESSION}
    elif method == "session/prompt":
        result = {} if scenario == "empty-prompt-response" else {"messageId": USER_MESSAGE}
    else:
        error = {"code": -32601, "message": "Method not found", "data": method}
        return {"jsonrpc": "2.0", "id": request["id"], "error": error}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def play_turn(prompt: list[Any], extra: dict[str, Any] | None) -> None:
    send(update({"sessionUpdate": "user_message", "messageId": USER_MESSAGE, "content": prompt}))
    send(update({"sessionUpdate": "state_update", "state": "running"}))
    if extra is not None:
        send(extra)
    chunk = {"type": "text", "text": "done"}
    send(update({"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": chunk}))
    send(update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}))


def main(scenario: str) -> int:
    if scenario not in EXTRA:
        print(f"scripted_agent: unknown scenario {scenario!r}", file=sys.stderr)
        return 2
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "method" not in message or "id" not in message:
            continue  # responses and notifications need no answer here
        send(answer(message, scenario))
        if message["method"] == "session/prompt":
            play_turn(message["params"]["prompt"], EXTRA[scenario])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) == 2 else ""))
