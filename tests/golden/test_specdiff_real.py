"""`acp-codegen diff` on real upstream pairs, read in place from the schema mirror.

Every expectation below was checked by reading both schema.json files (and meta.json).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from codegen.commands.diff import diff
from codegen.specdiff.finding import Finding
from codegen.specdiff.load import Input, load_input


@cache
def _load(path: str) -> Input:
    return load_input(path)


def findings(mirror: Path, old: str, new: str) -> list[Finding]:
    return diff(_load(str(mirror / old)), _load(str(mirror / new)))


def by_path(found: list[Finding], kind: str) -> dict[str, Finding]:
    return {f.path: f for f in found if f.kind == kind}


@pytest.fixture(scope="module")
def v1_to_v2(mirror: Path) -> list[Finding]:
    return findings(
        mirror, "schema-v2.0.0-alpha.3/v1/schema.json", "schema-v2.0.0-alpha.3/v2/schema.json"
    )


# -- v1 → v2, both at schema-v2.0.0-alpha.3 ----------------------------------------------------
def test_v1_to_v2_methods(v1_to_v2: list[Finding]) -> None:
    removed = by_path(v1_to_v2, "method-removed")
    assert set(removed) == {
        "method:authenticate",
        "method:logout",
        "method:session/load",
        "method:session/set_mode",
        "method:fs/read_text_file",
        "method:fs/write_text_file",
        "method:terminal/create",
        "method:terminal/kill",
        "method:terminal/output",
        "method:terminal/release",
        "method:terminal/wait_for_exit",
    }
    assert all(f.severity == "breaking" for f in removed.values())
    assert removed["method:session/load"].breaks == "clients"  # the agent handled it
    assert removed["method:fs/read_text_file"].breaks == "agents"  # the client handled it
    assert removed["method:authenticate"].message.endswith(
        "probably renamed to `auth/login` (same side and payloads)"
    )
    assert removed["method:logout"].message.endswith(
        "probably renamed to `auth/logout` (same side and payloads)"
    )
    assert set(by_path(v1_to_v2, "method-added-request")) == {
        "method:auth/login",
        "method:auth/logout",
    }


def test_v1_to_v2_session_update_tags(v1_to_v2: list[Finding]) -> None:
    # v1 SessionUpdate is closed (oneOf + discriminator): new tags break old clients
    added = by_path(v1_to_v2, "variant-added-closed")
    new_tags = {
        "user_message",
        "agent_message",
        "agent_thought",
        "state_update",
        "tool_call_content_chunk",
        "terminal_update",
        "terminal_output_chunk",
        "plan_update",
    }
    assert {f"SessionUpdate[{t}]" for t in new_tags} <= set(added)
    assert added["SessionUpdate[state_update]"].breaks == "clients"
    # v2 SessionUpdate is open and does not reserve the old tags: a warning each
    removed = by_path(v1_to_v2, "variant-removed-open")
    old_tags = {"tool_call", "plan", "current_mode_update"}
    assert {f"SessionUpdate[{t}]" for t in old_tags} <= set(removed)
    assert removed["SessionUpdate[tool_call]"].python == "SessionUpdateToolCall goes away"
    assert by_path(v1_to_v2, "now-open")["SessionUpdate"].severity == "warning"


def test_v1_to_v2_fields_and_requiredness(v1_to_v2: list[Finding]) -> None:
    stop = by_path(v1_to_v2, "field-removed-required")["PromptResponse.stopReason"]
    assert (stop.severity, stop.direction, stop.breaks) == ("breaking", "agent->client", "clients")
    assert by_path(v1_to_v2, "field-removed-required")["RequestPermissionRequest.toolCall"]
    added = by_path(v1_to_v2, "field-added-required")
    assert (added["InitializeRequest.info"].direction, added["InitializeRequest.info"].breaks) == (
        "client->agent",
        "clients",
    )
    assert added["RequestPermissionRequest.title"].breaks == "agents"
    assert "ContentChunk.messageId" in by_path(v1_to_v2, "field-now-required")
    assert "InitializeRequest.clientCapabilities" in by_path(v1_to_v2, "field-removed-optional")
    assert "InitializeRequest.capabilities" in by_path(v1_to_v2, "field-added-optional")


def test_v1_to_v2_alias_changes_are_not_breaking(v1_to_v2: list[Finding]) -> None:
    aliases = by_path(v1_to_v2, "alias-only")
    assert {
        "NewSessionRequest.cwd",
        "McpServerStdio.command",
        "ToolCallLocation.path",
        "ImageContent.mimeType",
    } <= set(aliases)
    assert aliases["NewSessionRequest.cwd"].message.startswith(
        "field `string` → `AbsolutePath` (string), the same JSON"
    )
    assert {f.severity for f in aliases.values()} == {"info"}
    # a field of a closed v1 enum that is open in v2 is reported on the enum, not on the field
    fields = ("ToolCallUpdate.kind", "PlanEntry.status")
    assert not [f for f in v1_to_v2 if f.path in fields and f.kind != "description-changed"]
    assert by_path(v1_to_v2, "now-open")["ToolKind"].severity == "warning"


def test_v1_to_v2_renamed_types(v1_to_v2: list[Finding]) -> None:
    renamed = {f.path: f.message.split(":")[0] for f in v1_to_v2 if f.kind == "type-renamed"}
    assert renamed["SessionNotification"] == (
        "`SessionNotification` renamed to `UpdateSessionNotification` "
        "(the params of `session/update`)"
    )
    assert renamed["CancelNotification"].startswith(
        "`CancelNotification` renamed to `CancelSessionNotification`"
    )
    assert renamed["UnstructuredCommandInput"] == (
        "`UnstructuredCommandInput` renamed to `TextCommandInput` (the same structure)"
    )


# -- v2: schema-v2.0.0-alpha.1 → alpha.3 -----------------------------------------------------------
def test_v2_alpha1_to_alpha3(mirror: Path) -> None:
    found = findings(
        mirror, "schema-v2.0.0-alpha.1/v2/schema.json", "schema-v2.0.0-alpha.3/v2/schema.json"
    )
    assert not [f for f in found if f.severity == "breaking"]
    changes = {
        (f.kind, f.path, f.severity)
        for f in found
        if f.kind not in ("type-added", "description-changed")
    }
    assert changes == {
        ("method-added-request", "method:elicitation/create", "warning"),
        ("method-added-notification", "method:elicitation/complete", "info"),
        ("variant-added-open", "AuthMethod[terminal]", "info"),
        ("value-added-open", "ToolCallStatus[cancelled]", "info"),
        ("value-added-open", "PlanEntryStatus[cancelled]", "info"),
        ("field-added-optional", "ClientCapabilities.auth", "info"),
        ("field-added-optional", "ClientCapabilities.elicitation", "info"),
    }
    assert len([f for f in found if f.kind == "type-added"]) == 29
    described = {f.path for f in found if f.kind == "description-changed"}
    assert described == {"AuthMethodAgent", "EnvVariable"}


# -- v1: v0.10.8 → v0.12.2 -----------------------------------------------------------------------
def test_v0_10_8_to_v0_12_2(mirror: Path) -> None:
    found = findings(mirror, "v0.10.8/schema.json", "v0.12.2/schema.json")
    assert {(f.kind, f.path) for f in found if f.severity == "breaking"} == {
        ("variant-added-closed", "SessionUpdate[session_info_update]")
    }
    assert set(by_path(found, "method-added-request")) == {
        "method:session/list",
        "method:session/resume",
        "method:session/close",
    }
    renamed = {f.path: f.message.split(":")[0] for f in found if f.kind == "type-renamed"}
    assert renamed == {
        "FileSystemCapability": "`FileSystemCapability` renamed to `FileSystemCapabilities` "
        "(the same structure)",
        "KillTerminalCommandRequest": "`KillTerminalCommandRequest` renamed to "
        "`KillTerminalRequest` (the params of `terminal/kill`)",
        "KillTerminalCommandResponse": "`KillTerminalCommandResponse` renamed to "
        "`KillTerminalResponse` (the result of `terminal/kill`)",
    }
    # AuthMethod became a one-branch union of AuthMethodAgent, which has the same fields
    form = by_path(found, "type-form-changed")["AuthMethod"]
    assert (form.severity, form.python_severity) == ("info", "breaking")
    assert {
        "SessionCapabilities.close",
        "SessionCapabilities.list",
        "SessionCapabilities.resume",
    } <= set(by_path(found, "field-added-optional"))


def test_identical_real_inputs_give_no_findings(mirror: Path) -> None:
    path = "schema-v2.0.0-alpha.3/v2/schema.json"
    assert findings(mirror, path, path) == []
