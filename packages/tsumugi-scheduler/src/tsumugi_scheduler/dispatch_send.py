"""Sending a tick's dispatches so one message the queue cannot take never holds back the others (ADR-0077).

Enqueue refuses payloads that cannot cross a queue (`tsumugi_core.portable`), but a job stored before that
check, or by other code, could still carry one; its message then makes the whole ``sendBatch`` fail, and every
job of the batch stayed QUEUED until the reaper gave up on it (issue 15 item 4). Chunks go out as before; only
a chunk whose ``sendBatch`` fails is sent again one message at a time, so the happy path costs nothing more.
A message that fails alone and is larger than a queue message may be fails its job at once (``fail``, not
retryable: it will never cross); any other failure is the queue's, and the job stays QUEUED for the reaper as
before. (Messages are JSON text since ADR-0166, which any value stored as JSON survives: a payload JavaScript
could not hold, such as an integer over 2**53, no longer stops its message.)
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from tsumugi_core.queue_size import MAX_MESSAGE_BYTES

__all__ = ["FailJob", "send_dispatches"]

FailJob = Callable[[str, int, str], Awaitable[Any]]
"""``fail(job_id, attempt, error)``: end the attempt as a non-retryable failure."""
_log = logging.getLogger("tsumugi_scheduler")


class _Named(msgspec.Struct, rename="camel"):
    job_id: str
    attempt: int


def _unsendable(text: str) -> str | None:
    """Why the dispatch message ``text`` can never be sent, or None when the failure was the queue's.

    A message is its dispatch's JSON text (ADR-0166): the queue takes any text, so only its size can stop it
    (a payload stored without enqueue's checks, or by other code).
    """
    size = len(text.encode())
    if size <= MAX_MESSAGE_BYTES:
        return None
    return (
        f"PayloadError: the payload cannot be sent in a queue message: the message would take {size} bytes "
        f"of UTF-8 JSON, over the {MAX_MESSAGE_BYTES} a queue message may hold"
    )


async def send_dispatches(queue: Any, chunks: list[list[dict[str, str]]], fail: FailJob) -> None:
    """``sendBatch`` each chunk of ``{"body": text, "contentType": "text"}`` messages; a failed chunk again
    message by message."""
    for chunk in chunks:
        try:
            await queue.sendBatch(chunk)
        except Exception:
            await _one_by_one(queue, chunk, fail)


async def _one_by_one(queue: Any, chunk: list[dict[str, str]], fail: FailJob) -> None:
    for message in chunk:
        text = message["body"]
        named = msgspec.json.decode(text, type=_Named)
        try:
            await queue.sendBatch([message])
        except Exception:
            error = _unsendable(text)
            if error is None:
                # The queue's own failure: the job stays QUEUED and the reaper requeues (or stalls) it.
                _log.exception("dispatch of attempt %s of %s could not be sent", named.attempt, named.job_id)
                continue
            _log.error("job %s fails: %s", named.job_id, error)
            await fail(named.job_id, named.attempt, error)
