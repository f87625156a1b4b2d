"""Sending a tick's dispatches so one message the queue cannot take never holds back the others (ADR-0077).

Enqueue refuses payloads that cannot cross a queue (`tsumugi_core.portable`), but a job stored before that
check, or by other code, could still carry one; its message then makes the whole ``sendBatch`` fail, and every
job of the batch stayed QUEUED until the reaper gave up on it (issue 15 item 4). Chunks go out as before; only
a chunk whose ``sendBatch`` fails is sent again one message at a time, so the happy path costs nothing more.
A message that fails alone and whose payload is not portable fails its job at once (``fail``, not retryable:
the payload will never cross); any other failure is the queue's, and the job stays QUEUED for the reaper as
before.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from tsumugi_core.json_path import InvalidValueError
from tsumugi_core.portable import check_portable

__all__ = ["FailJob", "send_dispatches"]

FailJob = Callable[[str, int, str], Awaitable[Any]]
"""``fail(job_id, attempt, error)``: end the attempt as a non-retryable failure."""
_log = logging.getLogger("tsumugi_scheduler")


def _unsendable(body: dict[str, Any]) -> str | None:
    try:
        check_portable(body.get("payload"))
    except InvalidValueError as exc:
        return (
            f"PayloadError: the payload cannot be sent in a queue message: {exc.path('payload')} {exc.rule}"
        )
    except TypeError as exc:
        return f"PayloadError: the payload cannot be sent in a queue message: {exc}"
    return None


async def send_dispatches(queue: Any, chunks: list[list[dict[str, Any]]], fail: FailJob) -> None:
    """``sendBatch`` each chunk of ``{"body": dispatch}`` messages; a failed chunk again message by message."""
    for chunk in chunks:
        try:
            await queue.sendBatch(chunk)
        except Exception:
            await _one_by_one(queue, chunk, fail)


async def _one_by_one(queue: Any, chunk: list[dict[str, Any]], fail: FailJob) -> None:
    for message in chunk:
        body: dict[str, Any] = message["body"]
        try:
            await queue.sendBatch([message])
        except Exception:
            error = _unsendable(body)
            if error is None:
                # The queue's own failure: the job stays QUEUED and the reaper requeues (or stalls) it.
                _log.exception(
                    "dispatch of attempt %s of %s could not be sent", body.get("attempt"), body.get("jobId")
                )
                continue
            _log.error("job %s fails: %s", body.get("jobId"), error)
            await fail(str(body["jobId"]), int(body["attempt"]), error)
