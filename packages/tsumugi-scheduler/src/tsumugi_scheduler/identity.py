"""Who a request is and what it may do: `Role`, `Identity`, and the `AuthScheme` every sign-in method is.

Three roles, each allowing what the one before it does (ADR-0151): ``viewer`` reads everything; ``operator``
also cancels, retries, reschedules, pauses, triggers, starts runs and enqueues; ``admin`` also changes
policies and schedules and deletes. Every route of the REST API declares the role it needs
(`tsumugi_scheduler.api.operations`).

Example:
    >>> Role.OPERATOR.allows(Role.VIEWER), Role.VIEWER.allows(Role.OPERATOR)
    (True, False)
    >>> Identity(name="ada@example.com", role=Role.ADMIN, via="access").may(Role.OPERATOR)
    True
    >>> Identity(name="nobody@example.com", role=None, via="access").may(Role.VIEWER)
    False
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, TypeVar

import msgspec

__all__ = ["ROLE_NAMES", "AnyOf", "AuthScheme", "Identity", "Role", "Via"]


S = TypeVar("S", bound="AuthScheme")


class Role(enum.StrEnum):
    """What an identity may do; each role allows everything the lower ones do."""

    VIEWER = "viewer"
    OPERATOR = "operator"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        """0 for viewer, 1 for operator, 2 for admin."""
        return _RANKS[self]

    def allows(self, needed: Role) -> bool:
        """True when this role may do what ``needed`` may."""
        return self.rank >= needed.rank


_RANKS: Final = {Role.VIEWER: 0, Role.OPERATOR: 1, Role.ADMIN: 2}
ROLE_NAMES: Final = tuple(r.value for r in Role)
"""The roles' names, lowest first."""

Via = Literal["token", "session", "access", "custom"]
"""How the request proved who it is: a bearer token, the dashboard's token session, Access, your callable."""


class Identity(msgspec.Struct, frozen=True, kw_only=True):
    """The signed-in caller.

    Attributes:
        name: What the changes it makes are recorded under: an email, a token's name, or your callable's.
        role: Its role; None when it proved who it is but no role is configured for it (every route is 403).
        via: How it signed in.
        claims: The verified token's claims (Access), or what your callable put there.
    """

    name: str
    role: Role | None
    via: Via = "custom"
    claims: Mapping[str, Any] = msgspec.field(default_factory=dict[str, Any])

    def may(self, needed: Role) -> bool:
        """True when this identity's role allows ``needed``."""
        return self.role is not None and self.role.allows(needed)

    @property
    def ambient(self) -> bool:
        """True when the browser sends the credential by itself (a cookie, or Access's header added at the edge).

        Such requests get the cross-origin and JSON checks of cookie sessions (ADR-0064); only a bearer token,
        which a page must attach on purpose, is exempt.
        """
        return self.via != "token"


class AuthScheme(abc.ABC):
    """A way of signing in: `admit` answers the request's identity, or None to refuse it (401)."""

    @abc.abstractmethod
    async def admit(
        self, env: Any, headers: Mapping[str, str], scope: Mapping[str, Any], *, now_ms: int
    ) -> Identity | None:
        """The identity the request proves; None when it proves none (fail-closed on any doubt)."""

    @property
    def token_cookie(self) -> str | None:
        """The dashboard's session cookie when this scheme lets the page sign in with a token; else None."""
        return None

    def find(self, kind: type[S]) -> S | None:
        """This scheme, or the first of its parts, that is a ``kind``; None when there is none."""
        return self if isinstance(self, kind) else None


class AnyOf(AuthScheme):
    """Several schemes, tried in order: the first that admits the request decides."""

    def __init__(self, schemes: Sequence[AuthScheme]) -> None:
        """Try ``schemes`` in order."""
        self.schemes = tuple(schemes)

    @property
    def token_cookie(self) -> str | None:
        """The first scheme's token cookie that has one."""
        return next((s.token_cookie for s in self.schemes if s.token_cookie is not None), None)

    def find(self, kind: type[S]) -> S | None:
        """The first part that is a ``kind``."""
        return next((found for s in self.schemes if (found := s.find(kind)) is not None), None)

    async def admit(
        self, env: Any, headers: Mapping[str, str], scope: Mapping[str, Any], *, now_ms: int
    ) -> Identity | None:
        """The first identity any scheme admits."""
        for scheme in self.schemes:
            found = await scheme.admit(env, headers, scope, now_ms=now_ms)
            if found is not None:
                return found
        return None
