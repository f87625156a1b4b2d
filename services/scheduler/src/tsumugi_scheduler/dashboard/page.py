"""The dashboard page: one self-contained HTML document assembled from the package's assets.

The markup (``assets/index.html``), the stylesheet (``assets/style.css``) and the scripts (``assets/js/*.js``,
concatenated in `SCRIPT_ORDER`) are package data read with `importlib.resources`, which works wherever the
package's files are on disk: CPython, and Pyodide on Workers, whose bundle is mounted as files. Nothing is
fetched by the browser but ``/api`` (reference §2.13: no external scripts, stylesheets or fonts).
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources
from typing import Final

__all__ = ["SCRIPT_ORDER", "clear_dashboard_cache", "render_dashboard"]

SCRIPT_ORDER: Final = (
    "base.js",
    "api.js",
    "auth.js",
    "modal.js",
    "jobs.js",
    "job_detail.js",
    "explain.js",
    "new_job.js",
    "bindings.js",
    "charts.js",
    "metrics.js",
    "schedules.js",
    "runs.js",
    "app.js",
)
"""The scripts in load order: shared pieces first, the shell (which starts the app) last."""

_STYLE_MARK: Final = "/*tsumugi:style*/"
_SCRIPT_MARK: Final = "/*tsumugi:script*/"
# RFC 6265 cookie-name token: visible ASCII except separators.
_COOKIE_NAME_RE: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def _asset(name: str) -> str:
    return resources.files("tsumugi_scheduler.dashboard").joinpath("assets", name).read_text(encoding="utf-8")


@functools.cache
def _document() -> str:
    scripts = "\n".join(_asset(f"js/{name}") for name in SCRIPT_ORDER)
    if "</script" in scripts.lower():
        # Inside an inline <script>, that text would end the element early and break the page.
        raise ValueError("dashboard scripts must not contain '</script'")
    return _asset("index.html").replace(_STYLE_MARK, _asset("style.css")).replace(_SCRIPT_MARK, scripts)


def _check_cookie_name(token_cookie: str | None) -> None:
    if token_cookie is not None and not _COOKIE_NAME_RE.fullmatch(token_cookie):
        raise ValueError(
            f"token_cookie must be a cookie name (letters, digits and !#$%&'*+-.^_`|~), got {token_cookie!r}"
        )


def _config_script(token_cookie: str | None) -> str:
    # "<" escaped so no value can close the script element; the cookie-name rule already forbids it.
    config = json.dumps({"tokenCookie": token_cookie}, separators=(",", ":")).replace("<", "\\u003c")
    return f"<script>window.__TSUMUGI__={config}</script>"


@functools.lru_cache(maxsize=16)
def render_dashboard(token_cookie: str | None = "tsumugi_token") -> str:
    """The dashboard HTML with its configuration injected right after ``<head>``.

    The result is cached per cookie name (reference §2.13); `clear_dashboard_cache` resets it.

    Args:
        token_cookie: The cookie the page stores a typed-in token in after a 401 (the server reads it as
            well as a bearer header). None when another mechanism signs users in (e.g. Cloudflare Access):
            the page then only says how to sign in.

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


def clear_dashboard_cache() -> None:
    """Forget the rendered pages and the assembled document (after editing the assets in development)."""
    render_dashboard.cache_clear()
    _document.cache_clear()
