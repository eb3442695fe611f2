"""Running the CLI in-process, as the tests of its commands do: `run_main` calls
`codegen.cli.main` in a working folder and returns its exit code and captured output;
`one_error` is the one line of a refused run."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from codegen.cli import main


@dataclass
class Run:
    code: int
    out: str
    err: str


Cli = Callable[..., Run]


def run_main(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: Sequence[str | Path],
    cwd: Path,
    env: Mapping[str, str] | None = None,
) -> Run:
    """`acp-codegen ARGS` run in `cwd` with `env` added, no debug tracebacks."""
    monkeypatch.chdir(cwd)
    for name, value in (env or {}).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("ACP_CODEGEN_DEBUG", raising=False)
    capsys.readouterr()
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:  # argparse
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return Run(code, out, err)


def one_error(run: Run) -> str:
    """The single line of a refused run (exit 2), without its `acp-codegen: error: ` prefix."""
    assert run.code == 2, run
    assert run.err.count("\n") == 1 and run.err.endswith("\n"), run.err
    assert "Traceback" not in run.err
    prefix = "acp-codegen: error: "
    assert run.err.startswith(prefix), run.err
    return run.err[len(prefix) : -1]
