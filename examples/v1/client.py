#!/usr/bin/env python3
"""An ACP v1 client on the generated toolkit (`acp_v1.spawn_agent`): it starts an agent, runs
one prompt, and prints one JSON line: the stop reason, every update of the turn, and each
permission request with how it was answered.

    python examples/v1/client.py [--prompt TEXT] [--cancel chunk|permission] [--reject]
                                 -- AGENT_CMD [ARGS...]

Permission requests are allowed (refused with --reject). `--cancel chunk` cancels the turn
once the first agent message chunk arrives; `--cancel permission` when the permission
request comes (it is then answered `cancelled`). A peer's error is one line on stderr, exit 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "generated"))
import acp_v1 as acp  # noqa: E402


async def run(args: argparse.Namespace, command: list[str]) -> dict[str, Any]:
    asked: list[dict[str, Any]] = []
    session: acp.RemoteSession | None = None

    async def policy(request: acp.RequestPermissionRequest) -> acp.PermissionOption | None:
        if args.cancel == "permission" and session is not None:
            await session.cancel()
        option = None if session and session.cancelling else await decide(request)
        outcome = {"outcome": "cancelled"} if option is None else {
            "outcome": "selected", "optionId": option.option_id
        }  # fmt: skip
        asked.append({"toolCall": acp.encode(request.tool_call), "outcome": outcome})
        return option

    decide = acp.deny if args.reject else acp.allow
    async with acp.spawn_agent(*command, permissions=policy) as agent:
        session = await agent.new_session()
        if args.cancel == "chunk":

            async def on_update(update: acp.SessionUpdate) -> None:
                if isinstance(update, acp.SessionUpdateAgentMessageChunk) and session:
                    if not session.cancelling:
                        await session.cancel()

            session.subscribe(on_update)
        result = await session.prompt(args.prompt)
    updates = [acp.encode(update) for update in result.updates]
    return {"stopReason": result.stop_reason, "updates": updates, "permissions": asked}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompt", default="hello")
    parser.add_argument("--cancel", choices=["chunk", "permission"])
    parser.add_argument("--reject", action="store_true")
    parser.add_argument("command", nargs="+", help="the agent's command (after --)")
    args = parser.parse_args()
    try:
        print(json.dumps(asyncio.run(run(args, args.command))), flush=True)
    except (acp.RpcError, acp.ConnectionClosed, acp.IncompatibleAgent, OSError) as exc:
        print(f"client: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
