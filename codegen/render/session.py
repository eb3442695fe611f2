"""The session model's context (`session_state.py`): which `SessionUpdate` kinds follow which
rule of the protocol. Part of the lowering (`lower.py` calls `session_state`)."""

from __future__ import annotations

from collections.abc import Mapping

from ..diagnostics import InputError
from ..ir import Model, TaggedUnion, UnionLevel, Variant, is_nested, union_levels
from ..naming import Names
from .context import SessionStateContext


def session_state(
    model: Model, names: Names, banner: str, rules: Mapping[str, tuple[str, tuple[str, ...]]]
) -> SessionStateContext:
    union = model.index.get(SESSION_UPDATE)
    if not isinstance(union, TaggedUnion):
        raise InputError(f"{SESSION_UPDATE} is not a tagged union: no session model for it")
    kinds = tuple((v.tag, names.variants[(union.name, v.tag)]) for v in union.variants)
    usable = {
        v.tag: v
        for v in union.variants
        if v.tag in rules and set(rules[v.tag][1]) <= _always_present(model, v)
    }
    leaves: dict[str, list[str]] = {}  # a nested kind's classes, by its tag
    for level in union_levels(model, union)[1:]:
        leaves.setdefault(level.tags[0][1], []).extend(_own_classes(model, names, level))
    tool_call = usable.get("tool_call_update")
    usage = usable.get("usage_update")
    return SessionStateContext(
        banner,
        tag_wire=union.tag,
        kinds=kinds,
        roles=tuple(
            (tag, MESSAGE_ROLES[tag]) for tag, _ in kinds if tag in usable and tag in MESSAGE_ROLES
        ),
        rules=tuple(
            (leaf, rules[tag][0])
            for tag, cls in kinds
            if tag in usable
            for leaf in leaves.get(tag, (cls,))
        ),
        tool_call_collections=tuple(
            f.wire
            for f in (tool_call.fields if tool_call else ())
            if model.look_through(f.shape).kind == "list"
        ),
        usage_fields=tuple(f.wire for f in (usage.fields if usage else ()) if f.wire != "_meta"),
    )


def _always_present(model: Model, v: Variant) -> set[str]:
    """The wire keys every value of a variant has: its required fields, and the tag of
    the union nested in it unless that union may lack it."""
    keys = {f.wire for f in v.fields if f.required}
    inner = model.index.get(v.nested or "")
    if isinstance(inner, TaggedUnion) and inner.fallback is None:
        keys.add(inner.tag)
    return keys


def _own_classes(model: Model, names: Names, level: UnionLevel) -> list[str]:
    """The classes of one level (not those of the levels nested in it)."""
    key, u = level.key, level.union
    out = [names.variants[(key, v.tag)] for v in u.variants if not is_nested(model, v)]
    out += [names.open_variants[key]] if u.open is not None else []
    out += [names.fallback_variants[key]] if u.fallback is not None else []
    return out


# The session model (`session_state.py`): the rule each `session/update` kind follows is
# protocol semantics (upsert, chunk, patch, replace), so it is written here, keyed by tag, as
# (the SessionState method, the wire fields it reads). A rule is used only for a variant that
# has those fields as required ones, so a draft or v1 lane of another shape gets no wrong
# rule; a kind without a usable rule is kept raw in `unknown`, like an unknown kind.
SESSION_UPDATE = "SessionUpdate"
SESSION_RULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "user_message": ("_message_upsert", ("messageId",)),
    "agent_message": ("_message_upsert", ("messageId",)),
    "agent_thought": ("_message_upsert", ("messageId",)),
    "user_message_chunk": ("_message_chunk", ("messageId", "content")),
    "agent_message_chunk": ("_message_chunk", ("messageId", "content")),
    "agent_thought_chunk": ("_message_chunk", ("messageId", "content")),
    "tool_call_update": ("_tool_call_update", ("toolCallId",)),
    "tool_call_content_chunk": ("_tool_call_chunk", ("toolCallId", "content")),
    "plan_update": ("_plan_update", ("plan",)),
    "available_commands_update": ("_available_commands_update", ("availableCommands",)),
    "config_option_update": ("_config_option_update", ("configOptions",)),
    "session_info_update": ("_session_info_update", ()),
    "usage_update": ("_usage_update", ("used", "size")),
    "state_update": ("_state_update", ("state",)),
    "terminal_update": ("_terminal_update", ("terminalId",)),
    "terminal_output_chunk": ("_terminal_output_chunk", ("terminalId", "data")),
    "notice": ("_notice", ("severity", "title")),
    "compaction_update": ("_compaction_update", ("compactionId", "status")),
    "compaction_summary_chunk": ("_compaction_chunk", ("compactionId", "content")),
    # Subagent sessions (npm-sdk-2.4.0's unstable schema): a child session announced and
    # patched on its parent, inter-session messages in a transcript, and removed plans.
    "subagent_update": ("_subagent_update", ("sessionId",)),
    "session_message": ("_session_message", ("messageId",)),
    "session_message_chunk": ("_session_message_chunk", ("messageId", "content")),
    "plan_removed": ("_plan_removed", ("planId",)),
}
# v1's session model (`session_state_v1.py.j2`, v1's `session_state.py`): chunks without
# message ids, `tool_call` then `tool_call_update` (null keeps a field), one plan, modes,
# notices and compactions.
SESSION_TEMPLATE_V1 = "session_state_v1.py.j2"
SESSION_RULES_V1: dict[str, tuple[str, tuple[str, ...]]] = {
    "user_message_chunk": ("_message_chunk", ("content",)),
    "agent_message_chunk": ("_message_chunk", ("content",)),
    "agent_thought_chunk": ("_message_chunk", ("content",)),
    "tool_call": ("_tool_call", ("toolCallId",)),
    "tool_call_update": ("_tool_call_update", ("toolCallId",)),
    "plan": ("_plan_update", ("entries",)),
    "available_commands_update": ("_available_commands_update", ("availableCommands",)),
    "current_mode_update": ("_current_mode_update", ("currentModeId",)),
    "config_option_update": ("_config_option_update", ("configOptions",)),
    "session_info_update": ("_session_info_update", ()),
    "usage_update": ("_usage_update", ("used", "size")),
    "notice": ("_notice", ("severity", "title")),
    "compaction_update": ("_compaction_update", ("compactionId", "status")),
    "compaction_summary_chunk": ("_compaction_chunk", ("compactionId", "content")),
}
# The role of the message that a message update or chunk creates.
MESSAGE_ROLES = {
    "user_message": "user",
    "user_message_chunk": "user",
    "agent_message": "agent",
    "agent_message_chunk": "agent",
    "agent_thought": "thought",
    "agent_thought_chunk": "thought",
    "session_message": "session",
    "session_message_chunk": "session",
}
