"""Resolve JSON Schema nodes: `$ref`s, `allOf` merges, nullable wrappers and field lists.

Only local `#/$defs/...` references exist in ACP schemas; anything else is reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from ..diagnostics import Diagnostics, pointer_join
from ..ir import Alternative, Exclusive, Field, Leniency, Shape
from .walk import DEFS_PREFIX, defs_name

KNOWN_LENIENCY = {
    "x-deserialize-default-on-error",
    "x-deserialize-skip-invalid-items",
    "x-deserialize-default-on-null",
}
# Bounds implied by integer `format`s (the Rust reference types).
INT_FORMAT_BOUNDS: dict[str, tuple[int, int]] = {
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


@dataclass
class Resolver:
    """Resolves nodes of one schema's `$defs`, reporting problems as it goes."""

    defs: dict[str, Any]
    diags: Diagnostics

    # -- references ---------------------------------------------------------------------
    def ref_name(self, node: Any, pointer: str) -> str | None:
        """The `$defs` name a node points at (`$ref`, or an `allOf` of exactly one `$ref`)."""
        if not isinstance(node, dict):
            return None
        ref = node.get("$ref")
        if ref is None:
            all_of = node.get("allOf")
            if isinstance(all_of, list) and len(all_of) == 1 and _only_ref(all_of[0]):
                return self.ref_name(all_of[0], pointer_join(pointer, "allOf", 0))
            return None
        if not isinstance(ref, str) or not ref.startswith(DEFS_PREFIX):
            self.diags.error(pointer, f"unsupported $ref {ref!r}: only '#/$defs/<name>' is allowed")
            return None
        name = defs_name(ref)
        if name not in self.defs:
            self.diags.error(pointer, f"$ref to missing definition {name!r}")
            return None
        return name

    def definition(self, name: str) -> dict[str, Any]:
        node = self.defs[name]
        return node if isinstance(node, dict) else {}

    # -- shapes -------------------------------------------------------------------------
    def shape(self, node: Any, pointer: str) -> Shape:
        if node is True or not isinstance(node, dict):
            return Shape("any")
        name = self.ref_name(node, pointer)
        if name is not None:
            return Shape("ref", ref=name)
        for key in ("anyOf", "oneOf"):
            branches = node.get(key)
            if isinstance(branches, list) and branches:
                rest = [b for b in branches if not _is_null(b)]
                nullable = len(rest) < len(branches)
                if len(rest) == 1:
                    inner = self.shape(rest[0], pointer_join(pointer, key, branches.index(rest[0])))
                    return _with_null(inner, nullable)
                options = self._inline_options(rest, pointer_join(pointer, key))
                if options is not None:
                    return Shape("union", options=options, nullable=nullable)
                self.diags.info(pointer, "inline union without a tag is kept as raw JSON")
                return Shape("any", nullable=nullable)
        types = node.get("type")
        nullable = False
        if isinstance(types, list):
            nullable = "null" in types
            types = [t for t in types if t != "null"]
            types = types[0] if len(types) == 1 else None
        if types is None and "const" in node:
            types = {str: "string", int: "integer"}.get(type(node["const"]))
        return _with_null(self._typed_shape(node, types, pointer), nullable)

    def _inline_options(self, branches: list[Any], pointer: str) -> tuple[Shape, ...] | None:
        """The alternatives of an inline union that are each a reference to a `$defs` type or
        a plain scalar type (`integer`, `string`...), or None for any other inline union."""
        out: list[Shape] = []
        for i, b in enumerate(branches):
            at = pointer_join(pointer, i)
            name = self.ref_name(b, at) if not _declares_any(b) else None
            if name is not None:
                out.append(Shape("ref", ref=name))
            elif _plain_scalar(b):
                out.append(self.shape(b, at))
            else:
                return None
        return tuple(out)

    def _typed_shape(self, node: dict[str, Any], kind: Any, pointer: str) -> Shape:
        fmt = node.get("format") if isinstance(node.get("format"), str) else None
        if kind == "string":
            min_length = node.get("minLength")
            return Shape(
                "str",
                format=fmt,
                min_length=min_length if type(min_length) is int and min_length > 0 else None,
            )
        if kind == "boolean":
            return Shape("bool")
        if kind == "null":
            return Shape("null")
        if kind in ("integer", "number"):
            bounds = INT_FORMAT_BOUNDS.get(fmt or "") if kind == "integer" else None
            lo = _number(node.get("minimum"), bounds[0] if bounds else None)
            hi = _number(node.get("maximum"), bounds[1] if bounds else None)
            return Shape(
                "int" if kind == "integer" else "float", minimum=lo, maximum=hi, format=fmt
            )
        if kind == "array":
            items = node.get("items", True)
            min_items = node.get("minItems")
            return Shape(
                "list",
                item=self.shape(items, pointer_join(pointer, "items")),
                min_items=min_items if type(min_items) is int and min_items > 0 else None,
            )
        if kind == "object":
            extra = node.get("additionalProperties")
            if isinstance(extra, dict) and extra and "properties" not in node:
                return Shape(
                    "map", item=self.shape(extra, pointer_join(pointer, "additionalProperties"))
                )
            return Shape("object")
        return Shape("any")

    # -- fields -------------------------------------------------------------------------
    def leniency(self, node: Any) -> Leniency:
        """The known `x-deserialize-*` rules of a property (unknown ones are reported once,
        by the schema-wide scan of `classify`)."""
        if not isinstance(node, dict):
            return Leniency()
        return Leniency(
            default_on_error=node.get("x-deserialize-default-on-error") is True,
            skip_invalid_items=node.get("x-deserialize-skip-invalid-items") is True,
            default_on_null=node.get("x-deserialize-default-on-null") is True,
        )

    def fields(self, node: Any, pointer: str, skip: frozenset[str] = frozenset()) -> list[Field]:
        """Every property of an object node, through `allOf` and untagged object `anyOf`s.

        Alternatives (an untagged `anyOf` of objects) contribute their properties as optional
        unless every alternative requires them; an exclusive group (`exclusive_group`, like the
        elicitation scopes) contributes none: it is the owner's `Exclusive`.
        """
        out: dict[str, Field] = {}
        self._collect(node, pointer, out, set(), skip)
        return list(out.values())

    def _collect(
        self, node: Any, pointer: str, out: dict[str, Field], seen: set[str], skip: frozenset[str]
    ) -> None:
        if not isinstance(node, dict):
            return
        name = self.ref_name(node, pointer) if "$ref" in node else None
        if name is not None:
            if name in seen:
                self.diags.error(pointer, f"definition {name!r} includes itself through allOf")
                return
            self._collect(self.definition(name), def_pointer(name), out, seen | {name}, skip)
            return
        raw_required = node.get("required")
        required: list[str] = (
            [r for r in raw_required if isinstance(r, str)]
            if isinstance(raw_required, list)
            else []
        )
        props = node.get("properties")
        if isinstance(props, dict):
            for wire, sub in props.items():
                if wire in skip:
                    continue
                at = pointer_join(pointer, "properties", wire)
                doc = sub.get("description", "") if isinstance(sub, dict) else ""
                out[wire] = Field(
                    wire=wire,
                    shape=self.shape(sub, at),
                    required=wire in required or (wire in out and out[wire].required),
                    doc=doc if isinstance(doc, str) else "",
                    pointer=at,
                    leniency=self.leniency(sub),
                )
        all_of = node.get("allOf")
        if isinstance(all_of, list):
            for i, sub in enumerate(all_of):
                self._collect(sub, pointer_join(pointer, "allOf", i), out, seen, skip)
        for key in ("anyOf", "oneOf"):
            branches = node.get(key)
            if (
                isinstance(branches, list)
                and branches
                and not isinstance(node.get("discriminator"), dict)
                and self.exclusive_group(branches, pointer_join(pointer, key)) is None
            ):
                self._collect_alternatives(branches, pointer_join(pointer, key), out, seen, skip)
        # Last: `required` also covers properties that came from `allOf` or alternatives.
        for wire in required:
            if wire in out and not out[wire].required:
                out[wire] = replace(out[wire], required=True)

    def _collect_alternatives(
        self,
        branches: list[Any],
        pointer: str,
        out: dict[str, Field],
        seen: set[str],
        skip: frozenset[str],
    ) -> None:
        per_branch: list[dict[str, Field]] = []
        for i, sub in enumerate(branches):
            found: dict[str, Field] = {}
            self._collect(sub, pointer_join(pointer, i), found, seen, skip)
            per_branch.append(found)
        for found in per_branch:
            for wire, f in found.items():
                if wire in out:
                    continue
                in_all = all(wire in other and other[wire].required for other in per_branch)
                out[wire] = replace(f, required=f.required and in_all)

    # -- exclusive alternatives ----------------------------------------------------------
    def exclusive(self, node: Any, pointer: str, depth: int = 0) -> Exclusive | None:
        """The `Exclusive` group of an object node, found on it or through its `allOf`s and
        `$ref`s (a tagged union's variant reaches its payload's), or None."""
        if not isinstance(node, dict) or depth > 8:
            return None
        if "$ref" in node:
            name = self.ref_name(node, pointer)
            return (
                self.exclusive(self.definition(name), def_pointer(name), depth + 1)
                if name
                else None
            )
        for key in ("anyOf", "oneOf"):
            branches = node.get(key)
            if isinstance(branches, list) and not isinstance(node.get("discriminator"), dict):
                found = self.exclusive_group(branches, pointer_join(pointer, key))
                if found is not None:
                    return found
        all_of = node.get("allOf")
        for i, sub in enumerate(all_of if isinstance(all_of, list) else ()):
            found = self.exclusive(sub, pointer_join(pointer, "allOf", i), depth + 1)
            if found is not None:
                return found
        return None

    def _quiet_ref(self, node: dict[str, Any]) -> str | None:
        """The existing `$defs` entry a branch is a reference to, without reporting anything
        (a broken reference is reported where the branch is resolved as usual)."""
        all_of = node.get("allOf")
        if "$ref" not in node and isinstance(all_of, list) and len(all_of) == 1:
            node = all_of[0] if isinstance(all_of[0], dict) else {}
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(DEFS_PREFIX) and defs_name(ref) in self.defs:
            return defs_name(ref)
        return None

    def exclusive_group(self, branches: Any, pointer: str) -> Exclusive | None:
        """Alternatives that are each a reference to a `$defs` object, and nothing more, with
        non-empty, pairwise disjoint required keys: exactly one of them applies, told by which
        keys are present (the SDK's `exactlyOneByRequiredKeys`)."""
        if not isinstance(branches, list) or len(branches) < 2:
            return None
        out: list[Alternative] = []
        taken: set[str] = set()
        for b in branches:
            if not isinstance(b, dict) or _declares_any(b) or "const" in b:
                return None
            name = self._quiet_ref(b)
            target = self.definition(name) if name else {}
            required = target.get("required")
            keys = (
                tuple(k for k in required if isinstance(k, str))
                if isinstance(required, list)
                else ()
            )
            if name is None or target.get("type") != "object" or not keys or taken & set(keys):
                return None
            taken.update(keys)
            doc, title = b.get("description"), b.get("title")
            out.append(
                Alternative(
                    name,
                    keys,
                    title if isinstance(title, str) else "",
                    doc if isinstance(doc, str) else "",
                )
            )
        return Exclusive(tuple(out), pointer, exactly_one=pointer.endswith("/oneOf"))


def def_pointer(name: str) -> str:
    return pointer_join("#/$defs", name)


def branches_of(node: dict[str, Any]) -> tuple[str, list[Any]] | None:
    for key in ("anyOf", "oneOf"):
        value = node.get(key)
        if isinstance(value, list) and value:
            return key, value
    return None


def _declares_any(node: Any) -> bool:
    """A branch with properties, branches or a type of its own: more than a reference."""
    return isinstance(node, dict) and any(
        k in node for k in ("properties", "anyOf", "oneOf", "type", "enum")
    )


def _plain_scalar(node: Any) -> bool:
    return (
        isinstance(node, dict)
        and node.get("type") in ("string", "integer", "number", "boolean")
        and not any(k in node for k in ("properties", "anyOf", "oneOf", "allOf", "enum", "const"))
    )


def _only_ref(node: Any) -> bool:
    return isinstance(node, dict) and "$ref" in node and len(node) == 1


def _is_null(node: Any) -> bool:
    return isinstance(node, dict) and node.get("type") == "null" and "const" not in node


def _with_null(shape: Shape, nullable: bool) -> Shape:
    return shape.with_nullable(True) if nullable else shape


def _number(value: Any, default: int | None) -> int | float | None:
    """A bound: an integer or a finite number (JSON's `Infinity` and `NaN` bound nothing)."""
    if type(value) is int or (type(value) is float and math.isfinite(value)):
        return value
    return default
