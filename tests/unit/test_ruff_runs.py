"""`codegen.render.ruff`: the ruff that waits on its stdin formats as the ruff over files does,
and reports a file ruff rejects by the same name and line."""

from __future__ import annotations

import pytest

from codegen.render.ruff import Formatting, RuffFailed, WaitingRuff

SOURCE = "class A:\n  x: int=1\n  def f(self,a,b): return {'k':a,'b' :b}\n"


def test_the_waiting_ruff_formats_as_the_ruff_over_files() -> None:
    with Formatting({"p/v1/models.py": SOURCE}) as files, WaitingRuff("p/v1/models.py") as ruff:
        ruff.format(SOURCE)
        formatted = ruff.result()
        assert formatted == files.result()
    assert formatted["p/v1/models.py"].startswith("class A:\n    x: int = 1\n")


@pytest.mark.parametrize("runner", ["stdin", "files"])
def test_a_file_ruff_rejects_is_named_as_the_package_has_it(runner: str) -> None:
    with pytest.raises(RuffFailed) as failed:
        if runner == "stdin":
            with WaitingRuff("p/v1/models.py") as ruff:
                ruff.format("def broken(:\n")
                ruff.result()
        else:
            with Formatting({"p/v1/models.py": "def broken(:\n"}) as files:
                files.result()
    assert str(failed.value) == (
        "ruff failed on the generated code: error: Failed to parse p/v1/models.py:1:12:"
        " Expected a parameter or the end of the parameter list"
    )


def test_a_waiting_ruff_left_unused_is_stopped() -> None:
    with WaitingRuff("p/v1/models.py") as ruff:
        pass
    assert ruff._proc.returncode is not None
