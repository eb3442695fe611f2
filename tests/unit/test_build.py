"""The IR builder on tiny inline schemas: tags, open unions, enums, untagged unions, methods."""

from __future__ import annotations

from typing import Any

import pytest

from codegen.ir import (
    Alias,
    Alternative,
    EnumMember,
    EnumType,
    Exclusive,
    Method,
    ObjectType,
    Shape,
    TaggedUnion,
    UntaggedUnion,
)


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def obj(required: tuple[str, ...] = (), **props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(required)}


def const_branch(tag: str, value: str, payload: str | None = None, **extra: Any) -> dict[str, Any]:
    """A v2-style branch: a required `const` tag property plus `allOf: [{$ref: payload}]`."""
    branch: dict[str, Any] = {
        "type": "object",
        "properties": {tag: {"type": "string", "const": value}},
        "required": [tag],
        **extra,
    }
    if payload:
        branch["allOf"] = [ref(payload)]
    return branch


def catch_all(tag: str, reserved: list[str], title: str = "other") -> dict[str, Any]:
    return {
        "title": title,
        "description": "Custom or future kinds.",
        "type": "object",
        "properties": {tag: {"type": "string"}},
        "required": [tag],
        "not": {
            "anyOf": [
                {"type": "object", "properties": {tag: {"const": r}}, "required": [tag]}
                for r in reserved
            ]
        },
    }


STR = {"type": "string"}
PAYLOADS = {
    "TextPart": obj(("text",), text=STR),
    "ImagePart": obj(("data",), data=STR, mimeType={"type": ["string", "null"]}),
}


def errors_of(diags: Any) -> list[str]:
    return [str(d) for d in diags.items if d.level == "error"]


# -- tagged unions ---------------------------------------------------------------------------------
def test_v2_const_tag_anyof_is_a_tagged_union_with_the_inferred_tag(build_ir: Any) -> None:
    schema = {
        "$defs": {
            **PAYLOADS,
            "Part": {
                "description": "A part.",
                "anyOf": [
                    const_branch("type", "text", "TextPart", description="Plain text."),
                    const_branch("type", "image", "ImagePart"),
                ],
            },
        }
    }
    model, diags = build_ir(schema)
    assert not diags.items
    part = model.get("Part")
    assert isinstance(part, TaggedUnion)
    assert (part.tag, part.known_tags, part.open, part.doc) == (
        "type",
        ("text", "image"),
        None,
        "A part.",
    )
    text, image = part.variants
    assert (text.payload, text.doc, text.pointer) == (
        "TextPart",
        "Plain text.",
        "#/$defs/Part/anyOf/0",
    )
    assert [(f.wire, f.required) for f in text.fields] == [("text", True)]
    assert image.payload == "ImagePart"
    assert [(f.wire, f.required, f.shape.nullable) for f in image.fields] == [
        ("data", True, False),
        ("mimeType", False, True),
    ]


@pytest.mark.parametrize("tag", ["sessionUpdate", "state", "outcome", "operation"])
def test_any_property_can_be_the_inferred_tag(build_ir: Any, tag: str) -> None:
    schema = {
        "$defs": {
            **PAYLOADS,
            "U": {
                "anyOf": [const_branch(tag, "a", "TextPart"), const_branch(tag, "b", "ImagePart")]
            },
        }
    }
    model, _ = build_ir(schema)
    assert model.get("U").tag == tag


def test_discriminator_property_name_is_the_tag(build_ir: Any) -> None:
    """v1 style: `oneOf` + `discriminator`; another const shared by all branches is not the tag."""

    def branch(value: str, payload: str) -> dict[str, Any]:
        return {
            "allOf": [ref(payload)],
            "properties": {"version": {"const": "1"}, "kind": {"type": "string", "const": value}},
            "required": ["kind"],
            "type": "object",
        }

    schema = {
        "$defs": {
            **PAYLOADS,
            "U": {
                "discriminator": {"propertyName": "kind"},
                "oneOf": [branch("text", "TextPart"), branch("image", "ImagePart")],
            },
        }
    }
    model, diags = build_ir(schema)
    union = model.get("U")
    assert isinstance(union, TaggedUnion)
    assert (union.tag, union.known_tags) == ("kind", ("text", "image"))
    assert [f.wire for f in union.variants[0].fields] == ["version", "text"]
    assert not diags.items


def test_open_catch_all_reserves_the_tags_of_its_not_clause(build_ir: Any) -> None:
    """`audio` has no branch but is reserved: the catch-all must not take it."""
    schema = {
        "$defs": {
            **PAYLOADS,
            "Part": {
                "anyOf": [
                    const_branch("type", "text", "TextPart"),
                    const_branch("type", "image", "ImagePart"),
                    catch_all("type", ["text", "image", "audio"]),
                ]
            },
        }
    }
    model, diags = build_ir(schema)
    part = model.get("Part")
    assert isinstance(part, TaggedUnion) and part.open is not None
    assert part.known_tags == ("text", "image")
    assert part.open.reserved == ("audio", "image", "text")
    assert (part.open.title, part.open.doc, part.open.pointer) == (
        "other",
        "Custom or future kinds.",
        "#/$defs/Part/anyOf/2",
    )
    [tag_field] = part.open.fields
    assert (tag_field.wire, tag_field.shape, tag_field.required) == ("type", Shape("str"), True)
    assert not diags.items


def test_shared_fields_beside_the_branches_come_first_in_every_variant(build_ir: Any) -> None:
    schema = {
        "$defs": {
            **PAYLOADS,
            "Change": {
                "type": "object",
                "properties": {"path": STR, "op": {"type": "string"}},
                "required": ["path", "op"],
                "anyOf": [
                    const_branch("op", "add", "TextPart"),
                    const_branch("op", "delete", "ImagePart"),
                ],
            },
        }
    }
    model, _ = build_ir(schema)
    change = model.get("Change")
    assert isinstance(change, TaggedUnion) and change.tag == "op"
    assert [[f.wire for f in v.fields] for v in change.variants] == [
        ["path", "text"],
        ["path", "data", "mimeType"],
    ]


def test_a_tag_used_twice_is_an_error_naming_both_branches(build_ir: Any) -> None:
    schema = {
        "$defs": {
            **PAYLOADS,
            "U": {
                "anyOf": [const_branch("t", "a", "TextPart"), const_branch("t", "a", "ImagePart")]
            },
        }
    }
    _, diags = build_ir(schema)
    assert errors_of(diags) == [
        "error at #/$defs/U/anyOf/1: tag 'a' of 't' is used twice (first at #/$defs/U/anyOf/0)"
    ]


def test_a_branch_without_the_tag_property_is_the_default_variant(build_ir: Any) -> None:
    schema = {
        "$defs": {
            **PAYLOADS,
            "U": {
                "anyOf": [
                    const_branch("t", "a", "TextPart"),
                    {"title": "plain", **ref("ImagePart")},
                ]
            },
        }
    }
    model, _ = build_ir(schema)
    union = model.get("U")
    assert isinstance(union, TaggedUnion)
    assert union.open is None and union.fallback is not None
    assert (union.fallback.title, union.fallback.payload) == ("plain", "ImagePart")


# -- enums -----------------------------------------------------------------------------------------
def test_plain_enum_is_closed(build_ir: Any) -> None:
    model, _ = build_ir({"$defs": {"Priority": {"type": "string", "enum": ["high", "low"]}}})
    assert model.get("Priority") == EnumType(
        "Priority",
        "",
        "str",
        (EnumMember("high", None, ""), EnumMember("low", None, "")),
        False,
        "",
        "#/$defs/Priority",
    )


def test_const_string_branches_with_a_free_string_branch_are_an_open_enum(build_ir: Any) -> None:
    """Like ToolKind: a real value named `other`, and a catch-all titled `unknown`."""
    schema = {
        "$defs": {
            "Kind": {
                "anyOf": [
                    {"type": "string", "const": "read", "description": "Reading."},
                    {"type": "string", "const": "other"},
                    {"title": "unknown", "type": "string", "description": "Future kinds."},
                ]
            }
        }
    }
    model, _ = build_ir(schema)
    kind = model.get("Kind")
    assert isinstance(kind, EnumType)
    assert (kind.value_kind, kind.open, kind.open_doc) == ("str", True, "Future kinds.")
    assert kind.members == (EnumMember("read", None, "Reading."), EnumMember("other", None, ""))


def test_integer_consts_with_titles_and_a_free_integer_are_an_open_int_enum(build_ir: Any) -> None:
    schema = {
        "$defs": {
            "Code": {
                "anyOf": [
                    {"title": "Parse error", "type": "integer", "const": -32700},
                    {"title": "Auth required", "type": "integer", "const": -32000},
                    {"title": "Other", "type": "integer", "format": "int32"},
                ]
            }
        }
    }
    model, _ = build_ir(schema)
    code = model.get("Code")
    assert isinstance(code, EnumType) and (code.value_kind, code.open) == ("int", True)
    assert [(m.value, m.title) for m in code.members] == [
        (-32700, "Parse error"),
        (-32000, "Auth required"),
    ]


def test_mixed_const_kinds_are_not_an_enum(build_ir: Any) -> None:
    model, _ = build_ir({"$defs": {"M": {"anyOf": [{"const": "a"}, {"const": 1}]}}})
    assert isinstance(model.get("M"), UntaggedUnion)


# -- untagged unions -------------------------------------------------------------------------------
def test_untagged_object_union_is_decided_by_required_keys(build_ir: Any) -> None:
    schema = {
        "$defs": {
            "TextRes": obj(("uri", "text"), uri=STR, text=STR),
            "BlobRes": obj(("uri", "blob"), uri=STR, blob=STR),
            "Res": {"anyOf": [ref("TextRes"), ref("BlobRes")]},
        }
    }
    model, _ = build_ir(schema)
    res = model.get("Res")
    assert isinstance(res, UntaggedUnion)
    assert [(b.json_kind, b.required, b.shape) for b in res.branches] == [
        ("object", ("uri", "text"), Shape("ref", ref="TextRes")),
        ("object", ("uri", "blob"), Shape("ref", ref="BlobRes")),
    ]


def test_untagged_scalar_union_is_decided_by_json_type(build_ir: Any) -> None:
    schema = {
        "$defs": {
            "RequestId": {
                "anyOf": [
                    {"title": "Null", "type": "null"},
                    {"title": "Number", "type": "integer", "format": "int64"},
                    {"title": "Str", "type": "string"},
                ]
            }
        }
    }
    model, _ = build_ir(schema)
    rid = model.get("RequestId")
    assert isinstance(rid, UntaggedUnion)
    assert [(b.title, b.json_kind) for b in rid.branches] == [
        ("Null", "null"),
        ("Number", "int"),
        ("Str", "str"),
    ]
    assert rid.branches[1].shape == Shape(
        "int", minimum=-(2**63), maximum=2**63 - 1, format="int64"
    )


def test_repeated_identical_alternatives_are_kept_once(build_ir: Any) -> None:
    """v0.2's ClientResponse lists `null` once per method that answers with nothing."""
    schema = {
        "$defs": {
            "Answer": obj(("content",), content=STR),
            "Response": {
                "anyOf": [
                    {"title": "WriteResponse", "type": "null"},
                    {"title": "ReadResponse", **ref("Answer")},
                    {"title": "ReleaseResponse", "type": "null"},
                ]
            },
        }
    }
    model, _ = build_ir(schema)
    response = model.get("Response")
    assert isinstance(response, UntaggedUnion)
    assert [(b.title, b.json_kind) for b in response.branches] == [
        ("WriteResponse", "null"),
        ("ReadResponse", "object"),
    ]


# -- objects and aliases ---------------------------------------------------------------------------
def test_objects_aliases_and_raw_definitions(build_ir: Any) -> None:
    schema = {
        "$defs": {
            "SessionId": {"type": "string", "description": "An id."},
            "Ids": {"type": "array", "items": ref("SessionId")},
            "Anything": True,
            "Broken": 42,
            "Session": obj(("id",), id=ref("SessionId")),
        }
    }
    model, diags = build_ir(schema)
    assert model.get("SessionId") == Alias("SessionId", "An id.", Shape("str"), "#/$defs/SessionId")
    assert model.get("Ids").shape == Shape("list", item=Shape("ref", ref="SessionId"))
    assert model.get("Anything").shape == Shape("any")
    assert model.get("Broken").shape == Shape("any")
    session = model.get("Session")
    assert isinstance(session, ObjectType)
    assert session.fields[0].shape == Shape("ref", ref="SessionId")
    assert [str(d) for d in diags.items] == [
        "warning at #/$defs/Broken: definition is not an object schema; kept as raw JSON"
    ]
    assert [t.name for t in model.types] == ["SessionId", "Ids", "Anything", "Broken", "Session"]


def test_aliases_reaching_themselves_are_raw_json_with_a_warning(build_ir: Any) -> None:
    """`A = list[A]` cannot be a module-level alias; classes may refer to themselves freely."""
    schema = {
        "$defs": {
            "Nested": {"type": "array", "items": ref("Nested")},
            "Json": {"anyOf": [{"type": "null"}, {"type": "array", "items": ref("Json")}]},
            "Tree": obj(children={"type": "array", "items": ref("Tree")}),
            "Trees": {"type": "array", "items": ref("Tree")},
        }
    }
    model, diags = build_ir(schema)
    assert model.get("Nested") == Alias("Nested", "", Shape("any"), "#/$defs/Nested")
    assert model.get("Json") == Alias("Json", "", Shape("any"), "#/$defs/Json")
    assert isinstance(model.get("Tree"), ObjectType)
    assert model.get("Trees").shape == Shape("list", item=Shape("ref", ref="Tree"))
    assert [str(d) for d in diags.items] == [
        "warning at #/$defs/Nested: refers to itself through aliases only; kept as raw JSON",
        "warning at #/$defs/Json: refers to itself through aliases only; kept as raw JSON",
    ]


def test_recursive_aliases_and_repeated_alternatives_generate_working_code(
    make_package: Any,
) -> None:
    schema = {
        "$defs": {
            "Answer": obj(("content",), content=STR),
            "Response": {"anyOf": [{"type": "null"}, ref("Answer"), {"type": "null"}]},
            "Nested": {"type": "array", "items": ref("Nested")},
            "Holder": obj(("r", "n"), r=ref("Response"), n=ref("Nested")),
        }
    }
    pkg = make_package(schema)
    holder = pkg.decode(pkg.Holder, {"r": None, "n": [[], [[1]]]})
    assert (holder.r, holder.n) == (None, [[], [[1]]])
    answer = pkg.decode(pkg.Response, {"content": "c"})
    assert type(answer) is pkg.Answer and answer.content == "c"
    with pytest.raises(pkg.DecodeError) as caught:
        pkg.decode(pkg.Holder, {"r": 3, "n": []})
    assert str(caught.value) == "$.r: expected null or an object, got an integer"


def test_unknown_leniency_keyword_anywhere_is_an_error(build_ir: Any) -> None:
    schema = {
        "$defs": {
            "A": obj(v={"type": "array", "x-deserialize-foo": True}),
            "B": {"type": "string", "x-deserialize-bar": 1},
        }
    }
    _, diags = build_ir(schema)
    assert sorted(set(errors_of(diags))) == [
        "error at #/$defs/A/properties/v: unknown leniency rule 'x-deserialize-foo': "
        "the generator cannot honour it",
        "error at #/$defs/B: unknown leniency rule 'x-deserialize-bar': "
        "the generator cannot honour it",
    ]


def test_leniency_flags_reach_the_variant_fields(build_ir: Any) -> None:
    schema = {
        "$defs": {
            "Plan": obj(
                ("entries",),
                entries={
                    "type": "array",
                    "items": STR,
                    "x-deserialize-default-on-error": True,
                    "x-deserialize-skip-invalid-items": True,
                },
                title={"type": "string", "x-deserialize-default-on-null": True},
            ),
            "U": {"anyOf": [const_branch("t", "plan", "Plan")]},
        }
    }
    model, diags = build_ir(schema)
    entries, title = model.get("U").variants[0].fields
    assert entries.required and entries.leniency.default_on_error
    assert entries.leniency.skip_invalid_items and not entries.leniency.default_on_null
    assert title.leniency.default_on_null and not title.leniency.default_on_error
    assert not diags.items


# -- methods ---------------------------------------------------------------------------------------
def method_schema() -> dict[str, Any]:
    def annotated(method: str, side: str) -> dict[str, Any]:
        return {"type": "object", "x-method": method, "x-side": side, "properties": {}}

    return {
        "$defs": {
            "PromptRequest": annotated("session/prompt", "agent"),
            "PromptResponse": annotated("session/prompt", "agent"),
            "CancelNotification": annotated("session/cancel", "agent"),
            "ReadFileRequest": annotated("fs/read", "client"),
            "ReadFileResponse": annotated("fs/read", "client"),
            "UpdateSession": annotated("session/update", "client"),
            "ClientRequest": {"properties": {"params": {"anyOf": [ref("PromptRequest")]}}},
            "ClientNotification": {
                "properties": {"params": {"anyOf": [ref("CancelNotification")]}}
            },
            "AgentRequest": {"properties": {"params": {"anyOf": [ref("ReadFileRequest")]}}},
            "AgentNotification": {"properties": {"params": {"anyOf": [ref("UpdateSession")]}}},
            "AgentResponse": {
                "properties": {"result": {"anyOf": [ref("PromptResponse")]}},
            },
            "ClientResponse": {"properties": {"result": {"anyOf": [ref("ReadFileResponse")]}}},
        }
    }


META = {
    "agentMethods": {"session_prompt": "session/prompt", "session_cancel": "session/cancel"},
    "clientMethods": {"fs_read": "fs/read", "session_update": "session/update"},
    "version": 2,
}


def test_methods_from_meta_and_annotations(build_ir: Any) -> None:
    model, diags = build_ir(method_schema(), META)
    at = "meta.json#/agentMethods/"
    assert model.methods == (
        Method("session/prompt", "session_prompt", "agent", "request", "PromptRequest",
               "PromptResponse", pointer=at + "session_prompt"),
        Method("session/cancel", "session_cancel", "agent", "notification", "CancelNotification",
               None, pointer=at + "session_cancel"),
        Method("fs/read", "fs_read", "client", "request", "ReadFileRequest", "ReadFileResponse",
               pointer="meta.json#/clientMethods/fs_read"),
        Method("session/update", "session_update", "client", "notification", "UpdateSession",
               None, pointer="meta.json#/clientMethods/session_update"),
    )  # fmt: skip
    assert model.version == 2
    assert not diags.items


def test_methods_missing_from_the_stable_meta_are_unstable(build_ir: Any) -> None:
    stable = {"agentMethods": {"session_prompt": "session/prompt"}, "clientMethods": {}}
    model, _ = build_ir(method_schema(), META, stable)
    assert {m.name: m.unstable for m in model.methods} == {
        "session/prompt": False,
        "session/cancel": True,
        "fs/read": True,
        "session/update": True,
    }


def test_without_meta_the_annotations_alone_give_the_methods(build_ir: Any) -> None:
    model, _ = build_ir(method_schema())
    assert [(m.name, m.key, m.side, m.kind, m.pointer) for m in model.methods] == [
        ("session/prompt", "session_prompt", "agent", "request",
         "#/$defs/PromptRequest/x-method"),
        ("session/cancel", "session_cancel", "agent", "notification",
         "#/$defs/CancelNotification/x-method"),
        ("fs/read", "fs_read", "client", "request", "#/$defs/ReadFileRequest/x-method"),
        ("session/update", "session_update", "client", "notification",
         "#/$defs/UpdateSession/x-method"),
    ]  # fmt: skip
    assert model.version is None


def test_a_proxy_side_method_is_routed_to_both_roles(build_ir: Any) -> None:
    """`x-side: proxy` (2.3+): a proxy-chain component serves it as its conductor's agent and
    the conductor as its proxies' client, so both bases route it; METHODS keeps the side."""
    schema = method_schema()
    schema["$defs"]["ProxyInitRequest"] = {
        "type": "object", "x-method": "proxy/initialize", "x-side": "proxy", "properties": {},
    }  # fmt: skip
    schema["$defs"]["ClientRequest"]["properties"]["params"]["anyOf"].append(
        ref("ProxyInitRequest")
    )
    model, _ = build_ir(schema)
    proxy = next(m for m in model.methods if m.name == "proxy/initialize")
    assert (proxy.side, proxy.kind, proxy.roles) == ("proxy", "request", ("agent", "client"))
    assert next(m for m in model.methods if m.name == "fs/read").roles == ("client",)


def test_x_side_disagreeing_with_meta_and_unlisted_definitions_are_warnings(build_ir: Any) -> None:
    schema = method_schema()
    schema["$defs"]["PromptRequest"]["x-side"] = "client"
    schema["$defs"]["Mystery"] = {"type": "object", "x-method": "x/y", "properties": {}}
    meta = {**META, "protocolMethods": {"ghost": "$/ghost"}}
    model, diags = build_ir(schema, meta)
    assert [str(d) for d in diags.items] == [
        "warning at #/$defs/Mystery: cannot tell whether Mystery is params or result of x/y",
        "warning at #/$defs/PromptRequest: x-side 'client' disagrees with meta.json ('agent') "
        "for 'session/prompt'",
        "warning: method '$/ghost' from meta.json has no x-method definitions",
    ]
    ghost = model.methods[-1]
    assert (ghost.name, ghost.side, ghost.params, ghost.result) == (
        "$/ghost",
        "protocol",
        None,
        None,
    )


# -- exclusive alternatives and inline envelope unions ---------------------------------------------
SCOPES = {
    "SessionScope": obj(("sessionId",), sessionId=STR, toolCallId={"type": ["string", "null"]}),
    "RequestScope": obj(("requestId",), requestId={"type": "integer"}),
}


def scoped(key: str = "oneOf", **props: Any) -> dict[str, Any]:
    return {
        **obj(tuple(props), **props),
        key: [
            {"title": "Session", "description": "By session.", "allOf": [ref("SessionScope")]},
            {"title": "Request", "allOf": [ref("RequestScope")]},
        ],
    }


@pytest.mark.parametrize(("key", "exactly_one"), [("oneOf", True), ("anyOf", False)])
def test_scopes_are_an_exclusive_group_not_fields(
    build_ir: Any, key: str, exactly_one: bool
) -> None:
    model, diags = build_ir({"$defs": {**SCOPES, "Form": scoped(key, url=STR)}})
    form = model.get("Form")
    assert isinstance(form, ObjectType) and not diags.has_errors
    assert [f.wire for f in form.fields] == ["url"]  # no sessionId, toolCallId, requestId
    assert form.exclusive == Exclusive(
        (
            Alternative("SessionScope", ("sessionId",), "Session", "By session."),
            Alternative("RequestScope", ("requestId",), "Request", ""),
        ),
        f"#/$defs/Form/{key}",
        exactly_one=exactly_one,
    )


def test_each_variant_finds_the_group_of_its_payload_and_the_catch_all_its_own(
    build_ir: Any,
) -> None:
    other = {**catch_all("mode", []), **{k: v for k, v in scoped().items() if k == "oneOf"}}
    union = {"anyOf": [const_branch("mode", "form", "Form"), other]}
    model, _ = build_ir({"$defs": {**SCOPES, "Form": scoped(url=STR), "Elicit": union}})
    elicit = model.get("Elicit")
    assert isinstance(elicit, TaggedUnion) and elicit.open is not None
    assert [f.wire for f in elicit.variants[0].fields] == ["url"]
    assert elicit.variants[0].exclusive == model.get("Form").exclusive
    assert [f.wire for f in elicit.open.fields] == ["mode"]
    assert elicit.open.exclusive is not None
    assert elicit.open.exclusive.pointer == "#/$defs/Elicit/anyOf/1/oneOf"


def test_alternatives_sharing_a_required_key_stay_merged_fields(build_ir: Any) -> None:
    defs = {
        "A": obj(("id", "a"), id=STR, a=STR),
        "B": obj(("id", "b"), id=STR, b=STR),
        "Both": {**obj(), "anyOf": [ref("A"), ref("B")]},
    }
    model, _ = build_ir({"$defs": defs})
    both = model.get("Both")
    assert both.exclusive is None
    assert [(f.wire, f.required) for f in both.fields] == [("id", True), ("a", False), ("b", False)]


def test_envelope_branches_are_inline_classes_and_inline_unions_keep_alternatives(
    build_ir: Any,
) -> None:
    result = {
        "anyOf": [{"title": "Answer", "allOf": [ref("Answer")]}, {"title": "Ext", **ref("Ext")}]
    }
    schema = {
        "$defs": {
            "Answer": obj(("content",), content=STR),
            "Ext": True,
            "Response": {
                "anyOf": [
                    {"title": "Result", **obj(("id", "result"), id=STR, result=result)},
                    {
                        "title": "Error",
                        **obj(
                            ("id", "error"),
                            id={"anyOf": [{"type": "integer"}, STR, {"type": "null"}]},
                            error=ref("Answer"),
                        ),
                    },
                ]
            },
        }
    }
    model, diags = build_ir(schema)
    response = model.get("Response")
    assert isinstance(response, UntaggedUnion) and not diags.items
    ok, error = response.branches
    assert (ok.title, ok.required, ok.shape) == ("Result", ("id", "result"), Shape("object"))
    assert ok.inline is not None and ok.inline.name == "Response/0"
    assert ok.inline.pointer == "#/$defs/Response/anyOf/0"
    assert [(f.wire, f.shape) for f in ok.inline.fields] == [
        ("id", Shape("str")),
        ("result", Shape("union", options=(Shape("ref", ref="Answer"), Shape("ref", ref="Ext")))),
    ]
    assert error.inline is not None
    assert error.inline.fields[0].shape == Shape(
        "union", nullable=True, options=(Shape("int"), Shape("str"))
    )


def test_a_method_both_request_and_notification_is_two_methods(build_ir: Any) -> None:
    """One wire name with a request and a notification envelope (unstable `proxy/successor`):
    two methods, the request first, told apart on the wire by the `id`; nothing to warn of."""
    defs = {
        "HopRequest": {"type": "object", "x-method": "hop", "x-side": "proxy"},
        "HopNotification": {"type": "object", "x-method": "hop", "x-side": "proxy"},
    }
    model, diags = build_ir({"$defs": defs})
    assert [(m.name, m.kind, m.params) for m in model.methods] == [
        ("hop", "request", "HopRequest"),
        ("hop", "notification", "HopNotification"),
    ]
    assert diags.items == []
