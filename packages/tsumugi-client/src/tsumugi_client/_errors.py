"""Errors the client raises for transport failures and server refusals, the same on both transports.

Bad options are `tsumugi_core.options.EnqueueValidationError` (raised locally before anything is sent, or
re-raised from the scheduler's answer); everything the scheduler refuses or cannot do is a
`TsumugiClientError` with the HTTP status it maps to (docs/design/scheduler-rpc.md §4.3).
"""

from __future__ import annotations

import re
from typing import Final

from tsumugi_core.exceptions import TsumugiError
from tsumugi_core.options import EnqueueValidationError

__all__ = [
    "GONE_MESSAGE",
    "INVALID_STATE_MESSAGE",
    "AuthError",
    "ConflictError",
    "JobFailedError",
    "JobNotFoundError",
    "TsumugiClientError",
    "UnavailableError",
    "WaitTimeoutError",
    "refusal_error",
    "validation_error_from_text",
]

INVALID_STATE_MESSAGE: Final = "not allowed in the current state"
"""The original's text for a 409 (reason ``invalid-state``)."""
GONE_MESSAGE: Final = "job is no longer available: removed from the coordinator after the retention period"
"""The original's text for a 410 (reason ``gone``)."""

# Across a Service Binding only the exception's name and message survive, possibly wrapped (a JS Error, or the
# last line of a Python traceback), so the class name anchors the match (docs/design/scheduler-rpc.md §2.3).
_VALIDATION_RE: Final = re.compile(r"EnqueueValidationError: (?P<field>\S+) (?P<rule>[^\r\n]+)")


class TsumugiClientError(TsumugiError):
    """The scheduler refused a call, failed, or could not be reached.

    Attributes:
        status: The HTTP status the failure maps to (409, 410, 401, 5xx, ...), or None when there is none
            (transport failure, missing binding, an exception raised across RPC).
        message: What went wrong, in words.
        reason: The scheduler's refusal reason (``invalid-state``, ``gone``) when it gave one.
    """

    def __init__(self, status: int | None, message: str, *, reason: str | None = None) -> None:
        super().__init__(f"{status}: {message}" if status is not None else message)
        self.status = status
        self.message = message
        self.reason = reason


class AuthError(TsumugiClientError):
    """The scheduler refused the credentials (401 or 403): check the token the client was given."""


class ConflictError(TsumugiClientError):
    """The scheduler refused with 409: the job's state does not permit the call, or routing differs.

    A routing conflict names a ``field`` (e.g. ``items[0].shard`` for a ``bindings`` config whose shard counts
    are not the scheduler's); a state refusal has ``reason="invalid-state"``.

    Attributes:
        field: The field the scheduler named, when it named one.
    """

    def __init__(self, message: str, *, reason: str | None = None, field: str | None = None) -> None:
        super().__init__(409, message, reason=reason)
        self.field = field


class UnavailableError(TsumugiClientError):
    """The scheduler could not be reached or answered 502 / 503 / 504, after the client's retries.

    ``status`` is None when no answer came (connection refused, timeout).
    """


class JobFailedError(TsumugiClientError):
    """A job a caller waited on for its result ended without one (FAILED, CANCELLED or STALLED).

    Attributes:
        job_id: The job.
        state: Its terminal state (``"FAILED"``, ``"CANCELLED"``, ``"STALLED"``).
        error: The last attempt's error text, if any.
    """

    def __init__(self, job_id: str, state: str, error: str | None) -> None:
        detail = f": {error}" if error else ""
        super().__init__(None, f"job {job_id} ended {state}{detail}", reason=state.lower())
        self.job_id = job_id
        self.state = state
        self.error = error


class WaitTimeoutError(TsumugiClientError, TimeoutError):
    """A job was still not finished when the wait's ``timeout`` passed (the job itself goes on).

    Attributes:
        job_id: The job.
        state: Its state at the last look.
    """

    def __init__(self, job_id: str, state: str, timeout_s: float) -> None:
        super().__init__(None, f"job {job_id} is still {state} after {timeout_s:g} s")
        self.job_id = job_id
        self.state = state


class JobNotFoundError(TsumugiClientError):
    """The job does not exist in its shard: it was swept after its retention, or never existed.

    Attributes:
        job_id: The id that was asked for.
    """

    def __init__(self, job_id: str, status: int = 410, message: str = GONE_MESSAGE) -> None:
        super().__init__(status, f"{message} ({job_id})", reason="gone")
        self.job_id = job_id


def refusal_error(job_id: str, reason: object) -> TsumugiClientError:
    """The error for a returned refusal ``{"ok": false, "reason": ...}``, as its REST status would give."""
    if reason == "gone":
        return JobNotFoundError(job_id)
    if reason == "invalid-state":
        return ConflictError(INVALID_STATE_MESSAGE, reason="invalid-state")
    return TsumugiClientError(None, f"the scheduler refused with an unknown reason: {reason!r}")


def validation_error_from_text(text: str) -> EnqueueValidationError | None:
    """Recover an `EnqueueValidationError` from an error's text, or None when it is not one.

    The last matching line wins: a traceback may quote earlier frames' messages.

    Example:
        >>> validation_error_from_text("Error: EnqueueValidationError: max_attempts must be at least 1").field
        'max_attempts'
    """
    matches = list(_VALIDATION_RE.finditer(text))
    if not matches:
        return None
    last = matches[-1]
    return EnqueueValidationError(last["field"], last["rule"].strip())
