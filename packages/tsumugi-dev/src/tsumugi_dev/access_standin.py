"""The local runtime playing Cloudflare Access (``tsumugi dev --access``, ADR-0152).

Access does two things a Worker sees: it signs a signed-in user's identity into a token (an RS256 JWT, in the
``CF_Authorization`` cookie and the ``Cf-Access-Jwt-Assertion`` header), and it publishes the team's public
keys at ``https://<team>.cloudflareaccess.com/cdn-cgi/access/certs``. The stand-in does both on 127.0.0.1
with a key of its own made at start: ``/cdn-cgi/access/login?email=...&groups=a,b`` sets the cookie (a host's
cookies reach every port of it, so the scheduler's port receives it) and redirects to the dashboard,
``/cdn-cgi/access/logout`` clears it, and ``/cdn-cgi/access/certs`` serves the JWKS. `route_team_fetches`
sends the Worker's fetches of the team's URLs there, so the scheduler's code runs unchanged: it fetches the
real URL and verifies as it would on Cloudflare.

The RSA key is generated here in pure Python (Miller-Rabin primes from `secrets`), and tokens are signed with
``m ** d mod n`` over the EMSA-PKCS1-v1_5 encoding; nothing of it is used but for local testing.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import secrets
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec
from jsemu.network import REWRITES

__all__ = [
    "DEV_AUD",
    "DEV_TEAM",
    "AccessStandIn",
    "RsaKey",
    "generate_rsa_key",
    "route_team_fetches",
    "sign_rs256",
    "stop_routing_team_fetches",
]

DEV_TEAM: Final = "tsumugi-dev"
"""The team the stand-in plays unless told another (its issuer is https://tsumugi-dev.cloudflareaccess.com)."""
DEV_AUD: Final = "tsumugi-dev-local-audience"
"""The audience tag it signs for unless told another."""
_DIGEST_INFO: Final = bytes.fromhex("3031300d060960864801650304020105000420")
_SMALL_PRIMES: Final = [p for p in range(3, 2000, 2) if all(p % q for q in range(3, math.isqrt(p) + 1, 2))]


def _probable_prime(n: int, rounds: int = 40) -> bool:
    if any(n % p == 0 for p in _SMALL_PRIMES):
        return n in _SMALL_PRIMES
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for _ in range(rounds):
        x = pow(secrets.randbelow(n - 3) + 2, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def _prime(bits: int, e: int) -> int:
    while True:
        candidate = secrets.randbits(bits) | (3 << (bits - 2)) | 1  # top two bits set: n has exactly 2*bits
        if math.gcd(candidate - 1, e) == 1 and _probable_prime(candidate):
            return candidate


class RsaKey(msgspec.Struct, frozen=True, kw_only=True):
    """An RSA key pair: modulus ``n``, public exponent ``e``, private exponent ``d``, and its ``kid``."""

    kid: str
    n: int
    e: int
    d: int

    def jwk(self) -> dict[str, str]:
        """The public half as a JWK, as Access publishes it."""
        return {
            "kid": self.kid,
            "kty": "RSA",
            "alg": "RS256",
            "use": "sig",
            "e": _b64(_bytes(self.e)),
            "n": _b64(_bytes(self.n)),
        }


def generate_rsa_key(bits: int = 2048, e: int = 65537, kid: str | None = None) -> RsaKey:
    """A fresh key of ``bits`` bits (about a second in CPython for 2048)."""
    while True:
        p, q = _prime(bits // 2, e), _prime(bits // 2, e)
        if p != q:
            break
    d = pow(e, -1, math.lcm(p - 1, q - 1))
    return RsaKey(kid=kid or secrets.token_hex(16), n=p * q, e=e, d=d)


def _bytes(value: int) -> bytes:
    return value.to_bytes((value.bit_length() + 7) // 8, "big")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def sign_rs256(key: RsaKey, claims: Mapping[str, Any], header: Mapping[str, Any] | None = None) -> str:
    """A compact JWT of ``claims`` signed with ``key`` (header ``alg: RS256`` and its ``kid`` unless given)."""
    head = {"alg": "RS256", "kid": key.kid, "typ": "JWT"} if header is None else dict(header)
    signing_input = f"{_b64(json.dumps(head).encode())}.{_b64(json.dumps(dict(claims)).encode())}"
    k = (key.n.bit_length() + 7) // 8
    t = _DIGEST_INFO + hashlib.sha256(signing_input.encode()).digest()
    encoded = b"\x00\x01" + b"\xff" * (k - len(t) - 3) + b"\x00" + t
    signature = pow(int.from_bytes(encoded, "big"), key.d, key.n).to_bytes(k, "big")
    return f"{signing_input}.{_b64(signature)}"


class AccessStandIn:
    """A team's Access: its key, its issuer, and the tokens it signs for ``aud``."""

    def __init__(self, *, team: str = DEV_TEAM, aud: str = DEV_AUD, key: RsaKey | None = None) -> None:
        """Play ``team`` for the application ``aud`` with ``key`` (a fresh 2048-bit one by default)."""
        self.team = team
        self.aud = aud
        self.key = key or generate_rsa_key()
        self.issuer = f"https://{team}.cloudflareaccess.com"

    def token_for(
        self, email: str, *, groups: Sequence[str] = (), now_s: int | None = None, ttl_s: int = 86_400
    ) -> str:
        """A token for ``email`` as Access issues one after a sign-in (``groups`` as a custom claim)."""
        now = int(time.time()) if now_s is None else now_s
        claims: dict[str, Any] = {
            "aud": [self.aud],
            "email": email,
            "exp": now + ttl_s,
            "iat": now,
            "nbf": now,
            "iss": self.issuer,
            "type": "app",
            "sub": _b64(email.encode()),
            "identity_nonce": secrets.token_hex(8),
            "country": "XX",
        }
        if groups:
            claims["groups"] = list(groups)
        return sign_rs256(self.key, claims)

    def jwks(self) -> str:
        """The certs document: ``{"keys": [jwk], "public_cert": ..., "public_certs": [...]}`` (keys only here)."""
        return json.dumps({"keys": [self.key.jwk()]})

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """The stand-in's HTTP endpoints (ASGI)."""
        if scope["type"] != "http":
            return
        path = scope["path"]
        query = dict(urllib.parse.parse_qsl(scope.get("query_string", b"").decode()))
        if path == "/cdn-cgi/access/certs":
            await _answer(send, 200, self.jwks().encode(), [(b"content-type", b"application/json")])
        elif path == "/cdn-cgi/access/login" and query.get("email"):
            groups = [g for g in query.get("groups", "").split(",") if g]
            token = self.token_for(query["email"], groups=groups)
            target = query.get("redirect_url", "/")
            headers = [
                (b"set-cookie", f"CF_Authorization={token}; Path=/; HttpOnly; SameSite=Lax".encode()),
                (b"location", target.encode()),
                (b"content-type", b"text/plain"),
            ]
            await _answer(send, 302, f"signed in as {query['email']}\n".encode(), headers)
        elif path == "/cdn-cgi/access/logout":
            headers = [(b"set-cookie", b"CF_Authorization=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax")]
            await _answer(send, 200, b"signed out\n", headers)
        else:
            text = b"login: /cdn-cgi/access/login?email=you@example.com&groups=a,b&redirect_url=http://...\n"
            await _answer(send, 404, text, [(b"content-type", b"text/plain")])


async def _answer(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def route_team_fetches(team: str, base_url: str) -> None:
    """Send the Workers' fetches of ``https://<team>.cloudflareaccess.com/...`` to the stand-in at ``base_url``."""
    REWRITES[:] = [r for r in REWRITES if not isinstance(r, _TeamRoute)]
    REWRITES.append(_TeamRoute(f"https://{team}.cloudflareaccess.com/", base_url.rstrip("/") + "/"))


def stop_routing_team_fetches() -> None:
    """Undo `route_team_fetches`."""
    REWRITES[:] = [r for r in REWRITES if not isinstance(r, _TeamRoute)]


class _TeamRoute:
    def __init__(self, prefix: str, target: str) -> None:
        self.prefix = prefix
        self.target = target

    def __call__(self, url: str) -> str | None:
        return self.target + url.removeprefix(self.prefix) if url.startswith(self.prefix) else None
