"""`CloudflareAccess`: the sign-in of a deployment behind Cloudflare Access (docs/reference/original.md §2.12, ADR-0150).

Access sits in front of the Worker: it signs the user in with the team's identity provider and then sends each
request on with a signed token, in the ``Cf-Access-Jwt-Assertion`` header and the ``CF_Authorization``
cookie. The Worker must still verify it (a request may reach the ``workers.dev`` URL or a route Access does not
cover): RS256 with a key of the team's JWKS, issuer ``https://<team>.cloudflareaccess.com``, the application's
audience tag, ``exp`` and ``nbf``. The verified claims stay on the identity; the role comes from the ``email``
claim or a group claim, as configured. The team domain and audience tag may be given in code or read from the
Worker's vars per request (``TSUMUGI_ACCESS_TEAM``, ``TSUMUGI_ACCESS_AUD``); when neither is set, every
request is refused.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, cast

from tsumugi_scheduler.access.jwks import FetchText, JwksCache
from tsumugi_scheduler.access.token import AccessTokenError, check_claims, parse_token, verify_signature
from tsumugi_scheduler.cookies import cookie_values
from tsumugi_scheduler.identity import AuthScheme, Identity, Role

__all__ = [
    "ACCESS_COOKIE",
    "ACCESS_HEADER",
    "DEFAULT_JWKS_TTL_MS",
    "VERIFIED_KEPT",
    "AccessRoles",
    "CloudflareAccess",
    "normalise_team",
    "team_urls",
]

ACCESS_HEADER: Final = "cf-access-jwt-assertion"
ACCESS_COOKIE: Final = "CF_Authorization"
VERIFIED_KEPT: Final = 256
"""Tokens whose signature was verified, kept per isolate (a hash of each) so that a repeat costs no RSA."""
DEFAULT_JWKS_TTL_MS: Final = 3_600_000
"""The team's keys are kept an hour (the original's default), and refetched sooner for a new kid."""
_TEAM: Final = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_log = logging.getLogger("tsumugi_scheduler.api")


def normalise_team(value: str) -> str | None:
    """The team name of ``myteam``, ``myteam.cloudflareaccess.com`` or ``https://myteam.cloudflareaccess.com``.

    Example:
        >>> normalise_team("https://Acme.cloudflareaccess.com/"), normalise_team("a/b")
        ('acme', None)
    """
    text = value.strip().lower().removeprefix("https://").rstrip("/").removesuffix(".cloudflareaccess.com")
    return text if _TEAM.fullmatch(text) else None


def team_urls(team: str) -> tuple[str, str]:
    """``(issuer, JWKS URL)`` of a team."""
    issuer = f"https://{team}.cloudflareaccess.com"
    return issuer, f"{issuer}/cdn-cgi/access/certs"


@dataclass(frozen=True, kw_only=True)
class AccessRoles:
    """Who gets which role: by ``email`` claim (case-insensitive) or by a name in the group claim.

    The highest role any rule gives wins; ``default`` is the role of anyone else Access let in (None: no
    role, so every route answers 403).
    """

    emails: Mapping[str, Role] = field(default_factory=dict[str, Role])
    groups: Mapping[str, Role] = field(default_factory=dict[str, Role])
    default: Role | None = None
    group_claim: str = "groups"

    def role_of(self, claims: Mapping[str, Any]) -> Role | None:
        """The role the claims earn."""
        found: list[Role] = [] if self.default is None else [self.default]
        email = claims.get("email")
        if isinstance(email, str) and email.lower() in self.emails:
            found.append(self.emails[email.lower()])
        raw: Any = claims.get(self.group_claim)
        groups = cast("list[Any]", raw) if isinstance(raw, list) else [raw]
        found += [self.groups[g] for g in groups if isinstance(g, str) and g in self.groups]
        return max(found, key=lambda r: r.rank, default=None)


def _name_of(claims: Mapping[str, Any]) -> str:
    # A person has an email; a service token has its client id as common_name.
    for key in ("email", "common_name", "sub"):
        value = claims.get(key)
        if isinstance(value, str) and value:
            return value
    return "unknown"


class CloudflareAccess(AuthScheme):
    """Verify Access's token and map its claims to a role (make it with `tsumugi_scheduler.sign_in`)."""

    def __init__(
        self,
        *,
        team: str | None,
        aud: str | None,
        roles: AccessRoles,
        team_var: str = "TSUMUGI_ACCESS_TEAM",
        aud_var: str = "TSUMUGI_ACCESS_AUD",
        cache_ttl_ms: int = DEFAULT_JWKS_TTL_MS,
        fetch: FetchText | None = None,
    ) -> None:
        """Hold already validated settings; ``fetch`` defaults to the Worker's ``fetch``."""
        self.team = team
        self.aud = aud
        self.roles = roles
        self.team_var = team_var
        self.aud_var = aud_var
        self.cache_ttl_ms = cache_ttl_ms
        self._fetch = fetch
        self._caches: dict[str, JwksCache] = {}
        self._verified: OrderedDict[bytes, tuple[int, str, dict[str, Any]]] = OrderedDict()

    def settings(self, env: Any) -> tuple[str, str] | None:
        """``(team, audience tag)`` from the code, else from the Worker's vars; None when either is missing."""
        team_text = self.team if self.team is not None else getattr(env, self.team_var, None)
        aud = self.aud if self.aud is not None else getattr(env, self.aud_var, None)
        team = normalise_team(team_text) if isinstance(team_text, str) else None
        if team is None or not isinstance(aud, str) or not aud.strip():
            return None
        return team, aud.strip()

    def jwks(self, team: str) -> JwksCache:
        """The key cache of ``team`` (one per team, kept for the isolate)."""
        cache = self._caches.get(team)
        if cache is None:
            if self._fetch is None:
                from tsumugi_scheduler._runtime import get_text  # the Worker's fetch, on first use

                self._fetch = get_text
            cache = JwksCache(team_urls(team)[1], fetch=self._fetch, ttl_ms=self.cache_ttl_ms)
            self._caches = {team: cache}  # one team per deployment: a changed var replaces, never accumulates
        return cache

    async def verify(self, token: str, env: Any, *, now_ms: int) -> dict[str, Any]:
        """The claims of a valid token.

        Raises:
            AccessTokenError: the token, or the configuration, fails a rule.
        """
        settings = self.settings(env)
        if settings is None:
            raise AccessTokenError(f"no Access team and audience: set {self.team_var} and {self.aud_var}")
        team, aud = settings
        digest = hashlib.sha256(f"{team}\n{token}".encode()).digest()
        seen = self._verified.get(digest)
        if seen is not None and now_ms - seen[0] < self.cache_ttl_ms:
            # The signature of this very token was checked (the dashboard sends the same one every few
            # seconds); its claims are checked again, as time moves.
            claims = seen[2]
        else:
            parsed = parse_token(token)
            verify_signature(parsed, await self.jwks(team).key(parsed.kid, now_ms=now_ms))
            claims = parsed.claims
        check_claims(claims, issuer=team_urls(team)[0], audience=aud, now_ms=now_ms)
        if seen is None:
            self._verified[digest] = (now_ms, team, claims)
            while len(self._verified) > VERIFIED_KEPT:
                self._verified.popitem(last=False)
        return claims

    async def admit(
        self, env: Any, headers: Mapping[str, str], scope: Mapping[str, Any], *, now_ms: int
    ) -> Identity | None:
        """The identity of the Access token the request carries (header first, then cookie)."""
        token = headers.get(ACCESS_HEADER) or next(
            cookie_values(headers.get("cookie", ""), ACCESS_COOKIE), None
        )
        if not token:
            return None
        try:
            claims = await self.verify(token.strip(), env, now_ms=now_ms)
        except AccessTokenError as exc:
            _log.warning("Access token refused: %s", exc.reason)
            return None
        except Exception:
            # Fail closed: a token the checks above did not foresee is refused, never a 500 (ADR-0150).
            _log.exception("Access token refused: its verification failed unexpectedly")
            return None
        return Identity(name=_name_of(claims), role=self.roles.role_of(claims), via="access", claims=claims)
