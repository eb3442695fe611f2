"""An agent on the toolkit that delegates to a subagent, serving v1 and the unstable v2 lane
(`lanes = ("v1", "v2_unstable")`): the peer of the subagent and unstable-interop tests.

    python tests/support/subagent_agent.py

Each prompt starts one child session, "Researcher", told the prompt's text; the child says
what it looks for (two chunks), runs a `search` tool call, reports "Three sources." to the
parent, and ends `end_turn`; the parent then says `researcher: <stop reason>: <report>`. The
prompt's words change that: `slow` makes the child stream ten chunks 0.1 s apart first (time
for a cancel), `fixed` starts it not cancellable, `ask` makes it ask permission for its tool
call. On v1 (no subagents) the turn says so and ends.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "generated"))
import acp_kit as acp  # noqa: E402


class Delegating(acp.Agent):
    name = "delegating-agent"
    version = "1.0"
    lanes = ("v1", "v2_unstable")

    async def prompt(self, turn: acp.Turn) -> acp.TurnStopReason:
        if not turn.features.subagents:
            await turn.say(f"no subagents in protocol version {turn.features.version}")
            return "end_turn"
        words = turn.text.split()
        researcher = await turn.subagent(
            "Researcher",
            description="finds sources",
            task=turn.text,
            cancellable="fixed" not in words,
        )

        async def research(child: acp.SubagentTurn) -> acp.TurnStopReason:
            await child.say("Looking for: ")
            await child.say(child.text)
            if "slow" in words:
                for n in range(10):
                    await asyncio.sleep(0.1)
                    await child.say(f" .{n}")
            tool = await child.tool_call("Search", kind="search", raw_input={"q": child.text})
            if "ask" in words and not await child.ask_permission(tool):
                await tool.fail("not allowed")
                return "refusal"
            await tool.complete("3 hits")
            await child.report("Three sources.")
            return "end_turn"

        reason = await researcher.run(research)
        await turn.say(f"researcher: {reason}: {researcher.reported}")
        return "end_turn"


if __name__ == "__main__":
    acp.run_agent(Delegating())
