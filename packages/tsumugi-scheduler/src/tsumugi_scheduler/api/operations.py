"""The route table: every API operation with its handler, parameters and documented answers.

One table feeds both the router (`tsumugi_scheduler.api.app`) and the OpenAPI document
(`tsumugi_scheduler.api.openapi`), so a route cannot exist without its documentation, nor without the role it
needs (``role``, checked by the router before the handler runs). operationIds are the
original's where it had the route (docs/reference/original.md §4.2).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response

from tsumugi_scheduler.api import (
    bindings,
    bulk,
    events,
    insight,
    jobs,
    metrics,
    run_control,
    runs,
    schedules,
)
from tsumugi_scheduler.api import models as m
from tsumugi_scheduler.api import schedule_models as sm
from tsumugi_scheduler.api import shapes as s
from tsumugi_scheduler.api.job_list import JobListBody
from tsumugi_scheduler.identity import Role
from tsumugi_scheduler.readmodel import JobStats

__all__ = ["OPENAPI_PATH", "OPERATIONS", "Answer", "Endpoint", "Operation", "QueryParam"]

OPENAPI_PATH: Final = "/api/openapi.json"

Endpoint = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True, kw_only=True)
class Answer:
    """A documented response: its description and body type (None for a plain-text body)."""

    description: str
    body: Any = s.ErrorBody


@dataclass(frozen=True, kw_only=True)
class QueryParam:
    """A query-string parameter and its JSON schema."""

    name: str
    schema: Mapping[str, Any]
    description: str = ""


@dataclass(frozen=True, kw_only=True)
class Operation:
    """One route."""

    method: str
    path: str
    operation_id: str
    role: Role
    """The least role that may call it (ADR-0151): reads are the viewer's, actions the operator's, policies,
    schedules' definitions and deletes the admin's."""
    summary: str
    endpoint: Endpoint
    body: type[BaseModel] | None = None
    query: tuple[QueryParam, ...] = ()
    answers: Mapping[int, Answer] = field(default_factory=dict[int, Answer])
    tag: str = "jobs"
    records: bool = True
    """A 2xx answer of a state change records who made it (`tsumugi_scheduler.api.action_log`); enqueues do
    not (the job itself is the record, and every enqueue would cost a second D1 write)."""


_BAD = Answer(description="Invalid input; `error` says which field and rule.")
_STATE = Answer(description="The state does not permit it.", body=s.Refusal)
_GONE = Answer(
    description="No longer in its shard (swept after retention, or never existed).", body=s.Refusal
)
_NOT_FOUND = Answer(description="Not found.")
_RUN_GONE = Answer(
    description="No run in its object (deleted after retention, or never started).", body=s.Refusal
)
_ROUTING = Answer(
    description="`shard` differs from this scheduler's routing (the caller's bindings config differs)."
)
_NO_SCHEDULER = Answer(description="No Scheduler Durable Object is bound (`schedules are not available`).")
_CODE_DEFINED = Answer(description="The schedule is defined in code: read-only at run time.")
_JOB_ID = "A job id <binding>#<shard>:<local>, percent-encoded."
_STR = {"type": "string"}
_NUM = {"type": "string", "description": "A number; empty or non-numeric values are ignored."}
_BINDING_OR_EMPTY = {"type": "string", "pattern": "^([A-Za-z_][A-Za-z0-9_]*)?$"}
_BINDING_LIST = {"type": "string", "pattern": "^([A-Za-z_][A-Za-z0-9_]*)?(,([A-Za-z_][A-Za-z0-9_]*)?)*$"}
_EMPTY = {"type": "string", "maxLength": 0, "description": "Empty: the default, as when absent."}
_HOURS = {"anyOf": [{"type": "number", "minimum": 1, "exclusiveMaximum": 721}, _EMPTY]}
"""Any number whose floor is 1..720: the handler floors it, as the original does."""
_BUCKET_MINUTES = {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 1440}, _EMPTY]}


def _answers(**by_status: Answer) -> dict[int, Answer]:
    return {int(k.removeprefix("s")): v for k, v in by_status.items()}


_LIST_QUERY = (
    QueryParam(name="state", schema=_STR),
    QueryParam(name="binding", schema=_STR),
    QueryParam(name="id", schema=_STR),
    QueryParam(name="unique_key", schema=_STR),
    QueryParam(name="concurrency_key", schema=_STR),
    QueryParam(name="created_from", schema=_NUM),
    QueryParam(
        name="text",
        schema=_STR,
        description="Text the payload or an error contains (case-insensitive, at most 200 characters): "
        "searched in the first 2,000 jobs the other filters and the order give; `searched` says how many.",
    ),
    QueryParam(name="created_to", schema=_NUM),
    QueryParam(
        name="exclude_bindings",
        schema=_STR,
        description="Comma-separated bindings to leave out (e.g. the notice bindings), at most 20.",
    ),
    QueryParam(
        name="sort",
        schema=_STR,
        description="updated_at (default), created_at, binding, state, priority or attempts.",
    ),
    QueryParam(name="order", schema=_STR, description="asc, or anything else for descending."),
    QueryParam(name="limit", schema=_STR, description="1..100, default 20."),
    QueryParam(name="offset", schema=_STR, description="0 or more, default 0."),
)

OPERATIONS: Final[tuple[Operation, ...]] = (
    Operation(
        method="POST",
        path="/api/events",
        operation_id="sendEvent",
        role=Role.OPERATOR,
        tag="events",
        summary="Send an event to the jobs waiting for its name and key (kept a day for later waits).",
        endpoint=events.post_event,
        body=events.EventBody,
        answers=_answers(
            s202=Answer(
                description="Sent: its id, the jobs it went to, until when it is kept.", body=s.EventSent
            ),
            s400=_BAD,
        ),
    ),
    Operation(
        method="GET",
        path="/api/jobs",
        operation_id="listJobs",
        role=Role.VIEWER,
        summary="List jobs from the read model.",
        endpoint=jobs.list_jobs,
        query=_LIST_QUERY,
        answers=_answers(
            s200=Answer(
                description="A page and the total (exact up to 10,000, then `total_capped`).",
                body=JobListBody,
            )
        ),
    ),
    Operation(
        method="POST",
        path="/api/jobs",
        operation_id="createJob",
        role=Role.OPERATOR,
        summary="Enqueue one job.",
        endpoint=jobs.create_job,
        body=m.EnqueueBody,
        records=False,
        answers=_answers(
            s201=Answer(description="The job id (also for a dedup hit).", body=s.Created),
            s400=_BAD,
            s409=_ROUTING,
        ),
    ),
    Operation(
        method="POST",
        path="/api/jobs/bulk-enqueue",
        operation_id="bulkEnqueueJobs",
        role=Role.OPERATOR,
        summary="Enqueue up to 500 jobs.",
        endpoint=jobs.bulk_enqueue,
        body=m.BulkEnqueueBody,
        records=False,
        answers=_answers(
            s201=Answer(description="Ids in input order.", body=s.CreatedMany), s400=_BAD, s409=_ROUTING
        ),
    ),
    Operation(
        method="POST",
        path="/api/jobs/bulk-retry",
        operation_id="bulkRetryJobs",
        role=Role.OPERATOR,
        summary="Retry FAILED / STALLED jobs by ids or filter.",
        endpoint=bulk.bulk_retry,
        body=m.BulkRetryBody,
        answers=_answers(s200=Answer(description="Changed ids and refusals.", body=s.BulkResult), s400=_BAD),
    ),
    Operation(
        method="POST",
        path="/api/jobs/bulk-cancel",
        operation_id="bulkCancelJobs",
        role=Role.OPERATOR,
        summary="Cancel jobs by ids or filter.",
        endpoint=bulk.bulk_cancel,
        body=m.BulkCancelBody,
        answers=_answers(s200=Answer(description="Changed ids and refusals.", body=s.BulkResult), s400=_BAD),
    ),
    Operation(
        method="GET",
        path="/api/jobs/{id}",
        operation_id="getJob",
        role=Role.VIEWER,
        summary="A job's detail with its attempt log.",
        endpoint=jobs.get_job,
        answers=_answers(s200=Answer(description="The job.", body=s.JobDetailBody), s404=_NOT_FOUND),
    ),
    Operation(
        method="GET",
        path="/api/jobs/{id}/explain",
        operation_id="explainJob",
        role=Role.VIEWER,
        summary="Why a job is not running yet and when each blocker clears.",
        endpoint=jobs.explain_job,
        answers=_answers(
            s200=Answer(description="The explanation.", body=s.ExplainBody), s404=_NOT_FOUND, s410=_GONE
        ),
    ),
    Operation(
        method="POST",
        path="/api/jobs/{id}/retry",
        operation_id="retryJob",
        role=Role.OPERATOR,
        summary="Retry a FAILED / STALLED job now.",
        endpoint=jobs.retry_job,
        answers=_answers(
            s200=Answer(description="Retried.", body=s.MutationOk), s400=_BAD, s409=_STATE, s410=_GONE
        ),
    ),
    Operation(
        method="POST",
        path="/api/jobs/{id}/cancel",
        operation_id="cancelJob",
        role=Role.OPERATOR,
        summary="Cancel a job, or ask a dispatched one to stop.",
        endpoint=jobs.cancel_job,
        answers=_answers(
            s200=Answer(description="Cancelled, or requested.", body=s.CancelOk),
            s400=_BAD,
            s409=_STATE,
            s410=_GONE,
        ),
    ),
    Operation(
        method="POST",
        path="/api/jobs/{id}/reschedule",
        operation_id="rescheduleJob",
        role=Role.OPERATOR,
        summary="Move a SCHEDULED job's run_after (and priority).",
        endpoint=jobs.reschedule_job,
        body=m.RescheduleBody,
        answers=_answers(
            s200=Answer(description="Rescheduled.", body=s.MutationOk), s400=_BAD, s409=_STATE, s410=_GONE
        ),
    ),
    Operation(
        method="GET",
        path="/api/bindings",
        operation_id="listBindings",
        role=Role.VIEWER,
        summary="Performer bindings.",
        endpoint=bindings.list_bindings,
        tag="bindings",
        answers=_answers(s200=Answer(description="Sorted names and shard counts.", body=s.BindingList)),
    ),
    Operation(
        method="POST",
        path="/api/bindings/{binding}/policy",
        operation_id="setBindingPolicy",
        role=Role.ADMIN,
        summary="Change and pin the policy of every shard of a binding.",
        endpoint=bindings.set_policy,
        body=m.PolicyBody,
        tag="bindings",
        answers=_answers(
            s200=Answer(description="Every shard's effective settings.", body=s.PolicyResult),
            s400=_BAD,
            s404=_NOT_FOUND,
        ),
    ),
    Operation(
        method="POST",
        path="/api/bindings/{binding}/policy/reset",
        operation_id="resetBindingPolicy",
        role=Role.ADMIN,
        summary="Drop the runtime pin: back to the code's settings.",
        endpoint=bindings.reset_policy,
        tag="bindings",
        answers=_answers(
            s200=Answer(description="Every shard's effective settings.", body=s.PolicyResult),
            s400=_BAD,
            s404=_NOT_FOUND,
        ),
    ),
    Operation(
        method="GET",
        path="/api/stats",
        operation_id="getStats",
        role=Role.VIEWER,
        summary="Jobs per state and the longest wait.",
        endpoint=insight.stats,
        tag="insight",
        query=(
            QueryParam(
                name="exclude_bindings",
                schema=_STR,
                description="Comma-separated bindings left out of the counts, as the job list takes it.",
            ),
        ),
        answers=_answers(s200=Answer(description="Stats.", body=JobStats)),
    ),
    Operation(
        method="GET",
        path="/api/diagnostics",
        operation_id="getDiagnostics",
        role=Role.VIEWER,
        summary="What holds each binding back, per shard.",
        endpoint=insight.diagnostics,
        tag="insight",
        answers=_answers(s200=Answer(description="Diagnostics.", body=s.Diagnostics)),
    ),
    Operation(
        method="GET",
        path="/api/metrics",
        operation_id="getMetrics",
        role=Role.VIEWER,
        summary="Failure rate and durations from Analytics Engine.",
        endpoint=metrics.get_metrics,
        tag="insight",
        query=(
            QueryParam(name="hours", schema=_HOURS, description="1..720 (decimals floored), default 24."),
            QueryParam(name="binding", schema=_BINDING_OR_EMPTY),
            QueryParam(
                name="bucket_minutes",
                schema=_BUCKET_MINUTES,
                description="Width of the series' buckets in minutes, 1..1440, default 60.",
            ),
            QueryParam(
                name="exclude_bindings",
                schema=_BINDING_LIST,
                description="Comma-separated bindings left out (e.g. the notice "
                "bindings); the first 20 count.",
            ),
        ),
        answers=_answers(
            s200=Answer(description="The report.", body=metrics.MetricsReport),
            s400=_BAD,
            s501=Answer(description="Metrics not configured."),
            s502=Answer(description="Analytics Engine failed."),
        ),
    ),
    Operation(
        method="GET",
        path="/api/schedules",
        operation_id="listSchedules",
        role=Role.VIEWER,
        summary="Recurring schedules with their next occurrences: all, or a page by name.",
        endpoint=schedules.list_schedules,
        tag="schedules",
        query=(
            QueryParam(
                name="limit",
                schema={"type": "string", "pattern": "^0*(?:[1-9][0-9]?|[1-4][0-9]{2}|500)$"},
                description="1..500: one page, and `next`; absent (with `after` absent too): every schedule.",
            ),
            QueryParam(name="after", schema=_STR, description="The `next` of the previous page."),
        ),
        answers=_answers(
            s200=Answer(description="Schedules by name.", body=sm.ScheduleList), s400=_BAD, s501=_NO_SCHEDULER
        ),
    ),
    *(
        Operation(
            method=method,
            path=path,
            operation_id=op_id,
            role=role,
            summary=summary,
            endpoint=endpoint,
            body=body,
            tag="schedules",
            answers=answers,
        )
        for method, path, op_id, role, summary, endpoint, body, answers in (
            (
                "POST",
                "/api/schedules",
                "createSchedule",
                Role.ADMIN,
                "Create a run-time schedule.",
                schedules.create_schedule,
                sm.ScheduleCreateBody,
                _answers(
                    s201=Answer(description="Created.", body=sm.ScheduleResult),
                    s400=_BAD,
                    s409=Answer(description="A schedule of that name exists."),
                    s501=_NO_SCHEDULER,
                ),
            ),
            (
                "GET",
                "/api/schedules/{name}",
                "getSchedule",
                Role.VIEWER,
                "One schedule.",
                schedules.get_schedule,
                None,
                _answers(
                    s200=Answer(description="The schedule.", body=sm.ScheduleView),
                    s404=_NOT_FOUND,
                    s501=_NO_SCHEDULER,
                ),
            ),
            (
                "PATCH",
                "/api/schedules/{name}",
                "updateSchedule",
                Role.ADMIN,
                "Change a run-time schedule.",
                schedules.update_schedule,
                sm.SchedulePatchBody,
                _answers(
                    s200=Answer(description="Changed.", body=sm.ScheduleResult),
                    s400=_BAD,
                    s404=_NOT_FOUND,
                    s409=_CODE_DEFINED,
                    s501=_NO_SCHEDULER,
                ),
            ),
            (
                "DELETE",
                "/api/schedules/{name}",
                "deleteSchedule",
                Role.ADMIN,
                "Delete a run-time schedule.",
                schedules.delete_schedule,
                None,
                _answers(
                    s200=Answer(description="Deleted.", body=sm.ScheduleDeleted),
                    s404=_NOT_FOUND,
                    s409=_CODE_DEFINED,
                    s501=_NO_SCHEDULER,
                ),
            ),
            (
                "POST",
                "/api/schedules/{name}/pause",
                "pauseSchedule",
                Role.OPERATOR,
                "Stop firing (kept across deploys).",
                schedules.pause_schedule,
                None,
                _answers(
                    s200=Answer(description="Paused.", body=sm.ScheduleResult),
                    s404=_NOT_FOUND,
                    s501=_NO_SCHEDULER,
                ),
            ),
            (
                "POST",
                "/api/schedules/{name}/resume",
                "resumeSchedule",
                Role.OPERATOR,
                "Fire again from the next boundary.",
                schedules.resume_schedule,
                None,
                _answers(
                    s200=Answer(description="Resumed.", body=sm.ScheduleResult),
                    s404=_NOT_FOUND,
                    s501=_NO_SCHEDULER,
                ),
            ),
            (
                "POST",
                "/api/schedules/{name}/trigger",
                "triggerSchedule",
                Role.OPERATOR,
                "Enqueue one occurrence now.",
                schedules.trigger_schedule,
                None,
                _answers(
                    s200=Answer(description="Enqueued.", body=sm.ScheduleTriggered),
                    s404=_NOT_FOUND,
                    s409=Answer(
                        description="The scheduler refuses the job the schedule makes (e.g. its payload "
                        "against the performer's type now); `field` and `rule` say why."
                    ),
                    s501=_NO_SCHEDULER,
                    s502=Answer(description="The enqueue failed; `error` says why."),
                ),
            ),
        )
    ),
    Operation(
        method="GET",
        path="/api/runs",
        operation_id="listRuns",
        role=Role.VIEWER,
        summary="Flow runs, newest change first.",
        endpoint=runs.list_runs,
        tag="runs",
        query=(
            QueryParam(name="state", schema=_STR),
            QueryParam(name="flow", schema=_STR),
            QueryParam(name="limit", schema=_STR, description="1..100, default 20."),
            QueryParam(name="offset", schema=_STR, description="0 or more, default 0."),
        ),
        answers=_answers(s200=Answer(description="A page and the total.", body=runs.RunList)),
    ),
    Operation(
        method="POST",
        path="/api/runs",
        operation_id="startRun",
        role=Role.OPERATOR,
        summary="Start a flow run.",
        endpoint=run_control.start,
        tag="runs",
        body=m.StartRunBody,
        answers=_answers(
            s201=Answer(description="The run id (an existing run's for a repeated id).", body=s.RunCreated),
            s400=_BAD,
            s501=Answer(description="No flow is registered."),
        ),
    ),
    Operation(
        method="GET",
        path="/api/runs/{id}",
        operation_id="getRun",
        role=Role.VIEWER,
        summary="A run and its nodes.",
        endpoint=runs.get_run,
        tag="runs",
        answers=_answers(s200=Answer(description="The run.", body=runs.RunDetailBody), s404=_NOT_FOUND),
    ),
    Operation(
        method="POST",
        path="/api/runs/{id}/retry",
        operation_id="retryRun",
        role=Role.OPERATOR,
        summary="Resume a FAILED run.",
        endpoint=run_control.retry,
        tag="runs",
        answers=_answers(
            s200=Answer(description="Resumed.", body=s.RunControlOk),
            s400=_BAD,
            s409=_STATE,
            s410=_RUN_GONE,
            s501=Answer(description="No flow is registered."),
        ),
    ),
    Operation(
        method="POST",
        path="/api/runs/{id}/cancel",
        operation_id="cancelRun",
        role=Role.OPERATOR,
        summary="Cancel a run.",
        endpoint=run_control.cancel,
        tag="runs",
        answers=_answers(
            s200=Answer(description="Cancelling.", body=s.RunControlOk),
            s400=_BAD,
            s409=_STATE,
            s410=_RUN_GONE,
            s501=Answer(description="No flow is registered."),
        ),
    ),
    Operation(
        method="GET",
        path="/api/flows",
        operation_id="listFlows",
        role=Role.VIEWER,
        summary="Registered flows.",
        endpoint=runs.list_flows,
        tag="runs",
        answers=_answers(s200=Answer(description="Sorted names.", body=runs.FlowList)),
    ),
)
"""Every route but ``/api/openapi.json`` (served by the app itself, without auth)."""
