"""Upstream's tags, read with git's smart HTTP protocol: one GET of the repository's ref
advertisement (`info/refs?service=git-upload-pack`), no clone, no API token or rate limit.

The repository is `$ACP_CODEGEN_UPSTREAM_GIT` when set (an http(s) git URL), else upstream's
GitHub repository.
"""

from __future__ import annotations

import os

from . import __version__
from .diagnostics import InputError
from .fetch import MiB, check_url, download

UPSTREAM_ENV = "ACP_CODEGEN_UPSTREAM_GIT"
DEFAULT_UPSTREAM = "https://github.com/agentclientprotocol/agent-client-protocol.git"
ADVERTISEMENT_LIMIT = 32 * MiB  # every branch, tag and pull ref: well under 1 MiB today


def repository() -> str:
    url = os.environ.get(UPSTREAM_ENV) or DEFAULT_UPSTREAM
    return check_url(url, f"${UPSTREAM_ENV}").rstrip("/")


def tags(timeout: float = 30.0) -> list[str]:
    """The names of every tag of the upstream repository."""
    url = f"{repository()}/info/refs?service=git-upload-pack"
    body = download(
        url,
        limit=ADVERTISEMENT_LIMIT,
        timeout=timeout,
        headers={"User-Agent": f"git/2 (acp-codegen {__version__})"},
    )
    return tag_names(body, url)


def tag_names(body: bytes, source: str) -> list[str]:
    """The tags of a smart-HTTP ref advertisement: pkt-lines of `<sha> <ref>[\\0caps]`, after a
    `# service=git-upload-pack` line; peeled entries (`^{}`) are left out."""
    names: list[str] = []
    pos, first = 0, True
    while pos < len(body):
        try:
            size = int(body[pos : pos + 4], 16)
        except ValueError:
            size = -1
        if size == 0:  # a flush-pkt between sections
            pos += 4
            continue
        if size < 4 or pos + size > len(body):
            raise InputError(f"{source} did not answer with a git ref advertisement")
        line = body[pos + 4 : pos + size].split(b"\0", 1)[0].rstrip(b"\n")
        pos += size
        if first:
            if line != b"# service=git-upload-pack":
                raise InputError(f"{source} did not answer with a git ref advertisement")
            first = False
            continue
        _, _, ref = line.partition(b" ")
        if ref.startswith(b"refs/tags/") and not ref.endswith(b"^{}"):
            names.append(ref[len(b"refs/tags/") :].decode("utf-8", "replace"))
    if first:
        raise InputError(f"{source} did not answer with a git ref advertisement")
    return names
