"""How each shape of the IR is written in `models.py`: its annotation, the `Check` a decoder
runs on a value of it, the item decoder of lists, maps and inline unions, and how a field of
it is encoded. Part of the lowering (`models.py` and `unions.py` build the contexts with it)."""

from __future__ import annotations

from dataclasses import replace

from ..ir import EnumType, Model, ObjectType, Shape, TaggedUnion
from ..naming import Names
from .context import Check, Encode
from .env import pylit

EXPECTED = {
    "null": "null",
    "bool": "a boolean",
    "int": "an integer",
    "float": "a number",
    "str": "a string",
    "list": "a list",
    "map": "an object",
    "object": "an object",
    "any": "any value",
}
_PLAIN_TYPES = {"str": "str", "bool": "bool", "object": "dict"}
_ANNOTATIONS = {
    "str": "str",
    "int": "int",
    "float": "float",
    "bool": "bool",
    "null": "None",
    "object": "dict[str, _Any]",
}
OPEN_VALUE = {"str": "OpenStr", "int": "OpenInt"}


class Shapes:
    """The shape answers of one package (its model and names)."""

    def __init__(self, model: Model, names: Names) -> None:
        self.model = model
        self.names = names

    def annotation(self, shape: Shape) -> str:
        return annotation(self.model, self.names, shape)

    def wire(self, shape: Shape) -> Shape:
        return self.model.look_through(shape)

    def check(self, shape: Shape, skip_invalid: bool = False, type_known: bool = False) -> Check:
        """How to check a value of `shape`; with `type_known`, its JSON type was tested already
        (and found to be the shape's own), so only the rest is checked."""
        shape = self.wire(shape)
        kind = shape.kind
        if kind == "ref" and shape.ref is not None:
            target = self.model.get(shape.ref)
            if isinstance(target, EnumType):
                check = self.enum_check(target)
                return replace(check, type_known=True) if type_known else check
            return Check("call", call="_d_" + self.names.types[shape.ref])
        if kind in _PLAIN_TYPES:
            if type_known and shape.min_length is None:
                return Check("any")
            return Check(
                "type",
                EXPECTED[kind],
                pytype=_PLAIN_TYPES[kind],
                min_length=shape.min_length,
                type_known=type_known,
            )
        if kind in ("int", "float"):
            expected = number_expected(EXPECTED[kind], shape)
            if type_known:
                if shape.minimum is None and shape.maximum is None:
                    return Check("any")
                return Check("bounds", expected, lo=shape.minimum, hi=shape.maximum)
            return Check(kind, expected, lo=shape.minimum, hi=shape.maximum)
        if kind == "null":
            return Check("any") if type_known else Check("null", "null")
        if kind == "union":
            return Check("call", call=self._item_decoder(shape))
        if kind in ("list", "map"):
            return Check(
                kind,
                EXPECTED[kind],
                call=self.item_decoder(shape.item or Shape("any")),
                min_items=shape.min_items,
                skip_invalid=skip_invalid,
                type_known=type_known,
            )
        return Check("any")

    def item_decoder(self, shape: Shape) -> str:
        """A Python expression for a function `(value) -> decoded` (items of lists and maps)."""
        base = self._item_decoder(shape if self.wire(shape).nullable else shape.non_null())
        return f"_rt.or_null({base})" if shape.nullable else base

    def _item_decoder(self, shape: Shape) -> str:
        if shape.kind == "ref" and shape.ref is not None:
            return "_d_" + self.names.types[shape.ref]
        if shape.kind in ("int", "float"):
            if shape.minimum is None and shape.maximum is None:
                return f"_rt.d_{shape.kind}"
            return f"_rt.{shape.kind}_range({pylit(shape.minimum)}, {pylit(shape.maximum)})"
        if shape.kind in ("list", "map"):
            item = self.item_decoder(shape.item or Shape("any"))
            return f"_rt.{shape.kind}_decoder({item})"
        if shape.kind == "str" and shape.min_length is not None:
            return f"_rt.str_min({shape.min_length})"
        if shape.kind == "union":  # the first alternative that decodes, in schema order
            what = pylit(or_words([self._expected_of(o) for o in shape.options]))
            options = ", ".join(self.item_decoder(o) for o in shape.options)
            return f"_rt.first_of({what}, {options})"
        if shape.kind in ("str", "bool", "object", "null"):
            return f"_rt.d_{shape.kind}"
        return "_rt.d_any"

    def _expected_of(self, shape: Shape) -> str:
        """How an error names one alternative of an inline union."""
        wire = self.wire(shape)
        if wire.kind == "ref" and wire.ref is not None:
            return f"a {self.names.types[wire.ref]}"
        if wire.kind in ("int", "float"):
            return number_expected(EXPECTED[wire.kind], wire)
        return EXPECTED.get(wire.kind, "any value")

    def encode(self, shape: Shape) -> tuple[Encode, str]:
        """How a field's value becomes JSON, and for enum members their plain type."""
        if self._is_model(shape):
            return "model", ""
        wire = self.wire(shape)
        target = self.model.index.get(wire.ref or "") if wire.kind == "ref" else None
        if isinstance(target, EnumType):  # members become plain str/int on the wire
            return "enum", target.value_kind
        if shape.kind in ("list", "map") and shape.item is not None:
            if self._is_model(shape.item) and not shape.item.nullable:
                return ("list_model" if shape.kind == "list" else "map_model"), ""
            return ("plain" if self._is_plain(shape.item) else "generic"), ""
        return ("plain" if self._is_plain(shape) else "generic"), ""

    def _is_model(self, shape: Shape) -> bool:
        if shape.kind != "ref" or shape.ref is None:
            return False
        return isinstance(self.model.get(shape.ref), ObjectType | TaggedUnion)

    def _is_plain(self, shape: Shape) -> bool:
        """JSON that encodes as itself: no models, no enum members inside."""
        shape = self.wire(shape)
        if shape.kind in ("ref", "union"):
            return False
        if shape.kind in ("list", "map"):
            return self._is_plain(shape.item or Shape("any"))
        return True

    def enum_check(self, t: EnumType) -> Check:
        py = self.names.types[t.name]
        expected = EXPECTED[t.value_kind]
        if not t.open:
            expected = "one of " + ", ".join(repr(m.value) for m in t.members)
        else:
            expected = number_expected(expected, Shape("int", minimum=t.minimum, maximum=t.maximum))
        return Check(
            "enum",
            expected,
            pytype=t.value_kind,
            table="_E_" + py,
            open=t.open,
            lo=t.minimum,
            hi=t.maximum,
        )


def annotation(model: Model, names: Names, shape: Shape) -> str:
    """The Python type of a shape, as written in `models.py` (`list[ContentBlock] | None`)."""
    if shape.kind == "ref" and shape.ref is not None:
        target = model.get(shape.ref)
        base = names.types[shape.ref]
        if isinstance(target, EnumType):
            # Its members, or its values as literals (so a misspelling is a type error);
            # an open enum's other values are `OpenStr`/`OpenInt` (what decoding gives).
            values = ", ".join(pylit(m.value) for m in target.members)
            base += f" | _Literal[{values}]" if values else ""
            if target.open:
                base += " | _rt." + OPEN_VALUE[target.value_kind]
    elif shape.kind == "list":
        base = f"list[{annotation(model, names, shape.item or Shape('any'))}]"
    elif shape.kind == "map":
        base = f"dict[str, {annotation(model, names, shape.item or Shape('any'))}]"
    elif shape.kind == "union":
        base = " | ".join(dict.fromkeys(annotation(model, names, o) for o in shape.options))
    else:
        base = _ANNOTATIONS.get(shape.kind, "_Any")
    if shape.nullable and base not in ("None", "_Any"):
        base += " | None"
    return base


def number_expected(what: str, shape: Shape) -> str:
    lo, hi = shape.minimum, shape.maximum
    if lo is not None and hi is not None:
        return f"{what} from {lo} to {hi}"
    if lo is not None:
        return f"{what} >= {lo}"
    if hi is not None:
        return f"{what} <= {hi}"
    return what


def or_words(words: list[str]) -> str:
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0]
