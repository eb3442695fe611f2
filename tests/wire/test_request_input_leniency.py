"""Leniency on request inputs follows each draft's annotations, never a blanket policy: the
same `NewSessionRequest.mcpServers` is lenient in alpha.7 (default-on-error, skip invalid
items), strict in alpha.8 (leniency removed from request inputs) and strict but
default-on-null in npm-sdk-2.4.0 (the committed `acp_v2`)."""

from __future__ import annotations

from typing import Any

import pytest
from acp_kit import v2 as acp_v2

from tests.support.lanes import pinned_lane

alpha7 = pinned_lane("schema-v2.0.0-alpha.7", "v2", "acp_v2_alpha7")
alpha8 = pinned_lane("schema-v2.0.0-alpha.8", "v2", "acp_v2_alpha8")
STDIO = {"type": "stdio", "name": "m", "command": "c", "args": [], "env": []}


def decoded(pkg: Any, value: Any) -> Any:
    return pkg.encode(pkg.decode(pkg.NewSessionRequest, value))


def error(pkg: Any, value: Any) -> str:
    with pytest.raises(pkg.DecodeError) as caught:
        pkg.decode(pkg.NewSessionRequest, value)
    return str(caught.value)


def test_alpha7_request_inputs_are_lenient() -> None:
    assert decoded(alpha7, {"cwd": "/w", "mcpServers": 5}) == {"cwd": "/w"}
    assert decoded(alpha7, {"cwd": "/w", "mcpServers": [STDIO, 1]}) == {
        "cwd": "/w",
        "mcpServers": [STDIO],
    }


def test_alpha8_request_inputs_are_strict() -> None:
    assert error(alpha8, {"cwd": "/w", "mcpServers": 5}) == (
        "$.mcpServers: expected a list, got an integer"
    )
    assert error(alpha8, {"cwd": "/w", "mcpServers": [STDIO, 1]}) == (
        "$.mcpServers[1]: expected an object, got an integer"
    )
    assert error(alpha8, {"cwd": "/w", "mcpServers": None}) == (
        "$.mcpServers: expected a list, got null"
    )
    # `_meta` keeps its own default-on-error annotation in alpha.8.
    assert decoded(alpha8, {"cwd": "/w", "_meta": 5}) == {"cwd": "/w"}


def test_npm_sdk_request_inputs_take_null_as_empty_only() -> None:
    assert decoded(acp_v2, {"cwd": "/w", "mcpServers": None}) == {"cwd": "/w", "mcpServers": []}
    assert error(acp_v2, {"cwd": "/w", "mcpServers": 5}) == (
        "$.mcpServers: expected a list, got an integer"
    )
    assert error(acp_v2, {"cwd": "/w", "mcpServers": [STDIO, 1]}) == (
        "$.mcpServers[1]: expected an object, got an integer"
    )
    assert decoded(acp_v2, {"cwd": "/w"}) == {"cwd": "/w"}
