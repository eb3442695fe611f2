"""Every code block of the README and of docs/ runs as it is written, and every link between them
is true.

A comment in the markdown right before a fenced block says how the block is run (it does not
show on a rendered page):

- `<!-- run: file NAME -->`: the block is saved as NAME in the page's working folder;
- `<!-- run: python -->`: the block runs there as a script (`acp_kit` importable), exit 0;
- `<!-- run: sh [MODE] -->`: the block runs there with bash (`set -e`), `acp-codegen` and
  `python` the checkout's; MODE `mirror` sets `$ACP_SCHEMA_MIRROR` and makes the folder a project
  with the repository's pins, `standin` prepares a project pinned to a stand-in npm registry that
  also has a newer release;
- `<!-- run: python FILE -->` before an `sh` block that runs `python FILE`: the same, by name;
- `<!-- run: output -->`: the block is what the run before it printed, exactly;
- `<!-- run: output-of CMD -->` before a markdown table: the table is what CMD prints;
- `<!-- run: project -->`: the block is run in an empty project by tests/e2e/test_user_project.py;
- `<!-- run: ci -->`: the set-up and test commands, which CI (`.ci/run`) runs;
- `<!-- run: installed -->`: `pip install` of the tool, as the wheel tests install it;
- `<!-- figure -->` before a `text` block: a picture (a folder tree), not code.

The working folder of a page has `generated/` and `examples/` of the checkout beside its files,
so blocks read as they do from the repository's root.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO, mirror_dir
from tests.support.standin import Registry, Server, _handler, advertisement, tarball

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
MARKER = re.compile(r"<!-- (run: (?P<run>[^>]*?)|figure) -->\n")
FENCE = re.compile(r"```(?P<lang>[a-z]*)\n(?P<body>.*?)```\n", re.S)
BIN = Path(sys.executable).parent


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    body: str
    run: str | None  # the marker's words (None: `figure`, or no marker)
    marked: bool


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found: list[Block] = []
    for fence in FENCE.finditer(text):
        before = text[: fence.start()]
        marker = None
        for found_marker in MARKER.finditer(before, max(0, len(before) - 300)):
            marker = found_marker  # the last one before the fence
        attached = marker is not None and marker.end() == fence.start()
        run = marker.group("run") if attached and marker is not None else None
        line = text.count("\n", 0, fence.start()) + 1
        found.append(Block(page, line, fence["lang"], fence["body"], run, attached))
    return found


def tables_after(page: Path) -> list[tuple[str, str]]:
    """(command, the markdown table right after its `output-of` marker)."""
    text = page.read_text(encoding="utf-8")
    out = []
    for m in re.finditer(r"<!-- run: output-of (.*?) -->\n((?:\|.*\n)+)", text):
        out.append((m.group(1), m.group(2)))
    return out


ALL = [b for page in PAGES for b in blocks(page)]


def test_there_are_pages_and_blocks() -> None:
    assert (REPO / "docs" / "README.md") in PAGES and len(ALL) > 20


def test_every_code_block_says_how_it_runs() -> None:
    unmarked = [
        f"{b.page.relative_to(REPO)}:{b.line} ({b.lang or 'no language'})"
        for b in ALL
        if not b.marked or (b.run is None and b.lang != "text")
    ]
    assert unmarked == []


def environment(mode: str, folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ACP_SCHEMA_MIRROR", "VIRTUAL_ENV")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(folder / "generated")
    if mode in ("mirror", "standin"):
        env["ACP_SCHEMA_MIRROR"] = str(mirror_dir())
    return env


def workplace(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    for name in ("generated", "examples"):
        (folder / name).symlink_to(REPO / name)
    return folder


def run_block(block: Block, folder: Path, index: int) -> str:
    words = (block.run or "").split()
    kind, rest = words[0], words[1:]
    mode = rest[0] if rest and kind == "sh" else ""
    if kind == "python" and block.lang == "python":
        script = folder / f"_block_{index}.py"
        script.write_text(block.body, encoding="utf-8")
        argv = [sys.executable, script.name]
    elif kind == "python":  # an sh block that runs a file saved before
        assert block.body.strip().endswith(f"python {rest[0]}"), block.body
        argv = [sys.executable, rest[0]]
    else:
        if mode in ("mirror", "standin") and not mirror_dir().is_dir():
            pytest.skip(f"no schema mirror at {mirror_dir()}")
        argv = ["bash", "-c", "set -e\n" + block.body]
    env = environment(mode, folder)
    if mode == "mirror" and not (folder / "pyproject.toml").exists():  # the repository's pins
        (folder / "pyproject.toml").write_text("[tool.acp-codegen]\n", encoding="utf-8")
        (folder / "schema").mkdir()
        shutil.copy(REPO / "schema" / "pins.lock.json", folder / "schema")
    with contextlib.ExitStack() as stack:
        if mode == "standin":
            folder = stack.enter_context(bump_project(folder.parent / "project", env))
        done = subprocess.run(
            argv, cwd=folder, env=env, capture_output=True, text=True, timeout=300
        )
    where = f"{block.page.relative_to(REPO)}:{block.line}"
    assert done.returncode == 0, (
        f"{where} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    )
    return done.stdout


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_the_code_blocks_of_a_page_run_as_written(page: Path, tmp_path: Path) -> None:
    folder = workplace(tmp_path)
    printed: str | None = None
    elsewhere = False  # the block before was run by another test, with its output
    for index, block in enumerate(blocks(page)):
        words = (block.run or "").split()
        if not words or words[0] in ("project", "ci", "installed"):
            printed, elsewhere = None, words[:1] == ["project"]
            continue
        if words[0] == "output" and elsewhere:
            continue
        elsewhere = False
        if words[0] == "file":
            (folder / words[1]).write_text(block.body, encoding="utf-8")
        elif words[0] == "output":
            where = f"{page.relative_to(REPO)}:{block.line}"
            assert printed is not None, f"{where}: an output block after no run"
            assert printed == block.body, f"{where}: the run printed\n{printed}"
            printed = None
        elif words[0] in ("python", "sh"):
            printed = run_block(block, folder, index)
        else:
            pytest.fail(f"{page.relative_to(REPO)}:{block.line}: unknown marker {block.run!r}")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_tables_that_a_command_prints_are_what_it_prints(page: Path) -> None:
    for command, table in tables_after(page):
        done = subprocess.run(
            command, shell=True, cwd=REPO, env=environment("", REPO), capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == table, f"{page.relative_to(REPO)}: `{command}` prints another table"


def test_the_ci_block_is_what_ci_runs_and_the_install_block_what_the_wheel_tests_do() -> None:
    [ci] = [b for b in ALL if b.run == "ci"]
    commands = [line.split("#")[0].strip() for line in ci.body.splitlines()]
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert commands == ["make setup", "make test"] and script[-2:] == commands
    [installed] = [b for b in ALL if b.run == "installed"]
    assert installed.body == "pip install path/to/acp-codegen\n"
    fixture = (REPO / "tests" / "e2e" / "conftest.py").read_text(encoding="utf-8")
    assert '"install",' in fixture and "wheel" in fixture


def test_the_project_block_is_the_one_the_user_project_test_runs() -> None:
    project = [b for b in ALL if b.run == "project"]
    assert [b.page for b in project] == [REPO / "README.md"]
    test = (REPO / "tests" / "e2e" / "test_user_project.py").read_text(encoding="utf-8")
    assert "<!-- run: project -->" in test


@contextlib.contextmanager
def bump_project(folder: Path, env: dict[str, str]) -> Iterator[Path]:
    """A project pinned to npm-sdk-2.4.0 from a stand-in npm registry that also has 2.5.0 (the
    same schemas, a description changed), with its package generated; `env` points there."""
    server = Server()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        registry = Registry(server)
        release = mirror_dir() / "npm-sdk-2.4.0"
        members = {
            f"package/schema/{name}": (release / name).read_bytes()
            for name in ("v1/schema.json", "v1/schema.unstable.json", "v2/schema.json",
                         "v2/schema.unstable.json")
        }  # fmt: skip
        registry.publish("2.4.0", tarball(members))
        newer = dict(members)
        v2 = json.loads(newer["package/schema/v2/schema.json"])
        v2["$defs"]["SessionId"]["description"] = "A session's id (2.5.0's words)."
        newer["package/schema/v2/schema.json"] = json.dumps(v2, indent=2).encode()
        registry.publish("2.5.0", tarball(newer))
        server.add("/git/upstream/info/refs?service=git-upload-pack", advertisement([]))
        env.pop("ACP_SCHEMA_MIRROR", None)
        env["ACP_CODEGEN_NPM_REGISTRY"] = registry.base
        env["ACP_CODEGEN_UPSTREAM_GIT"] = f"{server.url}/git/upstream"
        folder.mkdir()
        (folder / "pyproject.toml").write_text(
            '[tool.acp-codegen]\n[[tool.acp-codegen.packages]]\npackage = "acp"\n'
            'lanes = ["v1/schema.json", "v2/schema.json"]\n',
            encoding="utf-8",
        )
        for args in (["schema", "pin", "npm-sdk-2.4.0"], ["generate"]):
            subprocess.run(
                [str(BIN / "acp-codegen"), *args], cwd=folder, env=env, check=True,
                capture_output=True,
            )  # fmt: skip
        yield folder
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


# -- links -------------------------------------------------------------------------------------
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation but `-` and `_` dropped, spaces → `-`."""
    out = set()
    for heading in re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug)
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_link_to_a_file_of_the_repository_is_true(page: Path) -> None:
    broken = []
    text = page.read_text(encoding="utf-8")
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and (where.suffix != ".md" or anchor not in anchors(where)):
            broken.append(f"{target}: no heading #{anchor}")
    assert broken == [], f"{page.relative_to(REPO)}: {broken}"


def test_the_readme_is_short() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 300, lines


def test_no_page_sits_outside_the_index() -> None:
    index = (REPO / "docs" / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in PAGES[2:] if f"]({p.name})" not in index]
    assert missing == []
    assert shutil.which("bash") is not None
