#!/usr/bin/env python3
"""An ACP v2 client built on the generated `acp_v2.ClientBase`: runs one prompt turn.

    python examples/client.py [--prompt TEXT] [--cancel] [--timeout S] [--] AGENT_CMD [ARGS...]

Spawns AGENT_CMD (ACP on its stdin/stdout, its stderr passed through), runs initialize →
session/new → session/prompt ("hello" unless --prompt), answers each permission request with
the first option whose kind starts with "allow", and prints each update on stderr as it
arrives. It speaks the package's lane (npm-sdk-2.4.0, what the official TypeScript SDK 2.4.0
speaks): the prompt's turn is the user_message reported after the prompt was sent, up to the
first idle state_update after it, and the `messageId` of the session/prompt answer must be
that user message's. Once the prompt was answered and the turn is idle, it prints one line on
stdout and exits 0:

    {"stopReason": "end_turn", "updates": ["user_message", "state_update", ...]}

--cancel sends session/cancel after the first agent_message_chunk; permission requests are
then answered `cancelled` and the turn should end with the stop reason "cancelled".
Errors: one line on stderr, exit 1 (2 for bad usage).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))
import acp_v2 as acp  # noqa: E402

USAGE = "usage: client.py [--prompt TEXT] [--cancel] [--timeout SECONDS] [--] AGENT_CMD [ARGS...]"


class UsageError(Exception):
    pass


class RunError(Exception):
    pass


@dataclass
class Options:
    command: list[str]
    prompt: str = "hello"
    cancel: bool = False
    timeout: float = 20.0


def parse_args(argv: list[str]) -> Options:
    options = Options(command=[])
    args = list(argv)
    while args and args[0].startswith("--"):
        flag = args.pop(0)
        if flag == "--":
            break
        if flag == "--cancel":
            options.cancel = True
        elif flag in ("--prompt", "--timeout"):
            if not args:
                raise UsageError(f"{flag} needs a value")
            value = args.pop(0)
            if flag == "--prompt":
                options.prompt = value
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
    options.command = args
    return options


class TurnClient(acp.ClientBase):
    """Records the turn: the kind of every update, the user message reported after the prompt
    was sent, and the stop reason of the first idle state after that user message."""

    def __init__(self, *, cancel: bool) -> None:
        self.cancel = cancel
        self.session_id: str | None = None
        self.prompt_sent = False
        self.cancel_sent = False
        self.updates: list[str] = []
        self.user_message_id: str | None = None
        self.stop_reason: object = None
        self.turn_ended = asyncio.Event()

    async def session_update(self, params: acp.UpdateSessionNotification) -> None:
        update = params.update
        wire = acp.encode(update)
        kind = str(wire.get("sessionUpdate"))  # also the tag of kinds this schema does not know
        self.updates.append(kind)
        print(f"update: {json.dumps(wire, ensure_ascii=False)}", file=sys.stderr, flush=True)
        if isinstance(update, acp.SessionUpdateUserMessage) and self.prompt_sent:
            if self.user_message_id is None:
                self.user_message_id = update.message_id
        if self.cancel and kind == "agent_message_chunk" and not self.cancel_sent:
            self.cancel_sent = True
            await self.agent.session_cancel(acp.CancelSessionNotification(session_id=self.sid))
        if (
            isinstance(update, acp.SessionUpdateStateUpdate)
            and update.state == "idle"
            and self.user_message_id is not None
            and not self.turn_ended.is_set()
        ):
            self.stop_reason = None if update.stop_reason is acp.UNSET else update.stop_reason
            if update.stop_reason == "error" and isinstance(update.error, acp.Error):
                print(f"turn failed: {acp.encode(update.error)}", file=sys.stderr, flush=True)
            self.turn_ended.set()

    async def session_request_permission(
        self, params: acp.RequestPermissionRequest
    ) -> acp.RequestPermissionResponse:
        option = next((o for o in params.options if str(o.kind).startswith("allow")), None)
        if self.cancel_sent or option is None:
            return acp.RequestPermissionResponse(outcome=acp.RequestPermissionOutcomeCancelled())
        return acp.RequestPermissionResponse(
            outcome=acp.RequestPermissionOutcomeSelected(option_id=option.option_id)
        )

    @property
    def sid(self) -> str:
        if self.session_id is None:
            raise RunError("an update arrived before session/new was answered")
        return self.session_id


async def run(options: Options) -> dict[str, object]:
    client = TurnClient(cancel=options.cancel)
    try:
        agent = await acp.connect_process(client, *options.command)
    except OSError as exc:
        raise RunError(f"cannot start the agent {options.command[0]!r}: {exc}") from None
    try:
        async with asyncio.timeout(options.timeout):
            await play_turn(client, agent, options.prompt)
    except TimeoutError:
        raise RunError(f"timeout after {options.timeout:g}s (updates: {client.updates})") from None
    finally:
        await agent.close()  # closes its stdin, then reaps it (SIGTERM, SIGKILL if need be)
    return {"stopReason": client.stop_reason, "updates": client.updates}


async def play_turn(client: TurnClient, connection: acp.Connection, text: str) -> None:
    agent = client.agent
    try:
        init = await agent.initialize(
            acp.InitializeRequest(
                protocol_version=acp.PROTOCOL_VERSION,
                info=acp.Implementation(name="acp-codegen-example-client", version="0.1.0"),
                capabilities=acp.ClientCapabilities(),
            )
        )
        if init.protocol_version != acp.PROTOCOL_VERSION:
            raise RunError(f"the agent speaks protocol version {init.protocol_version}")
        session = await agent.session_new(acp.NewSessionRequest(cwd=os.getcwd(), mcp_servers=[]))
        client.session_id = session.session_id
        client.prompt_sent = True
        prompt: list[acp.ContentBlock] = [acp.ContentBlockText(text=text)]
        answer = await agent.session_prompt(
            acp.PromptRequest(session_id=session.session_id, prompt=prompt)
        )
    except acp.RpcError as exc:
        raise RunError(f"the agent answered with an error: {exc}") from None
    except acp.ConnectionClosed:
        raise RunError("the agent exited before the turn ended") from None
    except acp.DecodeError as exc:
        raise RunError(f"the agent sent an invalid answer: {exc}") from None
    ended = asyncio.ensure_future(client.turn_ended.wait())
    closed = asyncio.ensure_future(connection.wait_closed())
    await asyncio.wait({ended, closed}, return_when=asyncio.FIRST_COMPLETED)
    closed.cancel()
    if not ended.done():
        ended.cancel()
        raise RunError("the agent exited before the turn ended")
    if answer.message_id != client.user_message_id:
        raise RunError(
            f"the agent answered session/prompt with messageId {answer.message_id!r}, but its"
            f" user_message was {client.user_message_id!r}"
        )


def main(argv: list[str]) -> int:
    try:
        options = parse_args(argv)
    except UsageError as exc:
        print(f"client.py: error: {exc}\n{USAGE}", file=sys.stderr)
        return 2
    try:
        result = asyncio.run(run(options))
    except RunError as exc:
        print(f"client.py: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
