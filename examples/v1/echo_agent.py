#!/usr/bin/env python3
"""An ACP v1 echo agent on the generated toolkit (`acp_v1.Agent`), on stdin/stdout.

    python examples/v1/echo_agent.py        # logs go to stderr

Each prompt: a plan, the prompt echoed back in chunks, the plan's first step completed, an
"Echo tool" call behind a permission request, the usage, then the answer `end_turn`. "slow"
in the prompt waits 200 ms between chunks, to try cancelling by hand. The toolkit does the
rest: session/cancel ends the turn `cancelled` at once, session/load replays the
conversation, session/list, /resume, /close and /delete keep the books.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "generated"))
import acp_v1 as acp  # noqa: E402

SLOW_CHUNK_DELAY = 0.2


class EchoAgent(acp.Agent):
    name = "acp-codegen-v1-echo-agent"
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


if __name__ == "__main__":
    acp.run_agent(EchoAgent())
