"""What the client returns about a job: the scheduler's JobDetail and mutation answers, as values.

Field names are the REST response's (snake_case, docs/design/scheduler-rpc.md §4.2). Unknown keys are ignored
so an older client keeps working against a newer scheduler; keys added beyond the original default when
absent, so a scheduler that does not send them still decodes.
"""

from __future__ import annotations

from typing import Any

import msgspec

from tsumugi_client._errors import TsumugiClientError
from tsumugi_core.options import Guarantee
from tsumugi_core.states import JobState

__all__ = ["AttemptLogEntry", "CancelResult", "JobDetail", "decode_job_detail"]


class AttemptLogEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One finished attempt of a job.

    Attributes:
        attempt: The attempt number (1-based).
        state: The attempt's outcome, ``COMPLETED`` or ``FAILED``.
        started_at: When it was dispatched, if known.
        finished_at: When its outcome was recorded.
        error: The failure text (at most 2000 characters), None for a success.
    """

    attempt: int
    state: str
    started_at: int | None
    finished_at: int
    error: str | None


class StepEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One durable step of a job, in the order the steps started.

    Attributes:
        name: The step's name (a repeated name carries its index, ``charge#2``).
        state: ``done`` (its result is kept) or ``started`` (an at-most-once step whose outcome is unknown).
        attempt: The invocation that started or finished it.
        result: The step's result as JSON-shaped data.
    """

    name: str
    state: str
    attempt: int
    started_at: int
    finished_at: int | None = None
    result: Any = None


class JobDetail(msgspec.Struct, frozen=True, kw_only=True):
    """A job as the scheduler describes it (``GET /api/jobs/{id}`` -> ``job``, RPC ``get``).

    ``payload`` and ``result`` are JSON text, as on the wire; `payload_value` and `result_value` decode them.
    """

    id: str
    binding: str
    state: JobState
    priority: int
    attempts: int
    max_attempts: int
    concurrency_key: str | None
    unique_key: str | None
    guarantee: Guarantee
    created_at: int
    updated_at: int
    dispatched_at: int | None
    run_after: int
    progress: float | None
    payload: str
    result: str | None
    retryable: bool
    attempts_log: tuple[AttemptLogEntry, ...]
    timeout_ms: int | None = None
    expires_at: int | None = None
    traceparent: str | None = None
    run_id: str | None = None
    node_id: str | None = None
    cancel_requested: bool = False
    steps: tuple[StepEntry, ...] = ()
    """The job's durable steps while its shard keeps it."""

    def payload_value(self) -> Any:
        """The payload, decoded from its JSON text."""
        return msgspec.json.decode(self.payload)

    def result_value(self) -> Any:
        """The stored result decoded from its JSON text; None when there is none."""
        return None if self.result is None else msgspec.json.decode(self.result)


class CancelResult(msgspec.Struct, frozen=True, kw_only=True):
    """The answer to an accepted cancel.

    Attributes:
        requested: True when the job was QUEUED or RUNNING and has been asked to stop (it ends CANCELLED once
            its attempt reports or the grace period passes); False when it was cancelled at once, which
            ``cancelled`` says in so many words.
    """

    requested: bool

    @property
    def cancelled(self) -> bool:
        """True when the job is CANCELLED already (it was SCHEDULED); False when it was only asked to stop."""
        return not self.requested


def decode_job_detail(value: object) -> JobDetail:
    """Decode the scheduler's job detail (a dict, or a ``JsDict`` across RPC).

    Raises:
        TsumugiClientError: the value does not have the JobDetail shape (status None: a server fault).
    """
    try:
        return msgspec.convert(value, JobDetail)
    except msgspec.ValidationError as exc:
        raise TsumugiClientError(None, f"the scheduler answered a malformed job detail: {exc}") from None
