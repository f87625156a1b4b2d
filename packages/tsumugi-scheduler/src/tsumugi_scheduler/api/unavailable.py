"""Routes of features that do not exist yet (starting and steering runs): 501 with the original's texts.

They are in the route table and the OpenAPI document already, so clients can detect the feature by status
and the document does not change when the features arrive (docs/reference/original.md §4, "the document does
not vary").
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from tsumugi_scheduler.api.answers import json_response

__all__ = ["run_control_unavailable", "run_creation_unavailable"]


async def run_creation_unavailable(request: Request) -> Response:
    """``POST /api/runs``."""
    return json_response(501, {"error": "run creation is not available"})


async def run_control_unavailable(request: Request) -> Response:
    """``POST /api/runs/{id}/retry``, ``POST /api/runs/{id}/cancel``."""
    return json_response(501, {"error": "run control is not available"})
