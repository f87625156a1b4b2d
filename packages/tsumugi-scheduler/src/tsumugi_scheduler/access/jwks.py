"""The team's signing keys (JWKS), cached per isolate with a bound, refreshed when a token names a new key.

Access publishes its current keys at ``https://<team>.cloudflareaccess.com/cdn-cgi/access/certs`` and rotates
them (the old key stays published for a while). `JwksCache` loads that document once, keeps its RSA keys for
``ttl_ms``, and when a token names a ``kid`` it does not hold, fetches once more, at most once per
``refresh_floor_ms`` so that tokens with made-up kids cannot make every request fetch (ADR-0150). It keeps at
most `MAX_KEYS` keys from a document of at most `MAX_JWKS_BYTES`; a fetch that fails, answers another status
or a document it cannot read leaves no usable key, so the request is refused (fail-closed).

Example:
    >>> parse_jwks('{"keys": [{"kty": "RSA", "kid": "k1", "n": "AQAB", "e": "AQAB"}]}')
    {'k1': RsaPublicKey(n=65537, e=65537)}
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Final, cast

from tsumugi_scheduler.access.token import AccessTokenError, RsaPublicKey, b64url_decode

__all__ = ["MAX_JWKS_BYTES", "MAX_KEYS", "FetchText", "JwksCache", "parse_jwks"]

MAX_KEYS: Final = 16
"""Keys kept from one document (Access publishes two: the current one and the previous one)."""
MAX_JWKS_BYTES: Final = 65_536
"""A larger document is refused rather than parsed."""

FetchText = Callable[[str], Awaitable[tuple[int, str]]]
"""GET ``url``, answering (status, body text)."""


def _key(raw: dict[str, Any]) -> tuple[str, RsaPublicKey] | None:
    kid, n, e = raw.get("kid"), raw.get("n"), raw.get("e")
    if raw.get("kty") != "RSA" or raw.get("use", "sig") != "sig" or raw.get("alg", "RS256") != "RS256":
        return None
    if not (isinstance(kid, str) and kid and isinstance(n, str) and isinstance(e, str)):
        return None
    try:
        modulus = int.from_bytes(b64url_decode(n, "n"), "big")
        exponent = int.from_bytes(b64url_decode(e, "e"), "big")
    except AccessTokenError:
        return None
    return kid, RsaPublicKey(n=modulus, e=exponent)


def parse_jwks(text: str) -> dict[str, RsaPublicKey]:
    """The RSA signing keys of a JWKS document by kid (others are skipped), at most `MAX_KEYS`.

    Raises:
        AccessTokenError: the document is too large or not ``{"keys": [...]}``.
    """
    if len(text) > MAX_JWKS_BYTES:
        raise AccessTokenError(f"JWKS must be at most {MAX_JWKS_BYTES} bytes")
    try:
        document: Any = json.loads(text)
    except (
        ValueError,
        RecursionError,
    ):  # an integer over 4,300 digits is a ValueError, not a JSONDecodeError
        raise AccessTokenError("JWKS must be JSON") from None
    keys: Any = cast("dict[str, Any]", document).get("keys") if isinstance(document, dict) else None
    if not isinstance(keys, list):
        raise AccessTokenError('JWKS must be an object with a "keys" list')
    found: dict[str, RsaPublicKey] = {}
    for raw in cast("list[Any]", keys):
        entry = _key(cast("dict[str, Any]", raw)) if isinstance(raw, dict) else None
        if entry is not None and len(found) < MAX_KEYS:
            found.setdefault(*entry)
    return found


class JwksCache:
    """The keys of one JWKS URL, fetched through ``fetch`` and kept ``ttl_ms``."""

    def __init__(self, url: str, *, fetch: FetchText, ttl_ms: int, refresh_floor_ms: int = 10_000) -> None:
        """Cache ``url``'s keys; an unknown kid refetches at most once per ``refresh_floor_ms``."""
        self.url = url
        self._fetch = fetch
        self._ttl_ms = ttl_ms
        self._refresh_floor_ms = refresh_floor_ms
        self._keys: dict[str, RsaPublicKey] = {}
        self._fetched_at: int | None = None
        self.fetches = 0
        """How many times the document was fetched (for the log and the tests)."""

    async def key(self, kid: str, *, now_ms: int) -> RsaPublicKey:
        """The key ``kid``: from the cache while fresh, else after one fetch.

        Raises:
            AccessTokenError: no such key after the allowed fetch, or the fetch failed.
        """
        if self._fetched_at is None or now_ms - self._fetched_at >= self._ttl_ms:
            await self._load(now_ms)
        found = self._keys.get(kid)
        if (
            found is None
            and self._fetched_at is not None
            and now_ms - self._fetched_at >= self._refresh_floor_ms
        ):
            await self._load(now_ms)  # a rotated key: Access published it after our last fetch
            found = self._keys.get(kid)
        if found is None:
            raise AccessTokenError(f"kid {kid[:64]!r} is not in the team's JWKS")
        return found

    async def _load(self, now_ms: int) -> None:
        self.fetches += 1
        self._fetched_at = now_ms  # a failed fetch counts too: the floor also bounds retries of a broken URL
        self._keys = {}
        try:
            status, text = await self._fetch(self.url)
        except Exception as exc:  # whatever the platform's fetch raises: the request is refused, not a 500
            raise AccessTokenError(f"JWKS fetch failed: {type(exc).__name__}: {exc}") from None
        if status != 200:
            raise AccessTokenError(f"JWKS fetch answered {status}")
        self._keys = parse_jwks(text)
