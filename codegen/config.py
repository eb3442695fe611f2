"""Defaults from `[tool.acp-codegen]` in the project's pyproject.toml.

```toml
[tool.acp-codegen]
out = "src/myagent"                  # where the packages go (default: generated)
lock = "schema/pins.lock.json"       # the pins (default; the cache is schema/cache beside it)
templates = "my-templates"           # optional: default, the templates shipped with the tool
names = "names.json"                 # optional: variant-name overrides
[[tool.acp-codegen.packages]]
package = "acp"                      # one entry a package
lanes = ["v1/schema.json", "v2/schema.json"]   # the paths under the pinned ref: one lane each
ref = "npm-sdk-2.4.0"                # optional: default, the lock's default ref
```

`lanes` makes a package of several lanes, each in a subpackage named after it (`acp.v1`,
`acp.v2`; `v2/schema.unstable.json` is `acp.v2_unstable`) with one runtime and toolkit beside
them; `schema = "v2/schema.json"` instead makes a package of one lane, at its root.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .diagnostics import InputError

SECTION = "[tool.acp-codegen]"
_KEYS = {"lock", "templates", "out", "names", "packages"}
_PACKAGE_KEYS = {"package", "schema", "lanes", "ref"}


@dataclass(frozen=True)
class PackageConfig:
    """One generated package: its name and the pinned schema paths its lanes come from."""

    package: str
    schemas: tuple[str, ...]  # paths under the pinned ref, e.g. "v2/schema.json"
    ref: str | None = None  # None: the lock file's default ref
    flat: bool = True  # one lane at the package's root (`schema`), else subpackages (`lanes`)


@dataclass(frozen=True)
class Config:
    """The `[tool.acp-codegen]` settings, with paths made absolute."""

    root: Path
    lock: Path
    out: Path
    templates: Path  # the section's own, else the templates shipped with the tool
    names: Path | None
    packages: tuple[PackageConfig, ...] = field(default_factory=tuple)

    @property
    def user_templates(self) -> bool:
        """The project's own templates folder (not the one shipped with the tool)."""
        return self.templates != default_templates()

    def check_templates(self) -> None:
        """The section's own templates folder must hold every template a package needs."""
        from .modules import LANE_MODULES, PACKAGE_TEMPLATES, RUNTIME_MODULES, TOOLKIT_MODULES

        needed = list(PACKAGE_TEMPLATES) + [str(m.template) for m in LANE_MODULES]
        needed += [str(m.source) for m in RUNTIME_MODULES + TOOLKIT_MODULES]
        missing = [name for name in needed if not (self.templates / name).is_file()]
        if missing:
            raise InputError(
                f"the templates folder {self.templates} (templates under {SECTION}) has no"
                f" {missing[0]}: copy the whole templates/ folder of acp-codegen to start from"
            )

    def lane_package(self, lane: str) -> Path | None:
        """The folder of the configured lane `lane` ("v1", "v2", "v2_unstable"), the stable one
        first: a one-lane package, or a lane's subpackage."""
        version, _, unstable = lane.partition("_")
        if unstable:  # only the unstable schema of that version will do
            wanted_paths: tuple[str, ...] = (f"{version}/schema.unstable.json",)
        else:
            wanted_paths = (f"{lane}/schema.json", f"{lane}/")
        for wanted in wanted_paths:
            for p in self.packages:
                for schema in p.schemas:
                    if schema == wanted or (wanted.endswith("/") and schema.startswith(wanted)):
                        return self.out / p.package if p.flat else self.out / p.package / lane
        return None


def _read(pyproject: Path) -> dict[str, Any]:
    import tomllib  # only commands that read the project settings pay for this import

    try:
        return tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {pyproject}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{pyproject} is not valid TOML: {exc}") from None


def _find(start: Path) -> tuple[Path, dict[str, Any]] | None:
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            tool = _read(candidate).get("tool")
            if isinstance(tool, dict) and "acp-codegen" in tool:
                return folder, tool["acp-codegen"]
    return None


def find_project(start: Path) -> Path | None:
    """The nearest folder at or above `start` whose pyproject.toml has the section."""
    found = _find(start)
    return found[0] if found else None


def load_config(start: Path | None = None, hint: str = "") -> Config:
    """The settings of the project at or above `start` (the working folder); `hint` ends the
    error when there is none."""
    found = _find(start or Path.cwd())
    if found is None:
        hint = hint or f"add a {SECTION} section (out, packages) to your pyproject.toml"
        raise InputError(f"no pyproject.toml with {SECTION} here or above; {hint}")
    root, section = found
    where = f"{SECTION} in {root / 'pyproject.toml'}"
    if not isinstance(section, dict):
        raise InputError(f"{where} must be a table")
    unknown = sorted(set(section) - _KEYS)
    if unknown:
        raise InputError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_KEYS))})")
    for key in _KEYS - {"packages"}:
        if key in section and not (isinstance(section[key], str) and section[key]):
            raise InputError(f"{where}: {key} must be a non-empty string (a path)")
    templates, names = section.get("templates"), section.get("names")
    return Config(
        root=root,
        lock=root / section.get("lock", "schema/pins.lock.json"),
        out=root / section.get("out", "generated"),
        templates=root / templates if templates else default_templates(),
        names=root / names if names else None,
        packages=_packages(section.get("packages", []), where),
    )


def _packages(raw: Any, where: str) -> tuple[PackageConfig, ...]:
    if not isinstance(raw, list):
        raise InputError(
            f"{where}: packages must be an array of tables ([[tool.acp-codegen.packages]])"
        )
    out: list[PackageConfig] = []
    for i, entry in enumerate(raw):
        at = f"{where}: packages[{i}]"
        if not isinstance(entry, dict):
            raise InputError(f"{at} must be a table")
        extra = sorted(set(entry) - _PACKAGE_KEYS)
        if "package" not in entry or extra or ("schema" in entry) == ("lanes" in entry):
            if "package" not in entry:
                problem = "needs 'package'"
            elif extra:
                problem = f"has an unknown key {extra[0]!r}"
            else:
                problem = "needs one of 'schema' (one lane) or 'lanes' (several)"
            raise InputError(f"{at} {problem} (keys: package, schema or lanes, ref)")
        lanes = entry.get("lanes", [entry.get("schema")])
        if not isinstance(lanes, list) or not lanes:
            raise InputError(f"{at}: lanes must be a non-empty array of schema paths")
        values = [entry["package"], entry.get("ref", "x"), *lanes]
        if not all(isinstance(v, str) and v for v in values):
            raise InputError(f"{at}: every value must be a non-empty string")
        if len(set(lanes)) != len(lanes):
            raise InputError(f"{at}: a schema path is listed twice in lanes")
        if any(p.package == entry["package"] for p in out):
            raise InputError(f"{at}: package {entry['package']!r} is configured twice")
        out.append(
            PackageConfig(entry["package"], tuple(lanes), entry.get("ref"), "schema" in entry)
        )
    return tuple(out)


def _checkout() -> Path | None:
    """The source checkout this generator runs from (an editable install), if it is one."""
    root = Path(__file__).resolve().parent.parent
    return root if (root / "pyproject.toml").is_file() and (root / "codegen").is_dir() else None


def default_templates() -> Path:
    """The templates shipped with the generator (the checkout's folder, or the installed copy)."""
    checkout = _checkout()
    for candidate in (
        checkout / "templates" if checkout else None,
        Path(__file__).resolve().parent / "templates",
    ):
        if candidate is not None and (candidate / "models.py.j2").is_file():
            return candidate
    raise InputError("the generator's templates are missing; reinstall acp-codegen")


def default_bindings(lane: str = "v2") -> Path | None:
    """The folder of lane `lane` of the `acp_kit` package shipped with the tool (the checkout's
    generated/, or the installed copy), or None when there is neither."""
    checkout = _checkout()
    for candidate in (
        checkout / "generated" / "acp_kit" / lane if checkout else None,
        Path(__file__).resolve().parent / "bindings" / "acp_kit" / lane,
    ):
        if candidate is not None and (candidate / "__init__.py").is_file():
            return candidate
    return None
