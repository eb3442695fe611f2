"""The official SDK's zod validators, behind one long-lived `node interop/zod_oracle.mjs`.

`ZodOracle.check(lane, [(type, value), ...])` sends the whole batch as one JSON line and reads
one line back: one answer per value, `Accepted(data)` (what `z<Type>.safeParse` returned) or
`Rejected(issues)`.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

INTEROP = Path(__file__).resolve().parents[2] / "interop"
SCRIPT = INTEROP / "zod_oracle.mjs"
SDK = INTEROP / "node_modules" / "@agentclientprotocol" / "sdk"
BATCH = 2000  # values per round trip


class Issue(NamedTuple):
    path: tuple[str, ...]
    code: str
    message: str
    format: str | None = None


class Accepted(NamedTuple):
    data: Any


class Rejected(NamedTuple):
    issues: tuple[Issue, ...]


SdkAnswer = Accepted | Rejected


class OracleError(RuntimeError):
    """The oracle process failed or answered something that is not an answer."""


class ZodOracle:
    def __init__(self, node: str) -> None:
        self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8")
        self._proc = subprocess.Popen(
            [node, str(SCRIPT)],
            cwd=INTEROP,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
        )
        self.round_trips = 0

    def types(self, lane: str) -> list[str]:
        names: list[str] = self._ask({"lane": lane, "types": True})["types"]
        return names

    def check(self, lane: str, items: Iterable[tuple[str, Any]]) -> list[SdkAnswer]:
        pending = list(items)
        out: list[SdkAnswer] = []
        for start in range(0, len(pending), BATCH):
            batch = pending[start : start + BATCH]
            reply = self._ask({"lane": lane, "checks": batch})
            results = reply.get("results")
            if not isinstance(results, list) or len(results) != len(batch):
                raise OracleError(f"expected {len(batch)} results, got {str(reply)[:300]}")
            out.extend(_answer(r) for r in results)
        return out

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        stdin, stdout = self._proc.stdin, self._proc.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(json.dumps(request, allow_nan=False) + "\n")
            stdin.flush()
            line = stdout.readline()
        except (BrokenPipeError, OSError) as exc:
            raise OracleError(f"the oracle process is gone: {exc}; {self._errors()}") from None
        if not line:
            raise OracleError(f"the oracle process ended; {self._errors()}")
        self.round_trips += 1
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise OracleError(f"the oracle could not answer: {reply['error']}")
        return reply

    def _errors(self) -> str:
        self._stderr.seek(0)
        return "stderr: " + self._stderr.read()[-2000:]

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._stderr.close()


def _answer(result: dict[str, Any]) -> SdkAnswer:
    if result["ok"]:
        return Accepted(result.get("data"))
    return Rejected(tuple(_issue(i) for i in result["issues"]))


def _issue(raw: dict[str, Any]) -> Issue:
    path: Sequence[str] = raw.get("path", ())
    return Issue(tuple(path), raw["code"], raw["message"], raw.get("format"))
