"""Key heads: only the first waiting job of each (concurrency_key, priority) group is in the dispatch indexes.

ADR-0054. A key's waiting jobs form one group per priority; within a group dispatch order is
``(eligible_at, created_at, id)`` at any instant (aging is the same for every level member, ADR-0011), so the
first of a group is the only one that can be the group's next dispatch. ``job_ready`` and ``job_eligible``
hold jobs without a key and group heads (``key_head = 1``); the dispatch read then passes a blocked key at the
cost of one row per priority level it waits on, however many jobs it holds.

Every change that moves a keyed job into, out of or within a group keeps the flag right:

- ``head_for_insert``: a new job is the head when it comes first (the old head steps down);
- ``settle``: after a job entered, left or moved in a group, the group's first job is the head;
- ``promote_after_dispatch``: a dispatch took heads away; the next job of each group steps up.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from tsumugi_scheduler.shard.port import SqlLike
from tsumugi_scheduler.shard.queries import KEY_GROUP_FIRST, PROMOTE_KEY_HEADS, SET_KEY_HEAD
from tsumugi_scheduler.shard.schema import JobRow

__all__ = ["head_for_insert", "promote_after_dispatch", "settle"]


def head_for_insert(sql: SqlLike, row: JobRow) -> int:
    """The ``key_head`` of a keyed job about to be inserted; steps the group's old head down if it comes first."""
    first = sql.exec(KEY_GROUP_FIRST, row.concurrency_key, row.priority, 1).toArray()
    if not first:
        return 1
    head = first[0]
    if (row.eligible_at, row.created_at, row.id) >= (
        int(head["eligible_at"]),
        int(head["created_at"]),
        str(head["id"]),
    ):
        return 0
    sql.exec("UPDATE job SET key_head = 0 WHERE id = ?", head["id"])
    return 1


def settle(sql: SqlLike, key: str, priority: int, moved: str) -> None:
    """Make the first waiting job of group ``(key, priority)`` its head after ``moved`` entered, left or moved.

    Only the group's first two jobs and ``moved`` can hold the flag wrongly (the old head is among them), so one
    statement over those ids sets it.
    """
    firsts = [str(r["id"]) for r in sql.exec(KEY_GROUP_FIRST, key, priority, 2).toArray()]
    if not firsts:
        return  # the group is empty: ``moved`` left it, and its flag means nothing outside SCHEDULED
    ids = msgspec.json.encode(sorted({*firsts, moved})).decode()
    sql.exec(SET_KEY_HEAD, firsts[0], ids)


def promote_after_dispatch(sql: SqlLike, groups: Iterable[tuple[str, int]]) -> None:
    """After a dispatch, the first waiting job of each ``(key, priority)`` group a dispatched job left is its head."""
    pairs = sorted(set(groups))
    if pairs:
        sql.exec(PROMOTE_KEY_HEADS, msgspec.json.encode(pairs).decode())
