"""The port both transports implement: the scheduler's producer surface, already mapped to values and errors.

A transport sends plain values built by the client and answers with the client's values, raising the errors of
docs/design/scheduler-rpc.md §4.3. Validation errors name fields relative to the call (``items[<k>].<field>``
for item fields, ``k`` indexing the items of that call); the client maps them back to the caller's positions.
"""

from __future__ import annotations

from typing import Any, Protocol

from tsumugi_client._views import CancelResult, JobDetail

__all__ = ["Transport"]


class Transport(Protocol):
    """How the client reaches the scheduler: a Service Binding (RPC) or the REST API (HTTP)."""

    async def enqueue_many(self, env: object, items: list[dict[str, Any]]) -> list[str]:
        """Enqueue wire items of one destination; answer their ids in order."""
        ...

    async def get(self, env: object, job_id: str) -> JobDetail | None:
        """The job's detail, or None when the scheduler does not know it."""
        ...

    async def cancel(self, env: object, job_id: str) -> CancelResult:
        """Cancel a job, or ask it to stop when it is running."""
        ...

    async def retry(self, env: object, job_id: str) -> None:
        """Retry a FAILED or STALLED job now."""
        ...

    async def reschedule(self, env: object, job_id: str, body: dict[str, Any]) -> None:
        """Move a SCHEDULED job's run time (and priority) with a camelCase reschedule body."""
        ...

    async def send_event(self, env: object, body: dict[str, Any]) -> object:
        """Send an event (a checked ``POST /api/events`` body); answer the scheduler's plain answer."""
        ...

    async def aclose(self) -> None:
        """Release what the transport owns (an HTTP connection pool); idempotent."""
        ...
