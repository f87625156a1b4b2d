"""Cloudflare Access tokens: an RS256 JWT checked the way Access documents it (ADR-0150).

`parse_token` splits and decodes the three segments and refuses any header but ``alg: RS256`` with a
``kid``; `verify_signature` checks the signature with the key of that ``kid``; `check_claims` checks ``iss``
(``https://<team>.cloudflareaccess.com``), ``aud`` (a string or a list that must hold the application's
audience tag), ``exp`` (required, in the future) and ``nbf`` (when present, not in the future). Times are
seconds in the token and milliseconds here (``now_ms`` is passed in). Every refusal is an `AccessTokenError`
whose ``reason`` says which rule failed, for the Worker's log; the client only ever sees 401.

Example:
    >>> parse_token("a.b")
    Traceback (most recent call last):
    ...
    tsumugi_scheduler.access.token.AccessTokenError: token must have three segments
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from typing import Any, Final, cast

import msgspec

from tsumugi_core.exceptions import TsumugiError
from tsumugi_scheduler.access.rsa_pkcs1 import verify_pkcs1_sha256

__all__ = [
    "MAX_TOKEN_BYTES",
    "AccessTokenError",
    "ParsedToken",
    "RsaPublicKey",
    "b64url_decode",
    "check_claims",
    "parse_token",
    "verify_signature",
]

MAX_TOKEN_BYTES: Final = 16_384
"""A longer credential is refused before it is decoded (Access's tokens are about 1 KB)."""
_B64URL: Final = re.compile(r"[A-Za-z0-9_-]*")


class AccessTokenError(TsumugiError, ValueError):
    """A token failed a rule; ``reason`` names it (logged, never shown to the caller)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RsaPublicKey(msgspec.Struct, frozen=True, kw_only=True):
    """An RSA public key of a JWKS: modulus ``n`` and exponent ``e``."""

    n: int
    e: int


class ParsedToken(msgspec.Struct, frozen=True, kw_only=True):
    """A token's decoded parts; ``signing_input`` is ``<header>.<payload>`` as sent."""

    kid: str
    claims: dict[str, Any]
    signing_input: bytes
    signature: bytes


def b64url_decode(text: str, what: str) -> bytes:
    """Base64url without padding (RFC 7515 §2); anything else is an `AccessTokenError` naming ``what``."""
    if _B64URL.fullmatch(text) is None or len(text) % 4 == 1:
        raise AccessTokenError(f"{what} must be base64url without padding")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise AccessTokenError(f"{what} must be base64url without padding") from None


def _no_constant(name: str) -> Any:
    # json.loads would read NaN / Infinity as floats, and an exp of NaN or Infinity never expires.
    raise AccessTokenError(f"{name} is not JSON")


def _json_object(segment: str, what: str) -> dict[str, Any]:
    try:
        value: Any = json.loads(b64url_decode(segment, what), parse_constant=_no_constant)
    # ValueError: bad UTF-8 or JSON (NaN and Infinity included), and an integer over CPython's 4,300 digits.
    except (ValueError, RecursionError):
        raise AccessTokenError(f"{what} must be a JSON object") from None
    if not isinstance(value, dict):
        raise AccessTokenError(f"{what} must be a JSON object")
    return cast("dict[str, Any]", value)


def parse_token(token: str) -> ParsedToken:
    """Decode ``token``; its header must say ``alg: RS256`` and carry a ``kid``.

    Raises:
        AccessTokenError: a malformed token, another algorithm (``none`` and ``HS256`` included), no kid.
    """
    if len(token) > MAX_TOKEN_BYTES:
        raise AccessTokenError(f"token must be at most {MAX_TOKEN_BYTES} bytes")
    parts = token.split(".")
    if len(parts) != 3:
        raise AccessTokenError("token must have three segments")
    header = _json_object(parts[0], "header")
    if header.get("alg") != "RS256":
        raise AccessTokenError(f"header alg must be RS256, got {header.get('alg')!r}")
    kid = header.get("kid")
    if not isinstance(kid, str) or not kid:
        raise AccessTokenError("header kid is required")
    claims = _json_object(parts[1], "payload")
    signature = b64url_decode(parts[2], "signature")
    return ParsedToken(
        kid=kid, claims=claims, signing_input=f"{parts[0]}.{parts[1]}".encode(), signature=signature
    )


def verify_signature(parsed: ParsedToken, key: RsaPublicKey) -> None:
    """Check the RS256 signature with ``key``.

    Raises:
        AccessTokenError: ``signature does not verify``.
    """
    if not verify_pkcs1_sha256(n=key.n, e=key.e, message=parsed.signing_input, signature=parsed.signature):
        raise AccessTokenError("signature does not verify")


def _seconds(claims: dict[str, Any], name: str) -> float | None:
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise AccessTokenError(f"{name} must be a number of seconds")
    try:
        seconds = float(value)
    except OverflowError:  # an integer past a double's range
        raise AccessTokenError(f"{name} must be a number of seconds") from None
    if not math.isfinite(seconds):
        raise AccessTokenError(f"{name} must be a number of seconds")
    return seconds


def check_claims(claims: dict[str, Any], *, issuer: str, audience: str, now_ms: int) -> None:
    """Check ``iss``, ``aud``, ``exp`` and ``nbf`` against the configuration and ``now_ms``.

    Raises:
        AccessTokenError: the first rule that fails.
    """
    if claims.get("iss") != issuer:
        raise AccessTokenError(f"iss must be {issuer}")
    aud: Any = claims.get("aud")
    audiences = cast("list[Any]", aud) if isinstance(aud, list) else [aud]
    if audience not in [a for a in audiences if isinstance(a, str)]:
        raise AccessTokenError("aud must hold this application's audience tag")
    now_s = now_ms / 1000
    exp = _seconds(claims, "exp")
    if exp is None:
        raise AccessTokenError("exp is required")
    if exp <= now_s:
        raise AccessTokenError("token has expired (exp)")
    nbf = _seconds(claims, "nbf")
    if nbf is not None and nbf > now_s:
        raise AccessTokenError("token is not valid yet (nbf)")
