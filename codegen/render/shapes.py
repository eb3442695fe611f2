"""How each shape of the IR is written in `models.py`: its annotation, the check a decoder
runs on a value of it (`checks.py`), the item decoder of lists, maps and inline unions, and how
a field of it is encoded. Part of the lowering (`models.py` and `unions.py` build the contexts
with it)."""

from __future__ import annotations

from ..ir import EnumType, Model, ObjectType, Shape, TaggedUnion
from ..naming import Names
from .checks import (
    Anything,
    CallCheck,
    Check,
    EnumCheck,
    ListCheck,
    MapCheck,
    NullCheck,
    NumberCheck,
    TypeCheck,
)
from .context import Encode
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
                return self.enum_check(target, type_known=type_known)
            return CallCheck("_d_" + self.names.types[shape.ref])
        if kind in _PLAIN_TYPES:
            if type_known and shape.min_length is None:
                return Anything()
            return TypeCheck(_PLAIN_TYPES[kind], EXPECTED[kind], shape.min_length, type_known)
        if kind == "int" or kind == "float":
            if type_known and shape.minimum is None and shape.maximum is None:
                return Anything()
            expected = number_expected(EXPECTED[kind], shape)
            return NumberCheck(kind, expected, shape.minimum, shape.maximum, type_known)
        if kind == "null":
            return Anything() if type_known else NullCheck()
        if kind == "union":
            return CallCheck(self._item_decoder(shape))
        if kind == "list":
            item = self.item_decoder(shape.item or Shape("any"))
            return ListCheck(item, shape.min_items, skip_invalid, type_known)
        if kind == "map":
            return MapCheck(self.item_decoder(shape.item or Shape("any")), type_known)
        return Anything()

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

    def enum_check(self, t: EnumType, type_known: bool = False) -> EnumCheck:
        py = self.names.types[t.name]
        expected = EXPECTED[t.value_kind]
        if not t.open:
            expected = "one of " + ", ".join(repr(m.value) for m in t.members)
        else:
            expected = number_expected(expected, Shape("int", minimum=t.minimum, maximum=t.maximum))
        return EnumCheck(
            t.value_kind, expected, "_E_" + py, t.open, t.minimum, t.maximum, type_known
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


def to_json(encode: Encode, enum_type: str, target: str, *, nullable: bool) -> str:
    """The JSON value of the field value `target` (an expression), encoded as `encode` says."""
    unless_none = f" if {target} is not None else None" if nullable else ""
    if encode == "model":
        return f"{target}.to_json(){unless_none}"
    if encode == "list_model":
        return f"[i.to_json() for i in {target}]{unless_none}"
    if encode == "map_model":
        return f"{{k: i.to_json() for k, i in {target}.items()}}{unless_none}"
    if encode == "enum":
        return f"{enum_type}({target}){unless_none}"
    if encode == "generic":
        return f"_rt.enc({target})"
    return target


def to_text(encode: Encode, enum_type: str, target: str, *, nullable: bool, text: bool) -> str:
    """The JSON text of the field value `target` as `_wire.py` writes it: what `to_json`
    gives, dumped (`text`: the field's values are strings)."""
    unless = f'"null" if {target} is None else ' if nullable else ""
    if encode == "model":
        written = f"_WRITERS[type({target})]({target})"
        return f"({unless}{written})" if nullable else written
    if encode == "list_model":
        return f'({unless}"[" + ",".join([_o(i) for i in {target}]) + "]")'
    if encode == "map_model":
        return f'({unless}"{{" + ",".join([_k(k) + _o(i) for k, i in {target}.items()]) + "}}")'
    if encode == "enum":
        return f"({unless}_v({enum_type}({target})))"
    if encode == "generic":
        return f"_v(_enc({target}))"
    if text:
        return f"(_quote({target}) if type({target}) is str else _v({target}))"
    return f"_v({target})"


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
