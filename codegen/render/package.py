"""The files of a package beyond its lanes' own: the hand-written runtime and toolkit modules
(copied with the banner), and the rendered modules that tie the lanes together — the package's
and each lane's `__init__`, `_lanes` (what the toolkit can serve), `vocab` (the values its
helpers accept) and each served lane's `lane` (its classes for the toolkit).

Python decides every name and value here; the templates place them.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import jinja2

from .. import __version__
from ..diagnostics import InputError
from ..ir import EnumType, Model, TaggedUnion
from ..modules import (
    CORE_EXPORTS,
    LANE_BINDING,
    META_NAMES,
    RUNTIME_MODULES,
    TOOLKIT_MODULES,
    ModuleSpec,
)
from ..naming import Names
from .api import toolkit_api
from .env import BANNER_PREFIX
from .lower import isort_key


@dataclass(frozen=True)
class LaneFacts:
    """One lane as the package-level files see it."""

    folder: str  # its subpackage: `v1`, `v2`, `v2_unstable`
    label: str  # the schema's path as pinned (`v2/schema.json`)
    model: Model
    names: Names
    modules: Sequence[ModuleSpec]
    banner: str
    ref: str
    sha256: str
    dialect: str | None  # the toolkit's dialect for it ("v1", "v2"), None when not served
    model_exports: tuple[str, ...]  # what its models module exports (the lowering's choice)


@dataclass(frozen=True)
class PackageInit:
    """An `__init__.py`: its docstring, what it imports at once, and what on first use."""

    banner: str
    doc: str
    imports: tuple[tuple[str, tuple[str, ...]], ...]  # (relative module, names)
    lazy: tuple[tuple[str, str, str], ...]  # (name, relative module, attribute or "")
    meta: tuple[tuple[str, Any], ...]
    all_names: tuple[str, ...] = field(default=())

    def variables(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


# The enums the toolkit's helpers take (tool kinds, statuses, ...), by the name `vocab` gives
# their accepted values.
VOCAB_ENUMS = (
    "ToolKind",
    "ToolCallStatus",
    "PlanEntryStatus",
    "PlanEntryPriority",
    "PermissionOptionKind",
)
# Types the toolkit's public signatures name, as the union of the served lanes' classes.
VOCAB_TYPES = (
    "ContentBlock",
    "SessionUpdate",
    "McpServer",
    "PermissionOption",
    "RequestPermissionRequest",
    "ToolCallContent",
    "ToolCallLocation",
    "PlanEntry",
    "SessionInfo",
    "InitializeRequest",
    "InitializeResponse",
    "Implementation",
    "Cost",
)
RUNTIME_DOC = (
    "The JSON-RPC runtime of this package (asyncio, standard library only): the connection, its"
    " transports, JSON-RPC errors and framing, and `decode`/`encode`. Shared by every lane."
)
TOOLKIT_DOC = (
    "The toolkit of this package: an `Agent` written once that serves every lane the package"
    " holds (the protocol version is chosen at `initialize`), and a `Client` that speaks to any"
    " of them. Lane-neutral: it reaches a lane's classes through the lane's `lane.py`."
)


def package_files(
    package: str,
    lanes: Sequence[LaneFacts],
    template_dir: Path,
    env: jinja2.Environment,
    *,
    flat: bool,
) -> tuple[dict[str, str], set[str]]:
    """The package-level files (path → text), and which of them are copied source."""
    header = lanes[0].banner if flat else package_banner(lanes)
    served = [lane for lane in lanes if lane.dialect is not None]
    files: dict[str, str] = {}
    copied: set[str] = set()
    shared = list(RUNTIME_MODULES) + (list(TOOLKIT_MODULES) if served else [])
    for module in shared:
        path = f"{package}/{module.filename}"
        files[path] = header + "\n" + _source_text(template_dir, module)
        copied.add(path)
    sub = env.get_template("subpackage.py.j2")
    files[f"{package}/runtime/__init__.py"] = sub.render(banner=header, doc=RUNTIME_DOC)
    if served:
        files[f"{package}/toolkit/__init__.py"] = sub.render(banner=header, doc=TOOLKIT_DOC)
    for lane in served:
        path = f"{package}/{lane.folder}/{LANE_BINDING.filename}"
        files[path] = env.get_template("lane.py.j2").render(_lane_binding(lane))
    if served:  # the toolkit's API, for people
        files[f"{package}/REFERENCE.md"] = env.get_template("API.md.j2").render(
            banner=header,
            package=package,
            lanes=[lane.folder for lane in lanes],
            entries=toolkit_api(template_dir, TOOLKIT_MODULES),
        )
    if served:  # what the toolkit reads: a package it does not serve has neither
        files[f"{package}/_lanes.py"] = env.get_template("lanes.py.j2").render(
            banner=header, lanes=[_lane_entry(lane) for lane in served]
        )
        files[f"{package}/vocab.py"] = env.get_template("vocab.py.j2").render(
            _vocab(header, served)
        )
    init = env.get_template("__init__.py.j2")
    for lane in lanes:
        files[f"{package}/{lane.folder}/__init__.py"] = init.render(_lane_init(lane).variables())
        files[f"{package}/{lane.folder}/py.typed"] = ""
    root = _flat_init(lanes[0], served) if flat else _root_init(header, lanes, served)
    files[f"{package}/__init__.py"] = init.render(root.variables())
    files[f"{package}/py.typed"] = ""
    return files, copied


def package_banner(lanes: Sequence[LaneFacts]) -> str:
    """The banner of the files several lanes share: every lane's schema and sha256."""
    refs = sorted({lane.ref for lane in lanes})
    lines = [f"{BANNER_PREFIX}{__version__} from the ACP schemas {', '.join(refs)}:"]
    for lane in lanes:
        lines.append(
            f"# {lane.folder}: {_clean(lane.ref)} {_clean(lane.label)}, sha256 {lane.sha256}."
        )
    lines.append("# Do not edit: regenerate instead.")
    return "\n".join(lines)


def _source_text(template_dir: Path, module: ModuleSpec) -> str:
    assert module.source is not None
    try:
        return (template_dir / module.source).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read the hand-written module {module.source}: {exc}") from None


def _lane_entry(lane: LaneFacts) -> tuple[str, int, bool, str, str]:
    """(folder, protocol version, unstable, module, dialect) for `_lanes.py`."""
    assert lane.dialect is not None
    return lane.folder, _version(lane), _unstable(lane), f".{lane.folder}.lane", lane.dialect


def _version(lane: LaneFacts) -> int:
    if lane.model.version is not None:
        return lane.model.version
    return 2 if lane.dialect == "v2" else 1


def _unstable(lane: LaneFacts) -> bool:
    return lane.folder.endswith("_unstable") or any(m.unstable for m in lane.model.methods)


def _lane_binding(lane: LaneFacts) -> dict[str, Any]:
    return {
        "banner": lane.banner,
        "name": lane.folder,
        "version": _version(lane),
        "unstable": _unstable(lane),
        "dialect": lane.dialect,
        "ref": lane.ref,
        "values": _enum_values(lane),
        "open": sorted(name for name, _, is_open in _enums(lane) if is_open),
        "stop_reasons": _stop_reasons(lane.model),
    }


def _enums(lane: LaneFacts) -> list[tuple[str, tuple[str, ...], bool]]:
    out = []
    for name in VOCAB_ENUMS:
        t = lane.model.index.get(name)
        if isinstance(t, EnumType):
            out.append((name, tuple(str(m.value) for m in t.members), t.open))
    return out


def _enum_values(lane: LaneFacts) -> list[tuple[str, tuple[str, ...]]]:
    return [(name, values) for name, values, _ in _enums(lane)]


def _stop_reasons(model: Model) -> tuple[str, ...]:
    """The stop reasons a turn may end with (`error` excepted: an exception brings it)."""
    stop = model.index.get("StopReason")
    if isinstance(stop, EnumType):
        return tuple(str(m.value) for m in stop.members if m.value != "error")
    idle = model.index.get("IdleStateUpdate")
    if isinstance(idle, TaggedUnion):
        return tuple(v.tag for v in idle.variants if v.tag != "error")
    return ()


def _vocab(header: str, served: Sequence[LaneFacts]) -> dict[str, Any]:
    lanes = [(lane.folder, f"_{lane.folder}") for lane in served]

    def qualify(lane: LaneFacts) -> str:
        return f"_{lane.folder}"

    enums: list[tuple[str, tuple[str, ...], tuple[str, ...], bool]] = []
    for name in VOCAB_ENUMS:
        values: dict[str, None] = {}
        classes: list[str] = []
        opened = False
        for lane in served:
            for enum_name, lane_values, is_open in _enums(lane):
                if enum_name == name:
                    values.update(dict.fromkeys(lane_values))
                    classes.append(f"{qualify(lane)}.{lane.names.types[name]}")
                    opened = opened or is_open
        if values:
            enums.append((name, tuple(values), tuple(classes), opened))
    stops: dict[str, None] = {}
    for lane in served:
        stops.update(dict.fromkeys(_stop_reasons(lane.model)))
    types = []
    for name in VOCAB_TYPES:
        classes = [
            f"{qualify(lane)}.{lane.names.types[name]}"
            for lane in served
            if name in lane.model.index
        ]
        types.append((name, tuple(classes)))
    return {
        "banner": header,
        "lanes": lanes,
        "enums": enums,
        "stop_reasons": tuple(stops),
        "types": types,
        "needs_open": any(opened for *_, opened in enums),
    }


def _lane_init(lane: LaneFacts) -> PackageInit:
    imports, lazy = _lane_parts(lane, ".")
    imports.append(("..runtime._runtime", CORE_EXPORTS))
    lazy += _shared_lazy("..", toolkit=False)  # the runtime's names, for code of this lane only
    return _finish(
        PackageInit(
            lane.banner,
            f"The {lane.folder} lane of this package: every `$defs` type of {lane.ref}"
            f" ({lane.model.title or 'an ACP schema'}), its methods and its dispatch"
            " (`AgentBase`, `ClientStub`, ...), and the JSON-RPC runtime's names"
            " (`connect_stdio`, `RpcError`, ...); `decode(tp, data)` and `encode(value)` convert"
            " between typed values and parsed JSON. The toolkit (`Agent`, `Client`, ...) serves"
            " every lane: it is at the package's root.",
            tuple(imports),
            tuple(lazy),
            _meta(lane),
        )
    )


def _flat_init(lane: LaneFacts, served: Sequence[LaneFacts]) -> PackageInit:
    imports, lazy = _lane_parts(lane, f".{lane.folder}.")
    imports.append((".runtime._runtime", CORE_EXPORTS))
    lazy += [(lane.folder, f".{lane.folder}", "")]
    lazy += _shared_lazy(".", bool(served))
    doc = (
        f"Agent Client Protocol bindings for {lane.ref}"
        f" ({lane.model.title or 'an ACP schema'}): every `$defs` type, its methods, the"
        " JSON-RPC runtime"
        + (" and the toolkit (`Agent`, `Client`, ...)" if served else "")
        + "; `decode(tp, data)` and `encode(value)` convert between typed values and parsed JSON."
    )
    return _finish(PackageInit(lane.banner, doc, tuple(imports), tuple(lazy), _meta(lane)))


def _root_init(header: str, lanes: Sequence[LaneFacts], served: Sequence[LaneFacts]) -> PackageInit:
    lazy = [(lane.folder, f".{lane.folder}", "") for lane in lanes]
    lazy += _shared_lazy(".", bool(served))
    versions = ", ".join(f"`{lane.folder}` ({lane.ref})" for lane in lanes)
    doc = (
        f"Agent Client Protocol bindings for several protocol versions: the lanes {versions},"
        " each a subpackage with its types and dispatch; one JSON-RPC runtime"
        + (" and one toolkit that serves every lane (`Agent`, `Client`, ...)" if served else "")
        + "."
    )
    meta = (("LANES", tuple(lane.folder for lane in lanes)),)
    return _finish(
        PackageInit(header, doc, ((".runtime._runtime", CORE_EXPORTS),), tuple(lazy), meta)
    )


def _lane_parts(
    lane: LaneFacts, here: str
) -> tuple[list[tuple[str, tuple[str, ...]]], list[tuple[str, str, str]]]:
    imports: list[tuple[str, tuple[str, ...]]] = []
    lazy: list[tuple[str, str, str]] = []
    for m in lane.modules:
        names = lane.model_exports if m.module == "models" else m.exports
        if not names:
            continue
        if m.lazy:
            lazy += [(n, f"{here}{m.module}", n) for n in names]
        else:
            imports.append((f"{here}{m.module}", names))
    return imports, lazy


def _shared_lazy(here: str, toolkit: bool) -> list[tuple[str, str, str]]:
    modules = [m for m in RUNTIME_MODULES if m.lazy]
    if toolkit:
        modules += [m for m in TOOLKIT_MODULES if m.exports]
    return [(n, f"{here}{m.module}", n) for m in modules for n in m.exports]


def _meta(lane: LaneFacts) -> tuple[tuple[str, Any], ...]:
    values = (lane.ref, lane.sha256, lane.model.version)
    return tuple(zip(META_NAMES, values, strict=True))


def _finish(init: PackageInit) -> PackageInit:
    """Sorted as ruff sorts imports (`..` before `.`, modules by name, names CONSTANTS, then
    Classes, then the rest), the docstring wrapped, and `__all__` made."""
    imports = tuple(
        (module, tuple(sorted(names, key=isort_key)))
        for module, names in sorted(init.imports, key=_module_key)
    )
    lazy = tuple(
        sorted(init.lazy, key=lambda e: (_module_key((e[1] if e[2] else ".", ())), isort_key(e[0])))
    )
    names = [n for _, group in imports for n in group]
    names += [n for n, _, _ in lazy] + [n for n, _ in init.meta]
    doc = "\n".join(textwrap.wrap(init.doc, 96))
    return PackageInit(init.banner, doc, imports, lazy, init.meta, tuple(dict.fromkeys(names)))


def _module_key(entry: tuple[str, tuple[str, ...]]) -> tuple[int, str]:
    module = entry[0]
    dots = len(module) - len(module.lstrip("."))
    return -dots, module.lstrip(".")


def _clean(text: str) -> str:
    return "".join(ch if ch.isprintable() else "?" for ch in text)
