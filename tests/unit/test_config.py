"""`codegen.config`: `[tool.acp-codegen]` with defaults (the shipped templates unless the
section names its own), and a one-line error for each thing wrong in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.config import PackageConfig, default_bindings, default_templates, load_config
from codegen.diagnostics import InputError
from tests.conftest import REPO


def project(tmp_path: Path, section: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "mine"\n\n[tool.acp-codegen]\n' + section, encoding="utf-8"
    )
    return tmp_path


def test_defaults_of_a_minimal_section(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        'out = "src/mine"\n[[tool.acp-codegen.packages]]\n'
        'package = "acp"\nschema = "v2/schema.json"\n',
    )
    (root / "sub").mkdir()
    config = load_config(root / "sub")  # found from a folder below
    assert config.root == root
    assert config.lock == root / "schema" / "pins.lock.json"
    assert config.out == root / "src" / "mine"
    assert config.templates == default_templates() == REPO / "templates"
    assert not config.user_templates
    assert config.names is None
    assert config.packages == (PackageConfig("acp", ("v2/schema.json",)),)
    assert config.lane_package("v2") == root / "src" / "mine" / "acp"


def test_a_package_of_several_lanes(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        '[[tool.acp-codegen.packages]]\npackage = "acp"\n'
        'lanes = ["v1/schema.json", "v2/schema.json"]\nref = "npm-sdk-2.4.0"\n',
    )
    config = load_config(root)
    lanes = ("v1/schema.json", "v2/schema.json")
    assert config.packages == (PackageConfig("acp", lanes, "npm-sdk-2.4.0", flat=False),)
    assert config.lane_package("v1") == root / "generated" / "acp" / "v1"
    assert config.lane_package("v2") == root / "generated" / "acp" / "v2"


def test_a_section_may_name_its_own_templates_folder(tmp_path: Path) -> None:
    config = load_config(project(tmp_path, 'templates = "tpl"\nlock = "pins/lock.json"\n'))
    assert (config.templates, config.user_templates) == (tmp_path / "tpl", True)
    assert config.lock == tmp_path / "pins" / "lock.json"
    assert config.packages == ()
    assert config.lane_package("v2") is None


def test_the_repo_itself_uses_its_templates() -> None:
    config = load_config(REPO)
    assert (config.templates, config.user_templates) == (REPO / "templates", False)
    assert default_bindings() == REPO / "generated" / "acp_kit" / "v2"


@pytest.mark.parametrize(
    ("section", "problem"),
    [
        ('outt = "x"\n', "unknown key 'outt' (known: lock, names, out, packages, templates)"),
        ("out = 3\n", "out must be a non-empty string (a path)"),
        ('templates = ""\n', "templates must be a non-empty string (a path)"),
        (
            'packages = "acp"\n',
            "packages must be an array of tables ([[tool.acp-codegen.packages]])",
        ),
        ("packages = [1]\n", "packages[0] must be a table"),
        (
            '[[tool.acp-codegen.packages]]\npackage = "acp"\n',
            "packages[0] needs one of 'schema' (one lane) or 'lanes' (several)"
            " (keys: package, schema or lanes, ref)",
        ),
        (
            '[[tool.acp-codegen.packages]]\npackage = "a"\nschema = "s"\nlane = "v2"\n',
            "packages[0] has an unknown key 'lane' (keys: package, schema or lanes, ref)",
        ),
        (
            '[[tool.acp-codegen.packages]]\npackage = "a"\nschema = 2\n',
            "packages[0]: every value must be a non-empty string",
        ),
        (
            '[[tool.acp-codegen.packages]]\npackage = "a"\nschema = "s"\n'
            '[[tool.acp-codegen.packages]]\npackage = "a"\nschema = "t"\n',
            "packages[1]: package 'a' is configured twice",
        ),
        (
            '[[tool.acp-codegen.packages]]\npackage = "a"\nschema = "s"\nlanes = ["s"]\n',
            "packages[0] needs one of 'schema' (one lane) or 'lanes' (several)"
            " (keys: package, schema or lanes, ref)",
        ),
        (
            '[[tool.acp-codegen.packages]]\npackage = "a"\nlanes = []\n',
            "packages[0]: lanes must be a non-empty array of schema paths",
        ),
        (
            '[[tool.acp-codegen.packages]]\npackage = "a"\nlanes = ["s", "s"]\n',
            "packages[0]: a schema path is listed twice in lanes",
        ),
    ],
)
def test_each_mistake_is_one_line_naming_the_file(
    tmp_path: Path, section: str, problem: str
) -> None:
    root = project(tmp_path, section)
    with pytest.raises(InputError) as info:
        load_config(root)
    assert str(info.value) == f"error: [tool.acp-codegen] in {root / 'pyproject.toml'}: {problem}"


def test_broken_toml_is_named(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.acp-codegen\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_config(tmp_path)
    assert str(info.value).startswith(f"error: {tmp_path / 'pyproject.toml'} is not valid TOML: ")


def test_no_section_here_or_above(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_config(tmp_path)
    assert str(info.value) == (
        "error: no pyproject.toml with [tool.acp-codegen] here or above;"
        " add a [tool.acp-codegen] section (out, packages) to your pyproject.toml"
    )
