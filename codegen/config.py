"""Defaults from `[tool.acp-codegen]` in the project's pyproject.toml.

```toml
[tool.acp-codegen]
out = "src/myagent"                  # where the packages go (default: generated)
lock = "schema/pins.lock.json"       # the pins (default; the cache is schema/cache beside it)
templates = "my-templates"           # optional: default, the templates shipped with the tool
names = "names.json"                 # optional: variant-name overrides
[[tool.acp-codegen.packages]]
package = "acp"                      # one entry a package
schema = "v2/schema.json"            # the path under the pinned ref
ref = "schema-v2.0.0-alpha.3"        # optional: default, the lock's default ref
```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .diagnostics import InputError

SECTION = "[tool.acp-codegen]"
_KEYS = {"lock", "templates", "out", "names", "packages"}
_PACKAGE_KEYS = {"package", "schema", "ref"}


@dataclass(frozen=True)
class PackageConfig:
    """One generated package: its name and the pinned schema path it comes from."""

    package: str
    schema: str  # path under the pinned ref, e.g. "v2/schema.json"
    ref: str | None = None  # None: the lock file's default ref


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
        from .modules import CORE_MODULES

        needed = [m.template or f"runtime/{m.runtime}" for m in CORE_MODULES]
        missing = [name for name in needed if not (self.templates / name).is_file()]
        if missing:
            raise InputError(
                f"the templates folder {self.templates} (templates under {SECTION}) has no"
                f" {missing[0]}: copy the whole templates/ folder of acp-codegen to start from"
            )

    def lane_package(self, lane: str) -> Path | None:
        """The folder of the configured package of `lane` ("v1", "v2"), the stable one first."""
        lanes = [p for p in self.packages if p.schema == f"{lane}/schema.json"]
        lanes += [p for p in self.packages if p.schema.startswith(f"{lane}/")]
        return self.out / lanes[0].package if lanes else None


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
        missing = sorted({"package", "schema"} - set(entry))
        extra = sorted(set(entry) - _PACKAGE_KEYS)
        if missing or extra:
            problem = f"needs {missing[0]!r}" if missing else f"has an unknown key {extra[0]!r}"
            raise InputError(f"{at} {problem} (keys: package, schema, ref)")
        if not all(isinstance(v, str) and v for v in entry.values()):
            raise InputError(f"{at}: every value must be a non-empty string")
        if any(p.package == entry["package"] for p in out):
            raise InputError(f"{at}: package {entry['package']!r} is configured twice")
        out.append(PackageConfig(**entry))
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
    """The `acp_{lane}` package shipped with the tool (the checkout's generated/, or the
    installed copy), or None when there is neither."""
    checkout = _checkout()
    for candidate in (
        checkout / "generated" / f"acp_{lane}" if checkout else None,
        Path(__file__).resolve().parent / "bindings" / f"acp_{lane}",
    ):
        if candidate is not None and (candidate / "__init__.py").is_file():
            return candidate
    return None
