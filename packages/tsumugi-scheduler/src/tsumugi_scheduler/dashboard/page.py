"""The dashboard page: one self-contained HTML document assembled from the package's assets.

The markup (``assets/index.html``), the stylesheet (``assets/style.css``) and the scripts (``assets/js/*.js``,
concatenated in `SCRIPT_ORDER`) are package data read with `importlib.resources`, which works wherever the
package's files are on disk: CPython, and Pyodide on Workers, whose bundle is mounted as files. Nothing is
fetched by the browser but ``/api`` (docs/reference/original.md §2.13: no external scripts, stylesheets or
fonts).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import re
from importlib import resources
from typing import Final

from tsumugi_core.exceptions import InvalidFieldError

__all__ = [
    "SCRIPT_ORDER",
    "clear_dashboard_cache",
    "content_security_policy",
    "dashboard_headers",
    "render_dashboard",
]

SCRIPT_ORDER: Final = (
    "base.js",
    "api.js",
    "auth.js",
    "modal.js",
    "jobs.js",
    "job_detail.js",
    "steps.js",
    "explain.js",
    "new_job.js",
    "bindings.js",
    "charts.js",
    "metrics.js",
    "schedules.js",
    "runs.js",
    "waterfall.js",
    "pan_zoom.js",
    "dag.js",
    "run_detail.js",
    "app.js",
)
"""The scripts in load order: shared pieces first, the shell (which starts the app) last."""

_STYLE_MARK: Final = "/*tsumugi:style*/"
_SCRIPT_MARK: Final = "/*tsumugi:script*/"
_INLINE_RE: Final = re.compile(r"<(script|style)>(.*?)</\1>", re.DOTALL)
# RFC 6265 cookie-name token: visible ASCII except separators.
_COOKIE_NAME_RE: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def _asset(name: str) -> str:
    return resources.files("tsumugi_scheduler.dashboard").joinpath("assets", name).read_text(encoding="utf-8")


@functools.cache
def _document() -> str:
    scripts = "\n".join(_asset(f"js/{name}") for name in SCRIPT_ORDER)
    if "</script" in scripts.lower():
        # Inside an inline <script>, that text would end the element early and break the page.
        raise InvalidFieldError(
            "scripts", "must not contain '</script'", message="dashboard scripts must not contain '</script'"
        )
    return _asset("index.html").replace(_STYLE_MARK, _asset("style.css")).replace(_SCRIPT_MARK, scripts)


def _check_cookie_name(token_cookie: str | None) -> None:
    if token_cookie is not None and not _COOKIE_NAME_RE.fullmatch(token_cookie):
        raise InvalidFieldError(
            "token_cookie",
            f"must be a cookie name (letters, digits and !#$%&'*+-.^_`|~), got {token_cookie!r}",
        )


def _config_script(token_cookie: str | None) -> str:
    # "<" escaped so no value can close the script element; the cookie-name rule already forbids it.
    config = json.dumps({"tokenCookie": token_cookie}, separators=(",", ":")).replace("<", "\\u003c")
    return f"<script>window.__TSUMUGI__={config}</script>"


@functools.lru_cache(maxsize=16)
def render_dashboard(token_cookie: str | None = "tsumugi_token") -> str:
    """The dashboard HTML with its configuration injected right after ``<head>``.

    The result is cached per cookie name (docs/reference/original.md §2.13); `clear_dashboard_cache` resets
    it.

    Args:
        token_cookie: The name of the session cookie the server sets when the page signs in with a token
            (``POST /api/session``; HttpOnly, so the page never sees it: ADR-0064). The page only needs to
            know that token sign-in is offered. None when another mechanism signs users in (e.g. Cloudflare
            Access): the page then only says how to sign in.

    Returns:
        One self-contained HTML document (inline CSS and JS).

    Raises:
        ValueError: ``token_cookie`` is not a valid cookie name.

    Example:
        >>> html = render_dashboard("tsumugi_token")
        >>> '<head><script>window.__TSUMUGI__={"tokenCookie":"tsumugi_token"}</script>' in html
        True
    """
    _check_cookie_name(token_cookie)
    document = _document()
    head = document.index("<head>") + len("<head>")
    return document[:head] + _config_script(token_cookie) + document[head:]


def _hash_source(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


@functools.lru_cache(maxsize=16)
def content_security_policy(token_cookie: str | None = "tsumugi_token") -> str:
    """The page's Content-Security-Policy: only its own inline script and style elements run (by hash).

    Scripts and style elements are allowed by the SHA-256 of their exact text, so an injected element would
    not run; the page may only fetch its own origin (``connect-src 'self'``), submit no form elsewhere, and
    be framed by nobody (``frame-ancestors 'none'``, clickjacking). Style *attributes* stay allowed
    (``style-src-attr``): the views size bars and inputs with them, and the page never builds markup from
    data (text nodes only), so they carry no injected content. ADR-0068.

    Example:
        >>> policy = content_security_policy()
        >>> "frame-ancestors 'none'" in policy and "script-src 'sha256-" in policy
        True
    """
    scripts: list[str] = []
    styles: list[str] = []
    for tag, body in _INLINE_RE.findall(render_dashboard(token_cookie)):
        (scripts if tag == "script" else styles).append(_hash_source(body))
    style = " ".join(styles)
    return "; ".join(
        (
            "default-src 'none'",
            f"script-src {' '.join(scripts)}",
            f"style-src {style}",
            f"style-src-elem {style}",
            "style-src-attr 'unsafe-inline'",
            "img-src 'self' data:",
            "connect-src 'self'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        )
    )


def dashboard_headers(token_cookie: str | None = "tsumugi_token") -> dict[str, str]:
    """The response headers that go with the page: its CSP, no framing, no sniffing, no referrer, no caching."""
    return {
        "content-security-policy": content_security_policy(token_cookie),
        "x-frame-options": "DENY",
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "cache-control": "no-store",
    }


def clear_dashboard_cache() -> None:
    """Forget the rendered pages and the assembled document (after editing the assets in development)."""
    render_dashboard.cache_clear()
    content_security_policy.cache_clear()
    _document.cache_clear()
