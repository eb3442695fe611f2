"""The v1 prompt lifecycle (the protocol most deployed editors speak): `session/prompt` is
answered when the turn ends, with its stop reason (a failed turn with an error: v1 has no
`error` stop reason), after every update of the turn. There are no state updates and no echo of
the user message; tool calls begin with `tool_call` and have no content chunks (an update
carries the whole content), a plan is one list the client replaces; a cancel stops the turn at
once without withdrawing its permission request (the cancelling client answers it `cancelled`
itself), and leaves open tool calls for the client to mark; `session/close` leaves the session
listed and loadable.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Final

from ..runtime._runtime import UNSET, UnsetType
from ..runtime.jsonrpc import RpcError
from .dialect import Dialect, answer_error, wait_shielded
from .lifecycle import Outcome

if TYPE_CHECKING:
    from .agent import Agent, AgentSide
    from .tool_call import ToolCallHandle
    from .turn import Turn

# v1 has neither of v2's `cancelled` and `paused` tool call statuses: what a replay of a
# session that began on v2 reports instead.
_NEAREST_STATUS: Final = {"cancelled": "failed", "paused": "in_progress"}


class V1Dialect(Dialect):
    name = "v1"

    # -- messages ----------------------------------------------------------------------------
    def note(self, session_id: str, update: Any) -> Any:
        return self.m.SessionNotification(session_id=session_id, update=update)

    def message_replay(self, role: str, message_id: str, blocks: list[Any]) -> list[Any]:
        return [self.chunk(role, message_id, block) for block in blocks]

    def plan(self, plan_id: str, entries: list[Any]) -> Any:
        known = self.lane.values.get("PlanEntryStatus", frozenset())
        entries = [
            e if str(e.status) in known else self.m.PlanEntry(
                content=e.content, priority=e.priority, status="completed", meta=e.meta
            )
            for e in entries
        ]  # fmt: skip
        return self.m.SessionUpdatePlan(entries=entries)

    def status(self, status: str) -> str:
        return _NEAREST_STATUS.get(status, status)

    def tool_call_new(self, tool: ToolCallHandle) -> Any:
        return self.tool_call_snapshot(tool)

    def tool_call_snapshot(self, tool: ToolCallHandle) -> Any:
        kind = tool.kind if isinstance(tool.kind, str) else "other"
        title = tool.title if isinstance(tool.title, str) else tool.tool_call_id
        locations = tool.locations if isinstance(tool.locations, list) else UNSET
        return self.m.SessionUpdateToolCall(
            tool_call_id=tool.tool_call_id,
            title=title,
            kind=kind if kind in self.lane.values.get("ToolKind", ()) else "other",
            status=self.status(tool.status),
            content=list(tool.content) if tool.content else UNSET,
            locations=locations,
            raw_input=tool.raw_input,
            raw_output=tool.raw_output,
        )

    async def stream_tool_content(self, tool: ToolCallHandle, item: Any) -> None:
        status: Any = "in_progress" if tool.status == "pending" else UNSET
        await tool.update(status=status, content=[*tool.content, item])

    # -- the turn ------------------------------------------------------------------------------
    async def close_turn(self, turn: Turn, outcome: Outcome[Any]) -> None:
        ending = self.ending(turn, outcome)
        if ending is None:  # the client went away: no answer can reach it
            return
        reason, tool_status, error = ending
        if error is None:
            turn.stop_reason = reason
            turn.session.state = ("idle", reason, None)  # what a v2 connection's resume reports
        else:  # (after a cancel, the client marks the tool calls still open cancelled)
            turn.error = error
            for tool in turn.tool_calls:
                await tool.close(tool_status)
        await turn.session.settle(turn.session.state)  # written before the prompt's answer

    async def open_turn(self, turn: Turn) -> None:
        if turn.after is not None:  # a held prompt: the previous turn's answer comes first
            await asyncio.shield(turn.after)  # a cancel of this turn leaves it alone

    async def serve_prompt(self, side: AgentSide, turn: Turn) -> Any:
        session = turn.session
        # The answer ends the turn for the client: a prompt held behind this one begins its
        # turn once this answer is written (it is, in the step this coroutine returns in).
        answered = asyncio.get_running_loop().create_future()
        turn.after, session.answering = session.answering, answered
        try:
            session.foreground.start(turn)
            if not session.active:  # closed while this prompt was held
                session.foreground.cancel()
            await session.foreground.wait_or_cancel()
            if turn.error is not None:
                raise answer_error(turn.error)
            if turn.stop_reason is None:  # the client went away: no answer can reach it
                raise RpcError.request_cancelled()
            return self.m.PromptResponse(stop_reason=turn.stop_reason)
        finally:
            if not answered.done():
                answered.set_result(None)

    async def ask_permission(
        self,
        turn: Turn,
        tool: ToolCallHandle,
        title: str,
        description: str | UnsetType,
        options: list[Any],
    ) -> Any:
        m = self.m
        subject = m.ToolCallUpdate(tool_call_id=tool.tool_call_id, title=tool.title)
        request = m.RequestPermissionRequest(
            session_id=turn.session.id, tool_call=subject, options=options
        )
        # Shielded: a cancel ends the turn at once, but the request stays open until the
        # client answers it `cancelled`, as v1 requires of a client that cancels (no
        # `$/cancel_request`, which v1 clients need not know).
        answer = await wait_shielded(turn.session.client.session_request_permission(request))
        return self.picked(turn, answer, options)

    # -- the connection ------------------------------------------------------------------------
    def initialize_response(self, agent: Agent, side: AgentSide) -> Any:
        m = self.m
        capabilities = m.AgentCapabilities(
            load_session=True,
            prompt_capabilities=m.PromptCapabilities(
                image=agent.image_prompts,
                audio=agent.audio_prompts,
                embedded_context=agent.embedded_context,
            ),
            mcp_capabilities=m.McpCapabilities(
                http="http" in agent.mcp_transports, sse="sse" in agent.mcp_transports
            ),
            session_capabilities=m.SessionCapabilities(
                list_=m.SessionListCapabilities(),
                delete=m.SessionDeleteCapabilities(),
                additional_directories=m.SessionAdditionalDirectoriesCapabilities(),
                resume=m.SessionResumeCapabilities(),
                close=m.SessionCloseCapabilities(),
            ),
        )
        info = m.Implementation(
            name=agent.name,
            version=agent.version,
            title=UNSET if agent.title is None else agent.title,
        )
        return m.InitializeResponse(
            protocol_version=self.lane.version,
            agent_capabilities=agent.advertise(side.lane, capabilities),
            auth_methods=[],
            agent_info=info,
        )

    def client_offers(self, params: Any) -> frozenset[str]:
        advertised = params.client_capabilities
        if not isinstance(advertised, self.m.ClientCapabilities):
            return frozenset()
        offers = set()
        if advertised.terminal is True:
            offers.add("terminal")
        fs = advertised.fs
        if isinstance(fs, self.m.FileSystemCapabilities):
            if fs.read_text_file is True:
                offers.add("fs.readTextFile")
            if fs.write_text_file is True:
                offers.add("fs.writeTextFile")
        return frozenset(offers)

    def prompt_held_answer(self) -> Any:
        return self.m.PromptResponse(stop_reason="cancelled")

    # -- client side -------------------------------------------------------------------------
    def initialize_request(self, name: str, version: str, offers: frozenset[str]) -> Any:
        m = self.m
        return m.InitializeRequest(
            protocol_version=self.lane.version,
            client_capabilities=self.client_capabilities(offers),
            client_info=m.Implementation(name=name, version=version),
        )

    def client_capabilities(self, offers: frozenset[str]) -> Any:
        m = self.m
        fs = m.FileSystemCapabilities(
            read_text_file="fs.readTextFile" in offers,
            write_text_file="fs.writeTextFile" in offers,
        )
        return m.ClientCapabilities(fs=fs, terminal="terminal" in offers)

    def cancel_note(self, session_id: str) -> Any:
        return self.m.CancelNotification(session_id=session_id)

    def resume_request(self, session_id: str, cwd: str, servers: list[Any], replay: bool) -> Any:
        return self.m.ResumeSessionRequest(session_id=session_id, cwd=cwd, mcp_servers=servers)

    def permission_title(self, request: Any) -> str:
        title = request.tool_call.title
        shown = title if isinstance(title, str) else request.tool_call.tool_call_id
        return f"Allow {shown!r}?"
