"""The scheduler Worker's REST API: the Starlette app of `tsumugi_scheduler.api`, made once per isolate.

Kept as the entry module's import point (``entry.py`` serves ``rest_app(definition)`` through
``workers.asgi.fetch``); the routes, auth and the OpenAPI document live in `tsumugi_scheduler.api`.
"""

from __future__ import annotations

from typing import Literal

from starlette.applications import Starlette

from tsumugi_scheduler.api import create_app
from tsumugi_scheduler.definition import TsumugiDefinition
from tsumugi_scheduler.identity import AuthScheme

__all__ = ["rest_app"]


def rest_app(
    definition: TsumugiDefinition,
    *,
    auth: AuthScheme | Literal["default", "definition"] | None = "definition",
) -> Starlette:
    """The ASGI app serving ``/api`` for ``definition``; ``auth=None`` turns the API off (404 everywhere).

    The auth is the definition's (``define_tsumugi(auth=...)``); its default reads the role tokens
    (``TSUMUGI_TOKEN`` is the admin's) as a bearer header or a dashboard session; without any of those
    secrets every ``/api`` request is refused with 401 (fail-closed).
    """
    return create_app(definition, auth=auth)
