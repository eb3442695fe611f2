"""A lane as the toolkit sees it: one protocol version's generated modules (models, dispatch,
session model), the toolkit's dialect for it, the values its schema allows for what the
toolkit's helpers take, and the features it has.

Every lane the toolkit serves has a `lane.py` beside its models that builds one `Lane`
(`LANE`); `_lanes.py` at the package root lists them, and `lanes()` / `lane()` import them on
first use, so a connection pays only for the lanes it speaks.

The toolkit reaches a lane's classes through `lane.models` (the module), by the class names
the generator gives every lane alike (`SessionUpdateAgentMessageChunk`): those are typed `Any`
here, since which lane a connection speaks is known at `initialize` only. What the toolkit
offers its users is typed precisely instead (see `vocab`).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Final

from .._lanes import LANES
from ..runtime._runtime import DecodeError, OpenStr, decode, encode

_PACKAGE: Final = __name__.rpartition(".")[0].rpartition(".")[0]


class NotSupported(RuntimeError):
    """What was asked exists in other protocol versions, not in the one this connection speaks
    (or the peer did not advertise it). Check `ProtocolFeatures` first to avoid it."""

    def __init__(self, feature: str, lane: Lane) -> None:
        super().__init__(f"{feature} is not part of protocol version {lane.version} ({lane.name})")
        self.feature = feature
        self.version = lane.version


@dataclass(frozen=True, slots=True)
class ProtocolFeatures:
    """What the protocol version of a connection has, for code written for several versions:
    test a flag before using what it names (`if turn.features.cancellable_tool_calls: ...`)."""

    version: int
    """The protocol version the connection speaks."""
    lane: str
    """The lane of this package it speaks (`v1`, `v2`, `v2_unstable`)."""
    state_updates: bool
    """The turn's state is reported (`state_update`: running, requires_action, idle) and a
    failed turn ends with the `error` stop reason (v2); else the prompt's answer carries the
    stop reason and a failure is an error answer (v1)."""
    cancellable_tool_calls: bool
    """`tool_call(..., cancellable=True)`: the client may cancel one tool call (v2)."""
    custom_stop_reasons: bool
    """A turn may end with a stop reason of its own (`CustomStopReason("_x")`, v2)."""
    client_files: bool
    """The protocol has the client's file system methods (v1): see `AgentSession.read_text_file`."""
    client_terminals: bool
    """The protocol has the client's terminals (v1): see `AgentSession.create_terminal`."""
    load_session: bool
    """`session/load` (v1); v2 resumes with a replay instead (`session/resume`)."""
    subagents: bool
    """Child sessions (`subagent_update`, inter-session messages: npm-sdk-2.4.0's unstable v2):
    `turn.subagent(...)`, `RemoteSession.children`."""
    tool_call_statuses: frozenset[str]
    plan_entry_statuses: frozenset[str]


@dataclass(frozen=True, eq=False)
class Lane:
    """One lane's generated modules and facts (built by the lane's `lane.py`)."""

    name: str
    version: int
    unstable: bool
    dialect: str  # "v1" or "v2": which lifecycle the toolkit follows on it
    ref: str
    models: Any  # the lane's models module: classes by the names every lane shares
    rpc: Any  # its dispatch module: AgentBase, ClientBase, their route tables and stubs
    session_state: Any  # its SessionState class
    values: Mapping[str, frozenset[str]]  # enum name → the values the schema knows
    open_values: frozenset[str] = frozenset()  # the enums that also take other values
    features: ProtocolFeatures = field(init=False)

    def __post_init__(self) -> None:
        m = self.models
        features = ProtocolFeatures(
            version=self.version,
            lane=self.name,
            state_updates=self.dialect == "v2",
            cancellable_tool_calls=hasattr(m, "CancelToolCallRequest"),
            custom_stop_reasons=hasattr(m, "SessionUpdateStateUpdateIdleOther"),
            client_files=hasattr(m, "ReadTextFileRequest"),
            client_terminals=hasattr(m, "CreateTerminalRequest"),
            load_session=hasattr(m, "LoadSessionRequest"),
            subagents=hasattr(m, "SessionUpdateSubagentUpdate"),
            tool_call_statuses=self.values.get("ToolCallStatus", frozenset()),
            plan_entry_statuses=self.values.get("PlanEntryStatus", frozenset()),
        )
        object.__setattr__(self, "features", features)

    def __repr__(self) -> str:
        return f"<Lane {self.name} (protocol {self.version}, {self.ref})>"

    def check(self, enum: str, value: object, *, where: str) -> Any:
        """`value` as the lane's field takes it: a known value (a string or any lane's enum
        member), or, for an open enum, an `OpenStr`. Anything else raises ValueError at the
        caller's site, naming what this lane allows."""
        known = self.values.get(enum, frozenset())
        if isinstance(value, OpenStr):
            if enum in self.open_values:
                return value
            raise ValueError(
                f"{where}: {enum} is closed in protocol version {self.version}: no custom"
                f" value {str(value)!r}; one of {_listing(known)}"
            )
        if isinstance(value, str) and str(value) in known:
            return str(value)
        custom = " (or OpenStr(...) for a custom value)" if enum in self.open_values else ""
        raise ValueError(
            f"{where}: {value!r} is not a {enum} of protocol version {self.version}:"
            f" one of {_listing(known)}{custom}"
        )

    def adopt(self, tp: Any, value: Any, *, where: str) -> Any:
        """`value` (a model of any lane, or plain JSON) as this lane's `tp`: a value of another
        lane (a block built with `v1.ContentBlockText` on a v2 connection) is re-decoded from its
        JSON. ValueError when it does not fit this lane."""
        try:
            return decode(tp, encode(value))
        except DecodeError as exc:
            raise ValueError(
                f"{where}: not valid in protocol version {self.version}: {exc}"
            ) from None
        except TypeError as exc:
            raise ValueError(f"{where}: {exc}") from None

    def owns(self, value: object) -> bool:
        """Whether `value` is an instance of one of this lane's model classes."""
        return bool(type(value).__module__ == self.models.__name__)


def _listing(values: Iterable[str]) -> str:
    return ", ".join(repr(v) for v in sorted(values))


def lanes() -> tuple[tuple[str, int, bool], ...]:
    """The lanes the toolkit can serve in this package: (name, protocol version, unstable)."""
    return tuple((name, version, unstable) for name, version, unstable, _, _ in LANES)


@cache
def lane(name: str) -> Lane:
    """The lane called `name` (imported on first use). KeyError for a lane the package lacks."""
    for entry_name, _, _, module, _ in LANES:
        if entry_name == name:
            loaded: Lane = importlib.import_module(module, _PACKAGE).LANE
            return loaded
    raise KeyError(f"this package has no lane {name!r}; it has {', '.join(n for n, *_ in LANES)}")


def stable_lanes() -> dict[int, str]:
    """Protocol version → the lane serving it by default (the stable one, when there is one)."""
    out: dict[int, str] = {}
    for name, version, _, _, _ in sorted(LANES, key=lambda e: e[2]):
        out.setdefault(version, name)
    return out


def pick(names: Iterable[str] | None) -> dict[int, Lane]:
    """Protocol version → lane, for the lanes named (default: the stable lane of each
    version). ValueError for an unknown name, or two lanes of one version."""
    if names is None:
        return {version: lane(name) for version, name in stable_lanes().items()}
    chosen: dict[int, Lane] = {}
    for name in names:
        try:
            found = lane(name)
        except KeyError as exc:
            raise ValueError(str(exc.args[0])) from None
        if found.version in chosen:
            raise ValueError(
                f"lanes {chosen[found.version].name} and {name} both speak protocol version"
                f" {found.version}: name one"
            )
        chosen[found.version] = found
    if not chosen:
        raise ValueError("no lane named: name at least one")
    return chosen
