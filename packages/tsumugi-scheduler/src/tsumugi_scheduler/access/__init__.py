"""Cloudflare Access: verifying its signed tokens (RS256 JWTs) in pure Python (ADR-0149, ADR-0150).

`token` decodes a token and checks its claims, `rsa_pkcs1` checks its signature, `jwks` keeps the team's keys.
"""

from tsumugi_scheduler.access.jwks import FetchText, JwksCache, parse_jwks
from tsumugi_scheduler.access.rsa_pkcs1 import verify_pkcs1_sha256
from tsumugi_scheduler.access.token import (
    AccessTokenError,
    ParsedToken,
    RsaPublicKey,
    check_claims,
    parse_token,
    verify_signature,
)

__all__ = [
    "AccessTokenError",
    "FetchText",
    "JwksCache",
    "ParsedToken",
    "RsaPublicKey",
    "check_claims",
    "parse_jwks",
    "parse_token",
    "verify_pkcs1_sha256",
    "verify_signature",
]
