"""The lowering of unions: a tagged union's context (its tag table and docstring) and an
untagged union's decoding plan (its alternatives grouped by JSON type, in the order tested)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..ir import Model, TaggedUnion, UnionLevel, UntaggedUnion, is_nested
from ..naming import Names
from .checks import CallCheck, Check, indented
from .context import AliasContext, UnionContext
from .env import pylit
from .prose import wrap
from .shapes import EXPECTED, Shapes

# Untagged unions: the JSON types in the order they are tested, and how each is tested.
_KIND_ORDER = ("null", "bool", "int", "float", "str", "list", "object", "any")
_CONDITIONS = {
    "null": "v is None",
    "bool": "type(v) is bool",
    "int": "type(v) is int",
    "float": "type(v) is float or type(v) is int",
    "str": "type(v) is str",
    "list": "type(v) is list",
    "object": "type(v) is dict",
    "any": "",  # no test: any value
}
_KIND_WORDS = {
    "null": "null",
    "bool": "boolean",
    "int": "integer",
    "float": "number",
    "str": "string",
    "list": "list",
    "object": "object",
    "any": "any other value",
}


def union_base(union: str) -> str:
    """The private base class of a tagged union's variants."""
    return f"_{union}Base"


def tagged_union(model: Model, names: Names, level: UnionLevel, top: str) -> UnionContext:
    # The union's public name is a `typing.Union` alias of its classes (its `__doc__` is
    # writable, unlike that of a PEP 604 `X | Y`, so help() shows the tag table); their
    # shared behaviour lives in the private base `union_base(top)`, that of the `$defs`
    # union at the top (a nested union's classes are that union's classes too).
    t, key = level.union, level.key
    py = top if level.parent is None else names.variants[(level.parent, level.via)]
    variants = tuple((v.tag, names.variants[(key, v.tag)]) for v in t.variants)
    nested = tuple((v.tag, _inner_tag(model, t, v.tag)) for v in t.variants if is_nested(model, v))
    inner_tags = dict(nested)
    open_cls = names.open_variants[key] if t.open is not None else ""
    fallback_cls = names.fallback_variants[key] if t.fallback is not None else ""
    tagless = t.fallback is not None and all(f.wire != t.tag for f in t.fallback.fields)
    tags = ", ".join(t.known_tags)
    note = f"Tagged union on `{t.tag}` ({tags}): one table lookup picks the variant."
    if level.parent is not None:
        outer = ", ".join(f"`{wire}: {value}`" for wire, value in level.tags)
        note = f"The classes of {outer}: a tagged union on `{t.tag}` ({tags})."
    if open_cls:
        note += (
            f" Any other tag decodes to `{open_cls}`, which keeps the whole payload;"
            " a known or reserved tag with a broken payload is a DecodeError."
        )
    if fallback_cls and tagless:
        note += (
            f" Without the tag, with {'a' if open_cls else 'an unknown or'} non-string"
            f" one, or when the tag's variant rejects the payload, it decodes as"
            f" `{fallback_cls}` (which ignores the tag)."
        )
    elif fallback_cls:
        dropped = " (a malformed one is dropped first)" if t.lenient_tag else ""
        note += f" With the tag absent or null{dropped}, it decodes as `{fallback_cls}`."
    if not open_cls and not fallback_cls:
        note += " Closed: any other tag is a DecodeError."
    note += (
        f" Each tag's class is `{py}` followed by the tag in PascalCase, unless a names file"
        " pins another name."
    )
    if nested:
        note += (
            " A tag whose payload is itself a tagged union names that union, whose classes"
            " add their own tag the same way."
        )
    members = tuple(cls for _, cls in variants) + tuple(c for c in (open_cls, fallback_cls) if c)
    table = [
        f"- `{tag}`: `{cls}`" + (f" (a union on `{inner_tags[tag]}`)" if tag in inner_tags else "")
        for tag, cls in variants
    ]
    if open_cls:
        table.append(f"- any other tag: `{open_cls}` (open)")
    when = ""
    if fallback_cls:
        when = "none, or any other" if not open_cls else "none, or not a string"
        if not tagless:
            when = "absent, null or malformed" if t.lenient_tag else "absent or null"
        table.append(f"- {when}: `{fallback_cls}` (fallback)")
    note = wrap(note) + f"\n\nTag `{t.tag}` to class:\n\n" + "\n".join(table)
    return UnionContext(
        py,
        t.doc if level.parent is None else level.doc,
        note,
        t.tag,
        variants,
        open_cls,
        fallback_cls,
        base=union_base(py) if level.parent is None else "",
        members=members,
        outer_tags=level.tags,
        fallback_when=when,
        nested=nested,
        decode=_dispatch(py, t, open_cls, fallback_cls, tagless, nested=level.parent is not None),
    )


def _dispatch(
    py: str, t: TaggedUnion, open_cls: str, fallback_cls: str, tagless: bool, *, nested: bool
) -> str:
    """The body of a tagged union's decoder, once `data` is known to be an object (with the
    tags of the unions above): one table lookup by the tag, then the open and fallback
    classes."""
    more = ", True" if nested else ""  # the classes of a nested union skip the outer tags
    tag = pylit(t.tag)
    out = [
        f"tag = data.get({tag})",
        f"decoder = _T_{py}.get(tag) if type(tag) is str else None",
        "if decoder is not None:",
    ]
    if fallback_cls and tagless:
        out += [
            "    try:",
            "        return decoder(data, True)  # type: ignore[no-any-return]",
            "    except _DecodeError as exc:",
            "        # The tag-less branch does not look at the tag: it may take what the variant",
            "        # rejects (the variant's error is the one reported).",
            "        try:",
            f"            return _d_{fallback_cls}(data{more})",
            "        except _DecodeError:",
            "            raise exc from None",
        ]
    else:
        out.append("    return decoder(data, True)  # type: ignore[no-any-return]")
    if open_cls:
        out += ["if type(tag) is str:", f"    return _d_{open_cls}(data{more})"]
    bad = f"raise _rt.bad_tag({tag}, tag, {pylit(list(t.known_tags))})"
    if fallback_cls and tagless:
        out.append(f"return _d_{fallback_cls}(data{more})")
    elif fallback_cls and t.lenient_tag:
        out += [
            "# The tag is optional and lenient: absent, null or malformed, it is not reported.",
            f"return _d_{fallback_cls}(data{more})",
        ]
    elif fallback_cls:
        other = "" if open_cls else " or type(tag) is str"
        out += [f"if tag is None{other}:", f"    return _d_{fallback_cls}(data{more})", bad]
    else:
        out.append(bad)
    return "\n".join(out)


def _inner_tag(model: Model, t: TaggedUnion, tag: str) -> str:
    v = next(v for v in t.variants if v.tag == tag)
    inner = model.get(v.nested or "")
    return inner.tag if isinstance(inner, TaggedUnion) else ""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Option:
    """One alternative of an untagged union, among those of its JSON type."""

    check: Check
    keys: tuple[str, ...]  # the keys of the object (or of a list's first item) that select it
    always: bool  # selected whatever the value of its JSON type: the last one tried
    takes_empty: bool = False  # lists: the alternative an empty list decodes as


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Group:
    """The alternatives of an untagged union that share one JSON type, in schema order."""

    json_kind: str
    condition: str  # the JSON type test, a Python expression over `v` ("" for any value)
    options: tuple[Option, ...]
    missing: str  # objects: what the DecodeError says when no alternative's keys are there
    # A catch-all alternative comes last: each alternative here is tried in order and a value
    # none of them accepts falls through to it (never a DecodeError).
    falls_through: bool = False

    def lines(self) -> list[str]:
        """The statements that return the first alternative that fits `v` (of this type)."""
        if self.json_kind in ("object", "list"):
            return self._by_keys()
        out: list[str] = []
        alone = len(self.options) == 1
        for o in self.options:
            if (o.always or alone) and not (self.falls_through and not o.check.checks_nothing):
                out += o.check.returned()
            else:
                out += _tried(o.check)
        if not alone and not self.options[-1].always and not self.falls_through:
            out.append('raise _rt.DecodeError("value matches no alternative")')
        return out

    def _by_keys(self) -> list[str]:
        """Objects by their required keys; lists by those of their first item."""
        out: list[str] = []
        lists = self.json_kind == "list"
        if lists and not self.options[0].always:
            out.append("first = v[0] if v else None")
        for o in self.options:
            accept = _tried(o.check) if self.falls_through else o.check.returned()
            if o.always:
                out += accept
                continue
            if lists:
                keys = [f"{pylit(k)} in first" for k in o.keys]
                test = " and ".join(["type(first) is dict", *keys])
                test = f"first is None or ({test})" if o.takes_empty else test
            else:
                test = " and ".join(f"{pylit(k)} in v" for k in o.keys)
            out += [f"if {test}:", *indented(accept)]
        if not self.options[-1].always and not self.falls_through:
            what = "object matches no alternative: " + self.missing
            if lists:
                what = "list matches no alternative"
            out.append(f"raise _rt.DecodeError({pylit(what)})")
        return out


def _tried(check: Check) -> list[str]:
    """An alternative whose rejection leaves the value to the alternatives after it."""
    if check.checks_nothing:
        return check.returned()
    return ["try:", *indented(check.returned()), "except _DecodeError:", "    pass"]


def untagged_union(shapes: Shapes, names: Names, t: UntaggedUnion, py: str) -> AliasContext:
    by_kind: dict[str, list[Option]] = {}
    inline = {id(b): names.inline[(t.name, i)] for i, b in enumerate(t.branches) if b.inline}
    for b in t.branches:
        options = by_kind.setdefault(b.json_kind, [])
        if options and options[-1].always:
            continue  # an earlier alternative of this JSON type takes every value
        check = shapes.check(b.shape, type_known=True)
        if id(b) in inline:
            check = CallCheck("_d_" + inline[id(b)])
        if b.json_kind in ("object", "list"):
            always = not b.required  # told apart by keys, or by nothing
        else:
            always = check.takes_every_value()
        takes_empty = b.json_kind == "list" and not options
        options.append(Option(check, b.required, always, takes_empty))
    groups = []
    for kind in _KIND_ORDER:
        if kind not in by_kind:
            continue
        condition = _CONDITIONS[kind]
        if kind == "float" and "int" in by_kind:
            condition = "type(v) is float"  # integers went to the integer alternatives
        found = tuple(by_kind[kind])
        sets = ["{" + ", ".join(o.keys) + "}" for o in found]
        missing = "needs the keys of one of " + " or ".join(sets)
        groups.append(Group(kind, condition, found, missing))
    catch_all = not groups[-1].condition and groups[-1].options[-1].always
    if catch_all and len(groups) > 1:
        # Order decides: what fails every typed alternative is the catch-all's.
        groups[:-1] = [replace(g, falls_through=True) for g in groups[:-1]]
    words = [EXPECTED[g.json_kind] for g in groups]
    expected = ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0]
    annotation = " | ".join(
        dict.fromkeys(inline.get(id(b)) or shapes.annotation(b.shape) for b in t.branches)
    )
    body: list[str] = []
    for g in groups:
        body += [f"if {g.condition}:", *indented(g.lines())] if g.condition else g.lines()
    if not catch_all:
        body.append(f"raise _rt.expected({pylit(expected)}, v)")
    return AliasContext(
        py, t.doc, _untagged_rule(groups), "untagged", annotation, decode="\n".join(body)
    )


def _untagged_rule(groups: list[Group]) -> str:
    """What the decoder of an untagged union does, said for the JSON types it has."""
    kinds = [_KIND_WORDS[g.json_kind] for g in groups]
    if len(kinds) > 1:
        text = f"Untagged union, decided by JSON type first, in this order: {', '.join(kinds)}."
    else:
        text = f"Untagged union: every alternative is {EXPECTED[groups[0].json_kind]}."
    several = {g.json_kind for g in groups if len(g.options) > 1}
    if "number" in kinds and "integer" not in kinds:
        text += " An integer may fill a number."
    if "object" in several:
        text += (
            " Among objects, the first alternative in schema order whose required keys"
            " are all present."
        )
    if "list" in several:
        text += (
            " Among lists, the same test on the first item; an empty list takes the first"
            " list alternative."
        )
    if several - {"object", "list"}:
        text += (
            " Among alternatives of another shared JSON type, the first in schema order"
            " that accepts the value."
        )
    if groups[0].falls_through:
        text += (
            " The last alternative takes any value: a value that fails the alternatives"
            " before it is kept as it is (order decides)."
        )
    return wrap(text)
