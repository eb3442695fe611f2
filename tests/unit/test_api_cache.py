"""The toolkit's API entries are kept in the user's cache keyed by each module's source: a
kept entry is what parsing gives, a changed source is parsed again, and a damaged cache file
is ignored (and replaced), never trusted."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codegen.config import default_templates
from codegen.modules import TOOLKIT_MODULES
from codegen.render import api


def test_the_cache_gives_what_parsing_gives_and_follows_the_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    templates = tmp_path / "templates"
    shutil.copytree(default_templates(), templates)
    parsed = api.toolkit_api(templates, TOOLKIT_MODULES)
    kept = sorted((tmp_path / "cache").rglob("api-*.json"))
    assert len(kept) == sum(1 for m in TOOLKIT_MODULES if m.exports and m.source)
    assert api.toolkit_api(templates, TOOLKIT_MODULES) == parsed  # from the cache

    for path in kept:  # damaged: parsed again, and the same
        path.write_text('[["only", "three", "fields"]]', encoding="utf-8")
    assert api.toolkit_api(templates, TOOLKIT_MODULES) == parsed

    policies = templates / "toolkit" / "policies.py"
    text = policies.read_text(encoding="utf-8")
    policies.write_text(text.replace('"""', '"""Changed. ', 1), encoding="utf-8")
    changed = {e.name: e for e in api.toolkit_api(templates, TOOLKIT_MODULES)}
    assert changed["allow"] == {e.name: e for e in parsed}["allow"]
    assert len(sorted((tmp_path / "cache").rglob("api-*.json"))) == len(kept) + 1


def test_without_a_cache_folder_the_api_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # a file: no folder can be made in it
    entries = api.toolkit_api(default_templates(), TOOLKIT_MODULES)
    assert "Agent" in {e.name for e in entries}
