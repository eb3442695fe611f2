"""`acp-codegen diff`, one tiny schema pair per rule: fields, shapes, types, methods, direction.

Each test starts from `base()`, a minimal ACP-shaped schema with one request handled by the
agent (`session/prompt`: PromptRequest sent client → agent, PromptResponse agent → client)
and one notification handled by the client (`session/update`, sent agent → client), changes
one thing and checks the one finding it gives.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from codegen.commands.diff import diff
from codegen.specdiff.finding import Finding
from codegen.specdiff.load import load_input
from tests.conftest import write_schema

META: dict[str, Any] = {
    "version": 2,
    "agentMethods": {"session_prompt": "session/prompt"},
    "clientMethods": {"session_update": "session/update"},
}


def ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


def base() -> dict[str, Any]:
    def obj(method: str, side: str, **props: Any) -> dict[str, Any]:
        return {"type": "object", "x-method": method, "x-side": side, "properties": props}

    defs = {
        "PromptRequest": obj("session/prompt", "agent", sessionId=ref("SessionId")),
        "PromptResponse": obj("session/prompt", "agent", stopReason={"type": "string"}),
        "UpdateNotification": obj("session/update", "client", sessionId=ref("SessionId")),
        "SessionId": {"type": "string"},
    }
    defs["PromptRequest"]["required"] = ["sessionId"]
    defs["UpdateNotification"]["required"] = ["sessionId"]
    return {"title": "tiny", "$defs": defs}


def props(schema: dict[str, Any], name: str) -> dict[str, Any]:
    return schema["$defs"][name].setdefault("properties", {})  # type: ignore[no-any-return]


def run(
    tmp_path: Path,
    old: dict[str, Any],
    new: dict[str, Any],
    old_meta: dict[str, Any] | None = None,
    new_meta: dict[str, Any] | None = None,
) -> list[Finding]:
    a = write_schema(tmp_path / "old", old, old_meta or META)
    b = write_schema(tmp_path / "new", new, new_meta or META)
    return diff(load_input(str(a)), load_input(str(b)))


def changed(tmp_path: Path, edit: Any, start: dict[str, Any] | None = None) -> list[Finding]:
    """The findings of `start` (default `base()`) against a copy changed by `edit(schema)`."""
    old = start or base()
    new = copy.deepcopy(old)
    edit(new)
    return run(tmp_path, old, new)


def only(findings: list[Finding], kind: str) -> Finding:
    """The one finding of that kind (description changes aside, nothing else may be there)."""
    rest = [f for f in findings if f.kind != "description-changed"]
    assert [f.kind for f in rest] == [kind], [(f.kind, f.path, f.message) for f in rest]
    return rest[0]


def summary(f: Finding) -> tuple[str, str, str, str]:
    return (f.severity, f.path, f.direction, f.breaks)


# -- identical inputs ------------------------------------------------------------------------
def test_identical_inputs_give_no_findings(tmp_path: Path) -> None:
    assert run(tmp_path, base(), base()) == []


# -- fields: direction decides whom a change breaks -------------------------------------------
def test_required_field_added_to_what_clients_send_breaks_old_clients(tmp_path: Path) -> None:
    def edit(s: dict[str, Any]) -> None:
        props(s, "PromptRequest")["cwd"] = {"type": "string"}
        s["$defs"]["PromptRequest"]["required"].append("cwd")

    f = only(changed(tmp_path, edit), "field-added-required")
    assert summary(f) == ("breaking", "PromptRequest.cwd", "client->agent", "clients")
    assert "old clients do not send it; new agents require it" in f.message
    assert (f.python, f.python_severity) == (
        "PromptRequest.cwd added (a required keyword)",
        "breaking",
    )


def test_required_field_added_to_what_agents_send_breaks_old_agents(tmp_path: Path) -> None:
    def edit(s: dict[str, Any]) -> None:
        props(s, "PromptResponse")["usage"] = {"type": "integer"}
        s["$defs"]["PromptResponse"]["required"] = ["usage"]

    f = only(changed(tmp_path, edit), "field-added-required")
    assert summary(f) == ("breaking", "PromptResponse.usage", "agent->client", "agents")


def test_optional_field_added_is_info(tmp_path: Path) -> None:
    def edit(s: dict[str, Any]) -> None:
        props(s, "PromptRequest")["cwd"] = {"type": ["string", "null"]}

    f = only(changed(tmp_path, edit), "field-added-optional")
    assert summary(f) == ("info", "PromptRequest.cwd", "client->agent", "")
    assert f.python_severity == "info"


def test_required_field_removed_breaks_old_receivers(tmp_path: Path) -> None:
    start = base()
    start["$defs"]["PromptResponse"]["required"] = ["stopReason"]
    f = only(
        changed(tmp_path, lambda s: props(s, "PromptResponse").clear(), start),
        "field-removed-required",
    )
    assert summary(f) == ("breaking", "PromptResponse.stopReason", "agent->client", "clients")
    assert "new agents stop sending it; old clients still require it" in f.message
    assert (f.python, f.python_severity) == ("PromptResponse.stop_reason removed", "breaking")


def test_optional_field_removed_is_a_warning_and_a_python_break(tmp_path: Path) -> None:
    f = only(
        changed(tmp_path, lambda s: props(s, "PromptResponse").clear()), "field-removed-optional"
    )
    assert summary(f) == ("warning", "PromptResponse.stopReason", "agent->client", "")
    assert f.python_severity == "breaking"


def test_removed_field_with_a_same_typed_new_one_hints_a_rename(tmp_path: Path) -> None:
    def edit(s: dict[str, Any]) -> None:
        props(s, "PromptResponse")["reason"] = props(s, "PromptResponse").pop("stopReason")

    findings = changed(tmp_path, edit)
    removed = next(f for f in findings if f.kind == "field-removed-optional")
    assert removed.message.endswith("`reason` has the same type: renamed?")


def test_optional_to_required_breaks_old_senders(tmp_path: Path) -> None:
    def edit(s: dict[str, Any]) -> None:
        s["$defs"]["PromptResponse"]["required"] = ["stopReason"]

    f = only(changed(tmp_path, edit), "field-now-required")
    assert summary(f) == ("breaking", "PromptResponse.stopReason", "agent->client", "agents")


def test_required_to_optional_breaks_old_receivers(tmp_path: Path) -> None:
    def edit(s: dict[str, Any]) -> None:
        s["$defs"]["PromptRequest"]["required"] = []

    f = only(changed(tmp_path, edit), "field-now-optional")
    assert summary(f) == ("breaking", "PromptRequest.sessionId", "client->agent", "agents")
    assert (f.python, f.python_severity) == ("PromptRequest.session_id: may be UNSET", "warning")


# -- nullability, types, aliases ----------------------------------------------------------------
def test_nullable_added_breaks_old_receivers(tmp_path: Path) -> None:
    def edit(s: dict[str, Any]) -> None:
        props(s, "PromptResponse")["stopReason"] = {"type": ["string", "null"]}

    f = only(changed(tmp_path, edit), "nullable-added")
    assert summary(f) == ("breaking", "PromptResponse.stopReason", "agent->client", "clients")


def test_nullable_added_to_a_default_on_error_field_is_a_warning(tmp_path: Path) -> None:
    start = base()
    props(start, "PromptResponse")["stopReason"]["x-deserialize-default-on-error"] = True

    def edit(s: dict[str, Any]) -> None:
        props(s, "PromptResponse")["stopReason"]["type"] = ["string", "null"]

    f = only(changed(tmp_path, edit, start), "nullable-added-lenient")
    assert f.severity == "warning"


def test_nullable_removed_breaks_old_senders(tmp_path: Path) -> None:
    start = base()
    props(start, "PromptResponse")["stopReason"] = {"type": ["string", "null"]}

    def edit(s: dict[str, Any]) -> None:
        props(s, "PromptResponse")["stopReason"] = {"type": "string"}

    f = only(changed(tmp_path, edit, start), "nullable-removed")
    assert summary(f) == ("breaking", "PromptResponse.stopReason", "agent->client", "agents")


def test_integer_to_number_widens(tmp_path: Path) -> None:
    start = base()
    props(start, "PromptRequest")["limit"] = {"type": "integer"}
    f = only(
        changed(
            tmp_path, lambda s: props(s, "PromptRequest").update(limit={"type": "number"}), start
        ),
        "type-widened",
    )
    assert summary(f) == ("breaking", "PromptRequest.limit", "client->agent", "agents")
    assert f.message.startswith("field `integer` → `number`")
    assert f.python == "PromptRequest.limit: annotation int → float"


def test_tighter_bounds_narrow_and_keep_the_python_annotation(tmp_path: Path) -> None:
    start = base()
    props(start, "PromptRequest")["limit"] = {"type": "integer"}

    def edit(s: dict[str, Any]) -> None:
        props(s, "PromptRequest")["limit"] = {"type": "integer", "minimum": 0}

    f = only(changed(tmp_path, edit, start), "type-narrowed")
    assert summary(f) == ("breaking", "PromptRequest.limit", "client->agent", "clients")
    assert (f.python, f.python_severity) == ("", None)


def test_min_items_added_narrows(tmp_path: Path) -> None:
    start = base()
    props(start, "PromptRequest")["tags"] = {"type": "array", "items": {"type": "string"}}

    def edit(s: dict[str, Any]) -> None:
        props(s, "PromptRequest")["tags"]["minItems"] = 1

    assert only(changed(tmp_path, edit, start), "type-narrowed").path == "PromptRequest.tags"


def test_unrelated_types_change(tmp_path: Path) -> None:
    def edit(s: dict[str, Any]) -> None:
        props(s, "PromptResponse")["stopReason"] = {"type": "boolean"}

    f = only(changed(tmp_path, edit), "type-changed")
    assert summary(f) == (
        "breaking",
        "PromptResponse.stopReason",
        "agent->client",
        "clients and agents",
    )


def test_widening_a_default_on_error_field_is_a_warning(tmp_path: Path) -> None:
    start = base()
    props(start, "PromptResponse")["count"] = {
        "type": "integer",
        "x-deserialize-default-on-error": True,
    }

    def edit(s: dict[str, Any]) -> None:
        props(s, "PromptResponse")["count"]["type"] = "number"

    assert only(changed(tmp_path, edit, start), "type-widened-lenient").severity == "warning"


def test_inline_string_to_a_string_alias_is_no_wire_change(tmp_path: Path) -> None:
    def edit(s: dict[str, Any]) -> None:
        s["$defs"]["StopReason"] = {"type": "string"}
        props(s, "PromptResponse")["stopReason"] = {"allOf": [ref("StopReason")]}

    findings = changed(tmp_path, edit)
    alias = next(f for f in findings if f.kind == "alias-only")
    assert summary(alias) == ("info", "PromptResponse.stopReason", "agent->client", "")
    assert alias.message.startswith("field `string` → `StopReason` (string), the same JSON")
    assert (alias.python, alias.python_severity) == (
        "PromptResponse.stop_reason: annotation str → StopReason",
        "info",
    )
    assert {f.kind for f in findings} == {"alias-only", "type-added"}
    assert all(f.severity == "info" for f in findings)


def test_alias_to_inline_string_is_no_wire_change_either(tmp_path: Path) -> None:
    def edit(s: dict[str, Any]) -> None:
        props(s, "PromptRequest")["sessionId"] = {"type": "string"}

    f = only(changed(tmp_path, edit), "alias-only")
    assert (f.severity, f.path) == ("info", "PromptRequest.sessionId")


def test_a_changed_alias_is_reported_once_on_the_alias_with_its_direction(tmp_path: Path) -> None:
    def edit(s: dict[str, Any]) -> None:
        s["$defs"]["SessionId"] = {"type": "integer"}

    f = only(changed(tmp_path, edit), "type-changed")
    # SessionId is in PromptRequest (client → agent) and UpdateNotification (agent → client)
    assert summary(f) == ("breaking", "SessionId", "both", "clients and agents")
    assert f.message.startswith("type `string` → `integer`")


def test_string_format_change_is_info(tmp_path: Path) -> None:
    def edit(s: dict[str, Any]) -> None:
        props(s, "PromptResponse")["stopReason"]["format"] = "uri"

    f = only(changed(tmp_path, edit), "format-changed")
    assert (f.severity, f.message.split(":")[0]) == ("info", "string format `none` → `uri`")


# -- leniency and descriptions ----------------------------------------------------------------
def test_leniency_removed_is_a_warning_added_is_info(tmp_path: Path) -> None:
    lenient = base()
    props(lenient, "PromptResponse")["stopReason"]["x-deserialize-default-on-error"] = True
    removed = only(run(tmp_path / "a", lenient, base()), "leniency-removed")
    assert summary(removed) == ("warning", "PromptResponse.stopReason", "agent->client", "agents")
    assert removed.message.startswith("x-deserialize-default-on-error removed: new clients")
    added = only(run(tmp_path / "b", base(), lenient), "leniency-added")
    assert added.severity == "info"


def test_description_only_change_is_info(tmp_path: Path) -> None:
    def edit(s: dict[str, Any]) -> None:
        props(s, "PromptResponse")["stopReason"]["description"] = "Why the turn ended."

    [f] = changed(tmp_path, edit)
    assert (f.kind, f.severity, f.path) == (
        "description-changed",
        "info",
        "PromptResponse.stopReason",
    )


# -- types -----------------------------------------------------------------------------------
def test_type_renamed_with_the_same_structure_is_a_python_break_only(tmp_path: Path) -> None:
    start = base()
    start["$defs"]["Cost"] = {"type": "object", "properties": {"amount": {"type": "number"}}}
    props(start, "PromptResponse")["cost"] = ref("Cost")

    def edit(s: dict[str, Any]) -> None:
        s["$defs"]["Price"] = s["$defs"].pop("Cost")
        props(s, "PromptResponse")["cost"] = ref("Price")

    f = only(changed(tmp_path, edit, start), "type-renamed")
    assert summary(f) == ("info", "Cost", "agent->client", "")
    assert f.message.startswith("`Cost` renamed to `Price` (the same structure)")
    assert (f.python, f.python_severity) == ("Cost → Price", "breaking")


def test_type_removed_and_added_are_python_changes(tmp_path: Path) -> None:
    def edit(s: dict[str, Any]) -> None:
        s["$defs"]["Extra"] = {"type": "object", "properties": {"a": {"type": "string"}}}

    added = only(changed(tmp_path / "a", edit), "type-added")
    assert (added.severity, added.direction, added.python_severity) == ("info", "none", "info")
    removed = only(run(tmp_path / "b", _with(edit), base()), "type-removed")
    assert (removed.python, removed.python_severity) == ("Extra is no longer exported", "breaking")


def test_object_to_one_branch_union_of_the_same_object_is_only_a_python_change(
    tmp_path: Path,
) -> None:
    start = base()
    start["$defs"]["Auth"] = {"type": "object", "properties": {"id": {"type": "string"}}}
    props(start, "PromptResponse")["auth"] = ref("Auth")

    def edit(s: dict[str, Any]) -> None:
        s["$defs"]["AuthAgent"] = s["$defs"]["Auth"]
        s["$defs"]["Auth"] = {"anyOf": [{"title": "agent", "allOf": [ref("AuthAgent")]}]}

    findings = changed(tmp_path, edit, start)
    assert {(f.kind, f.severity) for f in findings} == {
        ("type-form-changed", "info"),
        ("type-added", "info"),
    }


def test_object_to_string_changes_kind(tmp_path: Path) -> None:
    start = base()
    start["$defs"]["Auth"] = {"type": "object", "properties": {"id": {"type": "string"}}}
    props(start, "PromptResponse")["auth"] = ref("Auth")

    def edit(s: dict[str, Any]) -> None:
        s["$defs"]["Auth"] = {"type": "string"}

    f = only(changed(tmp_path, edit, start), "type-kind-changed")
    assert summary(f) == ("breaking", "Auth", "agent->client", "clients and agents")


def test_a_type_no_method_reaches_is_info_whatever_the_change(tmp_path: Path) -> None:
    start = base()
    start["$defs"]["Unused"] = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
    }

    def edit(s: dict[str, Any]) -> None:
        s["$defs"]["Unused"]["required"] = []

    f = only(changed(tmp_path, edit, start), "field-now-optional")
    assert summary(f) == ("info", "Unused.a", "none", "")


def test_envelopes_give_a_direction_to_what_no_method_names(tmp_path: Path) -> None:
    start = base()
    start["$defs"]["Error"] = {
        "type": "object",
        "properties": {"code": {"type": "integer"}},
        "required": ["code"],
    }
    start["$defs"]["AgentResponse"] = {
        "anyOf": [{"type": "object", "properties": {"error": ref("Error")}, "required": ["error"]}]
    }

    def edit(s: dict[str, Any]) -> None:
        s["$defs"]["Error"]["required"] = []

    findings = changed(tmp_path, edit, start)
    assert summary(only(findings, "field-now-optional")) == (
        "breaking",
        "Error.code",
        "agent->client",
        "clients",
    )


# -- methods ---------------------------------------------------------------------------------
def _with(edit: Any) -> dict[str, Any]:
    schema = base()
    edit(schema)
    return schema


def _logout(s: dict[str, Any], method: str, prefix: str) -> None:
    for role in ("Request", "Response"):
        s["$defs"][f"{prefix}{role}"] = {
            "type": "object",
            "x-method": method,
            "x-side": "agent",
            "properties": {"_meta": {"type": ["object", "null"]}},
        }


def _meta(**agent: str) -> dict[str, Any]:
    meta = json.loads(json.dumps(META))
    meta["agentMethods"].update(agent)
    return meta


def test_method_removed_breaks_old_callers_and_hints_the_rename(tmp_path: Path) -> None:
    old = _with(lambda s: _logout(s, "logout", "Logout"))
    new = _with(lambda s: _logout(s, "auth/logout", "LogoutAuth"))
    findings = run(tmp_path, old, new, _meta(logout="logout"), _meta(auth_logout="auth/logout"))
    by_kind = {f.kind: f for f in findings}
    removed = by_kind["method-removed"]
    assert summary(removed) == ("breaking", "method:logout", "client->agent", "clients")
    assert "old clients get -32601 (method not found) from new agents" in removed.message
    assert removed.message.endswith("probably renamed to `auth/logout` (same side and payloads)")
    added = by_kind["method-added-request"]
    assert (added.severity, added.path) == ("warning", "method:auth/logout")
    renamed = [f.message for f in findings if f.kind == "type-renamed"]
    assert sorted(renamed)[0].startswith(
        "`LogoutRequest` renamed to `LogoutAuthRequest` (the params of `auth/logout`)"
    )


def test_notification_added_is_info(tmp_path: Path) -> None:
    def edit(s: dict[str, Any]) -> None:
        s["$defs"]["CancelNotification"] = {
            "type": "object",
            "x-method": "session/cancel",
            "x-side": "agent",
            "properties": {"sessionId": ref("SessionId")},
        }

    findings = run(tmp_path, base(), _with(edit), META, _meta(session_cancel="session/cancel"))
    f = next(f for f in findings if f.path == "method:session/cancel")
    assert (f.kind, f.severity, f.direction) == (
        "method-added-notification",
        "info",
        "client->agent",
    )


def test_method_moved_to_the_other_side(tmp_path: Path) -> None:
    def edit(s: dict[str, Any]) -> None:
        s["$defs"]["UpdateNotification"]["x-side"] = "agent"

    meta = json.loads(json.dumps(META))
    meta["agentMethods"]["session_update"] = meta["clientMethods"].pop("session_update")
    findings = run(tmp_path, base(), _with(edit), META, meta)
    f = next(f for f in findings if f.kind == "method-side-changed")
    assert summary(f) == ("breaking", "method:session/update", "both", "clients and agents")


def test_notification_to_request_changes_the_method_kind(tmp_path: Path) -> None:
    def edit(s: dict[str, Any]) -> None:
        s["$defs"]["UpdateRequest"] = s["$defs"].pop("UpdateNotification")
        s["$defs"]["UpdateResponse"] = {
            "type": "object",
            "x-method": "session/update",
            "x-side": "client",
            "properties": {},
        }

    findings = run(tmp_path, base(), _with(edit))
    kinds = {f.kind: f for f in findings}
    assert kinds["method-kind-changed"].message.startswith("now a request, was a notification")
    assert kinds["method-kind-changed"].severity == "breaking"
    assert kinds["type-renamed"].message.startswith(
        "`UpdateNotification` renamed to `UpdateRequest` (the params of `session/update`)"
    )


def test_method_moved_to_the_unstable_lane(tmp_path: Path) -> None:
    def lane(folder: Path, stable: dict[str, Any]) -> Path:
        folder.mkdir()
        (folder / "schema.unstable.json").write_text(json.dumps(base()))
        (folder / "meta.unstable.json").write_text(json.dumps(META))
        (folder / "meta.json").write_text(json.dumps(stable))
        return folder / "schema.unstable.json"

    only_prompt = {"version": 2, "agentMethods": META["agentMethods"], "clientMethods": {}}
    old = load_input(str(lane(tmp_path / "old", META)))
    new = load_input(str(lane(tmp_path / "new", only_prompt)))
    f = only(diff(old, new), "method-now-unstable")
    assert summary(f) == ("warning", "method:session/update", "agent->client", "agents")
    assert only(diff(new, old), "method-now-stable").severity == "info"


def test_any_json_to_object_or_null_narrows_without_a_null_change(tmp_path: Path) -> None:
    start = base()
    props(start, "PromptResponse")["_meta"] = {}

    def edit(s: dict[str, Any]) -> None:
        props(s, "PromptResponse")["_meta"] = {"type": ["object", "null"]}

    f = only(changed(tmp_path, edit, start), "type-narrowed")  # `any` already took null
    assert f.message.startswith("field `any JSON` → `object | null`: old agents may send")


# -- exclusive alternatives (the elicitation scopes) --------------------------------------------
def _scoped(
    s: dict[str, Any], key: str = "oneOf", alternatives: tuple[str, ...] = ("A", "B")
) -> None:
    for name in alternatives:
        prop = name.lower()
        s["$defs"][name] = {
            "type": "object",
            "properties": {prop: {"type": "string"}},
            "required": [prop],
        }
    s["$defs"]["PromptRequest"][key] = [ref(name) for name in alternatives]


def test_exclusive_alternatives_added_break_old_clients(tmp_path: Path) -> None:
    found = changed(tmp_path, _scoped)
    f = only([x for x in found if x.kind != "type-added"], "exclusive-added")
    assert summary(f) == ("breaking", "PromptRequest", "client->agent", "clients")
    assert f.message.startswith("exclusive alternatives (exactly one of `A | B`) added")
    assert (f.python, f.python_severity) == ("PromptRequest.one_of added", "breaking")


def test_exclusive_alternatives_removed_break_old_agents(tmp_path: Path) -> None:
    start = base()
    _scoped(start)

    def edit(s: dict[str, Any]) -> None:
        del s["$defs"]["PromptRequest"]["oneOf"]

    f = only(changed(tmp_path, edit, start), "exclusive-removed")
    assert summary(f) == ("breaking", "PromptRequest", "client->agent", "agents")
    assert f.python == "PromptRequest.one_of removed"


def test_exclusive_alternatives_one_of_to_any_of_widens(tmp_path: Path) -> None:
    start = base()
    _scoped(start)

    def edit(s: dict[str, Any]) -> None:
        s["$defs"]["PromptRequest"]["anyOf"] = s["$defs"]["PromptRequest"].pop("oneOf")

    f = only(changed(tmp_path, edit, start), "exclusive-widened")
    assert f.message.startswith(
        "exclusive alternatives (exactly one of `A | B`) → (any of `A | B`)"
    )
    assert summary(f) == ("breaking", "PromptRequest", "client->agent", "agents")
    assert f.python == (
        "PromptRequest.one_of: the same annotation; several alternatives' keys now decode as the"
        " first"
    )


def test_exclusive_alternative_removed_narrows(tmp_path: Path) -> None:
    start = base()
    _scoped(start, "oneOf", ("A", "B", "C"))

    def edit(s: dict[str, Any]) -> None:
        s["$defs"]["PromptRequest"]["oneOf"].pop()

    f = only(changed(tmp_path, edit, start), "exclusive-narrowed")
    assert summary(f) == ("breaking", "PromptRequest", "client->agent", "clients")
    assert f.python == "PromptRequest.one_of: its annotation changes"


def test_exclusive_any_of_reordered_changes(tmp_path: Path) -> None:
    start = base()
    _scoped(start, "anyOf")

    def edit(s: dict[str, Any]) -> None:
        s["$defs"]["PromptRequest"]["anyOf"].reverse()

    f = only(changed(tmp_path, edit, start), "exclusive-changed")
    assert summary(f) == ("breaking", "PromptRequest", "client->agent", "clients and agents")
