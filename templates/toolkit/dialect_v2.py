"""The v2 prompt lifecycle (npm-sdk-2.4.0 and later drafts): `session/prompt` is answered as soon
as the prompt is accepted, with the `messageId` of the user message it was inserted as; the turn
echoes that message, reports `running` (and `requires_action` while a permission request is
pending) and ends with `state_update` idle carrying the stop reason, or `error` with the error.
Tool calls are `tool_call_update`s from the first (with content chunks), plans `plan_update`s by
id; a cancel withdraws a pending permission request with `$/cancel_request`; `session/close`
forgets the session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from ..runtime._runtime import UNSET, UnsetType, decode, encode
from ..runtime.jsonrpc import INTERNAL_ERROR, RpcError
from .dialect import Dialect, answer_error
from .lifecycle import Outcome

if TYPE_CHECKING:
    from .agent import Agent, AgentSide
    from .session import AgentSession
    from .tool_call import ToolCallHandle
    from .turn import Turn

_IDLE: Final = {
    "end_turn": "SessionUpdateStateUpdateIdleEndTurn",
    "max_tokens": "SessionUpdateStateUpdateIdleMaxTokens",
    "max_turn_requests": "SessionUpdateStateUpdateIdleMaxTurnRequests",
    "refusal": "SessionUpdateStateUpdateIdleRefusal",
    "cancelled": "SessionUpdateStateUpdateIdleCancelled",
}
_FINAL: Final = frozenset(("completed", "failed", "cancelled"))


class V2Dialect(Dialect):
    name = "v2"
    close_forgets = True

    # -- messages ----------------------------------------------------------------------------
    def note(self, session_id: str, update: Any) -> Any:
        return self.m.UpdateSessionNotification(session_id=session_id, update=update)

    def message_replay(self, role: str, message_id: str, blocks: list[Any]) -> list[Any]:
        m = self.m
        cls = {
            "user": m.SessionUpdateUserMessage,
            "agent": m.SessionUpdateAgentMessage,
            "thought": m.SessionUpdateAgentThought,
        }[role]
        return [cls(message_id=message_id, content=blocks)]

    def plan(self, plan_id: str, entries: list[Any]) -> Any:
        items = self.m.PlanUpdateContentItems(plan_id=plan_id, entries=list(entries))
        return self.m.SessionUpdatePlanUpdate(plan=items)

    def tool_call_new(self, tool: ToolCallHandle) -> Any:
        return self.tool_call_snapshot(tool)

    def tool_call_snapshot(self, tool: ToolCallHandle) -> Any:
        m = self.m
        cancellable = tool.cancellable and not tool.done
        return m.SessionUpdateToolCallUpdate(
            tool_call_id=tool.tool_call_id,
            title=tool.title,
            kind=tool.kind,
            status=tool.status,
            content=list(tool.content) if tool.content else UNSET,
            locations=tool.locations,
            raw_input=tool.raw_input,
            raw_output=tool.raw_output,
            capabilities=self._cancellable() if cancellable else UNSET,
        )

    def tool_call_patch(self, tool: ToolCallHandle, **changes: Any) -> Any:
        final = tool.cancellable and str(changes.get("status", "")) in _FINAL
        changes["capabilities"] = None if final else UNSET  # a final call is no longer cancellable
        return super().tool_call_patch(tool, **changes)

    async def stream_tool_content(self, tool: ToolCallHandle, item: Any) -> None:
        if tool.status == "pending":
            await tool.start()
        chunk = self.m.SessionUpdateToolCallContentChunk(
            tool_call_id=tool.tool_call_id, content=item
        )
        await tool._turn.send(chunk)
        tool._turn.session.add_content(tool, item)

    def _cancellable(self) -> Any:
        return self.m.ToolCallCapabilities(cancel=self.m.ToolCallCancelCapabilities())

    def state(self, state: str, stop_reason: str | None = None, error: Any = None) -> Any:
        """A `state_update` (the one place that builds one): the class of that state and reason."""
        m = self.m
        if state == "running":
            return m.SessionUpdateStateUpdateRunning()
        if state == "requires_action":
            return m.SessionUpdateStateUpdateRequiresAction()
        if state != "idle":
            return m.SessionUpdateStateUpdateOther(other_state=state)
        if stop_reason is None:
            return m.SessionUpdateStateUpdateIdleNone()
        if stop_reason == "error":
            return m.SessionUpdateStateUpdateIdleError(error=UNSET if error is None else error)
        known = _IDLE.get(stop_reason)
        if known is not None:
            return getattr(m, known)()
        return m.SessionUpdateStateUpdateIdleOther(other_stop_reason=stop_reason)

    def error_of(self, error: Exception) -> Any:
        """The `error` of an idle `error` state (the same text v1 answers a prompt with)."""
        m = self.m
        rpc = answer_error(error)
        code = (
            decode(m.ErrorCode, rpc.code)
            if rpc.code != INTERNAL_ERROR
            else m.ErrorCode.INTERNAL_ERROR
        )
        return m.Error(code=code, message=rpc.message)

    # -- the turn ------------------------------------------------------------------------------
    async def set_state(
        self, turn: Turn, state: str, reason: str | None = None, error: Any = None
    ) -> None:
        session = turn.session
        session.state = (state, reason, error)
        await session.send(self.state(state, reason, error))

    async def report_state(self, session: AgentSession) -> None:
        await session.send(self.state(*session.state))

    async def open_turn(self, turn: Turn) -> None:
        session = turn.session
        await session.send(
            self.m.SessionUpdateUserMessage(message_id=turn.user_message_id, content=turn.prompt)
        )
        if not turn.cancelled:
            await self.set_state(turn, "running")

    async def close_turn(self, turn: Turn, outcome: Outcome[Any]) -> None:
        ending = self.ending(turn, outcome)
        if ending is None:  # the connection is gone: nothing can be sent
            turn.session.state = ("idle", None, None)
            return
        reason, tool_status, error = ending
        turn.stop_reason = None if error is not None else reason
        turn.error = error
        error_value = None if error is None else self.error_of(error)
        try:
            for tool in turn.tool_calls:
                await tool.close(tool_status)
        finally:
            await turn.session.settle(("idle", reason, error_value))
            await self.set_state(turn, "idle", reason, error_value)

    async def serve_prompt(self, side: AgentSide, turn: Turn) -> Any:
        # The turn's first step runs after this answer is written: the answer comes first.
        turn.session.foreground.start(turn)
        return self.m.PromptResponse(message_id=turn.user_message_id)

    async def ask_permission(
        self,
        turn: Turn,
        tool: ToolCallHandle,
        title: str,
        description: str | UnsetType,
        options: list[Any],
    ) -> Any:
        m = self.m
        session = turn.session
        turn.asking += 1
        if turn.asking == 1:
            await self.set_state(turn, "requires_action")
        subject = m.ToolCallUpdate(tool_call_id=tool.tool_call_id, title=tool.title)
        request = m.RequestPermissionRequest(
            session_id=session.id,
            title=title,
            description=description,
            subject=m.RequestPermissionSubjectToolCall(tool_call=subject),
            options=options,
        )
        try:  # a cancel of the turn cancels this call: the stub withdraws it ($/cancel_request)
            answer = await session.client.session_request_permission(request)
        finally:
            turn.asking -= 1
        picked = self.picked(turn, answer, options)
        if turn.asking == 0:
            await self.set_state(turn, "running")
        return picked

    # -- the connection ------------------------------------------------------------------------
    def initialize_response(self, agent: Agent, side: AgentSide) -> Any:
        m = self.m
        prompt = m.PromptCapabilities(
            image=m.PromptImageCapabilities() if agent.image_prompts else UNSET,
            audio=m.PromptAudioCapabilities() if agent.audio_prompts else UNSET,
            embedded_context=(
                m.PromptEmbeddedContextCapabilities() if agent.embedded_context else UNSET
            ),
        )
        transports = agent.mcp_transports
        over_acp = "acp" in transports and hasattr(m, "McpAcpCapabilities")  # unstable v2
        mcp = m.McpCapabilities(
            stdio=m.McpStdioCapabilities() if "stdio" in transports else UNSET,
            http=m.McpHttpCapabilities() if "http" in transports else UNSET,
            **({"acp": m.McpAcpCapabilities()} if over_acp else {}),
        )
        session = m.SessionCapabilities(
            prompt=prompt if encode(prompt) else UNSET,
            mcp=mcp if encode(mcp) else UNSET,
            delete=m.SessionDeleteCapabilities(),
            additional_directories=m.SessionAdditionalDirectoriesCapabilities(),
        )
        info = m.Implementation(
            name=agent.name,
            version=agent.version,
            title=UNSET if agent.title is None else agent.title,
        )
        capabilities = agent.advertise(side.lane, m.AgentCapabilities(session=session))
        return m.InitializeResponse(
            protocol_version=self.lane.version, info=info, capabilities=capabilities
        )

    def prompt_held_answer(self) -> Any:
        raise RpcError.request_cancelled()

    # -- client side -------------------------------------------------------------------------
    def initialize_request(self, name: str, version: str, offers: frozenset[str]) -> Any:
        m = self.m
        return m.InitializeRequest(
            protocol_version=self.lane.version,
            info=m.Implementation(name=name, version=version),
            capabilities=m.ClientCapabilities(),
        )

    def cancel_note(self, session_id: str) -> Any:
        return self.m.CancelSessionNotification(session_id=session_id)

    def resume_request(self, session_id: str, cwd: str, servers: list[Any], replay: bool) -> Any:
        m = self.m
        return m.ResumeSessionRequest(
            session_id=session_id,
            cwd=cwd,
            mcp_servers=servers,
            replay_from=m.ReplayFromStart() if replay else UNSET,
        )

    def permission_title(self, request: Any) -> str:
        return str(request.title)

    def state_of(self, update: Any) -> tuple[str, str | None, Any] | None:
        m = self.m
        if not isinstance(update, m.SessionUpdateStateUpdate):
            return None
        if isinstance(update, m.SessionUpdateStateUpdateOther):
            return update.other_state, None, None
        state = update.TAGS["state"]
        if isinstance(update, m.SessionUpdateStateUpdateIdleOther):
            return state, update.other_stop_reason, None
        if isinstance(update, m.SessionUpdateStateUpdateIdleError):
            return state, "error", update.error if isinstance(update.error, m.Error) else None
        return state, update.TAGS.get("stopReason"), None
