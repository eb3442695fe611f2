"""The severity table: every kind of change, whom it hurts on the wire, and what it does to
the generated Python API. This is the one place severities are decided.

A message has a sender and a receiver. After a release, an old peer meets a new one, in both
pairings; so a change hurts:
- `receivers` when old receivers reject (or misread) what new senders may now send
  (the accepted set grew: a new variant in a closed union, a field that became optional, ...);
- `senders` when new receivers reject what old senders still send (the accepted set shrank:
  a new required field, a removed variant, ...); for a method the sender is the caller;
- `both` when it is neither a growth nor a shrink (a different type, a different tag field);
- `nobody` when no conforming message fails (the change is additive, or only names moved).
The direction of the type (who sends it, from `reach`) turns `receivers`/`senders` into
agents or clients. A type no method reaches is not on the wire: its changes are `info`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["breaking", "warning", "info"]
Hurts = Literal["receivers", "senders", "both", "nobody"]
Direction = Literal["client->agent", "agent->client", "both", "none"]

SEVERITIES: tuple[Severity, ...] = ("breaking", "warning", "info")
DIRECTIONS: tuple[Direction, ...] = ("client->agent", "agent->client", "both", "none")
RANK: dict[str, int] = {"breaking": 2, "warning": 1, "info": 0}


@dataclass(frozen=True, slots=True)
class Rule:
    """One row of the severity table: a kind of change and its severity per direction."""

    kind: str
    change: str  # the row label of the table
    severity: Severity  # on the wire, when the type is sent at all
    hurts: Hurts
    python: Severity | None  # what it does to code using the generated package; None: nothing
    reason: str
    python_reason: str = ""


def _r(
    kind: str,
    change: str,
    severity: Severity,
    hurts: Hurts,
    python: Severity | None,
    reason: str,
    python_reason: str = "",
) -> Rule:
    return Rule(kind, change, severity, hurts, python, reason, python_reason)


# fmt: off
_TABLE = (
    # -- methods (the sender is the caller, the receiver the handling side) ----------------
    _r(
        "method-removed", "method removed", "breaking", "senders", "breaking",
        "old callers get -32601 (method not found) from new handlers",
        "its METHODS entry, stub and handler go away",
    ),
    _r(
        "method-added-request", "request method added", "warning", "senders", "info",
        "old handlers answer -32601: new callers must expect it (or check capabilities)",
        "a new METHODS entry, stub and handler",
    ),
    _r(
        "method-added-notification", "notification method added", "info", "nobody", "info",
        "old handlers ignore unknown notifications", "a new METHODS entry, stub and handler",
    ),
    _r(
        "method-side-changed", "method moved to the other side", "breaking", "both", "breaking",
        "the old handling side no longer receives it and the new one does not know it",
        "the handler moves to the other base class",
    ),
    _r(
        "method-kind-changed", "request ↔ notification", "breaking", "both", "breaking",
        "one side waits for an answer the other never sends (or gets one it cannot match)",
        "the stub's return type changes",
    ),
    _r(
        "method-payload-replaced", "params/result now another type", "info", "nobody", "breaking",
        "names are not on the wire; the two types are compared field by field below",
        "the payload class changes",
    ),
    _r(
        "method-now-unstable", "method moved to the unstable lane", "warning", "senders",
        "breaking", "stable peers stop implementing it", "it leaves the stable package",
    ),
    _r(
        "method-now-stable", "method promoted to stable", "info", "nobody", "info",
        "stable peers may now implement it", "it joins the stable package",
    ),
    _r(
        "batch-removed", "JSON-RPC batch message removed from the root schema", "breaking",
        "senders", None, "old senders may send a batch; new receivers reject it",
    ),
    _r(
        "batch-added", "JSON-RPC batch message added to the root schema", "breaking",
        "receivers", None, "new senders may send a batch; old receivers reject it",
    ),
    # -- types -----------------------------------------------------------------------------
    _r(
        "type-added", "type added", "info", "nobody", "info",
        "names are not on the wire; where it is used shows up as its own change",
        "a new exported class or alias",
    ),
    _r(
        "type-removed", "type removed", "info", "nobody", "breaking",
        "names are not on the wire; where it was used shows up as its own change",
        "the class or alias is no longer exported",
    ),
    _r(
        "type-renamed", "type renamed (same structure, or the same method's payload)", "info",
        "nobody", "breaking",
        "names are not on the wire (what else changed in it is listed on its own)",
        "the class or alias is exported under the new name only",
    ),
    _r(
        "type-kind-changed", "type changed kind (object, union, enum, alias)", "breaking", "both",
        "breaking", "the JSON shape itself changed", "the class changes kind",
    ),
    _r(
        "object-now-tagged", "object → tagged union, one variant with the object's fields",
        "breaking", "senders", "breaking",
        "old senders' values carry no tag: new receivers reject them (old receivers keep the "
        "new tag as an unknown key)", "the class becomes a union of variant classes",
    ),
    _r(
        "object-now-tagged-on-field", "object → tagged union on one of its optional fields, "
        "each side still taking the other's values", "info", "nobody", "breaking",
        "every value of the field (and its absence) still decodes on both sides",
        "the class becomes a union of one class per value of the field",
    ),
    _r(
        "exclusive-added", "exclusive alternatives added to an object (exactly one required)",
        "breaking", "senders", "breaking",
        "old senders' objects carry none of the alternatives: new receivers reject them",
        "a new required keyword holding one of the alternatives' classes",
    ),
    _r(
        "exclusive-removed", "exclusive alternatives removed from an object", "breaking",
        "receivers", "breaking",
        "new senders' objects carry no alternative: old receivers reject them",
        "the field holding the alternatives is gone",
    ),
    _r(
        "exclusive-narrowed", "exclusive alternatives narrowed (any-of → exactly one, or one "
        "removed)", "breaking", "senders", "warning",
        "new receivers reject objects old senders may send (several alternatives' keys, or the "
        "removed one's)", "a removed alternative's class leaves the field's annotation",
    ),
    _r(
        "exclusive-widened", "exclusive alternatives widened (exactly one → any-of, or one "
        "added)", "breaking", "receivers", "info",
        "old receivers reject objects new senders may send",
        "an added alternative's class joins the field's annotation",
    ),
    _r(
        "exclusive-changed", "exclusive alternatives changed otherwise (their keys, their order "
        "in an any-of)", "breaking", "both", "breaking",
        "an object one side takes as one alternative the other rejects or reads as another",
        "the annotation of the field holding them changes",
    ),
    _r(
        "type-form-changed", "type written another way, same JSON (object ↔ one-branch union)",
        "info", "nobody", "breaking",
        "the JSON accepted is the same (what else changed inside is listed on its own)",
        "the class becomes an alias or union (or the other way round)",
    ),
    # -- fields ----------------------------------------------------------------------------
    _r(
        "field-added-required", "required field added", "breaking", "senders", "breaking",
        "old senders do not send it; new receivers require it",
        "a new required constructor keyword",
    ),
    _r(
        "field-added-optional", "optional field added", "info", "nobody", "info",
        "old receivers ignore (keep) unknown keys; new receivers accept its absence",
        "a new optional attribute",
    ),
    _r(
        "field-removed-required", "required field removed", "breaking", "receivers", "breaking",
        "new senders stop sending it; old receivers still require it",
        "the attribute and constructor keyword go away",
    ),
    _r(
        "field-removed-optional", "optional field removed", "warning", "nobody", "breaking",
        "nothing is rejected, but what old senders still send is now an unknown key",
        "the attribute and constructor keyword go away",
    ),
    _r(
        "field-now-required", "optional → required", "breaking", "senders", "breaking",
        "old senders may omit it; new receivers reject that",
        "the constructor keyword becomes mandatory",
    ),
    _r(
        "field-now-optional", "required → optional", "breaking", "receivers", "warning",
        "new senders may omit it; old receivers reject that", "the attribute may now be UNSET",
    ),
    _r(
        "nullable-added", "field now accepts null", "breaking", "receivers", "warning",
        "new senders may send null; old receivers reject it", "the attribute may now be None",
    ),
    _r(
        "nullable-added-lenient", "field now accepts null (old field: default-on-error)",
        "warning", "receivers", "warning",
        "old receivers decode a null as omitted (x-deserialize-default-on-error): "
        "nothing fails, the value is lost", "the attribute may now be None",
    ),
    _r(
        "nullable-removed", "field no longer accepts null", "breaking", "senders", "warning",
        "old senders may send null; new receivers reject it", "None is no longer accepted",
    ),
    _r(
        "type-widened", "type accepts more (e.g. integer → number, looser bounds)", "breaking",
        "receivers", "breaking", "new senders may send values old receivers reject",
        "the annotation changes",
    ),
    _r(
        "type-widened-lenient", "type accepts more (old field: default-on-error / skip-invalid)",
        "warning", "receivers", "breaking",
        "old receivers drop the new values as invalid instead of failing",
        "the annotation changes",
    ),
    _r(
        "type-narrowed", "type accepts less (e.g. number → integer, tighter bounds)", "breaking",
        "senders", "breaking", "old senders may send values new receivers reject",
        "the annotation changes",
    ),
    _r(
        "type-narrowed-lenient", "type accepts less (new field: default-on-error)", "warning",
        "senders", "breaking",
        "new receivers drop the old values as invalid instead of failing",
        "the annotation changes",
    ),
    _r(
        "type-changed", "type changed", "breaking", "both", "breaking",
        "values of the old type are rejected by the new schema and the other way round",
        "the annotation changes",
    ),
    _r(
        "alias-only", "same wire type, spelled another way (inline ↔ $ref alias)", "info",
        "nobody", "info", "the JSON accepted is the same: an alias of `string` is a string",
        "the annotation names another alias of the same runtime type",
    ),
    _r(
        "enum-inlined", "an open enum ↔ its plain JSON type (the same JSON)", "info", "nobody",
        "warning", "the JSON accepted is the same: an open enum takes any value of its type",
        "the attribute holds plain values instead of enum members (or the other way round)",
    ),
    _r(
        "any-typed", "any JSON ↔ a union ending in an `any` catch-all (the same JSON)", "info",
        "nobody", "breaking",
        "the JSON accepted is the same: the catch-all takes what no alternative does",
        "values that fit an alternative decode into its class instead of plain JSON (or back)",
    ),
    _r(
        "format-changed", "string `format` changed (uri, date-time, ...)", "info", "nobody",
        None, "formats are documentation: the reference decoders do not check them",
    ),
    _r(
        "leniency-removed", "x-deserialize-* annotation removed", "warning", "senders", None,
        "new receivers become stricter: invalid values old receivers skipped now fail",
    ),
    _r(
        "leniency-added", "x-deserialize-* annotation added", "info", "nobody", None,
        "new receivers become more tolerant",
    ),
    # -- tagged unions -----------------------------------------------------------------------
    _r(
        "variant-added-open", "variant added to an open union", "info", "nobody", "info",
        "old receivers decode the new tag as the catch-all (`<Union>Other`) and keep it",
        "a new variant class",
    ),
    _r(
        "variant-added-closed", "variant added to a closed union (or a tag the catch-all "
        "reserved)", "breaking",
        "receivers", "info", "old receivers reject the new tag", "a new variant class",
    ),
    _r(
        "variant-removed-open", "variant removed from an open union", "warning", "nobody",
        "breaking",
        "new receivers decode the old tag as the catch-all: accepted, no longer understood",
        "the variant class goes away",
    ),
    _r(
        "variant-removed-closed",
        "variant removed from a closed union (or its tag kept reserved)", "breaking", "senders",
        "breaking", "new receivers reject the tag old senders still send",
        "the variant class goes away",
    ),
    _r(
        "variant-added-default", "variant added to a closed union whose tag-less default "
        "branch fits it", "warning", "receivers", "info",
        "old receivers take the new tag for the default branch (its payload carries what that "
        "branch requires): accepted, but misread", "a new variant class",
    ),
    _r(
        "variant-removed-default", "variant removed from a closed union whose tag-less default "
        "branch fits it", "warning", "senders", "breaking",
        "new receivers take the old tag for the default branch (its payload carries what that "
        "branch requires): accepted, but misread", "the variant class goes away",
    ),
    _r(
        "variant-class-renamed", "variant class renamed (naming only)", "info", "nobody",
        "breaking", "tags, not class names, are on the wire", "the variant class has a new name",
    ),
    _r(
        "variant-now-union", "variant's payload is now a tagged union of its own", "info",
        "nobody", "breaking", "the payload type's own findings say what changed on the wire",
        "the variant's class becomes a union of one class per tag of the payload",
    ),
    _r(
        "variant-no-longer-union", "variant's payload is no longer a tagged union", "info",
        "nobody", "breaking", "the payload type's own findings say what changed on the wire",
        "the union of the variant's classes becomes one class",
    ),
    _r(
        "tag-field-changed", "tag property changed", "breaking", "both", "breaking",
        "every message of the union changes shape", "TAG_FIELD changes",
    ),
    _r(
        "fallback-added", "tag-less default branch added", "breaking", "receivers", "info",
        "new senders may omit the tag; old receivers reject that", "a new default variant class",
    ),
    _r(
        "fallback-removed", "tag-less default branch removed", "breaking", "senders", "breaking",
        "old senders may omit the tag; new receivers reject that",
        "the default variant class goes away",
    ),
    _r(
        "reserved-tag-added", "tag reserved by the catch-all", "warning", "senders", None,
        "old senders' custom value with that tag is now rejected by new receivers",
    ),
    _r(
        "reserved-tag-removed", "tag no longer reserved", "info", "nobody", None,
        "the catch-all accepts more",
    ),
    _r(
        "branch-added", "untagged union: alternative added", "breaking", "receivers", "warning",
        "new senders may send the new alternative; old receivers reject it",
        "the union annotation gains a member",
    ),
    _r(
        "branch-removed", "untagged union: alternative removed", "breaking", "senders",
        "breaking", "old senders may send it; new receivers reject it",
        "the union annotation loses a member",
    ),
    # -- enums -------------------------------------------------------------------------------
    _r(
        "value-added-open", "value added to an open enum", "info", "nobody", "info",
        "old receivers keep unknown values", "a new enum member",
    ),
    _r(
        "value-added-closed", "value added to a closed enum", "breaking", "receivers", "info",
        "old receivers reject the new value", "a new enum member",
    ),
    _r(
        "value-removed-open", "value removed from an open enum", "warning", "nobody", "breaking",
        "new receivers keep it as an unknown value: accepted, no longer understood",
        "the enum member goes away",
    ),
    _r(
        "value-removed-closed", "value removed from a closed enum", "breaking", "senders",
        "breaking", "old senders may still send it; new receivers reject it",
        "the enum member goes away",
    ),
    _r(
        "member-renamed", "enum member renamed (naming only)", "info", "nobody", "breaking",
        "values, not member names, are on the wire", "the member has a new name",
    ),
    # -- openness --------------------------------------------------------------------------
    _r(
        "now-open", "closed → open (union or enum)", "warning", "receivers", "info",
        "new senders may send values old (closed) receivers reject",
        "a catch-all class or open values appear",
    ),
    _r(
        "now-closed", "open → closed (union or enum)", "breaking", "senders", "breaking",
        "old senders' custom values are rejected by new receivers", "the catch-all goes away",
    ),
    # -- text ------------------------------------------------------------------------------
    _r(
        "description-changed", "description changed", "info", "nobody", "info",
        "documentation only", "docstrings change",
    ),
)
# fmt: on

RULES: dict[str, Rule] = {rule.kind: rule for rule in _TABLE}

# Who sends and who receives, per direction (plural nouns for messages).
_PARTIES: dict[Direction, tuple[str, str]] = {
    "client->agent": ("clients", "agents"),
    "agent->client": ("agents", "clients"),
    "both": ("clients and agents", "clients and agents"),
    "none": ("nobody", "nobody"),
}


def severity(rule: Rule, direction: Direction) -> Severity:
    """The wire severity of a change for a type sent in `direction`."""
    if direction == "none":
        return "info"  # not reachable from any method: no message carries it
    return rule.severity


def broken(rule: Rule, direction: Direction) -> str:
    """Whom the change breaks (or bothers), in words: "agents", "clients", ... or ""."""
    if direction == "none" or rule.hurts == "nobody":
        return ""
    senders, receivers = _PARTIES[direction]
    if rule.hurts == "senders":
        return senders
    if rule.hurts == "receivers":
        return receivers
    return "clients and agents"


def table_markdown() -> str:
    """The table for the README: change × direction → severity (and whom), with reasons."""
    lines = [
        "| change | client → agent | agent → client | both | unreached | why | Python API |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for rule in _TABLE:
        cells = []
        for direction in DIRECTIONS:
            sev = severity(rule, direction)
            who = broken(rule, direction)
            cells.append(f"{sev} ({_old(who, rule)})" if who else sev)
        py = f"{rule.python}: {rule.python_reason}" if rule.python else "—"
        lines.append(f"| {rule.change} | {' | '.join(cells)} | {rule.reason} | {py} |")
    return "\n".join(lines) + "\n"


def _old(who: str, rule: Rule) -> str:
    return f"old {who}" if rule.hurts in ("senders", "receivers") else who
