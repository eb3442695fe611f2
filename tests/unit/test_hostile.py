"""A hostile schema: text built to escape from docstrings and literals, names that are keywords,
builtins or not identifiers at all, tags full of quotes. The generated package must import, run
nothing it was handed, and keep every string exact; what cannot be named is refused (exit 2).
"""

from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from codegen.render.env import docstring, json_text, pylit
from codegen.render.ruff import ruff_binary
from tests.conftest import REPO, write_schema

MARKER = "PWNED"
# Each would create MARKER in the working directory, if it ever ran.
PAYLOAD = f"__import__('pathlib').Path('{MARKER}').touch()"
ESCAPES = [
    f'"""\n{PAYLOAD}\n"""',
    f"'''\n{PAYLOAD}\n'''",
    f"\\\n{PAYLOAD}",
    "ends with a backslash \\",
    'ends with a quote "',
    'ends with escaped quotes \\"""',
    f"\n# {PAYLOAD}",
    f"line\u2028{PAYLOAD}",
    f"nul \x00 {PAYLOAD}",
    f"\r{PAYLOAD}",
    "{{ jinja }} {% if true %}{% endif %}",
]
# `'''` and `"""` have no word to name a class after: they spell their code points
# (`TrickyTag27_27_27`, `TrickyTag22_22_22`).
HOSTILE_TAGS = ['a"b', "c\\d", "e\nf", "g\u2028h", "'''", '"""', f"');{PAYLOAD};('"]


def hostile_schema() -> dict[str, Any]:
    doc = "\n".join(ESCAPES)
    text = {"type": "string", "description": doc}
    return {
        "title": f'Hostile """ {PAYLOAD}',
        "$defs": {
            "class": {
                "type": "object",
                "description": doc,
                "properties": {
                    "class": text,
                    "extra": {"type": "integer", "description": ESCAPES[0]},
                    # One-line docs ending in quotes: the closing `"""` follows on the same line.
                    "to_json": {"type": "boolean", "description": f'"""; {PAYLOAD}; """'},
                    "from_json": {"type": "string", "description": 'a \\" b \\\\"'},
                    "self": {"type": "string"},
                    "None": {"type": "string"},
                    "my-field": {"type": "string"},
                    "1st": {"type": "integer"},
                    f"k'{PAYLOAD}": {"type": "string"},
                },
                "required": ["class"],
            },
            "None": {"type": "string", "description": ESCAPES[1]},
            "str": {
                "type": "object",
                "properties": {"str": {"type": "string"}, "x": {"type": "string"}},
            },
            "list": {"type": "array", "items": {"$ref": "#/$defs/str"}},
            "loop": {"type": "array", "items": {"$ref": "#/$defs/loop"}},
            "object": {"type": "object", "properties": {"type": {"type": "string"}}},
            "my-type": {"type": "object", "properties": {"a b": {"type": "string"}}},
            "1st": {"type": "string"},
            "a b": {"type": "integer"},
            "π": {"type": "boolean"},
            "Mood": {
                "description": ESCAPES[2],
                "anyOf": [
                    {"const": 'x"y', "type": "string", "description": ESCAPES[0]},
                    {"const": f"');{PAYLOAD};('", "type": "string"},
                    {"title": "other", "type": "string", "description": ESCAPES[7]},
                ],
            },
            "Tricky": {
                "description": ESCAPES[6],
                "anyOf": [
                    {
                        "type": "object",
                        "description": ESCAPES[i % len(ESCAPES)],
                        "properties": {"kind": {"type": "string", "const": tag}, "class": text},
                        "required": ["kind"],
                    }
                    for i, tag in enumerate(HOSTILE_TAGS)
                ]
                + [
                    {
                        "title": f"other'{PAYLOAD}",
                        "type": "object",
                        "properties": {"kind": {"type": "string"}},
                        "required": ["kind"],
                        "not": {"anyOf": [{"properties": {"kind": {"const": f'"""{PAYLOAD}'}}}]},
                    }
                ],
            },
            "EvilRequest": {
                "x-method": f"evil/'{PAYLOAD}'",
                "x-side": "agent",
                "type": "object",
                "properties": {
                    "mood": {"$ref": "#/$defs/Mood"},
                    "tricky": {"$ref": "#/$defs/Tricky"},
                },
            },
            "EvilResponse": {
                "x-method": f"evil/'{PAYLOAD}'",
                "x-side": "agent",
                "type": "object",
                "properties": {"dict": {"type": "object"}, "list": {"$ref": "#/$defs/list"}},
            },
        },
    }


LOOP_WARNING = (
    "acp-codegen: warning at #/$defs/loop: refers to itself through aliases only; "
    "kept as raw JSON\n"
)
HOSTILE_META = {"agentMethods": {f"evil'{PAYLOAD}": f"evil/'{PAYLOAD}'"}, "version": 1}

PROBE = """
import json, sys
import hostile as h
from hostile.v1 import models as m
out = {}
out["exports"] = sorted(h.__all__)
out["docs"] = [m.class_.__doc__, m.Tricky.__doc__, m.Mood.__doc__]
out["alias"] = h.decode(h.None_, "s")
out["fields"] = sorted(m.class_.__dataclass_fields__)
out["str_fields"] = list(m.str_.__dataclass_fields__)
out["evil_fields"] = list(m.EvilResponse.__dataclass_fields__)
data = json.loads(sys.argv[1])
value = h.class_.from_json(data)
out["roundtrip"] = value.to_json() == data
out["class"] = [value.class__, value.extra_, value.to_json_, value.self_, value.extra]
tags = []
for tag in json.loads(sys.argv[2]):
    v = h.decode(h.Tricky, {"kind": tag, "class": "c"})
    tags.append([type(v).__name__, v.TAG, h.encode(v)])
out["tags"] = tags
other = h.decode(h.Tricky, {"kind": "zzz"})
out["other"] = type(other).__name__
out["methods"] = sorted(h.METHODS)
out["mood"] = [h.decode(h.Mood, v) for v in json.loads(sys.argv[3])]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def hostile_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hostile package, generated by the CLI into a tmp folder."""
    root = tmp_path_factory.mktemp("hostile")
    schema = write_schema(root / "src", hostile_schema(), HOSTILE_META)
    out = root / "out"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "codegen",
            "generate",
            "--schema",
            str(schema),
            "--out",
            str(out),
            "--package",
            "hostile",
        ],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=120,
    )
    assert (result.returncode, result.stderr) == (0, LOOP_WARNING)
    return out


def markers(root: Path) -> list[Path]:
    return [p for p in root.rglob(MARKER)] + [p for p in Path.cwd().glob(MARKER)]


def test_generated_code_imports_runs_nothing_and_keeps_strings_exact(hostile_out: Path) -> None:
    data = {
        "class": "c",
        "extra": 1,
        "to_json": True,
        "self": "s",
        f"k'{PAYLOAD}": "k",
        "undeclared": [1],
    }
    moods = ['x"y', f"');{PAYLOAD};('", "\u2028"]
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            PROBE,
            json.dumps(data),
            json.dumps(HOSTILE_TAGS),
            json.dumps(moods),
        ],
        cwd=hostile_out,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert markers(hostile_out.parent) == []
    out = json.loads(result.stdout)

    class_doc, tricky_doc, mood_doc = map(inspect.cleandoc, out["docs"])
    assert class_doc.startswith("\n".join(ESCAPES))  # every escape attempt, verbatim
    assert tricky_doc.startswith(ESCAPES[6].strip() + "\n\n")
    assert mood_doc.startswith(ESCAPES[2] + "\n\n")
    assert out["alias"] == "s"
    assert out["roundtrip"] is True
    assert out["class"] == ["c", 1, True, "s", {"undeclared": [1]}]
    assert out["fields"] == sorted(
        [
            "class__",
            "extra_",
            "to_json_",
            "from_json_",
            "self_",
            "none",
            "my_field",
            "field_1st",
            "k_import_pathlib_path_pwned_touch",
            "extra",
        ]
    )
    assert out["str_fields"] == ["str__", "x", "extra"]  # `str` hides a builtin, `str_` the class
    assert out["evil_fields"] == ["dict_", "list__", "extra"]  # like `str` above
    assert [t[1] for t in out["tags"]] == HOSTILE_TAGS
    assert all(
        t[2] == {"kind": tag, "class": "c"}
        for t, tag in zip(out["tags"], HOSTILE_TAGS, strict=True)
    )
    assert len({t[0] for t in out["tags"]}) == len(HOSTILE_TAGS)  # one class per tag
    assert out["other"].startswith("Tricky")
    assert out["methods"] == [f"evil/'{PAYLOAD}'"]
    assert out["mood"] == moods
    assert {
        "class_",
        "None_",
        "str_",
        "list_",
        "object_",
        "my_type",
        "Type_1st",
        "a_b",
        "Type",
    } <= set(out["exports"])


def test_field_docstrings_hold_the_descriptions_verbatim(hostile_out: Path) -> None:
    tree = ast.parse((hostile_out / "hostile" / "v1" / "models.py").read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "class_")
    docs = {
        field.target.id: inspect.cleandoc(doc.value.value)
        for field, doc in zip(cls.body, cls.body[1:], strict=False)
        if isinstance(field, ast.AnnAssign)
        and isinstance(field.target, ast.Name)
        and isinstance(doc, ast.Expr)
        and isinstance(doc.value, ast.Constant)
        and isinstance(doc.value.value, str)
    }
    props = hostile_schema()["$defs"]["class"]["properties"]
    assert docs["to_json_"] == props["to_json"]["description"]
    assert docs["from_json_"] == props["from_json"]["description"]
    assert docs["extra_"] == ESCAPES[0]
    assert docs["class__"] == "\n".join(ESCAPES)


def test_generated_code_is_lint_and_type_clean(hostile_out: Path, mypy_cache: Path) -> None:
    ruff = subprocess.run(
        [
            ruff_binary(),
            "check",
            "--no-cache",
            "--config",
            str(REPO / "pyproject.toml"),
            "--ignore",
            "E501",
            "--output-format",
            "concise",
            "hostile",
        ],
        cwd=hostile_out,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ruff.returncode == 0, ruff.stdout + ruff.stderr
    mypy = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--python-version",
            "3.11",
            "--config-file",
            "",
            "--cache-dir",
            str(mypy_cache),
            "hostile",
        ],
        cwd=hostile_out,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
    assert markers(hostile_out.parent) == []


def refused(run_cli: Any, tmp_path: Path, schema: dict[str, Any]) -> str:
    """Run generate on `schema`: exit 2, nothing written, the errors without a traceback."""
    path = write_schema(tmp_path / "src", schema)
    out = tmp_path / "out"
    result = run_cli(
        "generate", "--schema", path, "--out", out, "--package", "hostile", cwd=tmp_path
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert not out.exists()
    assert markers(tmp_path) == []
    assert result.stderr.startswith(LOOP_WARNING)  # warnings first, each once; then the errors
    return str(result.stderr[len(LOOP_WARNING) :])


def test_names_colliding_after_sanitizing_are_refused_naming_both_pointers(
    run_cli: Any, tmp_path: Path
) -> None:
    schema = hostile_schema()
    schema["$defs"]["my_type"] = {"type": "string"}
    assert refused(run_cli, tmp_path, schema) == (
        "acp-codegen: error at #/$defs/my_type: Python name 'my_type' is also used by "
        "#/$defs/my-type\n"
    )


def test_fields_colliding_after_sanitizing_are_refused(run_cli: Any, tmp_path: Path) -> None:
    schema = hostile_schema()
    schema["$defs"]["class"]["properties"]["my_field"] = {"type": "string"}
    assert refused(run_cli, tmp_path, schema) == (
        "acp-codegen: error at #/$defs/class/properties/my_field: field 'my_field' maps to Python "
        "name 'my_field', as does #/$defs/class/properties/my-field\n"
    )


def test_an_unknown_leniency_keyword_is_refused_in_one_line(run_cli: Any, tmp_path: Path) -> None:
    schema = hostile_schema()
    schema["$defs"]["class"]["properties"]["self"]["x-deserialize-foo"] = True
    assert refused(run_cli, tmp_path, schema) == (
        "acp-codegen: error at #/$defs/class/properties/self: unknown leniency rule "
        "'x-deserialize-foo': the generator cannot honour it\n"
    )


def test_tags_that_spell_one_name_are_refused_until_the_overrides_name_them(
    run_cli: Any, tmp_path: Path
) -> None:
    schema = hostile_schema()
    branches = schema["$defs"]["Tricky"]["anyOf"]
    branches.insert(0, {**branches[0], "properties": {"kind": {"type": "string", "const": "a+b"}}})
    assert refused(run_cli, tmp_path, schema) == (  # `a"b` and `a+b` are both `TrickyAB`
        "acp-codegen: error at #/$defs/Tricky/anyOf/1: Python name 'TrickyAB' is also used by "
        "#/$defs/Tricky/anyOf/0\n"
    )
    names = tmp_path / "names.json"
    names.write_text(
        json.dumps({"Tricky": {"a+b": "Plus", "'''": "TripleQuote"}}), encoding="utf-8"
    )
    path = tmp_path / "src" / "schema.json"
    out = tmp_path / "out"
    result = run_cli(
        "generate",
        "--schema",
        path,
        "--out",
        out,
        "--package",
        "hostile",
        "--names",
        names,
        cwd=tmp_path,
    )
    assert (result.returncode, result.stderr) == (0, LOOP_WARNING)
    models = (out / "hostile" / "v1" / "models.py").read_text(encoding="utf-8")
    assert "class Plus(_TrickyBase):" in models and "class TripleQuote(_TrickyBase):" in models


# -- the two filters that schema text goes through ----------------------------------------------
def lines_of(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip().split("\n")]


# Any text, and text made of the characters that matter to a Python string literal.
TEXTS = st.text() | st.text(alphabet="\"'\\\n\r\t #a\x00\u2028")


@given(TEXTS, TEXTS.filter(lambda t: len(t) < 4))
@example('one line ending in """', "")
@example("ends in a backslash \\", 'and a "')
def test_docstring_is_always_one_inert_literal_holding_the_text(text: str, note: str) -> None:
    source = f"class C:\n    {docstring(text, 4, note)}\n"
    [cls] = ast.parse(source).body
    assert isinstance(cls, ast.ClassDef) and len(cls.body) == 1
    [expr] = cls.body
    assert isinstance(expr, ast.Expr) and isinstance(expr.value, ast.Constant)
    value = expr.value.value
    assert isinstance(value, str)
    first, *rest = value.split("\n")
    dedented = "\n".join([first, *(line.removeprefix("    ") for line in rest)])
    parts = [p.strip() for p in (text, note) if p.strip()]
    assert lines_of(dedented) == lines_of("\n\n".join(parts) or "No description in the schema.")


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(), st.lists, max_leaves=8))
def test_pylit_is_always_an_inert_literal_of_the_value(value: Any) -> None:
    assert ast.literal_eval(pylit(value)) == value


@given(st.text())
def test_json_text_is_the_json_of_the_string_with_its_characters_kept(text: str) -> None:
    assert json_text(text) == json.dumps(text, ensure_ascii=False)
    assert json.loads(json_text(text)) == text


def test_pylit_refuses_what_has_no_literal() -> None:
    for value in (float("inf"), float("nan"), {"a": b"x"}, b"x", {1.5: 1}):
        with pytest.raises(TypeError, match="cannot render .* as a literal"):
            pylit(value)
    assert pylit([1.5, -0.0, 1e300]) == "[1.5, -0.0, 1e+300]"
    assert pylit({"state": "idle", "n": [1]}) == "{'state': 'idle', 'n': [1]}"


def test_bounds_of_infinity_or_nan_bound_nothing(make_package: Any) -> None:
    """JSON parsers (Python's among them) accept `Infinity` and `NaN`; as bounds they mean no
    bound, and never reach the generated code as a name (`inf`) it cannot evaluate."""
    inf, nan = float("inf"), float("nan")
    props = {
        "n": {"type": "integer", "minimum": nan, "maximum": inf},
        "x": {"type": "number", "minimum": -inf},
        "xs": {"type": "array", "items": {"type": "integer", "maximum": inf}},
    }
    pkg = make_package({"$defs": {"Count": {"type": "object", "properties": props}}})
    data = {"n": 10**30, "x": -1e300, "xs": [10**20]}
    assert pkg.encode(pkg.decode(pkg.Count, data)) == data
