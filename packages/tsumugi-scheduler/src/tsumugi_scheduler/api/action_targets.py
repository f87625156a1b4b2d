"""What a state change changed, as the action log names it: from the path, or from the answer (ADR-0151).

A job or run id from ``{id}``, ``binding:<name>`` from ``{binding}``, ``schedule:<name>`` from ``{name}``; a
bulk action lists the ids it changed (its answer's ``ok``); a new schedule or run is named by its answer.
"""

from __future__ import annotations

import json
from typing import Any, cast

from starlette.requests import Request
from starlette.responses import Response

from tsumugi_scheduler.api.operations import Operation

__all__ = ["changed_targets"]


def _answer_json(answer: Response) -> dict[str, Any]:
    try:
        value: Any = json.loads(bytes(answer.body))
    except (ValueError, AttributeError):
        return {}
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def changed_targets(op: Operation, request: Request, answer: Response) -> list[str | None]:
    """The targets ``op`` changed, judging by its path and its 2xx ``answer``."""
    params = request.path_params
    if "id" in params:
        return [str(params["id"])]
    if "binding" in params:
        return [f"binding:{params['binding']}"]
    if "name" in params:
        return [f"schedule:{params['name']}"]
    body = _answer_json(answer)
    if isinstance(body.get("ok"), list):  # bulk-retry, bulk-cancel: what they changed
        return [str(i) for i in cast("list[Any]", body["ok"])]
    schedule: Any = body.get("schedule")
    if isinstance(schedule, dict) and isinstance(cast("dict[str, Any]", schedule).get("name"), str):
        return [f"schedule:{cast('dict[str, Any]', schedule)['name']}"]
    return [str(body["id"])] if isinstance(body.get("id"), str) else [None]
