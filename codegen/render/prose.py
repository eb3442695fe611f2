"""Our own prose in the generated docstrings: paragraphs wrapped to one width."""

from __future__ import annotations

NOTE_WIDTH = 88  # our own docstring paragraphs are wrapped; the schema's text is kept as is


def wrap(text: str) -> str:
    """One of our own paragraphs, wrapped at spaces to lines of at most `NOTE_WIDTH`
    characters (a longer word keeps its own line)."""
    if len(text) <= NOTE_WIDTH:
        return text
    lines = [""]
    for word in text.split(" "):
        if lines[-1] and len(lines[-1]) + 1 + len(word) > NOTE_WIDTH:
            lines.append(word)
        else:
            lines[-1] = f"{lines[-1]} {word}" if lines[-1] else word
    return "\n".join(lines)
