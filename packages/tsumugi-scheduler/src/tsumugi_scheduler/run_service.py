"""Starting and steering flow runs, shared by the REST API and the producer RPC entrypoint.

Run mutations go straight to the run's Durable Object (``RUN.getByName(run_id)``), never the read model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from tsumugi_core.exceptions import TsumugiError
from tsumugi_core.flow_spec import InvalidFlowError, check_deadline_ms
from tsumugi_core.ids import InvalidRunIdError, format_run_id, parse_run_id
from tsumugi_scheduler.definition import TsumugiDefinition
from tsumugi_scheduler.run_input import RunInputError, RunStartError, check_run_input, run_input_json
from tsumugi_scheduler.timing import entropy
from tsumugi_scheduler.wire import integral

__all__ = [
    "MAX_RUN_LOCAL_ID_CHARS",
    "RunInputError",
    "RunStartError",
    "RunUnavailableError",
    "cancel_run",
    "check_run_input",
    "retry_run",
    "start_run",
]


MAX_RUN_LOCAL_ID_CHARS: Final = 200
"""The longest ``id`` a start may pin (the local part of the run id)."""


class RunUnavailableError(TsumugiError, RuntimeError):
    """No flow is registered (or the RUN binding is missing): runs cannot be started or steered."""


def _runs(env: Any, definition: TsumugiDefinition) -> Any:
    runs = getattr(env, "RUN", None)
    if not definition.flows or runs is None:
        raise RunUnavailableError(
            "RUN binding is not configured, add the Run DO binding to wrangler"
            if definition.flows
            else "no flow is registered"
        )
    return runs


async def start_run(env: Any, definition: TsumugiDefinition, body: Mapping[str, Any]) -> str:
    """Start a run from ``{"flow", "input", "id"?, "deadlineMs"?}``; answers its id (an existing one for a
    repeated ``id``).

    Raises:
        RunUnavailableError: no flows.
        RunStartError: the body breaks a rule (`RunInputError`: the input does not fit the flow's input type).
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
    if "id" in body and not isinstance(local_id, str):  # null too: the document has no null here (ADR-0077)
        raise RunStartError("id must be a string")
    if isinstance(local_id, str) and len(local_id) > MAX_RUN_LOCAL_ID_CHARS:
        raise RunStartError(f"id must be at most {MAX_RUN_LOCAL_ID_CHARS} characters, got {len(local_id)}")
    deadline = integral(body.get("deadlineMs"))  # a whole number sent as 2139.0 is 2139, as for job options
    if "deadlineMs" in body and deadline is None:
        raise RunStartError("deadlineMs must be a positive integer")
    try:
        check_deadline_ms(deadline)
    except InvalidFlowError as exc:
        raise RunStartError(str(exc).rpartition(":")[0]) from None
    input_json = run_input_json(definition.flows[flow], body["input"])
    try:
        run_id = format_run_id(flow, local_id if local_id is not None else entropy()[0].new_local_id())
    except InvalidRunIdError as exc:
        raise RunStartError(f"id is invalid: {exc}") from None
    answer = await runs.getByName(run_id).start(run_id, flow, input_json, deadline, None, 0)
    return str(answer["id"])


_NEVER_STARTED: Final = {"ok": False, "reason": "gone"}
"""The answer for a run of a flow this scheduler does not define: no such run was ever started here."""


def _stub(env: Any, definition: TsumugiDefinition, run_id: str) -> Any:
    """The Run object of ``run_id``; None for a flow that is not defined.

    No object is made (and stored) to answer for such a run, as a job id of an unknown binding reaches no JobShard.
    """
    runs = _runs(env, definition)
    flow = parse_run_id(run_id).flow  # raises InvalidRunIdError
    return runs.getByName(run_id) if flow in definition.flows else None


async def cancel_run(env: Any, definition: TsumugiDefinition, run_id: str) -> dict[str, Any]:
    """Cancel a RUNNING run: ``{"ok": true}`` or ``{"ok": false, "reason": "gone" | "invalid-state"}``.

    Raises:
        RunUnavailableError: no flows.
        InvalidRunIdError: ``run_id`` is malformed.
    """
    stub = _stub(env, definition, run_id)
    return dict(_NEVER_STARTED) if stub is None else dict(await stub.cancel())


async def retry_run(env: Any, definition: TsumugiDefinition, run_id: str) -> dict[str, Any]:
    """Resume a FAILED run; answers as `cancel_run`.

    Raises:
        RunUnavailableError: no flows.
        InvalidRunIdError: ``run_id`` is malformed.
    """
    stub = _stub(env, definition, run_id)
    return dict(_NEVER_STARTED) if stub is None else dict(await stub.retry())
