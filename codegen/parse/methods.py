"""Methods from meta.json and the `x-method`/`x-side` annotations.

`x-side` names the side that handles the method. Whether a `$defs` entry is the params of a
request, of a notification, or a result follows from the JSON-RPC envelope that lists it
(`AgentRequest`, `ClientNotification`, ... are named after the sender); a schema without
envelopes falls back on the definition's name suffix.
"""

from __future__ import annotations

from typing import Any, Literal

from ..diagnostics import Diagnostics, pointer_join
from ..ir import Method, Side
from .resolve import def_pointer
from .walk import refs_in

# The part a definition plays in its method: the params of a request or a notification, or
# the result (a response's).
Part = Literal["request", "notification", "response"]
META_SIDES: dict[str, Side] = {
    "agentMethods": "agent",
    "clientMethods": "client",
    "protocolMethods": "protocol",
}


def find_methods(
    defs: dict[str, Any],
    meta: dict[str, Any] | None,
    stable_meta: dict[str, Any] | None,
    diags: Diagnostics,
    meta_name: str = "meta.json",
) -> tuple[Method, ...]:
    """Every method, in meta.json order (annotation order without one); `meta_name` is the
    file the pointers of methods it lists name."""
    roles = _envelope_roles(defs)
    by_method: dict[str, dict[Part, str]] = {}
    sides: dict[tuple[str, Part], str] = {}  # (wire, part) → its definition's x-side
    for name, node in defs.items():
        if not isinstance(node, dict) or not isinstance(node.get("x-method"), str):
            continue
        wire = node["x-method"]
        role = roles.get(name) or _role_from_name(name)
        if role is None:
            diags.warning(
                f"#/$defs/{name}", f"cannot tell whether {name} is params or result of {wire}"
            )
            continue
        by_method.setdefault(wire, {}).setdefault(role, name)
        if isinstance(node.get("x-side"), str) and role != "response":
            sides.setdefault((wire, role), node["x-side"])
    stable_names = set(_meta_entries(stable_meta, "").keys()) if stable_meta else None
    out: list[Method] = []
    listed = _meta_entries(meta, meta_name + "#")
    from_meta = bool(listed)
    if not from_meta:  # no meta.json: the annotations alone
        listed = {w: (w.replace("/", "_"), _side(_first_side(sides, w)), "") for w in by_method}
    for wire, (key, side, at) in listed.items():
        found = by_method.get(wire, {})
        if not found:
            diags.warning("", f"method {wire!r} from meta.json has no x-method definitions")
        # One wire name may be both a request and a notification (unstable `mcp/message`,
        # `proxy/successor`): two methods, told apart on the wire by the `id`, each handled by
        # the side its own definition names.
        kinds: list[Literal["request", "notification"]] = [
            k for k in ("request", "notification") if k in found
        ] or ["request"]
        for kind in kinds:
            annotated = sides.get((wire, kind))
            own = side
            if annotated is not None and annotated != side:
                if len(kinds) > 1 or not from_meta:
                    own = _side(annotated)
                else:
                    diags.warning(
                        f"#/$defs/{found.get(kind, '')}",
                        f"x-side {annotated!r} disagrees with meta.json ({side!r}) for {wire!r}",
                    )
            out.append(
                Method(
                    name=wire,
                    key=key,
                    side=own,
                    kind=kind,
                    params=found.get(kind),
                    result=found.get("response") if kind == "request" else None,
                    unstable=stable_names is not None and wire not in stable_names,
                    pointer=at or _annotated_at(found, kind),
                )
            )
    return tuple(out)


def _first_side(sides: dict[tuple[str, Part], str], wire: str) -> str | None:
    """The x-side of a method's request, else of its notification."""
    return sides.get((wire, "request")) or sides.get((wire, "notification"))


def _meta_entries(meta: dict[str, Any] | None, base: str) -> dict[str, tuple[str, Side, str]]:
    """Wire name → (key, side, pointer under `base`) of every method meta.json lists."""
    out: dict[str, tuple[str, Side, str]] = {}
    if not meta:
        return out
    for group, side in META_SIDES.items():
        entries = meta.get(group)
        if isinstance(entries, dict):
            for key, wire in entries.items():
                if isinstance(wire, str):
                    out[wire] = (str(key), side, pointer_join(base, group, str(key)))
    return out


def _annotated_at(roles: dict[Part, str], kind: Part) -> str:
    """The `x-method` annotation of a method's definition of `kind` (else its result)."""
    name = roles.get(kind) or roles.get("response") or ""
    return pointer_join(def_pointer(name), "x-method")


_SIDES: dict[str | None, Side] = {"client": "client", "protocol": "protocol", "proxy": "proxy"}


def _side(value: str | None) -> Side:
    return _SIDES.get(value, "agent")


def _role_from_name(name: str) -> Part | None:
    for suffix, role in (
        ("Notification", "notification"),
        ("Request", "request"),
        ("Response", "response"),
    ):
        if name.endswith(suffix):
            return role  # type: ignore[return-value]
    return None


def _envelope_roles(defs: dict[str, Any]) -> dict[str, Part]:
    """Map each definition listed in an envelope's `params`/`result` to its role."""
    roles: dict[str, Part] = {}
    for name, node in defs.items():
        if not isinstance(node, dict) or "x-method" in node:
            continue
        role = _role_from_name(name)
        props = node.get("properties")
        if role is None or not isinstance(props, dict):
            continue
        payload = props.get("result" if role == "response" else "params")
        for ref in refs_in(payload):
            roles.setdefault(ref, role)
    return roles


def batch_titles(schema: dict[str, Any]) -> tuple[str, ...]:
    """The titles of the root's array alternatives: the JSON-RPC batches a peer may send
    (alpha.3 has `AgentBatchCall`, `AgentBatchResponse`, ...; npm-sdk 2.2+ removed them from
    v2). The IR models `$defs` only, and a batch is not one."""
    branches = schema.get("anyOf") or schema.get("oneOf") or []
    return tuple(
        str(b.get("title") or f"batch #{i}")
        for i, b in enumerate(branches if isinstance(branches, list) else [])
        if isinstance(b, dict) and b.get("type") == "array"
    )
