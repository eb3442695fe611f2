"""The lowering: what the templates see, decided in Python (render/lower.py)."""

from __future__ import annotations

from typing import Any

import pytest

from codegen.diagnostics import Diagnostics, InputError
from codegen.modules import LANE_MODULES
from codegen.naming import assign_names
from codegen.parse.classify import build_model
from codegen.render.context import AliasContext, RpcContext, SessionStateContext
from codegen.render.lower import lower
from tests.conftest import inline_source

MODULES = LANE_MODULES


def contexts(schema: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]:
    diags = Diagnostics()
    model = build_model(inline_source(schema, meta), diags)
    names = assign_names(model, None, diags)
    assert not diags.has_errors, [str(d) for d in diags.items]
    modules = [m for m in MODULES if all(t in model.index for t in m.needs_types)]
    return lower(model, names, modules, banner="# b", ref="r", sha256="s")


def obj(required: tuple[str, ...] = (), **props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(required)}


def tagged(tag: str, value: str, required: tuple[str, ...] = (), **props: Any) -> dict[str, Any]:
    return obj((tag, *required), **{tag: {"type": "string", "const": value}, **props})


# -- methods and dispatch ----------------------------------------------------------------------
def test_each_role_gets_its_methods_and_the_protocol_ones_but_not_cancel() -> None:
    defs = {
        "PingRequest": {**obj(), "x-method": "ping", "x-side": "agent"},
        "PingResponse": {**obj(), "x-method": "ping", "x-side": "agent"},
        "ShowNotification": {**obj(), "x-method": "show", "x-side": "client"},
        "CancelRequestNotification": {**obj(), "x-method": "$/cancel_request"},
    }
    meta = {
        "agentMethods": {"ping": "ping"},
        "clientMethods": {"show": "show"},
        "protocolMethods": {"hello": "$/hello", "cancel_request": "$/cancel_request"},
    }
    rpc = contexts({"$defs": defs}, meta)["rpc"]
    assert isinstance(rpc, RpcContext)
    assert [m.name for m in rpc.agent] == ["ping", "$/hello"]
    assert [m.name for m in rpc.client] == ["show", "$/hello"]
    assert rpc.cancel_method == "$/cancel_request"
    ping, show, hello = rpc.agent[0], rpc.client[0], rpc.agent[1]
    assert (ping.params_annotation, ping.result_annotation, ping.result_type) == (
        "_m.PingRequest",
        "_m.PingResponse",
        "_m.PingResponse",
    )
    assert (show.params_annotation, show.result_annotation) == ("_m.ShowNotification", "None")
    assert (hello.params_type, hello.params_annotation, hello.result_annotation) == (
        "None",
        "Any",
        "Any",
    )
    assert (rpc.needs_any, rpc.needs_models, rpc.has_requests) == (True, True, True)


# -- untagged unions ---------------------------------------------------------------------------
def untagged(*branches: Any) -> AliasContext:
    defs = {
        "Mode": {"enum": ["a", "b"]},
        "Thing": obj(("id",), id={"type": "string"}),
        "U": {"anyOf": list(branches)},
    }
    [alias] = [a for a in contexts({"$defs": defs})["models"].aliases if a.py == "U"]
    return alias


def test_alternatives_after_one_that_takes_every_value_of_its_type_are_dropped() -> None:
    alias = untagged({"type": "string"}, {"$ref": "#/$defs/Mode"}, {"type": "integer"})
    assert alias.decode.splitlines() == [
        "if type(v) is int:",
        "    return v",
        "if type(v) is str:",  # any string: the enum after it is never tried
        "    return v",
        "raise _rt.expected('an integer or a string', v)",
    ]


def test_a_known_json_type_is_not_tested_again() -> None:
    alias = untagged(
        {"$ref": "#/$defs/Mode"},
        {"type": "string"},
        {"type": "integer", "minimum": 0},
        {"type": "null"},
        {"type": "array", "items": {"$ref": "#/$defs/Thing"}},
    )
    assert alias.decode.splitlines() == [
        "if v is None:",
        "    return v",
        "if type(v) is int:",
        "    if v < 0:",
        "        raise _rt.expected('an integer >= 0', v)",
        "    return v",
        "if type(v) is str:",
        "    try:",
        "        if v not in _E_Mode:",
        "            raise _rt.expected(\"one of 'a', 'b'\", v)",
        "        return _E_Mode[v]",
        "    except _DecodeError:",
        "        pass",
        "    return v",
        "if type(v) is list:",
        "    first = v[0] if v else None",
        "    if first is None or (type(first) is dict and 'id' in first):",
        "        return _rt.list_of(v, _d_Thing)",
        "    raise _rt.DecodeError('list matches no alternative')",
        "raise _rt.expected('null, an integer, a string or a list', v)",
    ]
    assert " ".join(alias.note.split()) == (
        "Untagged union, decided by JSON type first, in this order: null, integer, string,"
        " list. Among alternatives of another shared JSON type, the first in schema order"
        " that accepts the value."
    )
    assert max(len(line) for line in alias.note.splitlines()) <= 88  # wrapped


def test_objects_are_told_apart_by_their_required_keys() -> None:
    alias = untagged({"$ref": "#/$defs/Thing"}, obj(("x",)), obj(("y",)))
    assert alias.decode.splitlines() == [
        "if type(v) is dict:",
        "    if 'id' in v:",
        "        return _d_Thing(v)",
        "    if 'x' in v:",
        "        return _d_UAlternative2(v)",
        "    if 'y' in v:",
        "        return _d_UAlternative3(v)",
        "    raise _rt.DecodeError('object matches no alternative: needs the keys of one of"
        " {id} or {x} or {y}')",
        "raise _rt.expected('an object', v)",
    ]


def test_an_object_without_required_keys_takes_what_the_others_leave() -> None:
    alias = untagged({"$ref": "#/$defs/Thing"}, obj(), obj(("x",)))
    assert alias.decode.splitlines() == [
        "if type(v) is dict:",
        "    if 'id' in v:",
        "        return _d_Thing(v)",
        "    return _d_UAlternative2(v)",  # the one after it is never tried
        "raise _rt.expected('an object', v)",
    ]


def test_a_catch_all_last_takes_what_the_typed_alternatives_reject() -> None:
    alias = untagged({"type": "integer", "maximum": 9}, {"$ref": "#/$defs/Thing"}, {})
    assert alias.decode.splitlines() == [
        "if type(v) is int:",
        "    try:",
        "        if v > 9:",
        "            raise _rt.expected('an integer <= 9', v)",
        "        return v",
        "    except _DecodeError:",
        "        pass",
        "if type(v) is dict:",
        "    if 'id' in v:",
        "        try:",
        "            return _d_Thing(v)",
        "        except _DecodeError:",
        "            pass",
        "return v",  # any value, kept as it is
    ]


# -- the session model -------------------------------------------------------------------------
def session_schema() -> dict[str, Any]:
    content = {"type": "object"}
    branches = [
        tagged("sessionUpdate", "agent_message_chunk", ("messageId", "content"),
               messageId={"type": "string"}, content=content),
        tagged("sessionUpdate", "user_message_chunk", ("content",),
               messageId={"type": "string"}, content=content),  # messageId optional: no rule
        tagged("sessionUpdate", "tool_call_update", ("toolCallId",),
               toolCallId={"type": "string"}, title={"type": "string"},
               locations={"type": ["array", "null"], "items": {}}),
        tagged("sessionUpdate", "usage_update", ("used", "size"),
               used={"type": "integer"}, size={"type": "integer"}, _meta={"type": "object"}),
        tagged("sessionUpdate", "notice", (), text={"type": "string"}),  # no rule for it
    ]  # fmt: skip
    return {"$defs": {"SessionUpdate": {"anyOf": branches}, "StateUpdate": {"type": "string"}}}


def test_a_session_rule_applies_only_where_the_variant_has_what_it_reads() -> None:
    session = contexts(session_schema())["session_state"]
    assert isinstance(session, SessionStateContext)
    assert session.tag_wire == "sessionUpdate"
    assert [tag for tag, _ in session.kinds] == [
        "agent_message_chunk",
        "user_message_chunk",
        "tool_call_update",
        "usage_update",
        "notice",
    ]
    assert [method for _, method in session.rules] == [
        "_message_chunk",
        "_tool_call_update",
        "_usage_update",
    ]
    assert session.roles == (("agent_message_chunk", "agent"),)
    assert session.tool_call_collections == ("locations",)
    assert session.usage_fields == ("used", "size")


def test_a_session_update_that_is_not_a_tagged_union_is_bad_input() -> None:
    schema = {"$defs": {"SessionUpdate": {"type": "string"}, "StateUpdate": {"type": "string"}}}
    with pytest.raises(InputError, match="SessionUpdate is not a tagged union"):
        contexts(schema)
