"""v1 peers on the PyPI Python SDK (`agent-client-protocol`), written the way its README shows:
an agent served by `run_agent`, a client that starts its agent with `spawn_agent_process`.
They play what interop/v1_agent.mjs and interop/v1_client.mjs play on the TypeScript SDK.

    python -m tests.support.pypi_v1_peers agent
    python -m tests.support.pypi_v1_peers client [--prompt TEXT] [--cancel chunk|permission]
                                                 [--reject] [--sessions] -- AGENT_CMD [ARGS...]

The agent's turn: plan (3 entries), agent_message_chunk x N (echoing the prompt: "You said: ",
its words, "."), plan (the first entry completed), tool_call call_001 pending,
session/request_permission, then tool_call_update in_progress + completed (allowed) or failed
(rejected), usage_update, and the stop reason `end_turn`. "slow" in the prompt waits 200 ms
between chunks; session/cancel (or a `cancelled` permission answer) ends it `cancelled`.

The client prints one line: {"stopReason": ..., "updates": [...], "permissions": [...]}, the
updates as the SDK decoded them (dumped by alias, unset fields left out); with `--sessions`,
also what `session/list`, `session/load`, `session/resume` and `session/close` did after the turn
(`sessions`: listed, the kinds replayed, listed after close).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import uuid
from typing import Any

import acp
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
)

TOOL_CALL_ID = "call_001"
SLOW_CHUNK_DELAY = 0.2
OPTIONS = [
    PermissionOption(option_id="allow-once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow-always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject-once", name="Reject", kind="reject_once"),
]


def reply_chunks(text: str) -> list[str]:
    words = [word + " " for word in text.split()]
    if words:
        words[-1] = words[-1].rstrip()
    return ["You said: ", *(words or ["(nothing)"]), "."]


class EchoAgent:
    def __init__(self) -> None:
        self.turns: dict[str, int] = {}
        self.running: dict[str, asyncio.Task[str]] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=acp.PROTOCOL_VERSION)

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        session_id = f"sess_{uuid.uuid4().hex}"
        self.turns[session_id] = 0
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        self.turns[session_id] += 1
        text = " ".join(block.text for block in prompt if getattr(block, "type", "") == "text")
        task = asyncio.create_task(self.turn(session_id, self.turns[session_id], text))
        self.running[session_id] = task
        try:
            return PromptResponse(stop_reason=await task)
        except asyncio.CancelledError:
            if task.cancelled():
                return PromptResponse(stop_reason="cancelled")
            raise
        finally:
            self.running.pop(session_id, None)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        task = self.running.get(session_id)
        if task is not None:
            task.cancel()

    async def turn(self, session_id: str, number: int, text: str) -> str:
        async def send(update: Any) -> None:
            await self.conn.session_update(session_id=session_id, update=update)

        def plan(first: Any) -> Any:
            return acp.update_plan(
                [
                    acp.plan_entry("Echo the prompt back", status=first),
                    acp.plan_entry("Run the echo tool"),
                    acp.plan_entry("Report usage"),
                ]
            )

        await send(plan("pending"))
        for index, chunk in enumerate(reply_chunks(text)):
            if index and "slow" in text:
                await asyncio.sleep(SLOW_CHUNK_DELAY)
            update = acp.update_agent_message_text(chunk)
            update.message_id = f"msg_agent_{number}"
            await send(update)
        await send(plan("completed"))
        await send(
            acp.start_tool_call(
                TOOL_CALL_ID, "Echo tool", kind="other", status="pending", raw_input={"text": text}
            )
        )
        answer = await self.conn.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(tool_call_id=TOOL_CALL_ID, title="Echo tool"),
            options=OPTIONS,
        )
        if not isinstance(answer.outcome, AllowedOutcome):
            return "cancelled"
        if answer.outcome.option_id.startswith("allow"):
            await send(acp.update_tool_call(TOOL_CALL_ID, status="in_progress"))
            content = [acp.tool_content(acp.text_block(f"Echo: {text}"))]
            await send(acp.update_tool_call(TOOL_CALL_ID, status="completed", content=content))
        else:
            content = [acp.tool_content(acp.text_block("Permission was not granted."))]
            await send(acp.update_tool_call(TOOL_CALL_ID, status="failed", content=content))
        usage = acp.schema.UsageUpdate(
            session_update="usage_update", used=1000 * number + len(text), size=200_000
        )
        await send(usage)
        return "end_turn"


class RecordingClient:
    def __init__(self, cancel: str | None, reject: bool) -> None:
        self.cancel_when = cancel
        self.reject = reject
        self.updates: list[Any] = []
        self.permissions: list[Any] = []
        self.cancel_sent = False
        self.session_id = ""

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def cancel(self) -> None:
        if not self.cancel_sent:
            self.cancel_sent = True
            await self.conn.cancel(session_id=self.session_id)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update.model_dump(mode="json", by_alias=True, exclude_unset=True))
        if self.cancel_when == "chunk" and update.session_update == "agent_message_chunk":
            await self.cancel()

    async def request_permission(
        self, options: list[PermissionOption], session_id: str, tool_call: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        if self.cancel_when == "permission":
            await self.cancel()
        wanted = "reject" if self.reject else "allow"
        option = next((o for o in options if str(o.kind).startswith(wanted)), None)
        outcome: AllowedOutcome | DeniedOutcome
        if self.cancel_sent or option is None:
            outcome = DeniedOutcome(outcome="cancelled")
        else:
            outcome = AllowedOutcome(outcome="selected", option_id=option.option_id)
        self.permissions.append(
            {
                "toolCall": tool_call.model_dump(mode="json", by_alias=True, exclude_unset=True),
                "outcome": outcome.model_dump(mode="json", by_alias=True, exclude_unset=True),
            }
        )
        return RequestPermissionResponse(outcome=outcome)


async def run_client(args: argparse.Namespace, command: list[str]) -> dict[str, Any]:
    client = RecordingClient(args.cancel, args.reject)
    async with acp.spawn_agent_process(client, *command) as (conn, _process):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
        client.session_id = session.session_id
        answer = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block(args.prompt)]
        )
        result = {
            "stopReason": answer.stop_reason,
            "updates": client.updates,
            "permissions": client.permissions,
        }
        if args.sessions:
            result["sessions"] = await sessions_of(conn, client, session.session_id)
    return result


async def sessions_of(conn: Any, client: RecordingClient, session_id: str) -> dict[str, Any]:
    """After the turn: the session listed (as this session or another), loaded (the kinds it
    replays), resumed, closed, and listed again."""

    def listed(page: Any) -> list[str]:
        return ["this" if s.session_id == session_id else "other" for s in page.sessions]

    before = listed(await conn.list_sessions(cwd=os.getcwd()))
    client.updates.clear()
    await conn.load_session(cwd=os.getcwd(), session_id=session_id, mcp_servers=[])
    replayed = [u["sessionUpdate"] for u in client.updates]
    await conn.resume_session(session_id=session_id, cwd=os.getcwd())
    await conn.close_session(session_id=session_id)
    after = listed(await conn.list_sessions(cwd=os.getcwd()))
    return {"listed": before, "replayed": replayed, "afterClose": after}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("role", choices=["agent", "client"])
    parser.add_argument("--prompt", default="hello")
    parser.add_argument("--cancel", choices=["chunk", "permission"])
    parser.add_argument("--reject", action="store_true")
    parser.add_argument("--sessions", action="store_true")
    argv = sys.argv[1:] if argv is None else argv
    command = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    if args.role == "agent":
        asyncio.run(acp.run_agent(EchoAgent()))  # type: ignore[arg-type]
        return 0
    if not command:
        parser.error("the client needs the agent's command after --")
    print(json.dumps(asyncio.run(run_client(args, command))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
