"""mypy --strict over probe files written as a user would: the ones that must pass do, and the
ones that must fail report exactly the expected errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBES = ROOT / "tests" / "fixtures" / "typing_probes"

# Every error mypy must report, by probe file; a probe not listed must be clean.
EXPECTED = {
    "misspelled_tag.py": [
        '5: error: Module has no attribute "ContentBlockTxt"; maybe "ContentBlockText"?'
        "  [attr-defined]",
        "9: error: Non-overlapping equality check (left operand type: \"Literal['text']\","
        " right operand type: \"Literal['txt']\")  [comparison-overlap]",
    ],
    "closed_enum_value.py": [
        '5: error: Argument "type" to "ElicitationSchema" has incompatible type'
        " \"Literal['objekt']\"; expected"
        " \"ElicitationSchemaType | Literal['object']\"  [arg-type]",
        '6: error: "type[ElicitationSchemaType]" has no attribute "OBJEKT"  [attr-defined]',
    ],
    "open_enum_known_value.py": [
        '5: error: Argument "kind" to "PermissionOption" has incompatible type'
        " \"Literal['alow_once']\"; expected \"Literal['allow_once', 'allow_always',"
        " 'reject_once', 'reject_always'] | PermissionOptionKind | OpenStr\"  [arg-type]",
    ],
    "session_update_state_keyword.py": [
        '6: error: Unexpected keyword argument "state" for "SessionUpdateStateUpdateRunning"'
        "  [call-arg]",
        "7: error: Incompatible types in assignment (expression has type"
        ' "SessionUpdateStateUpdateRunning", variable has type'
        ' "SessionUpdateStateUpdateIdleEndTurn | SessionUpdateStateUpdateIdleMaxTokens |'
        " SessionUpdateStateUpdateIdleMaxTurnRequests | SessionUpdateStateUpdateIdleRefusal |"
        " SessionUpdateStateUpdateIdleCancelled | SessionUpdateStateUpdateIdleError |"
        ' SessionUpdateStateUpdateIdleOther | SessionUpdateStateUpdateIdleNone")  [assignment]',
    ],
    "elicitation_scope_invalid.py": [
        '7: error: Missing named argument "scope" for "CreateElicitationRequestForm"  [call-arg]',
        '8: error: Unexpected keyword argument "session_id" for "ElicitationUrlMode"  [call-arg]',
        '9: error: Argument "scope" to "ElicitationUrlMode" has incompatible type "str"; expected'
        ' "ElicitationSessionScope | ElicitationRequestScope"  [arg-type]',
        '10: error: Argument "id" to "AgentResponseResult" has incompatible type "None";'
        ' expected "int | str"  [arg-type]',
    ],
    "union_match_missing_arm.py": [
        '21: error: Argument 1 to "assert_never" has incompatible type "ContentBlockOther";'
        ' expected "Never"  [arg-type]',
    ],
}


@pytest.fixture(scope="module")
def mypy_errors() -> dict[str, list[str]]:
    env = {**os.environ, "MYPYPATH": str(ROOT / "generated")}
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", str(PROBES)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode in (0, 1), run.stderr
    errors: dict[str, list[str]] = {p.name: [] for p in PROBES.glob("*.py")}
    for line in run.stdout.splitlines():
        path, _, rest = line.partition(":")
        if " note: " in rest:
            continue
        errors[Path(path).name].append(rest)
    return errors


def test_the_probes_exist() -> None:
    assert set(EXPECTED) <= {p.name for p in PROBES.glob("*.py")}


@pytest.mark.parametrize("probe", sorted(p.name for p in PROBES.glob("*.py")))
def test_probe(probe: str, mypy_errors: dict[str, list[str]]) -> None:
    assert mypy_errors[probe] == EXPECTED.get(probe, [])
