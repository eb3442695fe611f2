"""The check classes (render/checks.py): each kind's exact lines, and what those lines do when
run against the runtime the generated packages ship (templates/runtime/_runtime.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from codegen.render.checks import (
    Anything,
    CallCheck,
    Check,
    EnumCheck,
    ListCheck,
    MapCheck,
    NullCheck,
    NumberCheck,
    TypeCheck,
    field_decode,
    indented,
)
from templates.runtime import _runtime as rt


class Mode(str):
    pass


ASK = Mode("ask")
E_MODE = {"ask": ASK}


def decoder(check: Check) -> Callable[[Any], Any]:
    """`check.returned()` as the body of a decoder function, compiled with the runtime."""
    source = "\n".join(["def d(v):", *indented(check.returned())])
    scope: dict[str, Any] = {
        "_rt": rt,
        "_DecodeError": rt.DecodeError,
        "_E_Mode": E_MODE,
        "_d_Thing": lambda v: ("thing", v),
    }
    exec(compile(source, "<check>", "exec"), scope)
    fn: Callable[[Any], Any] = scope["d"]
    return fn


def rejects(check: Check, value: Any) -> str:
    with pytest.raises(rt.DecodeError) as info:
        decoder(check)(value)
    return str(info.value)


def test_anything_writes_no_statement() -> None:
    assert Anything().lines() == []
    assert Anything().returned() == ["return v"]
    assert decoder(Anything())(object) is object


def test_a_string_with_fewest_characters() -> None:
    check = TypeCheck("str", "a string", min_length=2)
    assert check.lines() == [
        "if type(v) is not str:",
        "    raise _rt.expected('a string', v)",
        "if len(v) < 2:",
        "    raise _rt.too_few_characters(2)",
    ]
    assert decoder(check)("ab") == "ab"
    assert rejects(check, 5) == "$: expected a string, got an integer"
    assert rejects(check, "a") == "$: expected at least 2 character(s)"
    known = TypeCheck("str", "a string", min_length=2, type_known=True)
    assert known.lines() == ["if len(v) < 2:", "    raise _rt.too_few_characters(2)"]


def test_a_number_takes_an_integer_but_never_a_boolean() -> None:
    check = NumberCheck("float", "a number from 0 to 1", lo=0, hi=1)
    assert check.lines() == [
        "if (type(v) is not float and type(v) is not int) or v < 0 or v > 1:",
        "    raise _rt.expected('a number from 0 to 1', v)",
    ]
    assert [decoder(check)(v) for v in (0, 0.5, 1)] == [0, 0.5, 1]
    assert rejects(check, True) == "$: expected a number from 0 to 1, got a boolean"
    assert rejects(check, 1.5) == "$: expected a number from 0 to 1, got a number"


def test_an_integer_whose_type_is_known_checks_its_bounds_only() -> None:
    assert NumberCheck("int", "an integer <= 9", hi=9, type_known=True).lines() == [
        "if v > 9:",
        "    raise _rt.expected('an integer <= 9', v)",
    ]
    assert NumberCheck("int", "an integer", lo=-1).lines()[0] == (
        "if type(v) is not int or v < -1:"
    )


def test_null() -> None:
    assert NullCheck().lines() == ["if v is not None:", "    raise _rt.expected('null', v)"]
    assert decoder(NullCheck())(None) is None
    assert rejects(NullCheck(), 0) == "$: expected null, got an integer"


def test_a_call_converts_in_place_or_returns_directly() -> None:
    check = CallCheck("_d_Thing")
    assert check.lines() == ["v = _d_Thing(v)"]
    assert check.returned() == ["return _d_Thing(v)"]
    assert decoder(check)(3) == ("thing", 3)


def test_a_closed_enum_looks_the_value_up() -> None:
    check = EnumCheck("str", "one of 'ask'", "_E_Mode")
    assert check.returned() == [
        "if type(v) is not str or v not in _E_Mode:",
        "    raise _rt.expected(\"one of 'ask'\", v)",
        "return _E_Mode[v]",
    ]
    assert decoder(check)("ask") is ASK
    assert rejects(check, "code") == "$: expected one of 'ask', got a string"
    assert not check.takes_every_value()


def test_an_open_enum_keeps_other_values_of_its_type() -> None:
    check = EnumCheck("str", "a string", "_E_Mode", open=True)
    assert check.lines() == [
        "if type(v) is not str:",
        "    raise _rt.expected('a string', v)",
        "e = _E_Mode.get(v)",
        "v = e if e is not None else _rt.OpenStr(v)",
    ]
    other = decoder(check)("code")
    assert (type(other), other) == (rt.OpenStr, "code")
    assert decoder(check)("ask") is ASK
    assert rejects(check, 1) == "$: expected a string, got an integer"
    known = EnumCheck("str", "a string", "_E_Mode", open=True, type_known=True)
    assert known.lines() == ["e = _E_Mode.get(v)", "v = e if e is not None else _rt.OpenStr(v)"]
    assert known.takes_every_value()
    bounded = EnumCheck("int", "an integer >= 0", "_E_Mode", open=True, lo=0, type_known=True)
    assert bounded.lines()[0] == "if v < 0:"
    assert not bounded.takes_every_value()  # a value out of bounds is left to the others


def test_a_list_counts_its_items_after_dropping_the_invalid_ones() -> None:
    check = ListCheck("_rt.d_int", min_items=1, skip_invalid=True)
    assert check.returned() == [
        "if type(v) is not list:",
        "    raise _rt.expected('a list', v)",
        "v = _rt.list_skip(v, _rt.d_int)",
        "if len(v) < 1:",
        "    raise _rt.too_short(1)",
        "return v",
    ]
    assert decoder(check)([1, "x", 2]) == [1, 2]
    assert rejects(check, ["x"]) == "$: expected at least 1 item(s)"
    assert ListCheck("_rt.d_int").returned() == [
        "if type(v) is not list:",
        "    raise _rt.expected('a list', v)",
        "return _rt.list_of(v, _rt.d_int)",
    ]


def test_a_map() -> None:
    check = MapCheck("_rt.d_str", type_known=True)
    assert check.lines() == ["v = _rt.map_of(v, _rt.d_str)"]
    assert decoder(MapCheck("_rt.d_str"))({"a": "b"}) == {"a": "b"}
    assert rejects(MapCheck("_rt.d_str"), []) == "$: expected an object, got a list"


# -- a field's statements ----------------------------------------------------------------------
def test_a_required_field() -> None:
    text = field_decode(
        "count", "count", required=True, check=CallCheck("_d_N"), on_null="check",
        lenient=False, empty="",
    )  # fmt: skip
    assert text.splitlines() == [
        "key = 'count'",
        "v = data['count']",
        "v = _d_N(v)",
        "self.count = v",
    ]


def test_an_optional_nullable_lenient_field() -> None:
    text = field_decode(
        "title", "title", required=False, check=TypeCheck("str", "a string"), on_null="keep",
        lenient=True, empty="",
    )  # fmt: skip
    assert text.splitlines() == [
        "key = 'title'",
        "if 'title' in data:",
        "    v = data['title']",
        "    n += 1",
        "    try:",
        "        if v is not None:",
        "            if type(v) is not str:",
        "                raise _rt.expected('a string', v)",
        "    except _DecodeError:",
        "        v = _UNSET",
        "else:",
        "    v = _UNSET",
        "self.title = v",
    ]


def test_a_list_field_whose_null_is_the_empty_list() -> None:
    text = field_decode(
        "items", "items", required=True, check=ListCheck("_rt.d_int"), on_null="empty",
        lenient=True, empty="[]",
    )  # fmt: skip
    assert text.splitlines() == [
        "key = 'items'",
        "v = data['items']",
        "try:",
        "    if v is None:",
        "        v = []",
        "    else:",
        "        if type(v) is not list:",
        "            raise _rt.expected('a list', v)",
        "        v = _rt.list_of(v, _rt.d_int)",
        "except _DecodeError:",
        "    v = []",
        "self.items = v",
    ]


def test_a_field_without_a_check_takes_null_and_leniency_without_a_try() -> None:
    text = field_decode(
        "meta", "_meta", required=False, check=Anything(), on_null="keep", lenient=True,
        empty="",
    )  # fmt: skip
    assert text.splitlines() == [
        "key = '_meta'",
        "if '_meta' in data:",
        "    v = data['_meta']",
        "    n += 1",
        "else:",
        "    v = _UNSET",
        "self.meta = v",
    ]


def test_the_tag_of_an_open_variant_refuses_the_reserved_tags() -> None:
    text = field_decode(
        "kind", "kind", required=True, check=TypeCheck("str", "a string"), on_null="check",
        lenient=False, empty="", reserved_in="ThingOther",
    )  # fmt: skip
    assert text.splitlines()[-3:] == [
        "if v in ThingOther.RESERVED_TAGS:",
        "    raise _rt.reserved_tag(v)",
        "self.kind = v",
    ]
