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


# -- every adjacent pair of pinned v2 releases ---------------------------------------------------
V2_RELEASES = [
    "schema-v2.0.0-alpha.1",
    "schema-v2.0.0-alpha.3",
    "schema-v2.0.0-alpha.5",
    "schema-v2.0.0-alpha.7",
    "schema-v2.0.0-alpha.8",
    "npm-sdk-2.4.0",
]
ADJACENT = list(zip(V2_RELEASES, V2_RELEASES[1:], strict=False))


def v2(mirror: Path, old: str, new: str) -> list[Finding]:
    return findings(mirror, f"{old}/v2/schema.json", f"{new}/v2/schema.json")


def structural(found: list[Finding]) -> set[tuple[str, str, str]]:
    """(kind, path, severity) of every finding but added types and description changes."""
    return {
        (f.kind, f.path, f.severity)
        for f in found
        if f.kind not in ("type-added", "description-changed")
    }


@pytest.mark.parametrize(("old", "new"), ADJACENT, ids=[f"{a}->{b}" for a, b in ADJACENT])
def test_every_adjacent_v2_pair_diffs_and_the_reverse_mirrors_it(
    mirror: Path, old: str, new: str
) -> None:
    forward, back = v2(mirror, old, new), v2(mirror, new, old)
    assert structural(forward)  # every release changed something on the wire or in the API
    assert {f.path for f in forward if f.kind == "type-added"} == {
        f.path for f in back if f.kind == "type-removed"
    }
    assert {f.path for f in forward if f.kind.startswith("method-added")} == {
        f.path for f in back if f.kind == "method-removed"
    }
    assert {f.path for f in forward if f.kind == "field-added-required"} == {
        f.path for f in back if f.kind == "field-removed-required"
    }
    assert v2(mirror, old, new) == forward  # deterministic


def test_v2_alpha3_to_alpha5(mirror: Path) -> None:
    found = v2(mirror, "schema-v2.0.0-alpha.3", "schema-v2.0.0-alpha.5")
    assert structural(found) == {
        ("field-added-required", "PromptResponse.messageId", "breaking"),
        ("field-added-optional", "ToolCallUpdate.name", "info"),
    }
    message_id = by_path(found, "field-added-required")["PromptResponse.messageId"]
    assert (message_id.direction, message_id.breaks) == ("agent->client", "agents")
    assert message_id.python == "PromptResponse.message_id added (a required keyword)"
    assert {f.path for f in found if f.kind == "description-changed"} == {
        "PromptResponse",
        "ReplayFromStart",
        "ReplayFrom[start]",
        "ResumeSessionRequest",
        "ResumeSessionRequest.replayFrom",
    }


def test_v2_alpha5_to_alpha7(mirror: Path) -> None:
    found = v2(mirror, "schema-v2.0.0-alpha.5", "schema-v2.0.0-alpha.7")
    assert {(f.kind, f.path, f.severity, f.direction) for f in found} == {
        ("field-added-optional", "NewSessionResponse.availableCommands", "info", "agent->client"),
        (
            "field-added-optional",
            "ResumeSessionResponse.availableCommands",
            "info",
            "agent->client",
        ),
    }


def test_v2_alpha7_to_alpha8(mirror: Path) -> None:
    found = v2(mirror, "schema-v2.0.0-alpha.7", "schema-v2.0.0-alpha.8")
    stricter = {
        "AuthMethodTerminal.args",
        "AuthMethodTerminal.env",
        "NewSessionRequest.additionalDirectories",
        "NewSessionRequest.mcpServers",
        "ResumeSessionRequest.additionalDirectories",
        "ResumeSessionRequest.mcpServers",
        "ResumeSessionRequest.replayFrom",
    }
    assert structural(found) == {("leniency-removed", p, "warning") for p in stricter} | {
        ("variant-added-open", "SessionUpdate[notice]", "info"),
        ("variant-added-open", "SessionUpdate[compaction_update]", "info"),
        ("variant-added-open", "SessionUpdate[compaction_summary_chunk]", "info"),
        ("type-removed", "StopReason", "info"),
        # the idle update becomes a union on its own `stopReason` (SessionUpdate's
        # `state_update` is StateUpdate's classes, so it has no finding of its own)
        ("object-now-tagged-on-field", "IdleStateUpdate", "info"),
        ("variant-now-union", "StateUpdate[idle]", "info"),
    }
    assert {f.path for f in found if f.kind == "type-added"} == {
        "CompactionId",
        "CompactionStatus",
        "CompactionSummaryChunk",
        "CompactionUpdate",
        "ErrorStopReason",
        "Notice",
        "NoticeSeverity",
    }
    requests = by_path(found, "leniency-removed")["NewSessionRequest.mcpServers"]
    assert (requests.direction, requests.breaks) == ("client->agent", "clients")
    assert requests.message == (
        "x-deserialize-default-on-error, x-deserialize-skip-invalid-items removed: new agents "
        "become stricter: invalid values old agents skipped now fail"
    )


NPM_BREAKING = {
    "batch:AgentBatchCall",
    "batch:AgentBatchResponse",
    "batch:ClientBatchCall",
    "batch:ClientBatchResponse",
    "RequestId(Null)",
    "ResourceLink.size",
    "ElicitationSchema.type",
    "ElicitationSchema.properties",
    "SessionConfigSelectOptions(Grouped)",
    "SessionConfigSelectOptions(Ungrouped)",
    "AvailableCommand",
    "PromptRequest.prompt",
    "ElicitationContentValue(Other)",
    # the elicitation scopes went from `anyOf` (alpha.8) to `oneOf`: exactly one, both refused
    "ElicitationFormMode",
    "ElicitationUrlMode",
    "CreateElicitationRequest[form]",
    "CreateElicitationRequest[url]",
    "CreateElicitationRequest[*]",
}


def test_v2_alpha8_to_npm_sdk_2_4_0(mirror: Path) -> None:
    found = v2(mirror, "schema-v2.0.0-alpha.8", "npm-sdk-2.4.0")
    assert {f.path for f in found if f.severity == "breaking"} == NPM_BREAKING
    scope = next(f for f in found if f.path == "ElicitationUrlMode")
    assert (scope.kind, scope.direction, scope.breaks) == (
        "exclusive-narrowed",
        "agent->client",
        "agents",
    )
    assert scope.message.startswith(
        "exclusive alternatives (any of `ElicitationSessionScope | ElicitationRequestScope`) →"
        " (exactly one of `ElicitationSessionScope | ElicitationRequestScope`)"
    )
    assert scope.python == (
        "ElicitationUrlMode.scope: the same annotation; several alternatives' keys are now a"
        " DecodeError"
    )
    warnings = {(f.kind, f.path) for f in found if f.severity == "warning"}
    assert warnings == {
        ("method-added-request", "method:tool_call/cancel"),
        ("method-added-request", "method:terminal/cancel"),
        ("type-narrowed-lenient", "ToolCallLocation.line"),
        ("type-narrowed-lenient", "SessionConfigSelectGroup.options"),
        ("leniency-removed", "ElicitationSchema.type"),
        ("leniency-removed", "ListSessionsResponse.nextCursor"),
        ("leniency-removed", "SessionInfo.additionalDirectories"),
        ("leniency-removed", "SetSessionConfigOptionResponse.configOptions"),
        ("leniency-removed", "PlanItems.entries"),
        ("leniency-removed", "AvailableCommandsUpdate.availableCommands"),
        ("leniency-removed", "ConfigOptionUpdate.configOptions"),
        ("field-removed-optional", "AuthMethod[*].description"),
        ("field-removed-optional", "AuthMethod[*]._meta"),
        ("field-removed-optional", "ReplayFrom[*]._meta"),
        ("type-widened-lenient", "TerminalExitStatus.exitCode"),
    }


# -- the seed's release against the SDK's draft: every finding below checked in both files --------
@pytest.fixture(scope="module")
def alpha3_to_npm(mirror: Path) -> list[Finding]:
    return v2(mirror, "schema-v2.0.0-alpha.3", "npm-sdk-2.4.0")


def test_alpha3_to_npm_is_exactly_the_adjacent_steps(
    mirror: Path, alpha3_to_npm: list[Finding]
) -> None:
    steps: set[tuple[str, str]] = set()
    for old, new in ADJACENT[1:]:
        steps |= {(f.kind, f.path) for f in v2(mirror, old, new) if f.kind != "description-changed"}
    # IdleStateUpdate became a union in alpha.8: the changes to its variants after that are
    # part of the one change of kind the direct diff reports.
    reshaped = {path for kind, path in steps if kind in ("object-now-tagged-on-field",)}
    steps = {
        (kind, path) for kind, path in steps if not any(path.startswith(r + "[") for r in reshaped)
    }
    direct = {(f.kind, f.path) for f in alpha3_to_npm if f.kind != "description-changed"}
    assert direct == steps
    assert {f.path for f in alpha3_to_npm if f.severity == "breaking"} == NPM_BREAKING | {
        "PromptResponse.messageId"
    }


def test_alpha3_to_npm_prompt_response_needs_message_id(alpha3_to_npm: list[Finding]) -> None:
    f = by_path(alpha3_to_npm, "field-added-required")["PromptResponse.messageId"]
    assert (f.severity, f.direction, f.breaks) == ("breaking", "agent->client", "agents")
    assert f.message == (
        "required field `messageId` (MessageId) added: old agents do not send it; "
        "new clients require it"
    )
    prompt = by_path(alpha3_to_npm, "type-narrowed")["PromptRequest.prompt"]
    assert prompt.message == (
        "field `list[ContentBlock]` → `list[ContentBlock] (≥ 1 items)`: "
        "old clients may send values new agents reject"
    )


def test_alpha3_to_npm_batches_removed(alpha3_to_npm: list[Finding]) -> None:
    removed = by_path(alpha3_to_npm, "batch-removed")
    assert {p: (f.direction, f.breaks) for p, f in removed.items()} == {
        "batch:AgentBatchCall": ("agent->client", "agents"),
        "batch:AgentBatchResponse": ("agent->client", "agents"),
        "batch:ClientBatchCall": ("client->agent", "clients"),
        "batch:ClientBatchResponse": ("client->agent", "clients"),
    }
    # ProtocolLevelNotification was reached only from the root's batch and message branches
    gone = by_path(alpha3_to_npm, "type-removed")["ProtocolLevelNotification"]
    assert (gone.severity, gone.direction) == ("info", "none")


def test_alpha3_to_npm_stop_reason_moved_into_the_idle_update(
    alpha3_to_npm: list[Finding],
) -> None:
    # IdleStateUpdate becomes a union on its `stopReason` (an `error` variant with `error`, a
    # catch-all, `none`): every old value still decodes, so the wire is unharmed; the Python
    # class becomes a union, and StateUpdate's `idle` variant the union of its classes.
    stop = by_path(alpha3_to_npm, "type-removed")["StopReason"]
    assert (stop.python, stop.python_severity) == ("StopReason is no longer exported", "breaking")
    idle = by_path(alpha3_to_npm, "object-now-tagged-on-field")["IdleStateUpdate"]
    assert (idle.severity, idle.python_severity) == ("info", "breaking")
    assert idle.message.startswith(
        "now an open tagged union on its field `stopReason`, was an object"
    )
    assert idle.python == "IdleStateUpdate is now an open tagged union"
    variant = by_path(alpha3_to_npm, "variant-now-union")["StateUpdate[idle]"]
    assert variant.python == "StateUpdateIdle is now a union of classes"
    assert not by_path(alpha3_to_npm, "enum-inlined")
    assert "ErrorStopReason" in by_path(alpha3_to_npm, "type-added")


def test_alpha3_to_npm_unions_and_values(alpha3_to_npm: list[Finding]) -> None:
    command = by_path(alpha3_to_npm, "object-now-tagged")["AvailableCommand"]
    assert (command.severity, command.breaks) == ("breaking", "agents")
    assert command.message.startswith(
        "now an open tagged union on `type`, was an object (variant `command` has its fields)"
    )
    assert set(by_path(alpha3_to_npm, "branch-removed")) == {"RequestId(Null)"}
    assert set(by_path(alpha3_to_npm, "branch-added")) == {"ElicitationContentValue(Other)"}
    narrowed = by_path(alpha3_to_npm, "type-narrowed")
    assert {"SessionConfigSelectOptions(Grouped)", "SessionConfigSelectOptions(Ungrouped)"} <= set(
        narrowed
    )
    data = by_path(alpha3_to_npm, "any-typed")["Error.data"]
    assert (data.severity, data.python_severity) == ("info", "breaking")
    line = by_path(alpha3_to_npm, "type-narrowed-lenient")["ToolCallLocation.line"]
    assert line.message.endswith("new clients drop the old values as invalid instead of failing")
    assert {
        "SessionUpdate[notice]",
        "SessionUpdate[compaction_update]",
        "SessionUpdate[compaction_summary_chunk]",
    } == set(by_path(alpha3_to_npm, "variant-added-open"))
    assert {"ToolCallStatus[paused]", "ErrorCode[-32022]"} == set(
        by_path(alpha3_to_npm, "value-added-open")
    )
    assert {"PlanUpdateContent[file]", "PlanUpdateContent[markdown]"} == set(
        by_path(alpha3_to_npm, "reserved-tag-removed")
    )
    assert set(by_path(alpha3_to_npm, "method-added-request")) == {
        "method:tool_call/cancel",
        "method:terminal/cancel",
    }
    renamed = by_path(alpha3_to_npm, "type-renamed")["AuthCapabilities"]
    assert renamed.message.startswith(
        "`AuthCapabilities` renamed to `ClientAuthCapabilities` (the same structure)"
    )
