"""`acp-codegen generate --check`: clean on the committed tree; a unified diff and exit 1 on a
copy of generated/ that differs; `generate` replaces a copy only while nobody changed it. The
real generated/ is only ever read."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def test_check_is_clean_on_the_committed_tree(run_cli: Any) -> None:
    result = run_cli("generate", "--check")
    assert (result.returncode, result.stdout) == (0, ""), result.stdout[:3000] + result.stderr


def test_check_prints_a_diff_and_exits_1_when_a_file_was_edited(
    run_cli: Any, make_project: Any
) -> None:
    root: Path = make_project(with_generated=True)
    assert run_cli("generate", "--check", cwd=root).returncode == 0  # the copy starts current
    models = root / "generated" / "acp_kit" / "v2" / "models.py"
    lines = models.read_text(encoding="utf-8").splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if line.startswith("class "))
    original = lines[index]
    lines[index] = "class Tampered:  # edited by hand\n"
    models.write_text("".join(lines), encoding="utf-8")

    result = run_cli("generate", "--check", cwd=root)

    assert result.returncode == 1
    assert result.stdout.startswith("--- a/acp_kit/v2/models.py\n+++ b/acp_kit/v2/models.py\n@@ ")
    assert "\n-class Tampered:  # edited by hand\n" in result.stdout
    assert f"\n+{original}" in result.stdout
    assert result.stdout.count("\n--- ") == 0  # that file only
    assert result.stderr == (
        "acp-codegen: `acp-codegen generate` would stop: refusing to replace"
        f" {root / 'generated' / 'acp_kit'}: {models} was edited since acp-codegen wrote it\n"
    )
    assert (
        models.read_text(encoding="utf-8").count("class Tampered:") == 1
    )  # --check writes nothing


def test_check_reports_a_missing_empty_file(run_cli: Any, make_project: Any) -> None:
    root: Path = make_project(with_generated=True)
    (root / "generated" / "acp_kit" / "v1" / "py.typed").unlink()

    result = run_cli("generate", "--check", cwd=root)

    assert (result.returncode, result.stdout) == (1, "--- /dev/null\n+++ b/acp_kit/v1/py.typed\n")


def test_check_reports_a_stray_file_without_a_final_newline(
    run_cli: Any, make_project: Any
) -> None:
    root: Path = make_project(with_generated=True)
    (root / "generated" / "acp_kit" / "v1" / "stray.py").write_text("x = 1", encoding="utf-8")

    result = run_cli("generate", "--check", cwd=root)

    assert (result.returncode, result.stdout) == (
        1,
        "--- a/acp_kit/v1/stray.py\n+++ /dev/null\n@@ -1 +0,0 @@\n"
        "-x = 1\n\\ No newline at end of file\n",
    )


def test_check_on_a_stale_copy_advises_generate(run_cli: Any, make_project: Any) -> None:
    root: Path = make_project(with_generated=True)
    assert run_cli("generate", "--ref", "schema-v2.0.0-alpha.1", cwd=root).returncode == 0

    result = run_cli("generate", "--check", cwd=root)

    assert result.returncode == 1
    assert result.stderr == (
        f"acp-codegen: {root / 'generated'} is not current: run `acp-codegen generate`\n"
    )
    assert run_cli("generate", cwd=root).returncode == 0
    assert run_cli("generate", "--check", cwd=root).returncode == 0


def test_generate_refuses_an_edited_copy_and_touches_nothing(
    run_cli: Any, make_project: Any
) -> None:
    root: Path = make_project(with_generated=True)
    methods = root / "generated" / "acp_kit" / "v2" / "methods.py"
    text = methods.read_text(encoding="utf-8")
    methods.write_text(text + "# edited\n", encoding="utf-8")
    stray = root / "generated" / "acp_kit" / "v1" / "stray.py"
    stray.write_text("x = 1\n", encoding="utf-8")
    v1_before = (root / "generated" / "acp_kit" / "v1" / "models.py").read_bytes()

    result = run_cli("generate", cwd=root)

    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"acp-codegen: error: refusing to replace {root / 'generated' / 'acp_kit'}:"
        f" {stray} was not written by acp-codegen\n"
    )
    assert methods.read_text(encoding="utf-8") == text + "# edited\n"
    assert stray.read_text(encoding="utf-8") == "x = 1\n"
    assert (root / "generated" / "acp_kit" / "v1" / "models.py").read_bytes() == v1_before
    stray.unlink()
    methods.write_text(text, encoding="utf-8")  # the edit undone: ours again
    assert run_cli("generate", cwd=root).returncode == 0
