"""Starting and steering flow runs, shared by the REST API and the producer RPC entrypoint.

Run mutations go straight to the run's Durable Object (``RUN.getByName(run_id)``), never the read model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from tsumugi_core.flow_spec import InvalidFlowError, check_deadline_ms
from tsumugi_core.ids import InvalidRunIdError, format_run_id, parse_run_id
from tsumugi_scheduler.definition import TsumugiDefinition
from tsumugi_scheduler.timing import entropy

__all__ = ["RunStartError", "RunUnavailableError", "cancel_run", "retry_run", "start_run"]


class RunStartError(ValueError):
    """A start request broke a rule; the message is the original's (``unknown flow: X``...)."""


class RunUnavailableError(RuntimeError):
    """No flow is registered (or the RUN binding is missing): runs cannot be started or steered."""


def _runs(env: Any, definition: TsumugiDefinition) -> Any:
    runs = getattr(env, "RUN", None)
    if not definition.flows or runs is None:
        raise RunUnavailableError("RUN binding is not configured, add the Run DO binding to wrangler"
                                  if definition.flows else "no flow is registered")  # fmt: skip
    return runs


async def start_run(env: Any, definition: TsumugiDefinition, body: Mapping[str, Any]) -> str:
    """Start a run from ``{"flow", "input", "id"?, "deadlineMs"?}``; answers its id (an existing one for a
    repeated ``id``).

    Raises:
        RunUnavailableError: no flows.
        RunStartError: the body breaks a rule.
    """
    runs = _runs(env, definition)
    flow = body.get("flow")
    if not isinstance(flow, str) or not flow:
        raise RunStartError("flow is required")
    if flow not in definition.flows:
        raise RunStartError(f"unknown flow: {flow}")
    if "input" not in body:
        raise RunStartError("input is required")
    local_id = body.get("id")
    if local_id is not None and not isinstance(local_id, str):
        raise RunStartError("id must be a string")
    deadline = body.get("deadlineMs")
    try:
        check_deadline_ms(deadline)
    except InvalidFlowError:
        raise RunStartError("deadlineMs must be a positive integer") from None
    try:
        run_id = format_run_id(flow, local_id if local_id is not None else entropy()[0].new_local_id())
    except InvalidRunIdError as exc:
        raise RunStartError(f"id is invalid: {exc}") from None
    answer = await runs.getByName(run_id).start(run_id, flow, msgspec.json.encode(body["input"]).decode(),
                                                deadline, None, 0)  # fmt: skip
    return str(answer["id"])


def _stub(env: Any, definition: TsumugiDefinition, run_id: str) -> Any:
    runs = _runs(env, definition)
    parse_run_id(run_id)  # raises InvalidRunIdError
    return runs.getByName(run_id)


async def cancel_run(env: Any, definition: TsumugiDefinition, run_id: str) -> dict[str, Any]:
    """Cancel a RUNNING run: ``{"ok": true}`` or ``{"ok": false, "reason": "gone" | "invalid-state"}``.

    Raises:
        RunUnavailableError: no flows.
        InvalidRunIdError: ``run_id`` is malformed.
    """
    return dict(await _stub(env, definition, run_id).cancel())


async def retry_run(env: Any, definition: TsumugiDefinition, run_id: str) -> dict[str, Any]:
    """Resume a FAILED run; answers as `cancel_run`.

    Raises:
        RunUnavailableError: no flows.
        InvalidRunIdError: ``run_id`` is malformed.
    """
    return dict(await _stub(env, definition, run_id).retry())
