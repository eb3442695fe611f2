#!/usr/bin/env python3
"""An ACP v2 agent on stdio, built on the generated `acp_v2.AgentBase`.

    python examples/echo_agent.py          # speaks ACP on stdin/stdout, logs on stderr

It speaks the package's lane (npm-sdk-2.4.0, what the official TypeScript SDK 2.4.0 speaks).
`session/prompt` is answered at once with the `messageId` of the user message it inserts, then
the turn is reported as `session/update`s: user_message, state_update running, plan_update,
agent_message_chunk × N (echoing the prompt), tool_call_update pending, state_update
requires_action while a `session/request_permission` call is pending, state_update running,
tool_call_update in_progress, tool_call_content_chunk, tool_call_update completed,
usage_update with a cost, and state_update idle with `end_turn` (`error`, with the error, if
the turn fails).

`capabilities.session: {}` promises the baseline session methods, and all are here:
`session/cancel` stops the running turn (a pending permission request included: the agent
withdraws it with `$/cancel_request`), which then ends with state_update idle `cancelled`;
`session/close` does the same, waits for those final updates, then forgets the session (closing
an unknown session succeeds); `session/list` lists the open sessions; `session/resume` replays
the session's retained history (its user and agent messages) when asked with
`replayFrom: {"type": "start"}`, then sends the current state_update, then answers. Other
methods answer -32601. A prompt containing "slow" pauses 200 ms between message chunks, so that
cancelling can be tried by hand.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))
import acp_v2 as acp  # noqa: E402

log = logging.getLogger("echo_agent")
TOOL_CALL_ID = "call_001"
SLOW_CHUNK_DELAY = 0.2
PERMISSION_OPTIONS = [
    acp.PermissionOption(option_id="allow-once", name="Allow once", kind="allow_once"),
    acp.PermissionOption(option_id="allow-always", name="Always allow", kind="allow_always"),
    acp.PermissionOption(option_id="reject-once", name="Reject", kind="reject_once"),
]


class TurnCancelled(Exception):
    """The client cancelled the turn (or answered the permission request `cancelled`)."""


@dataclass
class Session:
    id: str
    cwd: str
    turns: int = 0
    turn: Turn | None = None
    # The last state_update sent: what a resume reports as the current state.
    state: acp.SessionUpdateStateUpdate = field(
        default_factory=lambda: acp.SessionUpdateStateUpdate(state="idle")
    )
    # What a resume with `replayFrom: start` replays: each turn's user and agent message.
    history: list[acp.SessionUpdate] = field(default_factory=list)


class EchoAgent(acp.AgentBase):
    def __init__(self) -> None:
        self.sessions: dict[str, Session] = {}

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        log.info("initialize from %s (protocol %s)", params.info.name, params.protocol_version)
        return acp.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            info=acp.Implementation(name="acp-codegen-echo-agent", version="0.1.0"),
            capabilities=acp.AgentCapabilities(session=acp.SessionCapabilities()),
        )

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        session = Session(f"sess_{uuid.uuid4().hex}", params.cwd)
        self.sessions[session.id] = session
        return acp.NewSessionResponse(session_id=session.id)

    async def session_list(self, params: acp.ListSessionsRequest) -> acp.ListSessionsResponse:
        infos = [acp.SessionInfo(session_id=s.id, cwd=s.cwd) for s in self.sessions.values()]
        return acp.ListSessionsResponse(sessions=infos)

    async def session_close(self, params: acp.CloseSessionRequest) -> acp.CloseSessionResponse:
        # The cancelled turn's final updates (idle `cancelled` last) precede this answer; after
        # it nothing more is sent for the session. An unknown session closes successfully.
        session = self.sessions.pop(params.session_id, None)
        if session is not None and session.turn is not None:
            await session.turn.stop()
        return acp.CloseSessionResponse()

    async def session_resume(self, params: acp.ResumeSessionRequest) -> acp.ResumeSessionResponse:
        session = self.session(params.session_id)
        if params.cwd != session.cwd:
            reason = f"the session's working directory is {session.cwd}"
            raise acp.RpcError(-32602, "Invalid params", {"path": "$.cwd", "reason": reason})
        replay = params.replay_from
        if isinstance(replay, acp.ReplayFromStart):
            updates = list(session.history)
        elif replay is None or replay is acp.UNSET:
            updates = []
        else:
            reason = f"unsupported replay cursor {acp.encode(replay)['type']!r}"
            raise acp.RpcError(-32602, "Invalid params", {"path": "$.replayFrom", "reason": reason})
        for update in [*updates, session.state]:
            note = acp.UpdateSessionNotification(session_id=session.id, update=update)
            await self.client.session_update(note)
        return acp.ResumeSessionResponse()

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        session = self.session(params.session_id)
        if session.turn is not None and not session.turn.done:
            raise acp.RpcError(-32600, "Invalid request", "this agent runs one prompt at a time")
        session.turns += 1
        user_message_id = f"msg_user_{session.turns}"
        session.turn = Turn(self.client, session, session.turns, params.prompt, user_message_id)
        session.turn.start()  # it first runs after this answer is written: the answer comes first
        return acp.PromptResponse(message_id=user_message_id)

    async def session_cancel(self, params: acp.CancelSessionNotification) -> None:
        session = self.sessions.get(params.session_id)
        if session is not None and session.turn is not None:
            session.turn.cancel()

    def session(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            raise acp.RpcError(-32002, "Resource not found", {"sessionId": session_id})
        return session


@dataclass
class Turn:
    client: acp.ClientStub
    session: Session
    number: int
    prompt: list[acp.ContentBlock]
    user_message_id: str
    tool_call_open: bool = False
    started: bool = False
    cancelled: bool = False
    task: asyncio.Task[None] | None = None
    reply: list[str] = field(default_factory=list)  # the agent message's chunks sent so far

    @property
    def session_id(self) -> str:
        return self.session.id

    def start(self) -> None:
        self.task = asyncio.create_task(self.run())

    @property
    def done(self) -> bool:
        return self.task is not None and self.task.done()

    def cancel(self) -> None:
        """Stop the turn at its next await. A task cancelled before its first step would not
        run at all (and report nothing), so a turn that has not started yet gets a flag."""
        if self.cancelled:
            return
        self.cancelled = True
        if self.started and self.task is not None:
            self.task.cancel()

    async def stop(self) -> None:
        """Cancel the turn and wait until it has sent its final updates."""
        self.cancel()
        if self.task is not None:
            await asyncio.wait({self.task})

    async def run(self) -> None:
        self.started = True
        try:
            await self.play()
        except (asyncio.CancelledError, TurnCancelled):
            await self.finish_cancelled()
        except acp.ConnectionClosed:
            log.info("the client went away during turn %d", self.number)
        except Exception:
            log.exception("turn %d failed", self.number)
            with contextlib.suppress(acp.ConnectionClosed):
                if self.tool_call_open:
                    await self.tool_call(status="failed")
                error = acp.Error(code=acp.ErrorCode.INTERNAL_ERROR, message="Internal error")
                await self.send(
                    acp.SessionUpdateStateUpdate(state="idle", stop_reason="error", error=error)
                )
        finally:
            if self.reply:
                text = acp.ContentBlockText(text="".join(self.reply))
                message = acp.SessionUpdateAgentMessage(
                    message_id=self.agent_message_id, content=[text]
                )
                self.session.history.append(message)

    async def play(self) -> None:
        text = " ".join(b.text for b in self.prompt if isinstance(b, acp.ContentBlockText))
        user_message = acp.SessionUpdateUserMessage(
            message_id=self.user_message_id, content=self.prompt
        )
        self.session.history.append(user_message)
        await self.send(user_message)
        if self.cancelled:  # cancelled before the turn had started
            raise TurnCancelled
        await self.send(acp.SessionUpdateStateUpdate(state="running"))
        await self.send(acp.SessionUpdatePlanUpdate(plan=self.plan()))
        for index, chunk in enumerate(reply_chunks(text)):
            if index and "slow" in text:
                await asyncio.sleep(SLOW_CHUNK_DELAY)
            block = acp.ContentBlockText(text=chunk)
            await self.send(
                acp.SessionUpdateAgentMessageChunk(message_id=self.agent_message_id, content=block)
            )
            self.reply.append(chunk)
        await self.tool_call(status="pending", title="Echo tool", kind="other", raw_input=text)
        self.tool_call_open = True
        await self.send(acp.SessionUpdateStateUpdate(state="requires_action"))
        answer = await self.client.session_request_permission(
            acp.RequestPermissionRequest(
                session_id=self.session_id,
                title='Allow "Echo tool" to run?',
                subject=acp.RequestPermissionSubjectToolCall(
                    tool_call=acp.ToolCallUpdate(tool_call_id=TOOL_CALL_ID, title="Echo tool")
                ),
                options=PERMISSION_OPTIONS,
            )
        )
        if not isinstance(answer.outcome, acp.RequestPermissionOutcomeSelected):
            raise TurnCancelled  # `cancelled`, or an outcome this agent does not know
        await self.send(acp.SessionUpdateStateUpdate(state="running"))
        if answer.outcome.option_id in ("allow-once", "allow-always"):
            await self.tool_call(status="in_progress")
            item = acp.ToolCallContentContent(content=acp.ContentBlockText(text="Echoing..."))
            await self.send(
                acp.SessionUpdateToolCallContentChunk(tool_call_id=TOOL_CALL_ID, content=item)
            )
            result = acp.ToolCallContentContent(content=acp.ContentBlockText(text=f"Echo: {text}"))
            await self.tool_call(status="completed", content=[result])
        else:
            denied = acp.ContentBlockText(text="Permission was not granted.")
            await self.tool_call(
                status="failed", content=[acp.ToolCallContentContent(content=denied)]
            )
        self.tool_call_open = False
        cost = acp.Cost(amount=0.0042 * self.number, currency="USD")
        used = 1000 * self.number + len(text)
        await self.send(acp.SessionUpdateUsageUpdate(used=used, size=200_000, cost=cost))
        await self.send(acp.SessionUpdateStateUpdate(state="idle", stop_reason="end_turn"))

    async def finish_cancelled(self) -> None:
        with contextlib.suppress(acp.ConnectionClosed):
            if self.tool_call_open:
                await self.tool_call(status="cancelled")
            await self.send(acp.SessionUpdateStateUpdate(state="idle", stop_reason="cancelled"))

    @property
    def agent_message_id(self) -> str:
        return f"msg_agent_{self.number}"

    def plan(self) -> acp.PlanUpdateContentItems:
        entries = [
            acp.PlanEntry(content="Echo the prompt back", priority="high", status="in_progress"),
            acp.PlanEntry(content="Run the echo tool", priority="medium", status="pending"),
            acp.PlanEntry(content="Report usage", priority="low", status="pending"),
        ]
        return acp.PlanUpdateContentItems(plan_id=f"plan_{self.number}", entries=entries)

    async def tool_call(
        self,
        *,
        status: str,
        title: str | acp.UnsetType = acp.UNSET,
        kind: str | acp.UnsetType = acp.UNSET,
        raw_input: str | acp.UnsetType = acp.UNSET,
        content: list[acp.ToolCallContent] | acp.UnsetType = acp.UNSET,
    ) -> None:
        await self.send(
            acp.SessionUpdateToolCallUpdate(
                tool_call_id=TOOL_CALL_ID,
                status=status,
                title=title,
                kind=kind,
                raw_input=acp.UNSET if raw_input is acp.UNSET else {"text": raw_input},
                content=content,
            )
        )

    async def send(self, update: acp.SessionUpdate) -> None:
        if isinstance(update, acp.SessionUpdateStateUpdate):
            self.session.state = update
        note = acp.UpdateSessionNotification(session_id=self.session_id, update=update)
        await self.client.session_update(note)


def reply_chunks(text: str) -> list[str]:
    """At least three chunks that concatenate to `You said: <text>.`"""
    words = [word + " " for word in text.split()]
    if words:
        words[-1] = words[-1].rstrip()
    return ["You said: ", *(words or ["(nothing)"]), "."]


async def main() -> int:
    agent = EchoAgent()
    connection = await acp.connect_stdio(agent)
    await connection.wait_closed()
    for session in agent.sessions.values():
        if session.turn is not None and session.turn.task is not None:
            session.turn.task.cancel()
    return 0


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="[echo_agent] %(message)s")
    try:
        sys.exit(asyncio.run(main()))
    except KeyboardInterrupt:
        sys.exit(130)
