#!/usr/bin/env python3
"""An ACP v2 client built on the generated toolkit (`acp_v2.spawn_agent`): runs one turn.

    python examples/client.py [--prompt TEXT] [--cancel] [--timeout S] [--] AGENT_CMD [ARGS...]

Spawns AGENT_CMD (ACP on its stdin/stdout, its stderr passed through), opens a session in this
directory, sends the prompt ("hello" unless --prompt), allows what the agent asks permission
for, and prints each update on stderr as it arrives. Once the turn is idle it prints one line
on stdout and exits 0:

    {"stopReason": "end_turn", "updates": ["user_message", "state_update", ...]}

--cancel sends session/cancel after the first agent_message_chunk; permission requests are
then answered `cancelled` and the turn should end with the stop reason "cancelled".
Errors: one line on stderr, exit 1 (2 for bad usage).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))
import acp_v2 as acp  # noqa: E402

USAGE = "usage: client.py [--prompt TEXT] [--cancel] [--timeout SECONDS] [--] AGENT_CMD [ARGS...]"


class UsageError(Exception):
    pass


def parse_args(argv: list[str]) -> tuple[list[str], str, bool, float]:
    """AGENT_CMD, the prompt, whether to cancel, the timeout."""
    args, prompt, cancel, timeout = list(argv), "hello", False, 20.0
    while args and args[0].startswith("--"):
        flag = args.pop(0)
        if flag == "--":
            break
        if flag == "--cancel":
            cancel = True
        elif flag in ("--prompt", "--timeout"):
            if not args:
                raise UsageError(f"{flag} needs a value")
            value = args.pop(0)
            if flag == "--prompt":
                prompt = value
                continue
            try:
                timeout = float(value)
            except ValueError:
                raise UsageError("--timeout needs a number of seconds") from None
            if not timeout > 0:
                raise UsageError("--timeout needs a positive number of seconds")
        else:
            raise UsageError(f"unknown option {flag}")
    if not args:
        raise UsageError("missing AGENT_CMD")
    return args, prompt, cancel, timeout


async def run(command: list[str], prompt: str, cancel: bool) -> dict[str, object]:
    kinds: list[str] = []
    async with acp.spawn_agent(*command, permissions=acp.allow) as agent:
        session = await agent.new_session()

        async def show(update: acp.SessionUpdate) -> None:
            wire = acp.encode(update)
            kinds.append(str(wire.get("sessionUpdate")))  # also kinds this lane does not know
            print(f"update: {json.dumps(wire, ensure_ascii=False)}", file=sys.stderr, flush=True)
            if cancel and kinds[-1] == "agent_message_chunk" and not session.cancelling:
                await session.cancel()

        session.subscribe(show)
        result = await session.prompt(prompt)
    if result.error is not None:
        print(f"turn failed: {acp.encode(result.error)}", file=sys.stderr, flush=True)
    return {"stopReason": result.stop_reason, "updates": kinds}


def main(argv: list[str]) -> int:
    try:
        command, prompt, cancel, timeout = parse_args(argv)
    except UsageError as exc:
        print(f"client.py: error: {exc}\n{USAGE}", file=sys.stderr)
        return 2
    try:
        result = asyncio.run(asyncio.wait_for(run(command, prompt, cancel), timeout))
    except acp.ConnectionClosed:  # these two before OSError, which they are
        return fail("the agent exited before the turn ended")
    except TimeoutError:
        return fail(f"timeout after {timeout:g}s")
    except OSError as exc:
        return fail(f"cannot start the agent {command[0]!r}: {exc}")
    except acp.RpcError as exc:
        return fail(f"the agent answered with an error: {exc}")
    except (acp.DecodeError, acp.IncompatibleAgent) as exc:
        return fail(f"the agent sent an invalid answer: {exc}")
    except KeyboardInterrupt:
        return 130
    print(json.dumps(result), flush=True)
    return 0


def fail(message: str) -> int:
    print(f"client.py: error: {message}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
