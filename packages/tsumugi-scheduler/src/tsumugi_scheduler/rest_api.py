"""The scheduler Worker's REST API: the Starlette app of `tsumugi_scheduler.api`, made once per isolate.

Kept as the entry module's import point (``entry.py`` serves ``rest_app(definition)`` through
``workers.asgi.fetch``); the routes, auth and the OpenAPI document live in `tsumugi_scheduler.api`.
"""

from __future__ import annotations

from starlette.applications import Starlette

from tsumugi_scheduler.api import DEFAULT_AUTH, BearerAuth, create_app
from tsumugi_scheduler.definition import TsumugiDefinition

__all__ = ["rest_app"]


def rest_app(definition: TsumugiDefinition, *, auth: BearerAuth | None = DEFAULT_AUTH) -> Starlette:
    """The ASGI app serving ``/api`` for ``definition``; ``auth=None`` turns the API off (404 everywhere).

    The default auth reads the bearer token (or the ``tsumugi_token`` cookie) against the Worker secret
    ``TSUMUGI_TOKEN``; without that secret every ``/api`` request is refused with 401 (fail-closed).
    """
    return create_app(definition, auth=auth)
