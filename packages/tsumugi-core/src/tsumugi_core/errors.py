"""Error texts the shard records, shared by the engine, the consumer and the tests.

Example:
    >>> timeout_error("MAIL#0:abc", 5000)
    'job timed out (MAIL#0:abc, 5000ms)'
"""

from __future__ import annotations

from typing import Final

from tsumugi_core.options import MAX_ERROR_CHARS

__all__ = ["RESULT_NOT_STORABLE_ERROR", "timeout_error", "truncate_error"]

RESULT_NOT_STORABLE_ERROR: Final = "cannot store the result (over 8192 chars or not serializable)"
"""The failure a run-owned job's attempt gets when its result cannot be stored."""


def timeout_error(job_id: str, timeout_ms: int) -> str:
    """The message of a timed-out attempt: ``job timed out (<job_id>, <timeout_ms>ms)``."""
    return f"job timed out ({job_id}, {timeout_ms}ms)"


def truncate_error(text: str) -> str:
    """Cut an error text to ``MAX_ERROR_CHARS`` characters."""
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS]
