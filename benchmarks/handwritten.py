"""A hand-written decoder for the end-to-end stream's messages: `session/update` params whose
update is an `agent_message_chunk` with a text block, written the way a careful person would
write it for these three types alone, with the generated decoder's rules (required fields and
their JSON types, the tag checked, `messageId` a string, `_meta` an object or null and dropped
when invalid, `annotations` likewise, unknown keys kept in `extra`, omitted stays omitted).

`run.py` compares `acp_v2.decode(UpdateSessionNotification, params)` with `decode(params)`
on the same parsed stream: the cost of the generated code's generality.
"""

from __future__ import annotations

from typing import Any

OMITTED: Any = object()


class BadMessage(ValueError):
    pass


class TextBlock:
    __slots__ = ("text", "annotations", "meta", "extra")

    def __init__(self, text: str, annotations: Any, meta: Any, extra: dict[str, Any]) -> None:
        self.text = text
        self.annotations = annotations
        self.meta = meta
        self.extra = extra


class AgentMessageChunk:
    __slots__ = ("message_id", "content", "meta", "extra")

    def __init__(
        self, message_id: str, content: TextBlock, meta: Any, extra: dict[str, Any]
    ) -> None:
        self.message_id = message_id
        self.content = content
        self.meta = meta
        self.extra = extra


class SessionUpdateParams:
    __slots__ = ("session_id", "update", "meta", "extra")

    def __init__(
        self, session_id: str, update: AgentMessageChunk, meta: Any, extra: dict[str, Any]
    ) -> None:
        self.session_id = session_id
        self.update = update
        self.meta = meta
        self.extra = extra


_NO_EXTRA: dict[str, Any] = {}
_TEXT_KEYS = frozenset(("type", "text", "annotations", "_meta"))
_CHUNK_KEYS = frozenset(("sessionUpdate", "messageId", "content", "_meta"))
_PARAMS_KEYS = frozenset(("sessionId", "update", "_meta"))


def _extra(data: dict[str, Any], known: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in known}


def _meta(data: dict[str, Any]) -> Any:
    meta = data.get("_meta", OMITTED)
    if meta is OMITTED or meta is None or type(meta) is dict:
        return meta
    return OMITTED  # invalid: dropped, as the schema's default-on-error says


def _text_block(data: Any) -> TextBlock:
    if type(data) is not dict or data.get("type") != "text":
        raise BadMessage("content: expected a text block")
    text = data.get("text")
    if type(text) is not str:
        raise BadMessage("content.text: expected a string")
    annotations = data.get("annotations", OMITTED)
    if annotations is not OMITTED and annotations is not None and type(annotations) is not dict:
        annotations = OMITTED
    known = 2 + (annotations is not OMITTED) + ("_meta" in data)
    extra = _extra(data, _TEXT_KEYS) if len(data) > known else _NO_EXTRA
    return TextBlock(text, annotations, _meta(data), extra)


def _chunk(data: Any) -> AgentMessageChunk:
    if type(data) is not dict or data.get("sessionUpdate") != "agent_message_chunk":
        raise BadMessage("update: expected an agent_message_chunk")
    message_id = data.get("messageId")
    if type(message_id) is not str:
        raise BadMessage("update.messageId: expected a string")
    content = _text_block(data.get("content"))
    extra = _extra(data, _CHUNK_KEYS) if len(data) > 3 + ("_meta" in data) else _NO_EXTRA
    return AgentMessageChunk(message_id, content, _meta(data), extra)


def decode(data: Any) -> SessionUpdateParams:
    if type(data) is not dict:
        raise BadMessage("params: expected an object")
    session_id = data.get("sessionId")
    if type(session_id) is not str:
        raise BadMessage("sessionId: expected a string")
    update = _chunk(data.get("update"))
    extra = _extra(data, _PARAMS_KEYS) if len(data) > 2 + ("_meta" in data) else _NO_EXTRA
    return SessionUpdateParams(session_id, update, _meta(data), extra)


def chunk_params(index: int) -> dict[str, Any]:
    """The params of the e2e stream's chunk `index` (as `e2e_ours.py` sends them)."""
    return {
        "sessionId": "sess_bench",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "msg_bench",
            "content": {"type": "text", "text": f"word{index % 100} "},
        },
    }
