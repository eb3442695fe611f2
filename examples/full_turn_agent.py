#!/usr/bin/env python3
"""A full ACP turn on the toolkit, for a v1 or a v2 client alike: a thought, a plan, messages,
and a tool call that lists the session's directory once the user allows it. Cancel it at any
point: the toolkit stops the turn (on v2 it also withdraws a pending permission request and
closes the tool call) and ends it `cancelled`.

    python examples/full_turn_agent.py     # ACP on stdin/stdout
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))
import acp_kit as acp  # noqa: E402


class DirectoryAgent(acp.Agent):
    name = "full-turn-agent"
    version = "1.0.0"

    async def prompt(self, turn: acp.Turn) -> acp.TurnStopReason:
        cwd = turn.session.cwd
        await turn.think(f"The user said {turn.text!r}; looking at {cwd} should help.")
        plan = await turn.plan("Ask to read the directory", "List it", "Sum up")
        await turn.say("Let me look at your project. ")
        tool = await turn.tool_call("List the directory", kind="read", raw_input={"path": cwd})
        if not await turn.ask_permission(tool):
            await tool.fail("Not allowed to read the directory.")
            await plan.mark(1, "cancelled")
            await turn.say("I was not allowed to look, so I cannot say more.")
            return "end_turn"
        await plan.complete(0)
        await plan.start(1)
        names = sorted(os.listdir(cwd))
        for name in names[:20]:
            await tool.stream(name)
            await asyncio.sleep(0.01)  # as slow as real work: a cancel can land here
        await tool.complete(f"{len(names)} entries", raw_output={"entries": names})
        await plan.complete(1)
        await turn.say(f"Your project has {len(names)} entries, e.g. {', '.join(names[:3])}.")
        await plan.complete(2)
        await turn.usage(used=1200 + len(names), size=200_000, cost=0.001)
        return "end_turn"


if __name__ == "__main__":
    acp.run_agent(DirectoryAgent())
