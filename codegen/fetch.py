"""HTTP(S) downloads for the pins: a size cap on every body, and one-line errors.

Only the network paths import this module (pinning, filling an empty cache, `schema outdated`),
so urllib stays off every other start-up.
"""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request

from . import __version__
from .diagnostics import InputError

MiB = 1024 * 1024
USER_AGENT = f"acp-codegen/{__version__}"


class NotFound(InputError):
    """The server answered 404: the thing asked for does not exist there."""


class Unreachable(InputError):
    """No answer at all: no network, no such host, refused, timed out."""


def check_url(url: str, what: str) -> str:
    """`url` when it is http(s); a one-line error naming `what` it is otherwise."""
    if not url.startswith(("https://", "http://")):
        raise InputError(f"{what} {url!r} is not an http(s) URL")
    return url


def download(
    url: str, *, limit: int, timeout: float = 30.0, headers: dict[str, str] | None = None
) -> bytes:
    """The body at `url`, at most `limit` bytes (a larger one is refused, not cut)."""
    check_url(url, "URL")
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body: bytes = response.read(limit + 1)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise NotFound(f"cannot download {url}: HTTP 404 (not found)") from None
        raise InputError(f"cannot download {url}: HTTP {exc.code}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise Unreachable(f"cannot download {url}: {reason}") from None
    except (http.client.HTTPException, ValueError) as exc:  # e.g. the body cut short
        raise InputError(f"cannot download {url}: {type(exc).__name__} {exc}".rstrip()) from None
    if len(body) > limit:
        raise InputError(f"cannot download {url}: larger than {limit // MiB} MiB, refused")
    return body
