"""``tsumugi dev --access``: the scheduler signs in through the local Access stand-in (ADR-0152).

The stand-in (`tsumugi_dev.access_standin`) is served on its own port of 127.0.0.1; the scheduler (the first
Worker) gets the vars ``TSUMUGI_ACCESS_TEAM`` and ``TSUMUGI_ACCESS_AUD`` naming the stand-in's team and audience,
and the Workers' fetches of ``https://<team>.cloudflareaccess.com/...`` reach the stand-in. A scheduler
defined with ``cloudflare_access()`` (which reads those vars) then verifies the stand-in's tokens exactly as
it verifies Access's on Cloudflare.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from tsumugi_dev.access_standin import AccessStandIn, route_team_fetches, stop_routing_team_fetches
from tsumugi_dev.config import WorkerConfig
from tsumugi_dev.http_server import AppServer

__all__ = ["AUD_VAR", "TEAM_VAR", "AccessDev"]

TEAM_VAR = "TSUMUGI_ACCESS_TEAM"
AUD_VAR = "TSUMUGI_ACCESS_AUD"


class AccessDev:
    """The stand-in, its server, and the configuration it gives the scheduler."""

    def __init__(self, stand_in: AccessStandIn | None = None, port: int = 0) -> None:
        """Play Access with ``stand_in`` (a fresh key by default) on ``port`` (0: a free one)."""
        self.stand_in = stand_in or AccessStandIn()
        self._server = AppServer(self.stand_in, port)

    @property
    def url(self) -> str:
        """The stand-in's base URL (known after `start`)."""
        return self._server.url

    def configure(self, configs: Sequence[WorkerConfig]) -> list[WorkerConfig]:
        """``configs`` with the team and audience vars given to the scheduler (the first Worker)."""
        access_vars = {TEAM_VAR: self.stand_in.team, AUD_VAR: self.stand_in.aud}
        return [
            msgspec.structs.replace(c, vars={**c.vars, **access_vars}) if i == 0 else c
            for i, c in enumerate(configs)
        ]

    def login_url(self, email: str, groups: Sequence[str] = (), redirect_url: str = "") -> str:
        """Where a browser signs in as ``email`` (with ``groups``), then goes to ``redirect_url``."""
        from urllib.parse import urlencode

        query = {
            "email": email,
            **({"groups": ",".join(groups)} if groups else {}),
            **({"redirect_url": redirect_url} if redirect_url else {}),
        }
        return f"{self.url}/cdn-cgi/access/login?{urlencode(query)}"

    async def start(self) -> None:
        """Serve the stand-in and route the team's URLs to it."""
        await self._server.start()
        route_team_fetches(self.stand_in.team, self.url)

    async def stop(self) -> None:
        """Stop serving and routing."""
        stop_routing_team_fetches()
        await self._server.stop()
