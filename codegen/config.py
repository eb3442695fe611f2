"""Defaults from `[tool.acp-codegen]` in the project's pyproject.toml."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .diagnostics import InputError


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
    templates: Path
    names: Path | None
    packages: tuple[PackageConfig, ...] = field(default_factory=tuple)


def find_project(start: Path) -> Path | None:
    import tomllib  # only commands that read the project settings pay for this import

    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.exists():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError):
                continue
            if "acp-codegen" in data.get("tool", {}):
                return folder
    return None


def load_config(start: Path | None = None) -> Config:
    root = find_project(start or Path.cwd())
    if root is None:
        raise InputError(
            "no pyproject.toml with [tool.acp-codegen] here or above; pass --schema and --out"
        )
    import tomllib

    data: dict[str, Any] = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    section = data["tool"]["acp-codegen"]
    try:
        packages = tuple(PackageConfig(**p) for p in section.get("packages", []))
    except TypeError as exc:
        raise InputError(f"[tool.acp-codegen] packages: {exc}") from None
    names = section.get("names")
    return Config(
        root=root,
        lock=root / section.get("lock", "schema/pins.lock.json"),
        out=root / section.get("out", "generated"),
        templates=root / section.get("templates", "templates"),
        names=root / names if names else None,
        packages=packages,
    )


def default_templates() -> Path:
    """The templates shipped with the generator (the project's folder, or the installed copy)."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "templates", here / "templates"):
        if (candidate / "models.py.j2").exists():
            return candidate
    raise InputError("the generator's templates are missing; reinstall acp-codegen")
