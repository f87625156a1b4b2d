"""How people and programs sign in: the ``auth=`` of ``define_tsumugi`` (ADR-0151).

* `bearer_tokens()`: one token per role in the Worker's secrets (the default; ``TSUMUGI_TOKEN`` is the admin's);
* `cloudflare_access(...)`: the deployment sits behind Cloudflare Access, which signs the user in; roles come
  from the ``email`` claim or a group claim;
* `custom_auth(fn)`: your callable gets the request (a Starlette ``Request``, the env in
  ``request.scope["env"]``) and returns an `Identity`, or None to refuse (it may be async);
* a list of these: tried in order, the first that admits the request decides;
* ``auth=None``: no sign-in at all, so the API and dashboard answer 404 everywhere (fail-closed).

Example:
    >>> access = cloudflare_access(team="acme", aud="4714c1358e65fe4b408ad6d432a5f878f08194bdb4752441fd56faefa9b2b6f2",
    ...                            roles={"operator": {"groups": ["sre"]}, "admin": {"emails": ["ada@acme.dev"]}},
    ...                            default_role="viewer")
    >>> access.roles.role_of({"email": "Ada@acme.dev"}), access.roles.role_of({"groups": ["sre"]})
    (<Role.ADMIN: 'admin'>, <Role.OPERATOR: 'operator'>)
    >>> cloudflare_access(team="acme.example.com", aud="x")
    Traceback (most recent call last):
    ...
    tsumugi_scheduler.definition.DefinitionError: auth.team must be a team name such as "acme" or acme.cloudflareaccess.com, got 'acme.example.com'
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

from starlette.requests import Request

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.time_values import Duration, duration_ms
from tsumugi_scheduler.access.jwks import FetchText
from tsumugi_scheduler.access.scheme import DEFAULT_JWKS_TTL_MS, AccessRoles, CloudflareAccess, normalise_team
from tsumugi_scheduler.api.auth import BearerAuth
from tsumugi_scheduler.api.session import SESSION_TTL_MS
from tsumugi_scheduler.definition import DefinitionError
from tsumugi_scheduler.identity import ROLE_NAMES, AnyOf, AuthScheme, Identity, Role

__all__ = [
    "AnyOf",
    "AuthScheme",
    "CustomAuth",
    "Identity",
    "Role",
    "bearer_tokens",
    "cloudflare_access",
    "custom_auth",
]

_log = logging.getLogger("tsumugi_scheduler.api")
IdentifyFn = Callable[[Request], "Identity | Awaitable[Identity | None] | None"]


def _var(option: str, value: object, *, optional: bool) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.isidentifier():
        raise DefinitionError(option, f"must be the name of a Worker secret or var, got {value!r}")
    return value


def _in_ms(option: str, value: object) -> object:
    try:
        return duration_ms(option, value)
    except InvalidFieldError as exc:
        raise DefinitionError(option, exc.rule) from None


def bearer_tokens(
    *,
    admin: str = "TSUMUGI_TOKEN",
    operator: str | None = "TSUMUGI_OPERATOR_TOKEN",
    viewer: str | None = "TSUMUGI_VIEWER_TOKEN",
    cookie: str | None = "tsumugi_token",
    session_ttl_ms: Duration = SESSION_TTL_MS,
) -> BearerAuth:
    """Tokens per role, each the name of a Worker secret (None: that role has no token).

    Raises:
        DefinitionError: a name that is not an identifier (``auth.operator must be the name of ...``).
    """
    session_ttl_ms = cast("int", _in_ms("auth.session_ttl_ms", session_ttl_ms))
    admin_var = _var("auth.admin", admin, optional=False)
    assert admin_var is not None
    if cookie is not None and (not isinstance(cookie, str) or not cookie.isidentifier()):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise DefinitionError("auth.cookie", f"must be a cookie name (letters, digits, _), got {cookie!r}")
    if isinstance(session_ttl_ms, bool) or not isinstance(session_ttl_ms, int) or session_ttl_ms < 60_000:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise DefinitionError(
            "auth.session_ttl_ms", f"must be an integer of at least 60000, got {session_ttl_ms!r}"
        )
    return BearerAuth(
        token_var=admin_var,
        operator_token_var=_var("auth.operator", operator, optional=True),
        viewer_token_var=_var("auth.viewer", viewer, optional=True),
        cookie=cookie,
        session_ttl_ms=session_ttl_ms,
    )


def _role(option: str, value: object) -> Role:
    if value not in ROLE_NAMES:
        raise DefinitionError(option, f"must be one of {', '.join(ROLE_NAMES)}, got {value!r}")
    return Role(cast("str", value))


def _names(option: str, value: object) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise DefinitionError(option, f"must be a list of strings, got {value!r}")
    items = cast("Sequence[object]", value)
    for i, item in enumerate(items):
        if not isinstance(item, str) or not item.strip():
            raise DefinitionError(f"{option}[{i}]", f"must be a non-empty string, got {item!r}")
    return [cast("str", item).strip() for item in items]


def _access_roles(roles: Mapping[str, Any] | None, default_role: str | None, group_claim: str) -> AccessRoles:
    emails: dict[str, Role] = {}
    groups: dict[str, Role] = {}
    if roles is not None and not isinstance(roles, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise DefinitionError(
            "auth.roles", f"must map a role to {{'emails': [...], 'groups': [...]}}, got {roles!r}"
        )
    for name, rule in (roles or {}).items():
        role = _role(f"auth.roles.{name}", name)
        if not isinstance(rule, Mapping):
            raise DefinitionError(
                f"auth.roles.{name}", f"must be {{'emails': [...], 'groups': [...]}}, got {rule!r}"
            )
        for key, value in cast("Mapping[object, object]", rule).items():
            if key not in ("emails", "groups"):
                raise DefinitionError(f"auth.roles.{name}.{key}", "is not a known option (emails, groups)")
            target = emails if key == "emails" else groups
            for item in _names(f"auth.roles.{name}.{key}", value):
                key_of = item.lower() if key == "emails" else item
                if target.get(key_of, role).rank <= role.rank:  # listed twice: the higher role holds
                    target[key_of] = role
    default = None if default_role is None else _role("auth.default_role", default_role)
    if not isinstance(group_claim, str) or not group_claim:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise DefinitionError("auth.group_claim", f"must be a claim name, got {group_claim!r}")
    return AccessRoles(emails=emails, groups=groups, default=default, group_claim=group_claim)


def cloudflare_access(
    team: str | None = None,
    aud: str | None = None,
    *,
    roles: Mapping[str, Any] | None = None,
    default_role: str | None = None,
    group_claim: str = "groups",
    team_var: str = "TSUMUGI_ACCESS_TEAM",
    aud_var: str = "TSUMUGI_ACCESS_AUD",
    cache_ttl_ms: Duration = DEFAULT_JWKS_TTL_MS,
    fetch: FetchText | None = None,
) -> CloudflareAccess:
    """Sign-in through Cloudflare Access.

    Args:
        team: The team name (``acme`` of ``acme.cloudflareaccess.com``); None reads the var ``team_var``.
        aud: The Access application's audience tag; None reads the var ``aud_var``.
        roles: ``{"viewer" | "operator" | "admin": {"emails": [...], "groups": [...]}}``.
        default_role: The role of anyone else Access let in; None: no role (403 everywhere).
        group_claim: The claim holding the user's groups (add it in Access as an OIDC claim).
        team_var: The Worker var read when ``team`` is None.
        aud_var: The Worker var read when ``aud`` is None.
        cache_ttl_ms: How long the team's keys are kept (at least 60000 ms; or a `timedelta`).
        fetch: How the JWKS is fetched (default: the Worker's ``fetch``); tests pass their own.

    Raises:
        DefinitionError: an option breaks a rule; the message names it (``auth.team ...``).
    """
    if team is not None and (not isinstance(team, str) or normalise_team(team) is None):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise DefinitionError(
            "auth.team", f'must be a team name such as "acme" or acme.cloudflareaccess.com, got {team!r}'
        )
    if aud is not None and (not isinstance(aud, str) or not aud.strip()):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise DefinitionError("auth.aud", f"must be the Access application's audience tag, got {aud!r}")
    cache_ttl_ms = cast("int", _in_ms("auth.cache_ttl_ms", cache_ttl_ms))
    if isinstance(cache_ttl_ms, bool) or not isinstance(cache_ttl_ms, int) or cache_ttl_ms < 60_000:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise DefinitionError(
            "auth.cache_ttl_ms", f"must be an integer of at least 60000, got {cache_ttl_ms!r}"
        )
    team_name = _var("auth.team_var", team_var, optional=False)
    aud_name = _var("auth.aud_var", aud_var, optional=False)
    assert team_name is not None
    assert aud_name is not None
    return CloudflareAccess(
        team=None if team is None else normalise_team(team),
        aud=None if aud is None else aud.strip(),
        roles=_access_roles(roles, default_role, group_claim),
        team_var=team_name,
        aud_var=aud_name,
        cache_ttl_ms=cache_ttl_ms,
        fetch=fetch,
    )


class CustomAuth(AuthScheme):
    """Your callable decides: it gets the request and answers an `Identity` or None."""

    def __init__(self, identify: IdentifyFn) -> None:
        """Call ``identify`` for every request."""
        self.identify = identify

    async def admit(
        self, env: Any, headers: Mapping[str, str], scope: Mapping[str, Any], *, now_ms: int
    ) -> Identity | None:
        """What the callable answers; anything but an `Identity` (or an exception) refuses."""
        try:
            answer: Any = self.identify(Request(dict(scope)))
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception:
            _log.exception("the auth callable raised: request refused")
            return None
        if answer is not None and not isinstance(answer, Identity):
            _log.error(
                "the auth callable answered %s, not an Identity or None: request refused",
                type(answer).__name__,
            )
            return None
        return answer


def custom_auth(identify: IdentifyFn) -> CustomAuth:
    """Sign-in decided by ``identify(request) -> Identity | None`` (sync or async).

    Raises:
        DefinitionError: ``auth`` is not callable.
    """
    if not callable(identify):
        raise DefinitionError("auth", f"must be callable, got {type(identify).__name__}")
    return CustomAuth(identify)
