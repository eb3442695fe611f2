"""Format rendered files with the pinned ruff, in the background of the rendering."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..diagnostics import InputError


class RuffFailed(RuntimeError):
    """ruff rejected the rendered output: a bug of acp-codegen's (exit 3), not bad input."""


RUFF_ARGS = ("--isolated", "--no-cache", "--line-length", "100", "--target-version", "py311")


def ruff_binary() -> str:
    """The ruff installed beside this interpreter (the pinned one), else the one on PATH."""
    here = Path(sys.executable).parent / ("ruff.exe" if os.name == "nt" else "ruff")
    if here.exists():
        return str(here)
    try:
        from ruff.__main__ import find_ruff_bin  # type: ignore[import-untyped]

        return str(find_ruff_bin())
    except ImportError:
        found = shutil.which("ruff")
        if found is None:
            raise InputError("ruff is not installed: run the README's set-up command") from None
        return found


class Formatting:
    """ruff formatting `files` (relative path → text; the `.py` ones are formatted) in the
    background: started at once, `result()` waits for it and gives them formatted (the
    generator renders the other modules meanwhile). Leaving the `with` block stops ruff if it
    still runs and removes its temporary folder."""

    def __init__(self, files: dict[str, str]) -> None:
        self._files = dict(files)
        self.names = set(files)
        self._py = [name for name in files if name.endswith(".py")]
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._proc: subprocess.Popen[str] | None = None
        if not self._py:
            return
        self._tmp = tempfile.TemporaryDirectory(prefix="acp-codegen-")
        root = Path(self._tmp.name)
        try:
            folders: set[Path] = set()
            for name in self._py:
                path = root / name
                if path.parent not in folders:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    folders.add(path.parent)
                path.write_bytes(files[name].encode("utf-8"))
            argv = [ruff_binary(), "format", *RUFF_ARGS, str(root)]  # not --quiet: it hides errors
            self._proc = subprocess.Popen(
                argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        except BaseException:
            self.close()
            raise

    def result(self) -> dict[str, str]:
        if self._proc is None or self._tmp is None:
            return dict(self._files)
        root = Path(self._tmp.name)
        stdout, stderr = self._proc.communicate()
        if self._proc.returncode != 0:
            # ruff names files by their temporary path: show them relative to the output folder.
            text = (stderr or stdout).replace(f"{root}{os.sep}", "").strip()
            first = text.splitlines()[0] if text else f"exit status {self._proc.returncode}"
            raise RuffFailed(f"ruff failed on the generated code: {first}")
        out = dict(self._files)
        for name in self._py:
            out[name] = (root / name).read_text(encoding="utf-8")
        self._files = out  # what result() gives from now on
        self.close()  # its folder goes now, while the other ruffs still run
        return dict(out)

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.communicate()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> Formatting:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class WaitingRuff:
    """A ruff started before the one file it formats is rendered, to read it from its stdin:
    its start-up goes by meanwhile. `format(text)` hands it the file; then, as with
    `Formatting`, `result()` waits and gives it formatted."""

    def __init__(self, name: str) -> None:
        self.names = {name}
        self._name = name
        self._text = ""
        argv = [ruff_binary(), "format", *RUFF_ARGS, "--stdin-filename", name, "-"]
        self._proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )

    def format(self, text: str) -> None:
        self._text = text
        stdin, self._proc.stdin = self._proc.stdin, None  # closed here, not by communicate()
        assert stdin is not None
        try:
            stdin.write(text.encode("utf-8"))  # ruff reads it all before it formats
            stdin.close()
        except BrokenPipeError:
            pass  # ruff ended early: result() says why

    def result(self) -> dict[str, str]:
        stdout, stderr = self._proc.communicate()
        if self._proc.returncode != 0:
            text = (stderr or stdout).decode("utf-8", "replace").strip()
            first = text.splitlines()[0] if text else f"exit status {self._proc.returncode}"
            raise RuffFailed(f"ruff failed on the generated code: {first}")
        return {self._name: stdout.decode("utf-8")}

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.communicate()

    def __enter__(self) -> WaitingRuff:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
