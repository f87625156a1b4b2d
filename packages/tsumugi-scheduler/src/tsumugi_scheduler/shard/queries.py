"""The SQL texts of ``SqlShardStore``: the one-statement hot paths and the index-pinned fragments.

Kept apart from the store so the plans can be checked statement by statement (tests/unit/shard/test_indexes.py)
and the store reads as use cases. Every statement is bounded by an index or a LIMIT.
"""

from __future__ import annotations

from typing import Final

from tsumugi_scheduler.shard.port import CompletedJob
from tsumugi_scheduler.shard.schema import JobRow

__all__ = [
    "ACTIVE_EXPIRY",
    "BY_ELIGIBLE",
    "BY_KEY",
    "BY_LEVEL",
    "COMPLETE_MANY",
    "COMPLETE_QUERY",
    "DISPATCHED_NAMES",
    "DISPATCH_QUERY",
    "HEAD_COLUMNS",
    "HEAD_NAMES",
    "HELD_KEYS",
    "INFLIGHT",
    "INSERT_JOB",
    "JOB_COLUMNS",
    "JOB_FEED",
    "JOB_FEED_UP_TO",
    "KEY_GROUP_FIRST",
    "KEY_GROUP_NEXT",
    "LEVEL_HEADS",
    "LEVEL_HEADS_AFTER",
    "NEXT_READY_LEVEL",
    "OLDEST_READY",
    "OLDEST_READY_AFTER",
    "OVERVIEW_QUERY",
    "PROMOTE_KEY_HEADS",
    "READY_COUNT",
    "SET_KEY_HEAD",
    "START_QUERY",
    "STATE_INDEX",
    "SWEEPABLE",
]

JOB_COLUMNS: Final = JobRow.__struct_fields__
STATE_INDEX: Final = JOB_COLUMNS.index("state")
INSERT_JOB: Final = f"INSERT INTO job ({', '.join(JOB_COLUMNS)}) VALUES ({', '.join('?' * len(JOB_COLUMNS))})"
HEAD_COLUMNS: Final = "id, priority, eligible_at, created_at, concurrency_key, expires_at"
HEAD_NAMES: Final = tuple(name.strip() for name in HEAD_COLUMNS.split(","))
_HEAD_ARRAY: Final = f"json_array({HEAD_COLUMNS}) AS h"
"""A dispatch read's row as the text of one JSON array of `HEAD_NAMES`: one value crosses per row, not six (the
dispatch read is a tick's largest; ADR-0166)."""


def _row_as_json_array(columns: tuple[str, ...], per_call: int = 30) -> str:
    """An SQL expression giving a row as the text of one JSON array of ``columns``, in their order.

    workerd allows 32 arguments a function call, so a longer row is built in parts of ``per_call`` columns
    whose texts are spliced: each part's closing ``]`` and the next part's opening ``[`` become one ``,`` (a
    part ends in a value's last character, never in ``]``: text values are quoted, nothing here is an array).
    """
    parts = [columns[i : i + per_call] for i in range(0, len(columns), per_call)]
    texts: list[str] = []
    for index, part in enumerate(parts):
        text = f"json_array({', '.join(part)})"
        if index > 0:
            text = f"substr({text}, 2)"
        if index < len(parts) - 1:
            text = f"rtrim({text}, ']')"
        texts.append(text)
    return " || ',' || ".join(texts)


_JOB_AS_JSON: Final = _row_as_json_array(JOB_COLUMNS)
JOB_FEED: Final = f"SELECT {_JOB_AS_JSON} AS j FROM job WHERE seq > ? ORDER BY seq LIMIT ?"
"""The job feed after a seq, one JSON array text a row in `JOB_COLUMNS` order: one value crosses per row instead
of one per column (ADR-0153), and an array costs SQLite and msgspec less than an object (ADR-0180)."""
JOB_FEED_UP_TO: Final = f"SELECT {_JOB_AS_JSON} AS j FROM job WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?"
"""What choosing needs; the payload is read only for the jobs actually dispatched (``dispatch``)."""
DISPATCHED_NAMES: Final = (
    "id",
    "attempts",
    "max_attempts",
    "timeout_ms",
    "guarantee",
    "payload",
    "traceparent",
    "concurrency_key",
    "priority",
)
"""What the dispatch statement answers of each job it moved, as one JSON array text (``d``; ADR-0166)."""
DISPATCH_QUERY: Final = (
    # One statement moves the whole batch: each id's position in the JSON array gives its feed seq. The unary
    # plus keeps the planner on the primary key (one lookup per id) rather than scanning SCHEDULED rows.
    "UPDATE job SET state = 'QUEUED', updated_at = ?1, dispatched_at = ?1, heartbeat_at = NULL, progress = NULL,"
    " silence_at = ?1 + timeout_ms, seq = ?2 + picked.key FROM json_each(?3) AS picked"
    " WHERE job.id = picked.value AND +job.state = 'SCHEDULED'"
    f" RETURNING json_array({', '.join(DISPATCHED_NAMES)}) AS d"
)
START_QUERY: Final = (
    # One statement marks a batch of started attempts RUNNING (ADR-0052): ?3 is a JSON array of
    # [job id, attempt] pairs, each fenced by the live attempt; the start is the attempt's first sign of life,
    # so silence counts from it, but it never postpones a pending cancel request.
    "UPDATE job SET state = 'RUNNING', updated_at = ?1, heartbeat_at = ?1, progress = NULL,"
    " silence_at = CASE WHEN cancel_requested_at IS NULL THEN ?1 + timeout_ms"
    " ELSE MIN(?1 + timeout_ms, cancel_requested_at) END, seq = ?2 + started.key"
    " FROM json_each(?3) AS started"
    " WHERE job.id = json_extract(started.value, '$[0]') AND +job.state = 'QUEUED'"
    " AND job.attempts = json_extract(started.value, '$[1]') - 1"
    " RETURNING id, attempts + 1 AS attempt"
)
INFLIGHT: Final = "state IN ('QUEUED', 'RUNNING')"
# Aggregates over ready jobs name their partial index: left to itself the planner picks job_state (state=?)
# and walks every SCHEDULED row, which makes a tick O(backlog) (tests/unit/shard/test_indexes.py).
# Both dispatch indexes hold only key heads (ADR-0054): a key's other waiting jobs are never read by the walk.
BY_ELIGIBLE: Final = "INDEXED BY job_eligible WHERE state = 'SCHEDULED' AND key_head = 1"
BY_LEVEL: Final = "INDEXED BY job_ready WHERE state = 'SCHEDULED' AND key_head = 1"
BY_KEY: Final = "INDEXED BY job_key WHERE state = 'SCHEDULED' AND concurrency_key IS NOT NULL"
_ORDER: Final = "ORDER BY eligible_at, created_at, id"
LEVEL_HEADS: Final = (
    f"SELECT {_HEAD_ARRAY} FROM job {BY_LEVEL} AND priority = ? AND eligible_at <= ? {_ORDER} LIMIT ?"
)
"""The best ready jobs of one level: within a level, aging makes the oldest the best (ADR-0011)."""
LEVEL_HEADS_AFTER: Final = (
    f"SELECT {_HEAD_ARRAY} FROM job {BY_LEVEL} AND priority = ?1 AND eligible_at <= ?2"
    f" AND (eligible_at, created_at, id) > (?3, ?4, ?5) {_ORDER} LIMIT ?6"
)
"""The next page of one level after the row ``(?3, ?4, ?5)``, when jobs of blocked keys filled a page."""
READY_COUNT: Final = (
    f"SELECT COUNT(*) AS n FROM (SELECT 1 FROM job {BY_ELIGIBLE} AND eligible_at <= ? LIMIT ?)"
)
"""Ready key heads, counted up to a limit through the index (ADR-0179)."""
OLDEST_READY: Final = f"SELECT {_HEAD_ARRAY} FROM job {BY_ELIGIBLE} AND eligible_at <= ? {_ORDER} LIMIT ?"
"""The longest-waiting ready jobs, whatever their level: the aged jobs a capped level walk could miss."""
OLDEST_READY_AFTER: Final = (
    f"SELECT {_HEAD_ARRAY} FROM job {BY_ELIGIBLE} AND eligible_at <= ?1"
    f" AND (eligible_at, created_at, id) > (?2, ?3, ?4) {_ORDER} LIMIT ?5"
)
KEY_GROUP_FIRST: Final = f"SELECT id, eligible_at, created_at FROM job {BY_KEY} AND concurrency_key = ? AND priority = ? {_ORDER} LIMIT ?"
"""The first jobs of one (concurrency_key, priority) group in dispatch order: the first is its head."""
KEY_GROUP_NEXT: Final = (
    f"SELECT {_HEAD_ARRAY} FROM job {BY_KEY} AND concurrency_key = ?1 AND priority = ?2 AND eligible_at <= ?3"
    f" AND (eligible_at, created_at, id) > (?4, ?5, ?6) {_ORDER} LIMIT ?7"
)
"""Ready jobs of a group after its head: a key with room for several jobs gets them in one tick."""
SET_KEY_HEAD: Final = "UPDATE job SET key_head = (id = ?1) WHERE id IN (SELECT value FROM json_each(?2))"
"""Make ?1 the head among the ids in the JSON array ?2 (the group's first jobs and the job that moved)."""
PROMOTE_KEY_HEADS: Final = (
    # After a dispatch, the first waiting job of each group a dispatched job came from is its head.
    "UPDATE job SET key_head = 1 WHERE id IN (SELECT (SELECT j.id FROM job AS j INDEXED BY job_key"
    " WHERE j.state = 'SCHEDULED' AND j.concurrency_key IS NOT NULL AND j.concurrency_key = json_extract(g.value, '$[0]')"
    " AND j.priority = json_extract(g.value, '$[1]') ORDER BY j.eligible_at, j.created_at, j.id LIMIT 1)"
    " FROM json_each(?1) AS g) AND key_head = 0"
)
_LEVEL_BELOW: Final = f"SELECT MAX(priority) FROM job {BY_LEVEL} AND priority < "
_READY_AT_LEVEL: Final = f"SELECT 1 FROM job {BY_LEVEL} AND priority = level.p AND eligible_at <= ?2"
NEXT_READY_LEVEL: Final = (
    # A skip scan over job_ready: each step is two index seeks (the next lower level, and whether it holds a
    # job with eligible_at <= now), so levels holding only delayed jobs are passed over inside one statement
    # without reading their rows. ?1 = exclusive upper bound, ?2 = now, ?3 = most levels to look at.
    f"WITH RECURSIVE level(p, n) AS (SELECT ({_LEVEL_BELOW}?1), 1"
    f" UNION ALL SELECT ({_LEVEL_BELOW}level.p), level.n + 1 FROM level"
    f" WHERE level.p IS NOT NULL AND level.n < ?3 AND NOT EXISTS ({_READY_AT_LEVEL}))"
    f" SELECT p AS level, n AS probes, EXISTS ({_READY_AT_LEVEL}) AS ready FROM level ORDER BY n DESC LIMIT 1"
)
"""The highest level below ?1 holding a ready job (``ready`` = 1), or the last level looked at within ?3 probes."""
HELD_KEYS: Final = (
    "SELECT key AS k, COUNT(*) AS n FROM key_hold INDEXED BY key_hold_until WHERE until > ? GROUP BY key"
)
"""Slots per concurrency key held by attempts that may still run (ADR-0185): only the live holds are read."""
ACTIVE_EXPIRY: Final = (
    "expires_at IS NOT NULL AND cancel_requested_at IS NULL AND state IN ('SCHEDULED', 'QUEUED', 'RUNNING')"
)
SWEEPABLE: Final = (
    "((state IN ('COMPLETED', 'CANCELLED') AND updated_at < ?) OR (state IN ('FAILED', 'STALLED') AND updated_at < ?))"
    " AND seq <= ?"
)

COMPLETE_QUERY: Final = (
    "UPDATE job SET state = 'COMPLETED', updated_at = ?1, heartbeat_at = NULL, progress = NULL,"
    " attempts = attempts + 1, result = ?2, silence_at = NULL, seq = ?3"
    " WHERE id = ?4 AND state IN ('QUEUED', 'RUNNING') AND attempts = ?5"
    f" RETURNING {', '.join(CompletedJob.__struct_fields__)}"
)
COMPLETE_MANY: Final = (
    "UPDATE job SET state = 'COMPLETED', updated_at = ?1, heartbeat_at = NULL, progress = NULL,"
    " attempts = attempts + 1, result = r.value ->> 2, silence_at = NULL, seq = ?2 + r.key"
    " FROM json_each(?3) AS r WHERE job.id = r.value ->> 0 AND +job.state IN ('QUEUED', 'RUNNING')"
    " AND job.attempts = r.value ->> 1"
    " RETURNING json_array(json_object("
    + ", ".join(f"'{name}', {name}" for name in CompletedJob.__struct_fields__)
    + "), seq) AS c"
)
"""`COMPLETE_QUERY` for many reports: ?3 is a JSON array of ``[job id, attempts before, result]`` with distinct
ids; the row at index k takes seq ?2 + k (ADR-0153). ``+job.state`` keeps the planner on the primary key (on
job_state it would walk every job in flight once per report)."""
OVERVIEW_QUERY: Final = (
    # Each sub-select is one indexed lookup (tests/unit/shard/test_indexes.py); one exec answers them all.
    f"SELECT (SELECT MIN(eligible_at) FROM job {BY_ELIGIBLE}) AS oldest_ready_at,"
    # ?1 is the instant dispatch last looked, so a job that became eligible since then still counts.
    f" (SELECT MIN(eligible_at) FROM job {BY_ELIGIBLE} AND eligible_at > ?1) AS next_delayed_at,"
    f" (SELECT MIN(silence_at) FROM job INDEXED BY job_silence WHERE {INFLIGHT}) AS next_silence_at,"
    f" (SELECT MIN(expires_at) FROM job INDEXED BY job_expiry WHERE {ACTIVE_EXPIRY}) AS next_expiry_at,"
    " (SELECT MIN(updated_at) FROM job WHERE state IN ('COMPLETED', 'CANCELLED')) AS oldest_settled_at,"
    " (SELECT MIN(updated_at) FROM job WHERE state IN ('FAILED', 'STALLED')) AS oldest_failed_at,"
    " (SELECT MIN(expires_at) FROM unique_key) AS next_unique_expiry_at,"
    " (SELECT MIN(refilled_at) FROM key_bucket) AS oldest_key_bucket_at,"
    " (SELECT MIN(run_after) FROM job INDEXED BY job_sleep WHERE state = 'SLEEPING') AS next_sleeper_at,"
    " (SELECT MIN(until) FROM key_hold) AS next_hold_end_at,"
    # ?2 is the projection cursor; changes in (?3, ?4] are held (the last tick's own), the rest are due now.
    " (EXISTS (SELECT 1 FROM job WHERE seq > ?2 AND seq <= ?3) OR EXISTS (SELECT 1 FROM job WHERE seq > max(?2, ?4))"
    " OR EXISTS (SELECT 1 FROM notice) OR EXISTS (SELECT 1 FROM run_event)) AS outbox_pending,"
    " EXISTS (SELECT 1 FROM job WHERE seq > max(?2, ?3) AND seq <= ?4) AS held_pending"
)
