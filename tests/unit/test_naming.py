"""Python names: `{Union}{Tag}` variants, the `$defs` clash rule, overrides, fields, members."""

from __future__ import annotations

from typing import Any

import pytest

from codegen.modules import LANE_MODULES, RUNTIME_MODULES, TOOLKIT_MODULES
from codegen.naming import field_name, pascal, snake, upper_snake


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def branch(tag: str, value: str, payload: str = "Payload") -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {tag: {"type": "string", "const": value}},
        "required": [tag],
        "allOf": [ref(payload)],
    }


def other(tag: str, title: str = "other") -> dict[str, Any]:
    return {
        "title": title,
        "type": "object",
        "properties": {tag: {"type": "string"}},
        "required": [tag],
    }


def union(*tags: str, tag: str = "type", open_title: str | None = None) -> dict[str, Any]:
    branches = [branch(tag, t) for t in tags]
    if open_title:
        branches.append(other(tag, open_title))
    return {"anyOf": branches}


PAYLOAD = {"type": "object", "properties": {"x": {"type": "string"}}}


def schema(**defs: Any) -> dict[str, Any]:
    return {"$defs": {"Payload": PAYLOAD, **defs}}


def errors_of(diags: Any) -> list[str]:
    return [str(d) for d in diags.items if d.level == "error"]


# -- word helpers ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "pascal_", "snake_"),
    [
        ("tool_call_update", "ToolCallUpdate", "tool_call_update"),
        ("sessionId", "SessionId", "session_id"),
        ("HTTPHeaders", "HTTPHeaders", "http_headers"),
        ("_custom", "Custom", "custom"),
        ("v2Field", "V2Field", "v2_field"),
        ("", "", ""),
    ],
)
def test_pascal_and_snake(text: str, pascal_: str, snake_: str) -> None:
    assert (pascal(text), snake(text), upper_snake(text)) == (pascal_, snake_, snake_.upper())


# -- variants --------------------------------------------------------------------------------------
def default_branch(title: str | None, payload: str = "Payload") -> dict[str, Any]:
    """A branch without the tag: v1's stdio `McpServer`, taken when the tag is absent."""
    return {**({"title": title} if title else {}), "allOf": [ref(payload)]}


def test_every_variant_is_its_union_then_its_tag(name_ir: Any) -> None:
    _, names, diags = name_ir(
        schema(Update=union("agent_message_chunk", "plan", "x", open_title="other"))
    )
    assert names.variants == {
        ("Update", "agent_message_chunk"): "UpdateAgentMessageChunk",
        ("Update", "plan"): "UpdatePlan",
        ("Update", "x"): "UpdateX",
    }
    assert names.open_variants == {"Update": "UpdateOther"}
    assert not diags.items


def test_a_tag_shared_by_two_unions_is_named_after_each(name_ir: Any) -> None:
    _, names, _ = name_ir(schema(Content=union("text", "image"), Part=union("text")))
    assert names.variants == {
        ("Content", "text"): "ContentText",
        ("Content", "image"): "ContentImage",
        ("Part", "text"): "PartText",
    }


def test_other_unions_and_definitions_do_not_rename_a_union_s_variants(name_ir: Any) -> None:
    """The bug of the first rule: a type added anywhere renamed `ToolCall` elsewhere."""
    before = name_ir(schema(Subject=union("tool_call", "command", open_title="other")))[1]
    after = name_ir(
        schema(
            Subject=union("tool_call", "command", open_title="other"),
            Input=union("command", "tool_call"),  # the same tags in another union
            Command=PAYLOAD,  # and definitions named like the bare tags
            ToolCall=PAYLOAD,
        )
    )[1]
    subject = {k: v for k, v in after.variants.items() if k[0] == "Subject"}
    assert subject == before.variants
    assert subject == {
        ("Subject", "tool_call"): "SubjectToolCall",
        ("Subject", "command"): "SubjectCommand",
    }
    assert after.open_variants["Subject"] == before.open_variants["Subject"] == "SubjectOther"
    assert (after.types["Command"], after.types["ToolCall"]) == ("Command", "ToolCall")


def test_a_tag_added_to_the_union_renames_none_of_its_siblings(name_ir: Any) -> None:
    before = name_ir(schema(Part=union("text", "image", open_title="other")))[1]
    after = name_ir(schema(Part=union("text", "image", "audio", open_title="other")))[1]
    assert before.variants.items() <= after.variants.items()
    assert after.variants[("Part", "audio")] == "PartAudio"


def test_the_definition_a_variant_name_takes_is_renamed_with_payload(name_ir: Any) -> None:
    """`McpServer` + `http` is `McpServerHttp`, the name of the branch's own payload struct:
    the variant keeps the rule's name and the definition becomes `McpServerHttpPayload`."""
    servers = {"anyOf": [branch("type", "http", "McpServerHttp")]}
    _, names, diags = name_ir(schema(McpServerHttp=PAYLOAD, McpServer=servers))
    assert names.variants == {("McpServer", "http"): "McpServerHttp"}
    assert names.types["McpServerHttp"] == "McpServerHttpPayload"
    assert not diags.items


def test_a_definition_is_renamed_only_where_a_variant_takes_its_name(name_ir: Any) -> None:
    _, names, _ = name_ir(schema(McpServerHttp=PAYLOAD, McpServer=union("stdio")))
    assert names.types["McpServerHttp"] == "McpServerHttp"
    assert names.variants == {("McpServer", "stdio"): "McpServerStdio"}


def test_a_renamed_definition_that_is_taken_too_names_both_pointers(name_ir: Any) -> None:
    _, _, diags = name_ir(schema(PartText=PAYLOAD, PartTextPayload=PAYLOAD, Part=union("text")))
    assert errors_of(diags) == [
        "error at #/$defs/PartTextPayload: Python name 'PartTextPayload' is also used by "
        "#/$defs/PartText"
    ]


def test_two_variants_wanting_one_name_are_an_error_naming_both_pointers(name_ir: Any) -> None:
    _, _, diags = name_ir(schema(Part=union("tool_call", "toolCall")))
    assert errors_of(diags) == [
        "error at #/$defs/Part/anyOf/1: Python name 'PartToolCall' is also used by "
        "#/$defs/Part/anyOf/0"
    ]


@pytest.mark.parametrize(
    ("union_name", "tag", "expected"),
    [
        ("Decode", "error", "DecodeError_"),  # the runtime's exception
        ("Key", "error", "KeyError_"),  # a builtin
        ("U", "", "UTag"),  # a tag without ASCII letters or digits spells its code points
        ("U", "+", "UTag2B"),
        ("U", "'''", "UTag27_27_27"),
        ("U", "é", "UTagE9"),
        ("U", "2fa", "U2fa"),
    ],
)
def test_variant_never_takes_a_runtime_or_builtin_name(
    name_ir: Any, union_name: str, tag: str, expected: str
) -> None:
    _, names, _ = name_ir(schema(**{union_name: union(tag)}))
    assert names.variants[(union_name, tag)] == expected


def test_a_union_with_a_reserved_name_prefixes_its_variants_with_its_class_name(
    name_ir: Any,
) -> None:
    _, names, _ = name_ir(schema(Model=union("text", open_title="other")))
    assert names.types["Model"] == "Model_"
    assert names.variants == {("Model", "text"): "Model_Text"}
    assert names.open_variants == {"Model": "Model_Other"}


def test_the_catch_all_is_other_whatever_its_title(name_ir: Any) -> None:
    _, names, _ = name_ir(schema(Kind=union("a", open_title="unknown")))
    assert names.open_variants == {"Kind": "KindOther"}


def test_the_catch_all_of_a_union_with_an_other_tag_is_unknown(name_ir: Any) -> None:
    _, names, diags = name_ir(schema(Kind=union("a", "other", open_title="other")))
    assert names.variants[("Kind", "other")] == "KindOther"
    assert names.open_variants == {"Kind": "KindUnknown"}
    assert not diags.items


def test_a_definition_the_catch_all_name_takes_is_renamed_too(name_ir: Any) -> None:
    _, names, diags = name_ir(schema(KindOther=PAYLOAD, Kind=union("a", open_title="other")))
    assert (names.open_variants, names.types["KindOther"]) == (
        {"Kind": "KindOther"},
        "KindOtherPayload",
    )
    assert not diags.items


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("stdio", "McpServerStdio"),  # v1: the stdio transport has no `type`
        ("value_id", "McpServerValueId"),
        (None, "McpServerDefault"),
        ("http", "McpServerDefault"),  # the title of a sibling's tag: not that sibling's name
    ],
)
def test_the_default_branch_is_its_union_then_its_title(
    name_ir: Any, title: str | None, expected: str
) -> None:
    servers = {"anyOf": [branch("type", "http"), default_branch(title)]}
    _, names, diags = name_ir(schema(McpServer=servers))
    assert names.variants == {("McpServer", "http"): "McpServerHttp"}
    assert names.fallback_variants == {"McpServer": expected}
    assert not diags.items


def test_the_default_branch_takes_its_name_from_its_payload_definition(name_ir: Any) -> None:
    servers = {"anyOf": [branch("type", "http"), default_branch("stdio", "McpServerStdio")]}
    _, names, _ = name_ir(schema(McpServerStdio=PAYLOAD, McpServer=servers))
    assert names.fallback_variants == {"McpServer": "McpServerStdio"}
    assert names.types["McpServerStdio"] == "McpServerStdioPayload"


# -- overrides -------------------------------------------------------------------------------------
def test_overrides_pin_variant_and_open_variant_names(name_ir: Any) -> None:
    overrides = {"Part": {"text": "PlainText", "*": "UnknownPart"}}
    _, names, diags = name_ir(schema(Part=union("text", "image", open_title="other")), overrides)
    assert names.variants == {("Part", "text"): "PlainText", ("Part", "image"): "PartImage"}
    assert names.open_variants == {"Part": "UnknownPart"}
    assert not diags.items


def test_a_pinned_variant_leaves_the_definition_of_its_rule_name_alone(name_ir: Any) -> None:
    servers = {"anyOf": [branch("type", "http", "McpServerHttp")]}
    overrides = {"McpServer": {"http": "Http"}}
    _, names, diags = name_ir(schema(McpServerHttp=PAYLOAD, McpServer=servers), overrides)
    assert names.variants == {("McpServer", "http"): "Http"}
    assert names.types["McpServerHttp"] == "McpServerHttp"
    assert not diags.items


def test_a_pinned_name_that_another_variant_has_names_both_pointers(name_ir: Any) -> None:
    overrides = {"Part": {"text": "PartImage"}}
    _, _, diags = name_ir(schema(Part=union("text", "image")), overrides)
    assert errors_of(diags) == [
        "error at #/$defs/Part/anyOf/1: Python name 'PartImage' is also used by "
        "#/$defs/Part/anyOf/0"
    ]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"Nope": {"text": "X"}},
            "error at overrides/Nope: override names 'Nope', which is not a tagged union",
        ),
        (
            {"Payload": {"text": "X"}},
            "error at overrides/Payload: override names 'Payload', which is not a tagged union",
        ),
        (
            {"Part": "X"},
            "error at overrides/Part: override names 'Part', which is not a tagged union",
        ),
        (
            {"Part": {"audio": "X"}},
            "error at overrides/Part/audio: override names tag 'audio', which Part does not have",
        ),
        (
            {"Part": {"*": "X"}},
            "error at overrides/Part/*: override names tag '*', which Part does not have",
        ),
        (
            {"Part": {"text": "not-a-name"}},
            "error at overrides/Part/text: override 'not-a-name' is not a valid Python identifier",
        ),
        (
            {"Part": {"text": "class"}},
            "error at overrides/Part/text: override 'class' is not a valid Python identifier",
        ),
        (
            {"Part": {"text": 3}},
            "error at overrides/Part/text: override 3 is not a valid Python identifier",
        ),
        (
            {"Part": {"text": "decode"}},
            "error at overrides/Part/text: override 'decode' is a name the generated package "
            "reserves",
        ),
        (
            {"Part": {"text": "str"}},
            "error at overrides/Part/text: override 'str' is a name the generated package reserves",
        ),
        (
            {"Part": {"text": "_rt"}},
            "error at overrides/Part/text: override '_rt' is a name the generated package reserves",
        ),
        (
            {"Part": {"text": "Payload"}},
            "error at #/$defs/Part/anyOf/0: Python name 'Payload' is also used by #/$defs/Payload",
        ),
    ],
)
def test_bad_overrides_are_errors(name_ir: Any, overrides: dict[str, Any], message: str) -> None:
    _, _, diags = name_ir(schema(Part=union("text")), overrides)
    assert errors_of(diags) == [message]


# -- type names ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "py"),
    [
        ("SessionId", "SessionId"),
        ("class", "class_"),
        ("None", "None_"),
        ("match", "match_"),
        ("str", "str_"),
        ("object", "object_"),
        ("DecodeError", "DecodeError_"),
        ("METHODS", "METHODS_"),
        ("encode", "encode_"),
        ("my-type", "my_type"),
        ("1st", "Type_1st"),
        ("a b", "a_b"),
        ("π", "Type"),
        ("_private", "private"),
    ],
)
def test_type_names_are_valid_unreserved_identifiers(name_ir: Any, name: str, py: str) -> None:
    _, names, diags = name_ir({"$defs": {name: {"type": "string"}}})
    assert names.types == {name: py}
    assert not diags.items


def test_names_exported_by_the_optional_modules_are_reserved(name_ir: Any) -> None:
    every = LANE_MODULES + RUNTIME_MODULES + TOOLKIT_MODULES
    exported = sorted({name for m in every for name in m.exports})
    assert exported  # rpc, the runtime, the toolkit, ... export names beside the models
    _, names, _ = name_ir({"$defs": {name: {"type": "string"} for name in exported}})
    assert names.types == {name: name + "_" for name in exported}


def test_names_colliding_after_sanitizing_are_an_error_naming_both_pointers(name_ir: Any) -> None:
    defs = {
        "my-type": {"type": "string"},
        "my_type": {"type": "string"},
        "my type": {"type": "string"},
    }
    _, _, diags = name_ir({"$defs": defs})
    assert errors_of(diags) == [
        "error at #/$defs/my_type: Python name 'my_type' is also used by #/$defs/my-type",
        "error at #/$defs/my type: Python name 'my_type' is also used by #/$defs/my-type",
    ]


# -- fields ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("wire", "py"),
    [
        ("sessionId", "session_id"),
        ("_meta", "meta"),
        ("mcpServers", "mcp_servers"),
        ("class", "class_"),
        ("from", "from_"),
        ("extra", "extra_"),
        ("to_json", "to_json_"),
        ("from_json", "from_json_"),
        ("self", "self_"),
        ("my-field", "my_field"),
        ("a b", "a_b"),
        ("1st", "field_1st"),
        ("π", "field"),
        ("TAG", "tag"),
    ],
)
def test_field_names(wire: str, py: str) -> None:
    assert field_name(wire) == py


def test_object_field_names_and_their_collisions(name_ir: Any) -> None:
    fields: dict[str, Any] = {"sessionId": {}, "session_id": {}, "extra": {}, "class": {}}
    _, names, diags = name_ir({"$defs": {"class": {"type": "object", "properties": fields}}})
    assert names.fields("class_") == {
        "sessionId": "session_id",
        "session_id": "session_id",
        "extra": "extra_",
        "class": "class__",
    }
    assert errors_of(diags) == [
        "error at #/$defs/class/properties/session_id: field 'session_id' maps to Python name "
        "'session_id', as does #/$defs/class/properties/sessionId"
    ]


def test_a_field_never_hides_a_class_of_the_module(name_ir: Any) -> None:
    defs = {"point": {"type": "object", "properties": {"point": {}, "x": {}}}}
    _, names, _ = name_ir({"$defs": defs})
    assert names.fields("point") == {"point": "point_", "x": "x"}


def test_variant_fields_are_named_per_variant_class(name_ir: Any) -> None:
    _, names, _ = name_ir(schema(Part=union("text", open_title="other")))
    assert names.fields("PartText") == {"x": "x"}
    assert names.fields("PartOther") == {"type": "type"}


# -- enum members ----------------------------------------------------------------------------------
def enum_names(name_ir: Any, node: dict[str, Any]) -> tuple[dict[Any, str], list[str]]:
    _, names, diags = name_ir({"$defs": {"E": node}})
    return {v: py for (_, v), py in names.members.items()}, errors_of(diags)


def test_string_enum_members_are_upper_snake_of_the_value(name_ir: Any) -> None:
    node = {"enum": ["end_turn", "maxTokens", "", "_custom", "name", "2fa"]}
    assert enum_names(name_ir, node) == (
        {
            "end_turn": "END_TURN",
            "maxTokens": "MAX_TOKENS",
            "": "VALUE_EMPTY",
            "_custom": "CUSTOM",
            "name": "VNAME",
            "2fa": "VALUE_2FA",
        },
        [],
    )


def test_integer_members_use_their_title_else_the_signed_value(name_ir: Any) -> None:
    node = {
        "anyOf": [
            {"title": "Parse error", "type": "integer", "const": -32700},
            {"type": "integer", "const": -1},
            {"type": "integer", "const": 1},
            {"title": "+++", "type": "integer", "const": 7},
        ]
    }
    assert enum_names(name_ir, node) == (
        {-32700: "PARSE_ERROR", -1: "VALUE_MINUS_1", 1: "VALUE_1", 7: "VALUE_7"},
        [],
    )


def test_enum_values_mapping_to_one_member_are_an_error(name_ir: Any) -> None:
    members, errors = enum_names(name_ir, {"enum": ["a-b", "a_b"]})
    assert members == {"a-b": "A_B"}
    assert errors == ["error at #/$defs/E: enum values 'a-b' and 'a_b' both map to member A_B"]


# -- exclusive alternatives and inline alternatives ------------------------------------------------
def _scopes(**props: Any) -> dict[str, Any]:
    def scope(key: str) -> dict[str, Any]:
        return {"type": "object", "properties": {key: {"type": "string"}}, "required": [key]}

    return {
        "ElicitationSessionScope": scope("sessionId"),
        "ElicitationRequestScope": scope("requestId"),
        "Form": {
            "type": "object",
            "properties": props,
            "oneOf": [ref("ElicitationSessionScope"), ref("ElicitationRequestScope")],
        },
    }


def test_exclusive_alternatives_are_one_field_named_after_their_common_last_words(
    name_ir: Any,
) -> None:
    _, names, diags = name_ir(schema(**_scopes(url={"type": "string"})))
    assert names.exclusive == {"Form": "scope"}
    assert names.fields("Form") == {"url": "url"}
    assert not errors_of(diags)


def test_exclusive_field_taken_by_a_property_is_an_error(name_ir: Any) -> None:
    _, _, diags = name_ir(schema(**_scopes(scope={"type": "string"})))
    assert errors_of(diags) == [
        "error at #/$defs/Form/oneOf: exclusive alternatives of Form map to field 'scope',"
        " as does a property"
    ]


def test_inline_alternatives_are_the_union_then_the_title(name_ir: Any) -> None:
    def inline(title: str | None, key: str) -> dict[str, Any]:
        branch = {"type": "object", "properties": {key: {"type": "string"}}, "required": [key]}
        return {**branch, "title": title} if title else branch

    response = {"anyOf": [inline("Result", "result"), inline(None, "error")]}
    _, names, diags = name_ir(schema(Response=response, ResponseResult=PAYLOAD))
    assert names.inline == {
        ("Response", 0): "ResponseResult",
        ("Response", 1): "ResponseAlternative2",
    }
    assert names.types["ResponseResult"] == "ResponseResultPayload"  # the rule's name comes first
    assert names.fields("ResponseResult") == {"result": "result"}
    assert not errors_of(diags)
