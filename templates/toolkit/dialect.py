"""How the toolkit speaks one lane: the `Dialect` of a protocol version builds the lane's
messages for what the toolkit does (a chunk, a plan, a tool call, a permission request, the
end of a turn) and decides what differs between the prompt lifecycles — v2's
(`dialect_v2.py`: the prompt answered at once, `state_update`s, the turn ending in an idle
update) and v1's (`dialect_v1.py`: the answer carries the stop reason, tool calls begin with
`tool_call`, one plan per session).

What both lifecycles share is here; `dialect_for(lane)` gives a lane's dialect. A dialect holds
no state of its own beyond its lane: the turn, the session and the connection own theirs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from ..runtime._runtime import UNSET, UnsetType
from ..runtime.jsonrpc import INTERNAL_ERROR, RpcError
from .lane import Lane, NotSupported
from .lifecycle import Cancelled, Ended, Failed, Outcome, TurnCancelled, describe_failure

if TYPE_CHECKING:
    from .agent import Agent, AgentSide
    from .session import AgentSession
    from .tool_call import ToolCallHandle
    from .turn import Turn

_log: Final = logging.getLogger(__name__.rpartition(".")[0] + ".agent")


def invalid(path: str, reason: str) -> RpcError:
    """-32602 with `data` saying where and why."""
    return RpcError(-32602, "Invalid params", {"path": path, "reason": reason})


def not_found(session_id: str) -> RpcError:
    """-32002 for a session this agent does not have (or not for this connection)."""
    return RpcError(-32002, "Resource not found", {"sessionId": session_id})


def answer_error(error: BaseException) -> RpcError:
    """What a failed turn reports to the client, on every protocol version alike: an RpcError
    as raised, anything else -32603 "Internal error" without the exception's text (that stays
    in the agent's log)."""
    if isinstance(error, RpcError):
        return error
    return RpcError(INTERNAL_ERROR, "Internal error")


class Dialect:
    """What every lifecycle shares; a subclass per lifecycle supplies the rest."""

    name: str = ""
    close_forgets = False
    """`session/close` forgets the session (v2) rather than leaving it listed and loadable."""

    def __init__(self, lane: Lane) -> None:
        self.lane = lane
        self.m: Any = lane.models

    # -- agent side: messages ----------------------------------------------------------------
    def note(self, session_id: str, update: Any) -> Any:
        """The `session/update` params of `update`."""
        raise NotImplementedError

    def chunk(self, role: str, message_id: str, block: Any) -> Any:
        """One block streamed into a message (`agent`, `thought` or `user`)."""
        m = self.m
        cls = {
            "agent": m.SessionUpdateAgentMessageChunk,
            "thought": m.SessionUpdateAgentThoughtChunk,
            "user": m.SessionUpdateUserMessageChunk,
        }[role]
        return cls(message_id=message_id, content=block)

    def message_replay(self, role: str, message_id: str, blocks: list[Any]) -> list[Any]:
        """A whole message, as a replay sends it."""
        raise NotImplementedError

    def plan(self, plan_id: str, entries: list[Any]) -> Any:
        raise NotImplementedError

    def tool_call_new(self, tool: ToolCallHandle) -> Any:
        """The update that reports a new tool call."""
        raise NotImplementedError

    def tool_call_snapshot(self, tool: ToolCallHandle) -> Any:
        """Everything reported of a tool call, as a replay sends it."""
        raise NotImplementedError

    def tool_call_patch(self, tool: ToolCallHandle, **changes: Any) -> Any:
        """A `tool_call_update` with the fields given (UNSET: unchanged)."""
        return self.m.SessionUpdateToolCallUpdate(tool_call_id=tool.tool_call_id, **changes)

    def tool_call_close(self, tool: ToolCallHandle, status: str) -> Any:
        """The update that gives a tool call the final status the turn's end decided."""
        return self.tool_call_patch(tool, status=status)

    async def stream_tool_content(self, tool: ToolCallHandle, item: Any) -> None:
        raise NotImplementedError

    def status(self, status: str) -> str:
        """A tool call status as this lane has it (one it lacks: the nearest it has)."""
        return status

    # -- agent side: the turn's lifecycle -----------------------------------------------------
    async def report_state(self, session: AgentSession) -> None:
        """Send the session's current state again, where the protocol reports states (v2)."""

    async def open_turn(self, turn: Turn) -> None:
        """What the turn reports before `prompt()` runs."""

    async def close_turn(self, turn: Turn, outcome: Outcome[Any]) -> None:
        """End the turn: its final updates, and what the prompt's answer needs."""
        raise NotImplementedError

    async def serve_prompt(self, side: AgentSide, turn: Turn) -> Any:
        """Start `turn` (admitted already) and give the prompt's answer."""
        raise NotImplementedError

    async def ask_permission(
        self,
        turn: Turn,
        tool: ToolCallHandle,
        title: str,
        description: str | UnsetType,
        options: list[Any],
    ) -> Any:
        """Send the permission request; the option picked, or None (a refusal). Raises
        TurnCancelled for a `cancelled` answer or when the turn is cancelled meanwhile."""
        raise NotImplementedError

    def picked(self, turn: Turn, answer: Any, options: Sequence[Any]) -> Any:
        """The offered option an answer names, or None; TurnCancelled for `cancelled`."""
        outcome = answer.outcome
        if isinstance(outcome, self.m.RequestPermissionOutcomeCancelled) or turn.cancelled:
            raise TurnCancelled
        if isinstance(outcome, self.m.RequestPermissionOutcomeSelected):
            return next((o for o in options if o.option_id == outcome.option_id), None)
        return None

    def ending(self, turn: Turn, outcome: Outcome[Any]) -> tuple[str, str, Exception | None] | None:
        """The stop reason, the status for tool calls left open, and the error of a turn's
        outcome (None when the client went away); logs what needs saying."""
        if isinstance(outcome, Ended):
            reason = "end_turn" if outcome.value is None else str(outcome.value)
            allowed = self.lane.values.get("StopReason", frozenset())
            custom = reason.startswith("_") and self.lane.features.custom_stop_reasons
            if reason in allowed or custom:
                unfinished = [t.tool_call_id for t in turn.tool_calls if not t.done]
                if unfinished:
                    _log.warning("the turn ended with tool calls still open: %s", unfinished)
                return reason, self.status("cancelled" if reason == "cancelled" else "failed"), None
            if reason.startswith("_"):  # a custom one, where the protocol has none
                outcome = Failed(NotSupported(f"a custom stop reason ({reason!r})", self.lane))
            else:
                known = ", ".join(sorted(allowed))
                why = f"prompt() returned {reason!r}, not a stop reason of protocol version"
                outcome = Failed(ValueError(f"{why} {self.lane.version} ({known})"))
        if isinstance(outcome, Cancelled):
            return "cancelled", self.status("cancelled"), None
        if isinstance(outcome, Failed):
            text, traceback = describe_failure(outcome.error)
            exc_info = outcome.error if traceback else None
            _log.error("turn of session %s failed: %s", turn.session.id, text, exc_info=exc_info)
            return "error", "failed", outcome.error
        _log.info("the client went away during a turn of session %s", turn.session.id)
        return None

    # -- agent side: the connection ------------------------------------------------------------
    def initialize_response(self, agent: Agent, side: AgentSide) -> Any:
        raise NotImplementedError

    def client_offers(self, params: Any) -> frozenset[str]:
        """What of the client's own methods an `initialize` request advertises
        (`fs.readTextFile`, `fs.writeTextFile`, `terminal`)."""
        return frozenset()

    def prompt_held_answer(self) -> Any:
        """The answer to a prompt held while another turn ran, cancelled before it began."""
        raise RpcError.request_cancelled()

    # -- client side -------------------------------------------------------------------------
    def initialize_request(self, name: str, version: str, offers: frozenset[str]) -> Any:
        """The `initialize` params of a client named `name` offering `offers`."""
        raise NotImplementedError

    def cancel_note(self, session_id: str) -> Any:
        """The `session/cancel` params."""
        raise NotImplementedError

    def resume_request(self, session_id: str, cwd: str, servers: list[Any], replay: bool) -> Any:
        raise NotImplementedError

    def permission_title(self, request: Any) -> str:
        """What a permission request asks, for a person."""
        raise NotImplementedError

    def state_of(self, update: Any) -> tuple[str, str | None, Any] | None:
        """A `state_update`'s state, stop reason and error (None for other updates, and on a
        lane without state updates)."""
        return None


async def wait_shielded(request: Any) -> Any:
    """Await a call the turn may stop waiting for without withdrawing it: a cancel of the
    turn stops the wait at once, and the call's late outcome is dropped quietly."""
    pending = asyncio.ensure_future(request)
    pending.add_done_callback(_retrieve)
    return await asyncio.shield(pending)


def _retrieve(request: asyncio.Future[Any]) -> None:
    if not request.cancelled():
        request.exception()


def listed(items: Any) -> list[Any]:
    """A list field that may be omitted or null, as a list."""
    return [] if items is None or items is UNSET else list(items)


@cache
def dialect_for(lane: Lane) -> Dialect:
    """The dialect the toolkit speaks `lane` in."""
    if lane.dialect == "v2":
        from .dialect_v2 import V2Dialect

        return V2Dialect(lane)
    from .dialect_v1 import V1Dialect

    return V1Dialect(lane)
