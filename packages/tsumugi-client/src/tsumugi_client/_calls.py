"""The REST calls of the HTTP clients as values: what to send and how to read the answer (sans I/O).

`TsumugiClient` and `AsyncTsumugiClient` differ only in how they perform a `Call` (a blocking or an awaited
httpx request, with retries); everything else (paths, bodies, status mapping, decoding) is built here once.
Adding a REST method to both clients is one function here and a one-line method on each (docs/client.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar
from urllib.parse import quote

import msgspec

from tsumugi_client._errors import TsumugiClientError, refusal_error
from tsumugi_client._http_errors import decode_body, error_of, item_error
from tsumugi_client._views import CancelResult, JobDetail, decode_job_detail

if TYPE_CHECKING:
    import httpx  # annotations only: the HTTP clients import it (ADR-0107)

__all__ = [
    "Call",
    "cancel_job",
    "enqueue_batch",
    "get_job",
    "job_path",
    "list_bindings",
    "reschedule_job",
    "retry_job",
]

T = TypeVar("T")


class Call(msgspec.Struct, Generic[T], frozen=True, kw_only=True):
    """One REST request and the reading of its answer.

    Attributes:
        method: The HTTP method.
        path: The path under the base URL, already encoded (``/api/jobs/MAIL%230%3Aabc``).
        body: The JSON body, or None.
        idempotent: Whether repeating the request after it may have arrived is harmless (retries, ADR-0063).
        read: Turns the final answer (any status) into the result, or raises the error it stands for.
    """

    method: str
    path: str
    body: Any = None
    idempotent: bool
    read: Callable[[httpx.Response], T]


def job_path(job_id: str, *action: str) -> str:
    """``/api/jobs/<id>[/<action>]`` with the id as one encoded segment (its ``#`` would end the path)."""
    return "/".join(["/api/jobs", quote(job_id, safe=""), *action])


def _read_ids(expected: int, single: bool) -> Callable[[httpx.Response], list[str]]:
    def read(response: httpx.Response) -> list[str]:
        if not response.is_success:
            error = error_of(response)
            raise item_error(error) if single else error
        answer = decode_body(response) or {}
        ids: object = [answer.get("id")] if single else answer.get("ids")
        try:
            checked = msgspec.convert(ids, list[str])
        except msgspec.ValidationError:
            checked = None
        if checked is None or len(checked) != expected:
            raise TsumugiClientError(
                None, f"the scheduler answered an enqueue without {expected} job ids: {ids!r}"
            )
        return checked

    return read


def enqueue_batch(items: list[dict[str, Any]], *, idempotent: bool) -> Call[list[str]]:
    """One item: ``POST /api/jobs`` (the original's route); more: ``POST /api/jobs/bulk-enqueue``.

    Validation errors name fields as ``items[<k>].<field>``, ``k`` indexing this call's items.
    """
    if len(items) == 1:
        return Call(
            method="POST", path="/api/jobs", body=items[0], idempotent=idempotent, read=_read_ids(1, True)
        )
    return Call(
        method="POST",
        path="/api/jobs/bulk-enqueue",
        body={"items": items},
        idempotent=idempotent,
        read=_read_ids(len(items), False),
    )


def get_job(job_id: str) -> Call[JobDetail | None]:
    """``GET /api/jobs/{id}``; a JSON 404 means the job is unknown (None)."""

    def read(response: httpx.Response) -> JobDetail | None:
        body = decode_body(response)
        if response.status_code == 404 and body is not None:
            return None
        if not response.is_success:
            raise error_of(response, job_id)
        if body is None or "job" not in body:
            raise TsumugiClientError(
                None, f"the scheduler answered GET {job_id} without a job: {response.text[:200]}"
            )
        return decode_job_detail(body["job"])

    return Call(method="GET", path=job_path(job_id), idempotent=True, read=read)


def _mutation(job_id: str, action: str, body: Any, read: Callable[[dict[str, Any]], T]) -> Call[T]:
    def read_answer(response: httpx.Response) -> T:
        if not response.is_success:
            raise error_of(response, job_id)
        answer = decode_body(response)
        if answer is None:  # a proxy's page or an empty body is no answer: never read as done
            raise TsumugiClientError(
                response.status_code,
                f"the scheduler answered {action} of {job_id} without a JSON object: {response.text[:200]!r}",
            )
        if answer.get("ok") is False:
            raise refusal_error(job_id, answer.get("reason"))
        return read(answer)

    # Not repeated once it may have arrived: a second cancel / retry of a job that changed meanwhile would
    # answer a confusing 409, and a second reschedule by delay would move the job again.
    return Call(method="POST", path=job_path(job_id, action), body=body, idempotent=False, read=read_answer)


def cancel_job(job_id: str) -> Call[CancelResult]:
    """``POST /api/jobs/{id}/cancel``."""
    return _mutation(
        job_id, "cancel", None, lambda answer: CancelResult(requested=answer.get("requested") is True)
    )


def retry_job(job_id: str) -> Call[None]:
    """``POST /api/jobs/{id}/retry``."""
    return _mutation(job_id, "retry", None, lambda _: None)


def reschedule_job(job_id: str, body: dict[str, Any]) -> Call[None]:
    """``POST /api/jobs/{id}/reschedule`` with a camelCase body."""
    return _mutation(job_id, "reschedule", body, lambda _: None)


def list_bindings() -> Call[dict[str, int] | None]:
    """``GET /api/bindings``: each binding's shard count, or None from a scheduler that does not say."""

    def read(response: httpx.Response) -> dict[str, int] | None:
        if not response.is_success:
            raise error_of(response)
        shards = (decode_body(response) or {}).get("shards")
        try:
            return None if shards is None else msgspec.convert(shards, dict[str, int])
        except msgspec.ValidationError:
            return None

    return Call(method="GET", path="/api/bindings", idempotent=True, read=read)
