"""Starting and steering flow runs, shared by the REST API and the producer RPC entrypoint.

Run mutations go straight to the run's Durable Object (``RUN.getByName(run_id)``), never the read model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from tsumugi_core.exceptions import TsumugiError
from tsumugi_core.flow_spec import FlowSpec, InvalidFlowError, check_deadline_ms
from tsumugi_core.ids import InvalidRunIdError, format_run_id, parse_run_id
from tsumugi_core.json_path import InvalidValueError
from tsumugi_core.json_schema import Check, SchemaError, compile_schema
from tsumugi_core.options import MAX_PAYLOAD_BYTES
from tsumugi_core.portable import check_portable
from tsumugi_scheduler.definition import TsumugiDefinition
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


class RunStartError(TsumugiError, ValueError):
    """A start request broke a rule; the message is the original's (``unknown flow: X``...)."""


class RunInputError(RunStartError):
    """The run input does not fit the flow's input type: ``field`` (``input.<path>``) breaks ``rule``."""

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field} {rule}")
        self.field = field
        self.rule = rule


_checks: dict[int, tuple[FlowSpec, Check | None]] = {}
"""Compiled input schemas by flow spec (the spec kept beside its check, so a reused id never matches)."""


def check_run_input(spec: FlowSpec, value: object) -> None:
    """Check a run input against the flow's declared input type, as a job's payload is checked at enqueue.

    Raises:
        RunInputError: naming the path under ``input`` and the rule.
    """
    found = _checks.get(id(spec))
    if found is None or found[0] is not spec:
        try:
            check = None if spec.input_schema is None else compile_schema(spec.input_schema)
        except SchemaError:  # a schema this checker cannot read: the flow accepts any input, as before
            check = None
        found = _checks[id(spec)] = (spec, check)
    if found[1] is None:
        return
    try:
        found[1](value)
    except InvalidValueError as exc:
        raise RunInputError(exc.path("input"), exc.rule) from None


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
    try:
        check_portable(body["input"])  # as for a job's payload (ADR-0077): 1e400 would be stored as null
    except InvalidValueError as exc:
        raise RunInputError(exc.path("input"), exc.rule) from None
    input_json = msgspec.json.encode(body["input"]).decode()
    size = len(input_json.encode())
    if size > MAX_PAYLOAD_BYTES:  # the rule of a job's payload: a run's input is stored and sent the same way
        raise RunInputError("input", f"must be at most {MAX_PAYLOAD_BYTES} bytes as JSON, got {size}")
    check_run_input(definition.flows[flow], msgspec.json.decode(input_json))  # as it is stored: plain JSON
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
