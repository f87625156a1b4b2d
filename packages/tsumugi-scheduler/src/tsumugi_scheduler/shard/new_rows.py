"""New job rows as few ``INSERT ... SELECT FROM json_each`` statements that read little JSON (ADR-0167).

Each ``->>`` on a row's JSON text parses that text again (SQLite 3.40 keeps no parsed JSON between calls), so
the cost of a bulk insert grows with the values read per row, not with the bytes sent. A batch's rows share
most of their values: every job of a shard has its binding, and jobs enqueued together share their options,
their creation instant and usually their delay. So a value the whole batch shares is bound once as a
parameter, the columns every new job holds alike are written as SQL literals (`NEW_JOB_FIXED`), feed positions
that follow each other are computed from the row's index, and only what differs (the id, mostly the payload)
is read from each row's array.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, Final

from tsumugi_core.exceptions import TsumugiError
from tsumugi_core.states import JobState
from tsumugi_scheduler.json_batches import json_array_counts, read_per_row, uniform_columns
from tsumugi_scheduler.shard.schema import JobRow

__all__ = ["NEW_JOB_COLUMNS", "NEW_JOB_FIXED", "NotFreshRowError", "insert_statements"]


class NotFreshRowError(TsumugiError, ValueError):
    """A row given to `insert_statements` is not a job just admitted without keys (a bug in its caller)."""


_ALL_COLUMNS: Final = JobRow.__struct_fields__
NEW_JOB_FIXED: Final = {
    "state": "'SCHEDULED'",
    "attempts": "0",
    "concurrency_key": "NULL",
    "unique_key": "NULL",
    "dispatched_at": "NULL",
    "heartbeat_at": "NULL",
    "silence_at": "NULL",
    "progress": "NULL",
    "cancel_requested_at": "NULL",
    "result": "NULL",
    "error": "NULL",
    "reason": "NULL",
    "key_head": "1",
}
"""What every row of `insert_statements` holds in these columns (a job just admitted, without keys), as SQL."""
NEW_JOB_COLUMNS: Final = tuple(c for c in _ALL_COLUMNS if c not in NEW_JOB_FIXED and c != "updated_at")
"""The columns whose values come from the rows (``updated_at`` is ``created_at``)."""

_ID: Final = NEW_JOB_COLUMNS.index("id")
_SEQ: Final = NEW_JOB_COLUMNS.index("seq")
_CREATED: Final = NEW_JOB_COLUMNS.index("created_at")
_values: Final = operator.attrgetter(*NEW_JOB_COLUMNS)
_fixed: Final = operator.attrgetter(*NEW_JOB_FIXED)
_FRESH: Final = tuple(
    {"state": JobState.SCHEDULED, "attempts": 0, "key_head": 1}.get(c) for c in NEW_JOB_FIXED
)
_TARGET: Final = (
    f"INSERT INTO job ({', '.join(NEW_JOB_COLUMNS)}, updated_at, {', '.join(NEW_JOB_FIXED)}) SELECT "
)
_LITERALS: Final = ", ".join(NEW_JOB_FIXED.values())
_texts: dict[tuple[tuple[int, ...], bool], str] = {}


def _statement(shared: tuple[int, ...], counted: bool) -> str:
    """The statement for one shape: ``?1`` the rows' JSON, ``?2`` the first seq (when ``counted``), then the
    ``shared`` columns' values in order; every other column is read from each row (a bare value when it is
    the only one)."""
    text = _texts.get((shared, counted))
    if text is not None:
        return text
    bound = {column: f"?{number}" for number, column in enumerate(shared, 3)}
    read = [i for i in range(len(NEW_JOB_COLUMNS)) if i not in bound and not (counted and i == _SEQ)]
    per_row = {column: "value" if len(read) == 1 else f"value ->> {k}" for k, column in enumerate(read)}
    exprs = [
        bound.get(i) or per_row.get(i) or "?2 + key"  # the only column neither bound nor read: a counted seq
        for i in range(len(NEW_JOB_COLUMNS))
    ]
    text = f"{_TARGET}{', '.join(exprs)}, {exprs[_CREATED]}, {_LITERALS} FROM json_each(?1)"
    _texts[(shared, counted)] = text
    return text


def insert_statements(rows: Sequence[JobRow]) -> list[tuple[str, tuple[Any, ...]]]:
    """``(statement, parameters)`` pairs that insert ``rows``: one per `BATCH_BYTES` of JSON.

    Raises:
        NotFreshRowError: a row is not a job just admitted without keys (`NEW_JOB_FIXED`, ``updated_at`` equal to
            ``created_at``): such rows go through ``admit``.
    """
    if not rows:
        return []
    values = [_values(row) for row in rows]
    for row in rows:
        if _fixed(row) != _FRESH or row.updated_at != row.created_at:
            raise NotFreshRowError(f"insert_statements takes jobs just admitted without keys, not {row!r}")
    columns = list(zip(*values, strict=True))
    count = len(rows)
    shared = uniform_columns(columns, (i for i in range(len(NEW_JOB_COLUMNS)) if i not in (_ID, _SEQ)))
    first = columns[_SEQ][0]
    counted = columns[_SEQ] == tuple(range(first, first + count))
    read = [i for i in range(len(NEW_JOB_COLUMNS)) if i not in shared and not (counted and i == _SEQ)]
    per_row = read_per_row(values, read)
    statement = _statement(shared, counted)
    constants = tuple(columns[i][0] for i in shared)
    out: list[tuple[str, tuple[Any, ...]]] = []
    offset = 0
    for text, held in json_array_counts(per_row):
        # ?2 is bound whenever a later number is (SQLite counts parameters up to the highest number).
        second = (first + offset,) if counted or constants else ()
        out.append((statement, (text, *second, *constants)))
        offset += held
    return out
