#!/usr/bin/env python3
"""An ACP agent on stdio, built on the generated toolkit (`acp_kit.Agent`), that serves v1 and v2
clients alike: the protocol version is the one the client asks for at `initialize`.

    python examples/echo_agent.py          # speaks ACP on stdin/stdout, logs on stderr
    python examples/echo_agent.py --store sessions.db   # sessions outlive the process
    python examples/echo_agent.py --listen 127.0.0.1:8000 [--token T]

With `--listen` it serves the same agent over Streamable HTTP and WebSocket on one endpoint,
printing one line per transport, `listening: http://HOST:PORT/acp` and `listening:
ws://HOST:PORT/acp` (port 0: one the system picks); beyond loopback it needs `--token` (or
`$ACP_TOKEN`), which clients send as `Authorization: Bearer T`.

Each prompt is one turn: a plan, the reply `You said: <prompt>.` streamed in chunks, the plan's
first step completed, a tool call "Echo tool" behind a permission request, then the usage. On
v2 the toolkit also echoes the user message, reports `running` (and `requires_action` while
the permission request is pending) and ends with idle `end_turn`; on v1 the prompt's answer
carries `end_turn`. A prompt containing "slow" pauses 200 ms between chunks, to try cancelling
by hand.

The toolkit does the rest of what the session capabilities promise: session/cancel,
session/list (by cwd, paged), session/resume and (v1) session/load with their replays,
session/close, session/delete. With `--store PATH` it keeps them in a SQLite file (made 0600
when missing), so a restarted agent lists, loads and resumes them as before; a file it cannot
use is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))
import acp_kit as acp  # noqa: E402

SLOW_CHUNK_DELAY = 0.2


class EchoAgent(acp.Agent):
    name = "acp-codegen-echo-agent"
    version = "0.1.0"

    async def prompt(self, turn: acp.Turn) -> acp.TurnStopReason:
        plan = await turn.plan("Echo the prompt back", "Run the echo tool", "Report usage")
        for index, chunk in enumerate(reply_chunks(turn.text)):
            if index and "slow" in turn.text:
                await asyncio.sleep(SLOW_CHUNK_DELAY)
            await turn.say(chunk)
        await plan.complete(0)
        tool = await turn.tool_call("Echo tool", raw_input={"text": turn.text})
        if await turn.ask_permission(tool):
            await tool.start()
            await tool.complete(f"Echo: {turn.text}")
        else:
            await tool.fail("Permission was not granted.")
        await turn.usage(1000 * turn.session.turns + len(turn.text), 200_000)
        return "end_turn"


def reply_chunks(text: str) -> list[str]:
    """At least three chunks that concatenate to `You said: <text>.`"""
    words = [word + " " for word in text.split()]
    if words:
        words[-1] = words[-1].rstrip()
    return ["You said: ", *(words or ["(nothing)"]), "."]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="An ACP echo agent on stdio (v1 and v2).")
    parser.add_argument("--store", metavar="PATH", help="keep the sessions in this SQLite file")
    parser.add_argument("--listen", metavar="HOST:PORT", help="serve over HTTP and WebSocket")
    parser.add_argument("--token", help="the bearer token remote clients must send")
    args = parser.parse_args(argv)
    if args.token and not args.listen:
        parser.error("--token needs --listen")
    args.token = args.token or os.environ.get("ACP_TOKEN") or None
    return args


if __name__ == "__main__":
    options = parse_args()
    if options.listen:
        acp.run_remote(EchoAgent(store=options.store), options.listen, token=options.token)
    else:
        acp.run_agent(EchoAgent(store=options.store))
