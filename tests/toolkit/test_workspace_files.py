"""The workspace's files, called directly (asyncio) over real files, FIFOs, sockets, devices
and symbolic links: reading by lines, caps, special files, path escapes and races, atomic
writes behind an approval."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import socket
import stat
import subprocess
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from templates.runtime.jsonrpc import RpcError
from templates.toolkit import files
from templates.toolkit.workspace import (
    ProposedCommand,
    ProposedWrite,
    Workspace,
    approve_always,
)
from tests.toolkit.workspace_support import invalid, not_found, refusal, run

TRICKY = (
    b"one\r\ntwo\rstill two\x0cand\xe2\x80\xa8two\nthree\xc2\x85\x1c\x1d\x1e\n\nlast, no newline"
)


def read(root: Path, path: str | Path, line: int | None = None, limit: int | None = None,
         **caps: Any) -> str:  # fmt: skip
    return run(Workspace(**caps).read_text_file("s1", [str(root)], str(path), line, limit))


def read_error(root: Path, path: str | Path, line: int | None = None, limit: int | None = None,
               **caps: Any) -> dict[str, Any]:  # fmt: skip
    workspace = Workspace(**caps)
    return run(refusal(workspace.read_text_file("s1", [str(root)], str(path), line, limit)))


# -- lines -------------------------------------------------------------------------------------
def test_lines_are_counted_on_newlines_only_as_sed_counts_them(tmp_path: Path) -> None:
    target = tmp_path / "tricky.txt"
    target.write_bytes(TRICKY)
    for n in range(1, 7):
        sed = subprocess.run(["sed", "-n", f"{n}p", str(target)], capture_output=True, check=True)
        assert read(tmp_path, target, n, 1) == sed.stdout.decode("utf-8"), n
    assert read(tmp_path, target, 2, 1) == "two\rstill two\x0cand\u2028two\n"
    assert read(tmp_path, target, 1, 1) == "one\r\n"


def test_line_and_limit_select_a_range_and_default_to_the_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_bytes(TRICKY)
    assert read(tmp_path, target) == TRICKY.decode("utf-8")
    assert read(tmp_path, target, 3) == "three\x85\x1c\x1d\x1e\n\nlast, no newline"
    assert read(tmp_path, target, 3, 2) == "three\x85\x1c\x1d\x1e\n\n"
    assert read(tmp_path, target, None, 1) == "one\r\n"
    assert read(tmp_path, target, 5, 100) == "last, no newline"
    assert read(tmp_path, target, 6) == ""
    assert read(tmp_path, target, 2, 0) == ""
    assert read_error(tmp_path, target, 0) == invalid("$.line", "lines are numbered from 1, not 0")
    reason = "a number of lines is 0 or more, not -1"
    assert read_error(tmp_path, target, 1, -1) == invalid("$.limit", reason)


def test_lines_longer_than_a_read_chunk_are_kept_whole(tmp_path: Path) -> None:
    long_line = "x" * 200_000 + "\n"
    (tmp_path / "long.txt").write_text(long_line * 3 + "end\n", encoding="utf-8")
    assert read(tmp_path, tmp_path / "long.txt", 2, 2) == long_line * 2
    assert read(tmp_path, tmp_path / "long.txt", 4, 1) == "end\n"


def test_a_read_past_the_byte_cap_is_refused_saying_why(tmp_path: Path) -> None:
    target = tmp_path / "big.txt"
    target.write_bytes(b"0123456789\n" * 100)
    assert read(tmp_path, target, 1, 9, read_limit=100) == "0123456789\n" * 9
    reason = (
        f"the lines asked for are over the read cap of 100 bytes; read {str(target)!r}"
        " in parts with line and limit"
    )
    assert read_error(tmp_path, target, 1, 10, read_limit=100) == invalid("$.limit", reason)
    assert read_error(tmp_path, target, read_limit=100) == invalid("$.path", reason)


def test_text_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    (tmp_path / "latin1.txt").write_bytes(b"ok\ncaf\xe9\n")
    assert read(tmp_path, tmp_path / "latin1.txt", 1, 1) == "ok\n"
    reason = f"not UTF-8 text: byte 3 of the lines read, in {str(tmp_path / 'latin1.txt')!r}"
    assert read_error(tmp_path, tmp_path / "latin1.txt", 2) == invalid("$.path", reason)


def test_a_missing_file_is_not_found(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "missing.txt"
    reason = f"no such file or folder: {str(missing)!r}"
    assert read_error(tmp_path, missing) == not_found("$.path", reason)


# -- memory ------------------------------------------------------------------------------------
def _peak_while(call: Any) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_one_line_of_a_64_mb_file_reads_only_what_it_needs(tmp_path: Path) -> None:
    target = tmp_path / "huge.txt"
    line = b"a line of the huge file\n"
    with target.open("wb") as out:
        out.write(line * (64 * 1024 * 1024 // len(line)))
    count = target.stat().st_size // len(line)
    first, peak = _peak_while(lambda: read(tmp_path, target, 1, 1))
    assert first == line.decode()
    assert peak < 1024 * 1024
    last, peak = _peak_while(lambda: read(tmp_path, target, count, 5))  # skips 64 MB, streaming
    assert last == line.decode()
    assert peak < 1024 * 1024


def test_a_huge_line_past_the_cap_is_refused_without_holding_it(tmp_path: Path) -> None:
    target = tmp_path / "zeros.txt"
    with target.open("wb") as out:
        out.truncate(64 * 1024 * 1024)  # one line of 64 MB (no newline)
    error, peak = _peak_while(lambda: read_error(tmp_path, target, 1, 1, read_limit=1024 * 1024))
    assert (
        error["code"] == -32602 and "over the read cap of 1048576 bytes" in error["data"]["reason"]
    )
    assert peak < 3 * 1024 * 1024


# -- special files -----------------------------------------------------------------------------
def test_fifos_sockets_devices_and_folders_are_refused_before_opening(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock"))
    try:
        os.mknod(tmp_path / "null", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        devices = [("null", "a character device")]
    except PermissionError:  # not root: no device of our own to make
        devices = []
    (tmp_path / "folder").mkdir()
    cases = [("fifo", "a FIFO"), ("sock", "a socket"), ("folder", "a folder"), *devices]
    for name, kind in cases:
        reason = f"not a regular file ({kind}): {str(tmp_path / name)!r}"
        assert read_error(tmp_path, tmp_path / name) == invalid("$.path", reason)
    sock.close()
    reason = f"not a regular file (a folder): {str(tmp_path)!r}"
    assert read_error(tmp_path, tmp_path) == invalid("$.path", reason)


def test_eight_concurrent_fifo_reads_are_all_answered_with_two_threads(tmp_path: Path) -> None:
    for n in range(8):
        os.mkfifo(tmp_path / f"fifo{n}")

    async def scenario() -> list[Any]:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(max_workers=2))
        workspace = Workspace()
        calls = [
            refusal(workspace.read_text_file("s1", [str(tmp_path)], str(tmp_path / f"fifo{n}")))
            for n in range(8)
        ]
        answers = await asyncio.gather(*calls)
        (tmp_path / "after.txt").write_text("still served\n", encoding="utf-8")
        after = await workspace.read_text_file("s1", [str(tmp_path)], str(tmp_path / "after.txt"))
        return [answer["data"]["reason"].split(":")[0] for answer in answers] + [after]

    assert run(scenario(), timeout=10) == ["not a regular file (a FIFO)"] * 8 + ["still served\n"]


def test_a_fifo_swapped_in_after_the_check_is_refused_without_blocking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "a.txt"
    target.write_text("text\n", encoding="utf-8")
    real_stat = os.stat

    def stat_then_swap(*args: Any, **kwargs: Any) -> os.stat_result:
        result = real_stat(*args, **kwargs)
        if args and args[0] == "a.txt":  # between the check and the open: a FIFO now
            os.unlink(target)
            os.mkfifo(target)
        return result

    monkeypatch.setattr(os, "stat", stat_then_swap)
    with pytest.raises(RpcError) as caught:
        files.read_text([str(tmp_path)], str(target), 1, None, 1024)
    reason = f"not a regular file (a FIFO): {str(target)!r}"
    assert caught.value.to_json() == invalid("$.path", reason)


# -- path escapes ------------------------------------------------------------------------------
@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """A root (`work`) beside a folder outside it (`outside`, with `secret.txt`)."""
    root, outside = tmp_path / "work", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n", encoding="utf-8")
    (root / "inside.txt").write_text("inside\n", encoding="utf-8")
    (root / "link_out.txt").symlink_to(outside / "secret.txt")
    (root / "folder_out").symlink_to(outside)
    (root / "link_in.txt").symlink_to(root / "inside.txt")
    return root, outside


def test_paths_that_escape_the_roots_are_refused_saying_why(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    up = f"{root}/../outside/secret.txt"
    escaping = [outside / "secret.txt", root / "link_out.txt", root / "folder_out" / "secret.txt"]
    cases = {str(path): f"outside the session's folders: {str(path)!r}" for path in escaping}
    cases |= {
        up: f"'..' is not allowed in a path: {up!r}",
        "work/inside.txt": "not an absolute path: 'work/inside.txt'",
        f"{root}/inside.txt\0.png": "the path contains a NUL byte",
        f"{root}/\ud800.txt": "the path is not valid Unicode (a lone surrogate)",
        f"{root}/" + "d/" * 2100 + "x": "the path is over 4096 bytes long",
    }
    for path, reason in cases.items():
        assert read_error(root, path) == invalid("$.path", reason), path
    long_name = str(root / ("n" * 300))
    reason = f"a name in the path is too long: {files.shown(long_name)}"
    assert read_error(root, long_name) == invalid("$.path", reason)


def test_symbolic_links_inside_the_roots_are_followed(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    assert read(root, root / "link_in.txt") == "inside\n"
    assert read(root, f"{root}//./inside.txt") == "inside\n"


def test_the_roots_are_the_sessions_and_an_empty_list_is_an_unknown_session(
    tree: tuple[Path, Path],
) -> None:
    root, outside = tree
    both = Workspace().read_text_file("s1", [str(root), str(outside)], str(outside / "secret.txt"))
    assert run(both) == "secret\n"
    unknown = Workspace().read_text_file("ghost", [], str(root / "inside.txt"))
    assert run(refusal(unknown)) == not_found("$.sessionId", "no session 'ghost' on this client")


def test_a_folder_swapped_for_a_link_after_the_check_is_not_followed(
    tree: tuple[Path, Path],
) -> None:
    root, outside = tree
    (root / "sub").mkdir()
    (root / "sub" / "secret.txt").write_text("mine\n", encoding="utf-8")
    place = files.locate([str(root)], str(root / "sub" / "secret.txt"))
    (root / "sub").rename(root / "sub.old")
    (root / "sub").symlink_to(outside)  # now sub/secret.txt would be the outside one
    with pytest.raises(RpcError) as caught:
        files.read_place(place, str(root / "sub" / "secret.txt"), 1, None, 1024)
    reason = f"a symbolic link where none was when checked: {str(root / 'sub')!r}"
    assert caught.value.to_json() == invalid("$.path", reason)
    with pytest.raises(RpcError) as caught:
        files.Folder(place, "$.path", create=True)
    assert caught.value.to_json() == invalid("$.path", reason)
    assert (outside / "secret.txt").read_text(encoding="utf-8") == "secret\n"


def test_a_file_swapped_for_a_link_after_the_check_is_not_followed(
    tree: tuple[Path, Path],
) -> None:
    root, outside = tree
    place = files.locate([str(root)], str(root / "inside.txt"))
    (root / "inside.txt").unlink()
    (root / "inside.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(RpcError) as caught:
        files.read_place(place, str(root / "inside.txt"), 1, None, 1024)
    reason = f"not a regular file (a symbolic link): {str(root / 'inside.txt')!r}"
    assert caught.value.to_json() == invalid("$.path", reason)


# -- writing -----------------------------------------------------------------------------------
class Recorder:
    """An approval that records what it saw and answers `answer`."""

    def __init__(self, answer: object = True) -> None:
        self.answer = answer
        self.seen: list[ProposedWrite | ProposedCommand] = []

    def __call__(self, proposal: ProposedWrite | ProposedCommand) -> Any:
        self.seen.append(proposal)
        return self.answer


def write(root: Path, path: str | Path, content: str, approve: Any = approve_always,
          **caps: Any) -> None:  # fmt: skip
    workspace = Workspace(write=True, approve=approve, **caps)
    run(workspace.write_text_file("s1", [str(root)], str(path), content))


def write_error(root: Path, path: str | Path, content: str, approve: Any = approve_always,
                **caps: Any) -> dict[str, Any]:  # fmt: skip
    workspace = Workspace(write=True, approve=approve, **caps)
    return run(refusal(workspace.write_text_file("s1", [str(root)], str(path), content)))


def test_a_write_replaces_the_file_atomically_keeping_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o640)
    inode = target.stat().st_ino
    approve = Recorder()
    write(tmp_path, target, "héllo\r\nworld\n", approve)
    assert target.read_bytes() == "héllo\r\nworld\n".encode()
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert target.stat().st_ino != inode  # a new file renamed over the old one
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    assert approve.seen == [ProposedWrite("s1", str(target), 14, True)]


def test_a_new_file_gets_the_umask_mode_and_its_missing_folders(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write(tmp_path, tmp_path / "new" / "deep" / "file.txt", "x")
    finally:
        os.umask(old)
    assert (tmp_path / "new" / "deep" / "file.txt").read_text(encoding="utf-8") == "x"
    assert stat.S_IMODE((tmp_path / "new" / "deep" / "file.txt").stat().st_mode) == 0o640


def test_nothing_is_written_unless_the_approval_returns_true(tmp_path: Path) -> None:
    target = tmp_path / "keep.txt"
    target.write_text("kept\n", encoding="utf-8")

    def broken(proposal: object) -> bool:
        raise RuntimeError("approval bug")

    async def slow_no(proposal: object) -> bool:
        await asyncio.sleep(0)
        return False

    reason = f"the user did not approve writing {str(target)!r}"
    for approve in (Recorder(False), Recorder("yes"), Recorder(1), broken, slow_no):
        assert write_error(tmp_path, target, "new", approve) == invalid("$.path", reason)
    new = tmp_path / "sub" / "new.txt"
    reason = f"the user did not approve writing {str(new)!r}"
    assert write_error(tmp_path, new, "new", Recorder(False)) == invalid("$.path", reason)
    assert target.read_text(encoding="utf-8") == "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_the_approval_sees_the_path_with_its_links_resolved(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    approve = Recorder()
    write(root, root / "link_in.txt", "through the link\n", approve)
    assert approve.seen == [ProposedWrite("s1", str(root / "inside.txt"), 17, True)]
    assert (root / "link_in.txt").is_symlink()
    assert (root / "inside.txt").read_text(encoding="utf-8") == "through the link\n"
    (root / "dangling").symlink_to(outside / "created.txt")
    reason = f"outside the session's folders: {str(root / 'dangling')!r}"
    assert write_error(root, root / "dangling", "x", approve) == invalid("$.path", reason)
    assert not (outside / "created.txt").exists() and len(approve.seen) == 1


def test_a_path_changed_while_waiting_for_approval_is_not_written(
    tree: tuple[Path, Path],
) -> None:
    root, outside = tree
    (root / "sub").mkdir()

    def swap_then_yes(proposal: object) -> bool:
        (root / "sub").rmdir()
        (root / "sub").symlink_to(outside)
        return True

    target = root / "sub" / "secret.txt"
    reason = f"outside the session's folders: {str(target)!r}"
    assert write_error(root, target, "pwned\n", swap_then_yes) == invalid("$.path", reason)
    assert (outside / "secret.txt").read_text(encoding="utf-8") == "secret\n"


def test_writes_are_refused_over_special_files_over_the_cap_and_for_bad_text(
    tree: tuple[Path, Path],
) -> None:
    root, _ = tree
    os.mkfifo(root / "fifo")
    (root / "folder").mkdir()
    approve = Recorder()
    for name, kind in (("fifo", "a FIFO"), ("folder", "a folder")):
        reason = f"not a regular file ({kind}): {str(root / name)!r}"
        assert write_error(root, root / name, "x", approve) == invalid("$.path", reason)
    reason = "the content is 11 bytes, over the write cap of 10"
    assert write_error(root, root / "a.txt", "é" * 5 + "x", approve, write_limit=10) == invalid(
        "$.content", reason
    )
    reason = "the content is not valid Unicode (a lone surrogate)"
    assert write_error(root, root / "a.txt", "\udcff", approve) == invalid("$.content", reason)
    reason = "the content contains a NUL byte"
    assert write_error(root, root / "a.txt", "a\0b", approve) == invalid("$.content", reason)
    reason = f"outside the session's folders: {str(root / 'link_out.txt')!r}"
    assert write_error(root, root / "link_out.txt", "x", approve) == invalid("$.path", reason)
    assert approve.seen == [] and not (root / "a.txt").exists()


def test_a_write_over_a_file_below_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x", encoding="utf-8")
    reason = f"not a folder: {str(tmp_path / 'plain')!r}"
    assert write_error(tmp_path, tmp_path / "plain" / "x.txt", "y") == invalid("$.path", reason)


def test_the_file_system_failing_is_an_internal_error_saying_why() -> None:
    root = os.path.realpath("/proc/self")  # a real file whose read fails, a folder refusing files
    workspace = Workspace(write=True, approve=approve_always)

    async def scenario() -> list[dict[str, Any]]:
        return [
            await refusal(workspace.read_text_file("s1", [root], f"{root}/mem")),
            await refusal(workspace.write_text_file("s1", [root], f"{root}/comm", "x")),
        ]

    def failure(reason: str) -> dict[str, Any]:
        return {
            "code": -32603,
            "message": "Internal error",
            "data": {"path": "$.path", "reason": reason},
        }

    assert run(scenario()) == [
        failure(f"cannot read '{root}/mem': Input/output error"),
        failure(f"cannot write '{root}/comm': No such file or directory"),
    ]
