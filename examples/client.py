#!/usr/bin/env python3
"""An ACP client on the generated toolkit (`acp_kit.spawn_agent`): it starts an agent, runs one
prompt, and prints one JSON line: the protocol version spoken, the stop reason, every update of
the turn, and each permission request with how it was answered.

    python examples/client.py [--prompt TEXT] [--cancel [chunk|permission]] [--reject]
                              [--protocol N] [--timeout S] [--verbose] [--] AGENT_CMD [ARGS...]

It asks for the newest protocol version (or `--protocol N`) and speaks whichever the agent
answers with. Permission requests are allowed (refused with --reject). `--cancel` (or `--cancel
chunk`) cancels the turn once the first agent message chunk arrives; `--cancel permission` when
the permission request comes (it is then answered `cancelled`). `--verbose` prints each update
on stderr as it arrives. An error is one line on stderr, exit 1 (2 for bad usage).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))
import acp_kit as acp  # noqa: E402
from acp_kit.vocab import PermissionOption, RequestPermissionRequest, SessionUpdate  # noqa: E402

USAGE = (
    "usage: client.py [--prompt TEXT] [--cancel [chunk|permission]] [--reject] [--protocol N]"
    " [--timeout S] [--verbose] [--] AGENT_CMD [ARGS...]"
)


class UsageError(Exception):
    pass


class Options:
    prompt = "hello"
    cancel: str | None = None
    reject = False
    protocol: int | None = None
    timeout = 20.0
    verbose = False


def parse_args(argv: list[str]) -> tuple[Options, list[str]]:
    """The options, and AGENT_CMD."""
    options, args = Options(), list(argv)
    while args and args[0].startswith("--"):
        flag = args.pop(0)
        if flag == "--":
            break
        if flag == "--cancel":
            options.cancel = args.pop(0) if args and args[0] in ("chunk", "permission") else "chunk"
        elif flag == "--reject":
            options.reject = True
        elif flag == "--verbose":
            options.verbose = True
        elif flag in ("--prompt", "--timeout", "--protocol"):
            if not args:
                raise UsageError(f"{flag} needs a value")
            value = args.pop(0)
            if flag == "--prompt":
                options.prompt = value
            elif flag == "--protocol":
                if value not in ("1", "2"):
                    raise UsageError("--protocol needs a protocol version (1, 2)")
                options.protocol = int(value)
            else:
                try:
                    options.timeout = float(value)
                except ValueError:
                    raise UsageError("--timeout needs a number of seconds") from None
                if not options.timeout > 0:
                    raise UsageError("--timeout needs a positive number of seconds")
        else:
            raise UsageError(f"unknown option {flag}")
    if not args:
        raise UsageError("missing AGENT_CMD")
    return options, args


async def run(options: Options, command: list[str]) -> dict[str, Any]:
    asked: list[dict[str, Any]] = []
    session: acp.RemoteSession | None = None

    async def policy(request: RequestPermissionRequest) -> PermissionOption | None:
        if options.cancel == "permission" and session is not None:
            await session.cancel()
        option = None if session and session.cancelling else await decide(request)
        outcome = {"outcome": "cancelled"} if option is None else {
            "outcome": "selected", "optionId": option.option_id
        }  # fmt: skip
        asked.append({"toolCall": tool_call_of(request), "outcome": outcome})
        return option

    decide = acp.deny if options.reject else acp.allow
    async with acp.spawn_agent(*command, permissions=policy, protocol=options.protocol) as agent:
        session = await agent.new_session()

        async def on_update(update: SessionUpdate) -> None:
            wire = acp.encode(update)
            if options.verbose:
                print(f"update: {json.dumps(wire, ensure_ascii=False)}", file=sys.stderr)
            chunk = wire.get("sessionUpdate") == "agent_message_chunk"
            if options.cancel == "chunk" and chunk and session and not session.cancelling:
                await session.cancel()

        session.subscribe(on_update)
        result = await session.prompt(options.prompt)
        version = agent.features.version
    if result.error is not None:
        print(f"turn failed: {acp.encode(result.error)}", file=sys.stderr, flush=True)
    return {
        "protocol": version,
        "stopReason": result.stop_reason,
        "updates": [acp.encode(update) for update in result.updates],
        "permissions": asked,
    }


def tool_call_of(request: Any) -> Any:
    """The tool call a permission request is about (v1 names it, v2 has it as its subject)."""
    subject = getattr(request, "subject", None)
    return acp.encode(getattr(subject, "tool_call", None) or request.tool_call)


def main(argv: list[str]) -> int:
    try:
        options, command = parse_args(argv)
    except UsageError as exc:
        print(f"client.py: error: {exc}\n{USAGE}", file=sys.stderr)
        return 2
    try:
        result = asyncio.run(asyncio.wait_for(run(options, command), options.timeout))
    except acp.ConnectionClosed:  # these two before OSError, which they are
        return fail("the agent exited before the turn ended")
    except TimeoutError:
        return fail(f"timeout after {options.timeout:g}s")
    except OSError as exc:
        return fail(f"cannot start the agent {command[0]!r}: {exc}")
    except acp.RpcError as exc:
        return fail(f"the agent answered with an error: {exc}")
    except (acp.DecodeError, acp.IncompatibleAgent) as exc:
        return fail(f"the agent does not speak ACP as this client does: {exc}")
    except KeyboardInterrupt:
        return 130
    print(json.dumps(result), flush=True)
    return 0


def fail(message: str) -> int:
    print(f"client.py: error: {message}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
