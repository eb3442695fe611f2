"""Stand-ins for the two outside sources of `schema pin` and `schema outdated`: an npm registry
and an upstream git repository, served by a local HTTP server on 127.0.0.1 (a free port).

The code under test reaches them through `$ACP_CODEGEN_NPM_REGISTRY` (the registry base URL)
and `$ACP_CODEGEN_UPSTREAM_GIT` (the repository URL). Every body is built here from bytes the
test writes: tarballs with `tarball`, the registry's documents with `Registry.publish`, a ref
advertisement with `advertisement`. The server records each path it was asked for.

`registry_reachable()` decides once per test process, with a short timeout, whether the real
npm registry answers, for the tests that also run against it.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import http.server
import io
import json
import tarfile
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

PACKAGE = "@agentclientprotocol/sdk"
REAL_REGISTRY = "https://registry.npmjs.org"


def tarball(members: dict[str, bytes], symlinks: dict[str, str] | None = None) -> bytes:
    """A gzip'd tar of `members` (name → bytes), in order, with fixed times and owners."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 499162500
            tar.addfile(info, io.BytesIO(data))
        for name, target in (symlinks or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return gzip.compress(raw.getvalue(), mtime=0)


def sri(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def advertisement(tags: list[str]) -> bytes:
    """A smart-HTTP ref advertisement (`info/refs?service=git-upload-pack`) with `tags`, each
    also peeled (`^{}`, as annotated tags are), after a branch."""

    def pkt(text: str) -> bytes:
        data = text.encode()
        return f"{len(data) + 4:04x}".encode() + data

    sha = "0123456789abcdef0123456789abcdef01234567"
    lines = [f"{sha} HEAD\0multi_ack side-band-64k\n", f"{sha} refs/heads/main\n"]
    for tag in tags:
        lines += [f"{sha} refs/tags/{tag}\n", f"{sha} refs/tags/{tag}^{{}}\n"]
    return pkt("# service=git-upload-pack\n") + b"0000" + b"".join(map(pkt, lines)) + b"0000"


@dataclass
class Server:
    """Fixed answers by path (status, body); `hits` lists every path asked for, in order."""

    routes: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    hits: list[str] = field(default_factory=list)
    url: str = ""

    def add(self, path: str, body: bytes, status: int = 200) -> None:
        self.routes[path] = (status, body)


@dataclass
class Registry:
    """The npm registry's documents for PACKAGE on a `Server`, under `/npm`."""

    server: Server
    versions: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"{self.server.url}/npm"

    def tarball_url(self, version: str) -> str:
        return f"{self.base}/{PACKAGE}/-/sdk-{version}.tgz"

    def publish(self, version: str, data: bytes, **dist: Any) -> str:
        """Serve `data` as the tarball of `version` (with its real digests unless `dist` says
        otherwise: `integrity=None` leaves a digest out); return the tarball's URL."""
        url = self.tarball_url(version)
        given = {"tarball": url, "integrity": sri(data), "shasum": hashlib.sha1(data).hexdigest()}
        given.update(dist)
        doc = {
            "name": PACKAGE,
            "version": version,
            "dist": {k: v for k, v in given.items() if v is not None},
        }
        self.versions[version] = doc
        self.server.add(url.removeprefix(self.server.url), data)
        self.server.add(f"/npm/{PACKAGE}/{version}", json.dumps(doc).encode())
        document = {"name": PACKAGE, "versions": self.versions}
        self.server.add(f"/npm/{PACKAGE}", json.dumps(document).encode())
        return url

    def tarball_hits(self) -> list[str]:
        return [hit for hit in self.server.hits if hit.endswith(".tgz")]


def _handler(server: Server) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            server.hits.append(self.path)
            status, body = server.routes.get(self.path, (404, b"not found"))
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the tests read `hits`

    return Handler


@pytest.fixture
def standin(monkeypatch: pytest.MonkeyPatch) -> Iterator[Registry]:
    """A running stand-in (registry under `/npm`, upstream git under `/git/upstream`), with
    both variables pointing at it and no mirror set."""
    server = Server()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    registry = Registry(server)
    monkeypatch.setenv("ACP_CODEGEN_NPM_REGISTRY", registry.base)
    monkeypatch.setenv("ACP_CODEGEN_UPSTREAM_GIT", f"{server.url}/git/upstream")
    monkeypatch.delenv("ACP_SCHEMA_MIRROR", raising=False)
    try:
        yield registry
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@functools.cache
def registry_reachable() -> str | None:
    """None when the real npm registry answers within 5 s; else why it did not."""
    url = f"{REAL_REGISTRY}/{PACKAGE}/2.4.0"
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            response.read(1)
    except Exception as exc:  # any failure means: offline for these tests
        return f"the npm registry is not reachable from here ({type(exc).__name__}: {exc})"
    return None


def needs_registry() -> None:
    reason = registry_reachable()
    if reason is not None:
        pytest.skip(reason)
