"""`acp-codegen diff` on unions and enums: openness decides what an added or removed tag does.

The union under test is `Content`, the `update` field of `UpdateNotification` (sent agent →
client), so old clients are the receivers and old agents the senders.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.unit.test_specdiff_rules import base, changed, only, props, ref, run, summary


def branch(tag: str, **fields: Any) -> dict[str, Any]:
    properties = {"type": {"type": "string", "const": tag}, **fields}
    return {"type": "object", "properties": properties, "required": ["type", *fields]}


def catch_all(*reserved: str) -> dict[str, Any]:
    return {
        "title": "other",
        "type": "object",
        "properties": {"type": {"type": "string"}},
        "required": ["type"],
        "not": {"anyOf": [{"properties": {"type": {"const": t}}} for t in reserved]},
    }


TEXT = {"type": "string"}


def with_union(*branches: dict[str, Any], closed: bool = False) -> dict[str, Any]:
    schema = base()
    if closed:  # v1 style: oneOf + discriminator
        union = {"oneOf": list(branches), "discriminator": {"propertyName": "type"}}
    else:
        union = {"anyOf": list(branches)}
    schema["$defs"]["Content"] = union
    props(schema, "UpdateNotification")["update"] = ref("Content")
    return schema


def open_union(*tags: str, reserved: tuple[str, ...] = ()) -> dict[str, Any]:
    return with_union(*(branch(t, text=TEXT) for t in tags), catch_all(*tags, *reserved))


def closed_union(*tags: str) -> dict[str, Any]:
    return with_union(*(branch(t, text=TEXT) for t in tags), closed=True)


# -- tagged unions ---------------------------------------------------------------------------
def test_variant_added_to_an_open_union_is_info(tmp_path: Path) -> None:
    f = only(run(tmp_path, open_union("text"), open_union("text", "image")), "variant-added-open")
    assert summary(f) == ("info", "Content[image]", "agent->client", "")
    assert "old clients decode the new tag as the catch-all" in f.message
    assert (f.python, f.python_severity) == ("new ContentImage", "info")


def test_variant_added_to_a_closed_union_breaks_old_receivers(tmp_path: Path) -> None:
    f = only(
        run(tmp_path, closed_union("text"), closed_union("text", "image")), "variant-added-closed"
    )
    assert summary(f) == ("breaking", "Content[image]", "agent->client", "clients")
    assert f.message == "variant `image` added: old clients reject the new tag"


def test_variant_added_with_a_tag_the_old_catch_all_reserved_breaks(tmp_path: Path) -> None:
    old = open_union("text", reserved=("image",))
    f = only(run(tmp_path, old, open_union("text", "image")), "variant-added-closed")
    assert f.message.startswith("variant `image` added (the old catch-all reserved it)")


def test_variant_removed_from_an_open_union_is_a_warning(tmp_path: Path) -> None:
    f = only(run(tmp_path, open_union("text", "image"), open_union("text")), "variant-removed-open")
    assert summary(f) == ("warning", "Content[image]", "agent->client", "")
    assert (f.python, f.python_severity) == ("ContentImage goes away", "breaking")


def test_variant_removed_but_still_reserved_breaks_old_senders(tmp_path: Path) -> None:
    new = open_union("text", reserved=("image",))
    f = only(run(tmp_path, open_union("text", "image"), new), "variant-removed-closed")
    assert summary(f) == ("breaking", "Content[image]", "agent->client", "agents")
    assert f.message.startswith("variant `image` removed, the tag stays reserved")


def test_variant_removed_from_a_closed_union_breaks_old_senders(tmp_path: Path) -> None:
    f = only(
        run(tmp_path, closed_union("text", "image"), closed_union("text")), "variant-removed-closed"
    )
    assert summary(f) == ("breaking", "Content[image]", "agent->client", "agents")


def test_union_opened_and_closed(tmp_path: Path) -> None:
    opened = only(run(tmp_path / "a", closed_union("text"), open_union("text")), "now-open")
    assert summary(opened) == ("warning", "Content", "agent->client", "clients")
    assert opened.python == "new ContentOther"
    closed = only(run(tmp_path / "b", open_union("text"), closed_union("text")), "now-closed")
    assert summary(closed) == ("breaking", "Content", "agent->client", "agents")


def test_reserved_tags_added_and_removed(tmp_path: Path) -> None:
    plain, reserving = open_union("text"), open_union("text", reserved=("file",))
    added = only(run(tmp_path / "a", plain, reserving), "reserved-tag-added")
    assert (added.severity, added.path) == ("warning", "Content[file]")
    removed = only(run(tmp_path / "b", reserving, plain), "reserved-tag-removed")
    assert removed.severity == "info"


def test_tag_property_changed(tmp_path: Path) -> None:
    new = with_union(
        {
            "type": "object",
            "properties": {"kind": {"type": "string", "const": "text"}, "text": TEXT},
            "required": ["kind", "text"],
        },
        closed=True,
    )
    new["$defs"]["Content"]["discriminator"] = {"propertyName": "kind"}
    findings = run(tmp_path, closed_union("text"), new)
    f = next(f for f in findings if f.kind == "tag-field-changed")
    assert summary(f) == ("breaking", "Content", "agent->client", "clients and agents")


def test_a_field_of_a_variant_is_compared_like_an_object_field(tmp_path: Path) -> None:
    new = with_union(branch("text", text=TEXT, lang=TEXT), catch_all("text"))
    f = only(run(tmp_path, open_union("text"), new), "field-added-required")
    assert summary(f) == ("breaking", "Content[text].lang", "agent->client", "agents")
    assert f.python == "ContentText.lang added (a required keyword)"


def test_a_shared_payload_is_compared_once_on_its_own_type(tmp_path: Path) -> None:
    def union(chunk_props: dict[str, Any]) -> dict[str, Any]:
        schema = with_union(
            {
                "properties": {"type": {"type": "string", "const": "chunk"}},
                "required": ["type"],
                "allOf": [ref("Chunk")],
            },
            catch_all("chunk"),
        )
        schema["$defs"]["Chunk"] = {"type": "object", "properties": chunk_props}
        return schema

    findings = run(tmp_path, union({"text": TEXT}), union({"text": TEXT, "id": TEXT}))
    f = only(findings, "field-added-optional")
    assert (f.path, f.direction) == ("Chunk.id", "agent->client")


def test_a_new_definition_named_like_a_tag_renames_no_variant(tmp_path: Path) -> None:
    """Variant names are `{Union}{Tag}`: a type added elsewhere cannot rename them."""

    def edit(s: dict[str, Any]) -> None:
        s["$defs"]["Image"] = {"type": "object", "properties": {}}

    findings = changed(tmp_path, edit, open_union("text", "image"))
    assert [f.kind for f in findings] == ["type-added"]


def test_a_new_other_tag_renames_the_catch_all_class(tmp_path: Path) -> None:
    findings = run(tmp_path, open_union("text"), open_union("text", "other"))
    renamed = next(f for f in findings if f.kind == "variant-class-renamed")
    assert (renamed.severity, renamed.path, renamed.python, renamed.python_severity) == (
        "info",
        "Content[*]",
        "ContentOther → ContentUnknown",
        "breaking",
    )
    added = next(f for f in findings if f.kind == "variant-added-open")
    assert added.python == "new ContentOther"


# -- a tag-less default branch (v1's AuthMethod, McpServer) ----------------------------------------
def with_default(*branches: dict[str, Any]) -> dict[str, Any]:
    schema = with_union(*branches, {"title": "agent", "allOf": [ref("AgentAuth")]})
    schema["$defs"]["AgentAuth"] = {
        "type": "object",
        "properties": {"id": TEXT, "name": TEXT},
        "required": ["id", "name"],
    }
    return schema


def test_default_branch_removed_breaks_old_senders(tmp_path: Path) -> None:
    old = with_default(branch("terminal", id=TEXT))
    new = closed_union("terminal")
    findings = run(tmp_path, old, new)
    f = next(f for f in findings if f.kind == "fallback-removed")
    assert summary(f) == ("breaking", "Content[default]", "agent->client", "agents")
    assert f.python == "ContentAgent goes away"


def test_default_branch_added_breaks_old_receivers(tmp_path: Path) -> None:
    findings = run(tmp_path, closed_union("terminal"), with_default(branch("terminal", text=TEXT)))
    f = next(f for f in findings if f.kind == "fallback-added")
    assert summary(f) == ("breaking", "Content[default]", "agent->client", "clients")


def test_new_tag_that_fits_the_old_default_branch_is_a_warning(tmp_path: Path) -> None:
    old = with_default(branch("terminal", id=TEXT))
    fits = with_default(branch("terminal", id=TEXT), branch("agent", id=TEXT, name=TEXT))
    f = only(run(tmp_path / "a", old, fits), "variant-added-default")
    assert summary(f) == ("warning", "Content[agent]", "agent->client", "clients")
    misses = with_default(branch("terminal", id=TEXT), branch("agent", methodId=TEXT, name=TEXT))
    assert only(run(tmp_path / "b", old, misses), "variant-added-closed").severity == "breaking"


# -- untagged unions -------------------------------------------------------------------------
def with_value(*alternatives: dict[str, Any]) -> dict[str, Any]:
    schema = base()
    schema["$defs"]["Value"] = {"anyOf": list(alternatives)}
    props(schema, "PromptRequest")["value"] = ref("Value")
    return schema


def test_untagged_alternative_added_and_removed(tmp_path: Path) -> None:
    small = with_value({"type": "string"}, {"type": "integer"})
    large = with_value({"type": "string"}, {"type": "integer"}, {"type": "boolean"})
    added = only(run(tmp_path / "a", small, large), "branch-added")
    assert summary(added) == ("breaking", "Value(boolean)", "client->agent", "agents")
    removed = only(run(tmp_path / "b", large, small), "branch-removed")
    assert summary(removed) == ("breaking", "Value(boolean)", "client->agent", "clients")


# -- enums -----------------------------------------------------------------------------------
def with_enum(*values: str, open_: bool) -> dict[str, Any]:
    schema = base()
    branches: list[dict[str, Any]] = [{"type": "string", "const": v} for v in values]
    if open_:
        branches.append({"type": "string", "description": "Any other value."})
    schema["$defs"]["StopReason"] = {"anyOf": branches}
    props(schema, "PromptResponse")["stopReason"] = ref("StopReason")
    return schema


def test_enum_value_added(tmp_path: Path) -> None:
    opened = run(
        tmp_path / "a", with_enum("end", open_=True), with_enum("end", "refusal", open_=True)
    )
    f = only(opened, "value-added-open")
    assert summary(f) == ("info", "StopReason[refusal]", "agent->client", "")
    assert f.python == "new StopReason.REFUSAL"
    closed = run(
        tmp_path / "b", with_enum("end", open_=False), with_enum("end", "refusal", open_=False)
    )
    assert summary(only(closed, "value-added-closed")) == (
        "breaking",
        "StopReason[refusal]",
        "agent->client",
        "clients",
    )


def test_enum_value_removed(tmp_path: Path) -> None:
    opened = run(
        tmp_path / "a", with_enum("end", "refusal", open_=True), with_enum("end", open_=True)
    )
    assert only(opened, "value-removed-open").severity == "warning"
    closed = run(
        tmp_path / "b", with_enum("end", "refusal", open_=False), with_enum("end", open_=False)
    )
    f = only(closed, "value-removed-closed")
    assert summary(f) == ("breaking", "StopReason[refusal]", "agent->client", "agents")
    assert (f.python, f.python_severity) == ("StopReason.REFUSAL goes away", "breaking")


def test_enum_opened_and_closed(tmp_path: Path) -> None:
    opened = only(
        run(tmp_path / "a", with_enum("end", open_=False), with_enum("end", open_=True)), "now-open"
    )
    assert opened.severity == "warning"
    closed = only(
        run(tmp_path / "b", with_enum("end", open_=True), with_enum("end", open_=False)),
        "now-closed",
    )
    assert summary(closed) == ("breaking", "StopReason", "agent->client", "agents")


def test_field_of_a_closed_enum_becoming_a_string_widens(tmp_path: Path) -> None:
    def edit(s: dict[str, Any]) -> None:
        props(s, "PromptResponse")["stopReason"] = {"type": "string"}

    findings = changed(tmp_path, edit, with_enum("end", open_=False))
    f = next(f for f in findings if f.kind == "type-widened")
    assert summary(f) == ("breaking", "PromptResponse.stopReason", "agent->client", "clients")


def test_integer_enum_member_renamed_by_its_title(tmp_path: Path) -> None:
    def codes(title: str) -> dict[str, Any]:
        schema = base()
        schema["$defs"]["ErrorCode"] = {
            "anyOf": [{"type": "integer", "const": -32601, "title": title}, {"type": "integer"}]
        }
        props(schema, "PromptResponse")["code"] = ref("ErrorCode")
        return schema

    findings = run(tmp_path, codes("Method not found"), codes("Unknown method"))
    f = next(f for f in findings if f.kind == "member-renamed")
    assert (f.severity, f.path, f.python) == (
        "info",
        "ErrorCode[-32601]",
        "ErrorCode.METHOD_NOT_FOUND → ErrorCode.UNKNOWN_METHOD",
    )
