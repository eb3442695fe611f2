"""`acp-codegen diff` on what the drafts after alpha.3 changed, one tiny schema pair per rule:
batches leaving the root, a union's alternative narrowed in place, `any` becoming a union with
an `any` catch-all, an open enum inlined, a narrowed field that falls back, an object that
became a tagged union."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from tests.unit.test_specdiff_rules import base, changed, only, props, ref, run, summary


def with_batches(schema: dict[str, Any], *titles: str) -> dict[str, Any]:
    message = {"type": "object", "properties": {"jsonrpc": {"type": "string"}}}
    batches = [{"title": t, "type": "array", "items": message, "minItems": 1} for t in titles]
    schema["anyOf"] = [{"title": "Agent", **message}, *batches]
    return schema


def test_batches_removed_from_the_root_break_old_senders(tmp_path: Path) -> None:
    old = with_batches(base(), "AgentBatchCall", "ClientBatchCall")
    found = run(tmp_path, old, with_batches(base()))
    assert [summary(f) for f in found] == [
        ("breaking", "batch:AgentBatchCall", "agent->client", "agents"),
        ("breaking", "batch:ClientBatchCall", "client->agent", "clients"),
    ]
    assert found[0].message == (
        "batch message `AgentBatchCall` removed from the root schema: "
        "old agents may send a batch; new clients reject it"
    )
    assert (found[0].python, found[0].python_severity) == ("", None)


def test_batches_added_to_the_root_break_old_receivers(tmp_path: Path) -> None:
    f = only(run(tmp_path, base(), with_batches(base(), "ClientBatchCall")), "batch-added")
    assert summary(f) == ("breaking", "batch:ClientBatchCall", "client->agent", "agents")


def options_union(min_items: int | None) -> dict[str, Any]:
    schema = base()
    flat: dict[str, Any] = {"title": "Ungrouped", "type": "array", "items": {"type": "string"}}
    grouped: dict[str, Any] = {"title": "Grouped", "type": "array", "items": ref("Group")}
    if min_items is not None:
        flat["minItems"] = grouped["minItems"] = min_items
    schema["$defs"]["Options"] = {"anyOf": [flat, grouped]}
    schema["$defs"]["Group"] = {"type": "object", "properties": {"name": {"type": "string"}}}
    props(schema, "PromptResponse")["options"] = ref("Options")
    return schema


def test_an_alternative_narrowed_in_place_is_one_finding_not_removed_and_added(
    tmp_path: Path,
) -> None:
    found = run(tmp_path, options_union(None), options_union(1))
    assert [(f.kind, f.path) for f in found] == [
        ("type-narrowed", "Options(Grouped)"),
        ("type-narrowed", "Options(Ungrouped)"),
    ]
    assert summary(found[1]) == ("breaking", "Options(Ungrouped)", "agent->client", "agents")
    assert found[1].message == (
        "alternative Ungrouped: `list[string]` → `list[string] (≥ 1 items)`: "
        "old agents may send values new clients reject"
    )


def test_a_retitled_alternative_is_matched_by_what_it_accepts(tmp_path: Path) -> None:
    new = options_union(None)
    new["$defs"]["Options"]["anyOf"][1]["title"] = "Sections"
    assert run(tmp_path, options_union(None), new) == []  # titles are not on the wire
    new["$defs"]["Options"]["anyOf"][1]["minItems"] = 1
    found = run(tmp_path, options_union(None), new)
    assert [(f.kind, f.path) for f in found] == [
        ("branch-removed", "Options(Grouped)"),
        ("branch-added", "Options(Sections)"),
    ]


def error_data(typed: bool) -> dict[str, Any]:
    schema = base()
    if typed:
        schema["$defs"]["ErrorData"] = {
            "anyOf": [
                {"title": "SessionNotFound", "allOf": [ref("SessionNotFoundErrorData")]},
                {"title": "Other"},
            ]
        }
        schema["$defs"]["SessionNotFoundErrorData"] = {
            "type": "object",
            "properties": {"sessionId": {"type": "string"}},
            "required": ["sessionId"],
        }
        data: dict[str, Any] = {"anyOf": [ref("ErrorData"), {"type": "null"}]}
    else:
        data = {}
    props(schema, "PromptResponse")["data"] = data
    return schema


def test_any_json_to_a_union_with_an_any_catch_all_is_the_same_json(tmp_path: Path) -> None:
    found = [
        f
        for f in run(tmp_path, error_data(False), error_data(True))
        if f.path == "PromptResponse.data"
    ]
    f = only(found, "any-typed")
    assert summary(f) == ("info", "PromptResponse.data", "agent->client", "")
    assert f.message.startswith(
        "field `any JSON` → `ErrorData | null`, now decoded as `ErrorData`: the JSON accepted is "
        "the same"
    )
    assert (f.python, f.python_severity) == (
        "PromptResponse.data: annotation Any → ErrorData | None",
        "breaking",
    )
    back = [
        f
        for f in run(tmp_path, error_data(True), error_data(False))
        if f.path == "PromptResponse.data"
    ]
    assert "no longer decoded as `ErrorData`" in only(back, "any-typed").message


def test_an_open_enum_inlined_as_a_string_is_the_same_json(tmp_path: Path) -> None:
    old = base()
    old["$defs"]["StopReason"] = {
        "anyOf": [{"const": "end_turn"}, {"const": "cancelled"}, {"type": "string"}]
    }
    props(old, "PromptResponse")["stopReason"] = ref("StopReason")
    new = copy.deepcopy(old)
    del new["$defs"]["StopReason"]
    props(new, "PromptResponse")["stopReason"] = {"type": "string"}
    found = run(tmp_path, old, new)
    f = only([x for x in found if x.kind != "type-removed"], "enum-inlined")
    assert summary(f) == ("info", "PromptResponse.stopReason", "agent->client", "")
    assert f.message.startswith(
        "field `StopReason` (string) → `string`: the open enum `StopReason` is now a plain string"
    )
    assert f.python_severity == "warning"


def test_a_narrowed_field_that_falls_back_is_a_warning(tmp_path: Path) -> None:
    start = base()
    line = {"type": ["integer", "null"], "minimum": 0, "x-deserialize-default-on-error": True}
    props(start, "PromptResponse")["line"] = line

    def edit(s: dict[str, Any]) -> None:
        props(s, "PromptResponse")["line"]["minimum"] = 1

    f = only(changed(tmp_path, edit, start), "type-narrowed-lenient")
    assert summary(f) == ("warning", "PromptResponse.line", "agent->client", "agents")
    assert f.message.endswith("new clients drop the old values as invalid instead of failing")


def command(tagged: bool) -> dict[str, Any]:
    schema = base()
    fields = {"name": {"type": "string"}, "description": {"type": "string"}}
    payload = {"type": "object", "properties": fields, "required": ["name", "description"]}
    if tagged:
        tag = {"type": {"type": "string", "const": "command"}}
        other = {"type": {"type": "string"}, **fields}
        schema["$defs"]["Command"] = payload
        schema["$defs"]["AvailableCommand"] = {
            "anyOf": [
                {"properties": tag, "required": ["type"], "allOf": [ref("Command")]},
                {"title": "other", "properties": other, "required": ["type", "name"]},
            ]
        }
    else:
        schema["$defs"]["AvailableCommand"] = payload
    props(schema, "PromptResponse")["commands"] = {
        "type": "array",
        "items": ref("AvailableCommand"),
    }
    return schema


def test_an_object_that_became_a_tagged_union_breaks_old_senders(tmp_path: Path) -> None:
    found = run(tmp_path, command(False), command(True))
    f = only([x for x in found if x.kind != "type-added"], "object-now-tagged")
    assert summary(f) == ("breaking", "AvailableCommand", "agent->client", "agents")
    assert f.message.startswith(
        "now an open tagged union on `type`, was an object (variant `command` has its fields): "
        "old agents' values carry no tag: new clients reject them"
    )
    assert (f.python, f.python_severity) == (
        "AvailableCommand is now an open tagged union",
        "breaking",
    )
