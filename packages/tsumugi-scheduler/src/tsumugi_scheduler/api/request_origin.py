"""Which requests may use the dashboard's cookie: same-origin ones only, and state changes only as JSON.

SameSite=Strict does not separate ports or sibling subdomains (they are the same *site*), so a page served on
another port of 127.0.0.1, or on another subdomain of the same registrable domain, would get the cookie sent
along. Browsers say where a request comes from: ``Sec-Fetch-Site`` (``same-origin``, ``same-site``,
``cross-site``, or ``none`` for what the user typed) and ``Origin`` (on every non-GET request, and on
cross-origin ones). A cookie-authenticated request passes only when neither points elsewhere (ADR-0064).

Example:
    >>> cross_origin_reason({"host": "127.0.0.1:8787", "origin": "http://127.0.0.1:8800"}, "http")
    'Origin http://127.0.0.1:8800 is not http://127.0.0.1:8787'
    >>> cross_origin_reason({"host": "127.0.0.1:8787", "sec-fetch-site": "same-origin"}, "http") is None
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = ["SAFE_METHODS", "cross_origin_reason", "declares_json"]

SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that change nothing; every other one is a state change."""
_OWN_SITE_VALUES: Final = frozenset({"same-origin", "none"})


def cross_origin_reason(headers: Mapping[str, str], scheme: str) -> str | None:
    """Why the request does not come from this origin; None when it does (or says nothing either way).

    Args:
        headers: Lower-cased request headers.
        scheme: ``http`` or ``https``, the request URL's.
    """
    site = headers.get("sec-fetch-site")
    if site is not None and site.strip().lower() not in _OWN_SITE_VALUES:
        return f"Sec-Fetch-Site is {site.strip()}"
    origin = headers.get("origin")
    if origin is None:
        return None
    host = headers.get("host", "").strip().lower()
    own = f"{scheme}://{host}"
    if not host or origin.strip().lower() != own:
        return f"Origin {origin.strip()} is not {own}"
    return None


def declares_json(headers: Mapping[str, str]) -> bool:
    """True when ``Content-Type`` is ``application/json`` (parameters such as charset allowed)."""
    media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return media == "application/json"
