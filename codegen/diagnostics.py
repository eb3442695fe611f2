"""Problems found in the input, as values: a level, a JSON pointer and a one-line message.

They are collected while the pipeline runs and printed once by the CLI, in the style of
openapi-python-client's parser errors. An `error` stops the run with exit status 2.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Literal

Level = Literal["error", "warning", "info"]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem in the input: a level, where (a JSON pointer) and what."""

    level: Level
    pointer: str
    message: str

    def __str__(self) -> str:
        where = f" at {self.pointer}" if self.pointer else ""
        return f"{self.level}{where}: {self.message}"


@dataclass(slots=True)
class Diagnostics:
    """The problems found so far, in order; errors stop the run."""

    items: list[Diagnostic] = field(default_factory=list)

    def error(self, pointer: str, message: str) -> None:
        self.items.append(Diagnostic("error", pointer, message))

    def warning(self, pointer: str, message: str) -> None:
        self.items.append(Diagnostic("warning", pointer, message))

    def info(self, pointer: str, message: str) -> None:
        self.items.append(Diagnostic("info", pointer, message))

    @property
    def has_errors(self) -> bool:
        return any(d.level == "error" for d in self.items)

    def errors_only(self) -> Diagnostics:
        return Diagnostics([d for d in self.items if d.level == "error"])

    def raise_if_errors(self) -> None:
        if self.has_errors:
            raise InputError(self)


class InputError(Exception):
    """Bad input (schema, lock file, CLI argument): exit status 2, diagnostics already known."""

    def __init__(self, diagnostics: Diagnostics | str) -> None:
        if isinstance(diagnostics, str):
            d = Diagnostics()
            d.error("", diagnostics)
            diagnostics = d
        self.diagnostics = diagnostics
        super().__init__("; ".join(str(d) for d in diagnostics.items if d.level == "error"))


def pointer_join(base: str, *parts: str | int) -> str:
    """Extend a JSON pointer, escaping `~` and `/` as RFC 6901 says."""
    out = base
    for part in parts:
        out += "/" + str(part).replace("~", "~0").replace("/", "~1")
    return out


def print_diagnostics(diags: Diagnostics, verbose: bool, skip_errors: bool = False) -> None:
    """Each diagnostic as one line on stderr; info only when verbose."""
    for d in diags.items:
        if (d.level == "info" and not verbose) or (skip_errors and d.level == "error"):
            continue
        print(f"acp-codegen: {d}", file=sys.stderr)
