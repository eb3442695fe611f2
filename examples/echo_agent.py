#!/usr/bin/env python3
"""An ACP v2 agent on stdio, built on the generated toolkit (`acp_v2.Agent`).

    python examples/echo_agent.py          # speaks ACP on stdin/stdout, logs on stderr

Each prompt is one turn: the user message is echoed and `running` reported (the toolkit does
both), then a plan, the reply `You said: <prompt>.` streamed in chunks, a tool call "Echo tool"
behind a permission request (`requires_action` meanwhile), usage with a cost, and idle
`end_turn`. A prompt containing "slow" pauses 200 ms between chunks, to try cancelling by hand.

The toolkit does the rest of what `capabilities.session` promises: session/cancel (the turn
ends `cancelled`, a pending permission request withdrawn), session/list (by cwd, paged),
session/resume (replaying the history when asked), session/close (cancels, then forgets).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))
import acp_v2 as acp  # noqa: E402

SLOW_CHUNK_DELAY = 0.2


class EchoAgent(acp.Agent):
    name = "acp-codegen-echo-agent"
    version = "0.1.0"

    async def prompt(self, turn: acp.Turn) -> acp.TurnStopReason:
        text = " ".join(b.text for b in turn.prompt if isinstance(b, acp.ContentBlockText))
        number = turn.session.turns
        plan = [
            acp.PlanEntry(content="Echo the prompt back", priority="high", status="in_progress"),
            acp.PlanEntry(content="Run the echo tool", priority="medium", status="pending"),
            acp.PlanEntry(content="Report usage", priority="low", status="pending"),
        ]
        await turn.plan(*plan)
        delay = SLOW_CHUNK_DELAY if "slow" in text else 0.0
        for index, chunk in enumerate(reply_chunks(text)):
            if index and delay:
                await asyncio.sleep(delay)
            await turn.say(chunk)
        tool = await turn.tool_call("Echo tool", kind="other", raw_input={"text": text})
        if await turn.ask_permission(tool, remember=False):
            await tool.stream("Echoing...")
            await tool.complete(f"Echo: {text}")
        else:
            await tool.fail("Permission was not granted.")
        await turn.usage(used=1000 * number + len(text), size=200_000, cost=0.0042 * number)
        return "end_turn"


def reply_chunks(text: str) -> list[str]:
    """At least three chunks that concatenate to `You said: <text>.`"""
    words = [word + " " for word in text.split()]
    if words:
        words[-1] = words[-1].rstrip()
    return ["You said: ", *(words or ["(nothing)"]), "."]


if __name__ == "__main__":
    acp.run_agent(EchoAgent())
