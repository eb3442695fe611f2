"""The optional libraries of the remote transports, imported when first used, with a one-line
message naming what to install when one is missing."""

from __future__ import annotations

import importlib
from types import ModuleType

_WHY = {
    "httpx": "an http(s):// agent needs httpx",
    "websockets": "a ws(s):// agent needs websockets",
    "uvicorn": "serve_remote runs under uvicorn",
}


class MissingExtra(ImportError):
    """An optional library of the remote transports is not installed."""


def require(name: str) -> ModuleType:
    """The module `name` (dotted: a submodule of the library); MissingExtra, one line naming
    what to install, when its library is not there. Typed as a plain module on purpose: the
    package type-checks where the library is not installed."""
    library = name.partition(".")[0]
    try:
        return importlib.import_module(name)
    except ImportError:
        raise MissingExtra(
            f"{_WHY[library]}: pip install {library} (acp-codegen's 'remote' extra installs"
            " uvicorn, httpx and websockets)"
        ) from None
