"""Our decoders beside the official SDK's: one value, two verdicts, compared after normalizing.

A `Lane` is a package generated in the test session from one schema (npm-sdk-2.4.0 v1 or v2),
with its IR and names. `ours(lane, type, value)` decodes and re-encodes the value the way the
SDK's answer is shaped: without the unknown keys the SDK strips (kept in `extra` by us, except
where they are the payload: open variants and objects that declare no fields, which zod
models as records). `compare()` then says whether both sides agree: both reject, or both accept
with the same JSON, numbers compared by value (JavaScript has one number type).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import sys
from dataclasses import dataclass
from functools import cached_property
from types import ModuleType
from typing import Any, NamedTuple

from codegen.ir import Model, ObjectType
from codegen.naming import Names
from tests.support.zod_oracle import Accepted, Rejected, SdkAnswer


@dataclass(frozen=True)
class Lane:
    """One schema under test: its generated package, IR, names and raw `$defs`."""

    name: str  # the oracle's lane: "v1" or "v2"
    package: ModuleType
    model: Model
    names: Names
    defs: dict[str, Any]

    def py_type(self, def_name: str) -> Any:
        return getattr(self.package, self.names.types[def_name])

    @cached_property
    def keeps_extra(self) -> frozenset[str]:
        """Classes whose undeclared keys are their payload, as the SDK sees it."""
        empty = {
            self.names.types[t.name]
            for t in self.model.types
            if isinstance(t, ObjectType) and not t.fields
        }
        return frozenset(self.names.open_variants.values()) | empty


class Ours(NamedTuple):
    ok: bool
    data: Any  # the re-encoded JSON without stripped extras, when ok
    error: str  # the DecodeError, when not


def ours(lane: Lane, def_name: str, value: Any) -> Ours:
    pkg = lane.package
    try:
        decoded = pkg.decode(lane.py_type(def_name), value)
    except pkg.DecodeError as exc:
        return Ours(False, None, str(exc))
    return Ours(True, pkg.encode(_without_extras(decoded, pkg, lane.keeps_extra)), "")


def _without_extras(value: Any, pkg: ModuleType, keep: frozenset[str]) -> Any:
    model_base = sys.modules[pkg.decode.__module__].Model  # the package's runtime
    if isinstance(value, model_base):
        clone = copy.copy(value)
        for f in dataclasses.fields(value):
            if f.name != "extra":
                setattr(clone, f.name, _without_extras(getattr(value, f.name), pkg, keep))
        if type(value).__name__ not in keep:
            clone.extra = {}
        return clone
    if isinstance(value, list):
        return [_without_extras(v, pkg, keep) for v in value]
    if isinstance(value, dict):
        return {k: _without_extras(v, pkg, keep) for k, v in value.items()}
    return value


# -- comparison ----------------------------------------------------------------------------------
class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Any = _Absent()  # a key one side has and the other does not
Path = tuple[str | int, ...]


class Entry(NamedTuple):
    """One place where both sides accepted but produced different JSON."""

    path: Path
    ours: Any  # ABSENT when only the SDK has the key
    sdk: Any


def canonical(value: Any) -> str:
    """JSON text with sorted keys and every number as a float (as JavaScript sees it)."""
    return json.dumps(_numbers_as_floats(value), sort_keys=True)


def _numbers_as_floats(value: Any) -> Any:
    if type(value) is int or type(value) is float:
        return float(value) + 0.0  # and -0.0 as 0.0: JSON.stringify(-0) is "0"
    if isinstance(value, list):
        return [_numbers_as_floats(v) for v in value]
    if isinstance(value, dict):
        return {k: _numbers_as_floats(v) for k, v in value.items()}
    return value


def agree(mine: Ours, sdk: SdkAnswer) -> bool:
    if isinstance(sdk, Rejected):
        return not mine.ok
    return mine.ok and canonical(mine.data) == canonical(sdk.data)


def entries(mine: Any, sdk: Any, path: Path = ()) -> list[Entry]:
    """The differences between two accepted values, innermost first found."""
    if canonical(mine) == canonical(sdk):
        return []
    if isinstance(mine, dict) and isinstance(sdk, dict):
        out: list[Entry] = []
        for key in sorted(set(mine) | set(sdk)):
            if key not in sdk:
                out.append(Entry((*path, key), mine[key], ABSENT))
            elif key not in mine:
                out.append(Entry((*path, key), ABSENT, sdk[key]))
            else:
                out.extend(entries(mine[key], sdk[key], (*path, key)))
        return out
    if isinstance(mine, list) and isinstance(sdk, list) and len(mine) == len(sdk):
        return [
            e
            for i, (a, b) in enumerate(zip(mine, sdk, strict=True))
            for e in entries(a, b, (*path, i))
        ]
    return [Entry(path, mine, sdk)]


def at(value: Any, path: Path) -> Any:
    """The input value at `path`, or ABSENT."""
    for part in path:
        if isinstance(value, dict) and isinstance(part, str) and part in value:
            value = value[part]
        elif isinstance(value, list) and isinstance(part, int) and part < len(value):
            value = value[part]
        else:
            return ABSENT
    return value


def describe(mine: Ours, sdk: SdkAnswer) -> str:
    """One line for a failure message."""
    if isinstance(sdk, Rejected):
        issues = "; ".join(f"{'.'.join(i.path) or '$'}: {i.message}" for i in sdk.issues[:3])
        return f"we accept, the SDK rejects ({issues})"
    if not mine.ok:
        return f"we reject ({mine.error}), the SDK accepts"
    assert isinstance(sdk, Accepted)
    shown = "; ".join(
        f"{_path(e.path)}: ours {_short(e.ours)}, sdk {_short(e.sdk)}"
        for e in entries(mine.data, sdk.data)[:3]
    )
    return f"both accept, the JSON differs ({shown})"


def _path(path: Path) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def _short(value: Any) -> str:
    text = repr(value) if value is ABSENT else json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
