"""encode() of a value of the wrong Python type: a TypeError naming where it sits."""

from __future__ import annotations

from typing import Any

import pytest
from acp_kit import v2 as acp_v2


def encode_error(value: Any) -> str:
    with pytest.raises(TypeError) as caught:
        acp_v2.encode(value)
    return str(caught.value)


def test_a_dict_where_a_model_belongs() -> None:
    chunk: Any = {"type": "text", "text": "hi"}
    update = acp_v2.SessionUpdateAgentMessageChunk(message_id="m", content=chunk)
    note = acp_v2.UpdateSessionNotification(session_id="s", update=update)
    assert encode_error(note) == "$.update.content: cannot encode dict: a model belongs there"


def test_a_str_or_dict_where_a_list_of_models_belongs() -> None:
    text: Any = "hello"
    assert (
        encode_error(acp_v2.PromptRequest(session_id="s", prompt=text))
        == "$.prompt: cannot encode str: a list or map of models belongs there"
    )
    mapping: Any = {"text": "hello"}
    assert (
        encode_error(acp_v2.PromptRequest(session_id="s", prompt=mapping))
        == "$.prompt: cannot encode dict: a list or map of models belongs there"
    )


def test_a_dict_inside_a_list_of_models() -> None:
    prompt: Any = [acp_v2.ContentBlockText(text="x"), {"type": "text"}]
    assert (
        encode_error(acp_v2.PromptRequest(session_id="s", prompt=prompt))
        == "$.prompt[1]: cannot encode dict: a model belongs there"
    )


def test_right_values_still_encode() -> None:
    request = acp_v2.PromptRequest(session_id="s", prompt=[acp_v2.ContentBlockText(text="x")])
    assert acp_v2.encode(request) == {"sessionId": "s", "prompt": [{"type": "text", "text": "x"}]}
