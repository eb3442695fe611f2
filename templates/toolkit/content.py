"""Content as the toolkit's helpers take it — text, a content block, tool call content — made
into the classes of the lane a connection speaks (a block built with another lane's class is
re-decoded from its JSON), and streamed text merged back into whole blocks for a replay."""

from __future__ import annotations

import typing
from collections.abc import Sequence
from typing import Any, TypeAlias

from ..runtime._runtime import UNSET, encode
from ..vocab import ContentBlock, ToolCallContent
from .lane import Lane

ToolContent: TypeAlias = str | ContentBlock | ToolCallContent
"""Tool call content: text, a content block, or a `ToolCallContent` item as is."""
Content: TypeAlias = str | ContentBlock
"""Message content: text, or a content block."""

# The tags of content blocks, which tell them from tool call content once encoded.
_BLOCK_TAGS = frozenset(("text", "image", "audio", "resource_link", "resource"))


def block_classes(lane: Lane) -> tuple[type, ...]:
    """The classes of the lane's ContentBlock union."""
    return typing.get_args(lane.models.ContentBlock)


def text_block(lane: Lane, content: Content, *, where: str = "content") -> Any:
    """Text as the lane's text block; a content block of the lane as is (of another lane:
    converted, or ValueError)."""
    if isinstance(content, str):
        return lane.models.ContentBlockText(text=content)
    if lane.owns(content) and isinstance(content, block_classes(lane)):
        return content
    return lane.adopt(lane.models.ContentBlock, content, where=where)


def tool_content(lane: Lane, content: ToolContent, *, where: str = "content") -> Any:
    """Text or a content block wrapped as the lane's tool call content; tool call content as
    is (of another lane: converted)."""
    m = lane.models
    if isinstance(content, str):
        return m.ToolCallContentContent(content=m.ContentBlockText(text=content))
    if lane.owns(content):
        if isinstance(content, block_classes(lane)):
            return m.ToolCallContentContent(content=content)
        return content
    try:
        encoded = encode(content)
    except TypeError as exc:
        raise ValueError(f"{where}: {exc}") from None
    if isinstance(encoded, dict) and encoded.get("type") in _BLOCK_TAGS:
        return m.ToolCallContentContent(content=lane.adopt(m.ContentBlock, content, where=where))
    return lane.adopt(m.ToolCallContent, content, where=where)


def content_list(
    lane: Lane, content: ToolContent | Sequence[ToolContent] | None, *, where: str = "content"
) -> list[Any]:
    """One item or several as a list of the lane's tool call content (None: none)."""
    if content is None:
        return []
    if isinstance(content, str) or not isinstance(content, Sequence):
        return [tool_content(lane, content, where=where)]
    return [tool_content(lane, item, where=f"{where}[{i}]") for i, item in enumerate(content)]


def merge_text(lane: Lane, blocks: Sequence[Any]) -> list[Any]:
    """The blocks with each run of plain text blocks (no annotations, `_meta` or extra keys)
    joined into one: how a streamed message is replayed whole."""
    text_class = lane.models.ContentBlockText
    merged: list[Any] = []
    for block in blocks:
        block = text_block(lane, block)
        last: Any = merged[-1] if merged else None
        if _plain(block, text_class) and _plain(last, text_class):
            merged[-1] = text_class(text=last.text + block.text)
        else:
            merged.append(block)
    return merged


def _plain(block: Any, text_class: type) -> bool:
    return (
        isinstance(block, text_class)
        and getattr(block, "annotations", UNSET) is UNSET
        and getattr(block, "meta", UNSET) is UNSET
        and not getattr(block, "extra", None)
    )


def text_of(blocks: Sequence[Any]) -> str:
    """The text of the text blocks among `blocks`, one block per line."""
    return "\n".join(b.text for b in blocks if type(b).__name__ == "ContentBlockText")
