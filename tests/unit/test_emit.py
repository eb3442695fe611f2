"""`codegen.emit`: packages are swapped in whole, with a manifest; a folder is replaced only when
it proves acp-codegen wrote it, else refused with nothing touched; modes follow the umask."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from codegen import emit
from codegen.diagnostics import InputError
from codegen.emit import MANIFEST, diff, refusals, with_manifests, write
from codegen.render.env import banner

NO_MANIFEST = (
    f"it has no {MANIFEST}, so nothing shows acp-codegen made it (move it away to generate there)"
)
BANNER = banner("schema-v9", "v2/schema.json", "0" * 64)


def package(name: str = "pkg", marker: str = "1") -> dict[str, str]:
    return {
        f"{name}/__init__.py": f"{BANNER}\nVALUE = {marker}\n",
        f"{name}/models.py": f"{BANNER}\nclass A:\n    pass\n",
        f"{name}/py.typed": "",
    }


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def tree(root: Path) -> dict[str, tuple[int, bytes | str]]:
    """Every path under `root` (not followed through links): its mode, and bytes or link target."""
    out: dict[str, tuple[int, bytes | str]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            info = path.lstat()
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = (info.st_mode, os.readlink(path))
            elif path.is_file():
                out[rel] = (info.st_mode, path.read_bytes())
            else:
                out[rel] = (info.st_mode, b"<dir>")
    return out


@pytest.fixture
def umask() -> Iterator[Callable[[int], None]]:
    previous = os.umask(0o022)

    def set_mask(mask: int) -> None:
        os.umask(mask)

    yield set_mask
    os.umask(previous)


def test_a_new_package_gets_its_files_and_a_manifest_of_them(tmp_path: Path) -> None:
    files = package()
    write(files, tmp_path / "out", ["pkg"])
    root = tmp_path / "out" / "pkg"
    assert sorted(p.name for p in root.iterdir()) == [
        MANIFEST,
        "__init__.py",
        "models.py",
        "py.typed",
    ]
    assert json.loads((root / MANIFEST).read_text(encoding="utf-8")) == {
        "generator": "acp-codegen",
        "about": emit.MANIFEST_NOTE,
        "files": {
            "__init__.py": sha(files["pkg/__init__.py"]),
            "models.py": sha(files["pkg/models.py"]),
            "py.typed": sha(""),
        },
    }
    assert (root / "models.py").read_text(encoding="utf-8") == files["pkg/models.py"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["pkg"]  # no staging left


@pytest.mark.parametrize(
    ("mask", "file_mode", "dir_mode"),
    [(0o022, 0o644, 0o755), (0o077, 0o600, 0o700), (0o002, 0o664, 0o775)],
)
def test_modes_come_from_the_umask(
    tmp_path: Path, umask: Callable[[int], None], mask: int, file_mode: int, dir_mode: int
) -> None:
    umask(mask)
    write(package(), tmp_path / "out", ["pkg"])
    write(package(marker="2"), tmp_path / "out", ["pkg"])  # a replacement too
    root = tmp_path / "out" / "pkg"
    assert stat.S_IMODE(root.stat().st_mode) == dir_mode
    assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == dir_mode
    for path in root.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == file_mode, path.name


def test_our_own_package_is_replaced_whole(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write(package(), out, ["pkg"])
    (out / "pkg" / "__pycache__").mkdir()
    (out / "pkg" / "__pycache__" / "models.cpython-311.pyc").write_bytes(b"\0cache")
    (out / "pkg" / "models.py").unlink()  # a generated file deleted by hand comes back
    smaller = {k: v for k, v in package(marker="2").items() if not k.endswith("py.typed")}

    write(smaller, out, ["pkg"])

    assert sorted(tree(out)) == ["pkg", f"pkg/{MANIFEST}", "pkg/__init__.py", "pkg/models.py"]
    assert (out / "pkg" / "__init__.py").read_text(encoding="utf-8").endswith("VALUE = 2\n")


def refused_case(root: Path, case: str) -> tuple[Path, str]:
    """Set up one target the generator must not replace; returns it and the expected reason."""
    out = root / "out"
    target = out / "pkg"
    head = f"refusing to replace {target}"
    if case == "hand-written package":
        target.mkdir(parents=True)
        (target / "__init__.py").write_text("print('mine')\n", encoding="utf-8")
        return out, f"{head}: {NO_MANIFEST}"
    if case == "plain file":
        out.mkdir()
        target.write_text("notes\n", encoding="utf-8")
        return out, f"{head}: it is a file, not a package acp-codegen generated"
    if case == "symbolic link":
        (root / "elsewhere").mkdir()
        out.mkdir()
        target.symlink_to(root / "elsewhere")
        return out, f"{head}: it is a symbolic link, not a package acp-codegen generated"
    write(package(), out, ["pkg"])
    if case == "user file added":
        (target / "helpers.py").write_text("def mine(): ...\n", encoding="utf-8")
        return out, f"{head}: {target / 'helpers.py'} was not written by acp-codegen"
    if case == "user folder added":
        (target / "extra").mkdir()
        return out, f"{head}: {target / 'extra'} was not written by acp-codegen"
    if case == "file edited":
        with (target / "models.py").open("a", encoding="utf-8") as f:
            f.write("# my change\n")
        return out, f"{head}: {target / 'models.py'} was edited since acp-codegen wrote it"
    if case == "banner removed, manifest forged":
        text = "VALUE = 1\n"
        (target / "__init__.py").write_text(text, encoding="utf-8")
        data = json.loads((target / MANIFEST).read_text(encoding="utf-8"))
        data["files"]["__init__.py"] = sha(text)
        (target / MANIFEST).write_text(json.dumps(data), encoding="utf-8")
        return out, f"{head}: {target / '__init__.py'} was edited since acp-codegen wrote it"
    if case == "manifest removed":
        (target / MANIFEST).unlink()
        return out, f"{head}: {NO_MANIFEST}"
    if case == "manifest broken":
        (target / MANIFEST).write_text("{not json", encoding="utf-8")
        return (
            out,
            f"{head}: its {MANIFEST} is not one acp-codegen wrote (move it away to generate there)",
        )
    if case == "manifest of another tool":
        (target / MANIFEST).write_text('{"generator": "other", "files": {}}', encoding="utf-8")
        return (
            out,
            f"{head}: its {MANIFEST} is not one acp-codegen wrote (move it away to generate there)",
        )
    if case == "link inside":
        (target / "link.py").symlink_to(target / "models.py")
        return out, f"{head}: {target / 'link.py'} was not written by acp-codegen"
    raise AssertionError(case)


REFUSED = [
    "hand-written package",
    "plain file",
    "symbolic link",
    "user file added",
    "user folder added",
    "file edited",
    "banner removed, manifest forged",
    "manifest removed",
    "manifest broken",
    "manifest of another tool",
    "link inside",
]


@pytest.mark.parametrize("case", REFUSED)
def test_what_it_did_not_make_is_refused_and_left_untouched(tmp_path: Path, case: str) -> None:
    out, reason = refused_case(tmp_path, case)
    before = tree(tmp_path)

    with pytest.raises(InputError) as info:
        write(package(marker="2"), out, ["pkg"])

    assert str(info.value) == f"error: {reason}"
    assert tree(tmp_path) == before
    assert refusals(package(marker="2"), out, ["pkg"]) == [reason]


def test_files_that_are_already_what_would_be_written_lose_nothing(tmp_path: Path) -> None:
    """A merge that brings current files with a stale manifest, or a copy of the package
    without its manifest: replacing them loses no byte, so they are replaced."""
    out = tmp_path / "out"
    write(package(), out, ["pkg"])
    current = package(marker="2")
    (out / "pkg" / "__init__.py").write_text(current["pkg/__init__.py"], encoding="utf-8")
    assert refusals(current, out, ["pkg"]) == []  # the manifest still has marker 1's sha256
    write(current, out, ["pkg"])
    assert (out / "pkg" / MANIFEST).read_text(encoding="utf-8") == with_manifests(current, ["pkg"])[
        f"pkg/{MANIFEST}"
    ]
    (out / "pkg" / MANIFEST).unlink()
    assert refusals(current, out, ["pkg"]) == []
    assert refusals(package(marker="3"), out, ["pkg"]) == [
        f"refusing to replace {out / 'pkg'}: {NO_MANIFEST}"
    ]


def test_one_refused_package_stops_the_others_too(tmp_path: Path) -> None:
    out, reason = refused_case(tmp_path, "user file added")
    write(package("first"), out, ["first"])
    before = tree(tmp_path)
    files = {**package("first", marker="2"), **package("pkg", marker="2")}
    with pytest.raises(InputError, match="helpers.py was not written by acp-codegen"):
        write(files, out, ["first", "pkg"])
    assert tree(tmp_path) == before


def test_a_crash_while_writing_leaves_the_old_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    write(package(), out, ["pkg"])
    before = tree(tmp_path)
    real = emit._write_file
    calls: list[Path] = []

    def crash_on_second(path: Path, text: str) -> None:
        calls.append(path)
        if len(calls) == 2:
            raise RuntimeError("power cut")
        real(path, text)

    monkeypatch.setattr(emit, "_write_file", crash_on_second)
    with pytest.raises(RuntimeError, match="power cut"):
        write(package(marker="2"), out, ["pkg"])
    assert tree(tmp_path) == before  # old package intact, the half-written one removed


@pytest.mark.parametrize("exchange", ["renameat2", "two renames"])
def test_the_swap_with_and_without_an_atomic_exchange(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: str
) -> None:
    if exchange == "two renames":
        monkeypatch.setattr(emit, "_renameat2_exchange", lambda a, b: False)
    out = tmp_path / "out"
    write(package(), out, ["pkg"])
    write(package(marker="2"), out, ["pkg"])
    assert (out / "pkg" / "__init__.py").read_text(encoding="utf-8").endswith("VALUE = 2\n")
    assert sorted(tree(out)) == [
        "pkg",
        f"pkg/{MANIFEST}",
        "pkg/__init__.py",
        "pkg/models.py",
        "pkg/py.typed",
    ]


def test_a_failed_second_rename_puts_the_old_package_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    write(package(), out, ["pkg"])
    before = tree(tmp_path)
    monkeypatch.setattr(emit, "_renameat2_exchange", lambda a, b: False)
    real = os.rename

    def fail_into_target(src: object, dst: object) -> None:
        if Path(str(dst)) == out / "pkg" and ".new-" in str(src):
            raise OSError(28, "No space left on device", str(dst))
        real(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(emit.os, "rename", fail_into_target)
    with pytest.raises(InputError, match="cannot write .*: No space left on device"):
        write(package(marker="2"), out, ["pkg"])
    assert tree(tmp_path) == before


def test_check_diff_shows_a_missing_manifest_and_a_stale_entry(tmp_path: Path) -> None:
    out = tmp_path / "out"
    files = package()
    assert diff(files, out, ["pkg"]).startswith(
        "--- /dev/null\n+++ b/pkg/.acp-codegen-manifest.json\n"
    )
    write(files, out, ["pkg"])
    assert diff(files, out, ["pkg"]) == ""
    manifest = (out / "pkg" / MANIFEST).read_text(encoding="utf-8")
    (out / "pkg" / MANIFEST).unlink()
    assert diff(files, out, ["pkg"]) == "".join(
        [
            "--- /dev/null\n",
            f"+++ b/pkg/{MANIFEST}\n",
            f"@@ -0,0 +1,{manifest.count(chr(10))} @@\n",
            *("+" + line for line in manifest.splitlines(keepends=True)),
        ]
    )
    changed = package(marker="2")
    write(files, tmp_path / "again", ["pkg"])
    text = diff(changed, tmp_path / "again", ["pkg"])
    assert f'-    "__init__.py": "{sha(files["pkg/__init__.py"])}",\n' in text
    assert f'+    "__init__.py": "{sha(changed["pkg/__init__.py"])}",\n' in text


def test_with_manifests_adds_one_per_package() -> None:
    files = {**package("a"), **package("b")}
    out = with_manifests(files, ["a", "b"])
    assert sorted(set(out) - set(files)) == [f"a/{MANIFEST}", f"b/{MANIFEST}"]
    assert list(json.loads(out[f"b/{MANIFEST}"])["files"]) == [
        "__init__.py",
        "models.py",
        "py.typed",
    ]


def test_a_writer_changes_no_target_before_finish(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write(package(), out, ["pkg"])
    before = tree(out / "pkg")
    with emit.Writer(out, ["pkg"]) as writer:
        files = package(marker="2")
        writer.add({"pkg/models.py": files["pkg/models.py"]})  # staged beside the target
        assert tree(out / "pkg") == before
        writer.finish(files)
    assert (out / "pkg" / "__init__.py").read_text(encoding="utf-8").endswith("VALUE = 2\n")
    assert sorted(p.name for p in out.iterdir()) == ["pkg"]  # no staging folder left
    assert with_manifests(files, ["pkg"])[f"pkg/{MANIFEST}"] == (
        (out / "pkg" / MANIFEST).read_text(encoding="utf-8")
    )


def test_a_writer_left_without_finish_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "new" / "out"
    with emit.Writer(out, ["pkg"]) as writer:
        writer.add(package())
        assert out.is_dir()
    assert list(tmp_path.iterdir()) == []  # the folders it made are gone too
