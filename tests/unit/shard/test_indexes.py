"""Choosing a dispatch batch reads by index, never the backlog (docs/design/job-shard.md §3)."""

from __future__ import annotations

from shard_world import World

QUERIES = [
    ("SELECT MIN(eligible_at) AS v FROM job WHERE state = 'SCHEDULED'", ()),
    ("SELECT MAX(priority) AS v FROM job WHERE state = 'SCHEDULED' AND priority < ?", (5,)),
    (
        "SELECT id FROM job WHERE state = 'SCHEDULED' AND priority = ? AND eligible_at <= ?"
        " ORDER BY eligible_at, created_at, id LIMIT ?",
        (0, 10, 5),
    ),
    ("SELECT MIN(silence_at) AS v FROM job INDEXED BY job_silence WHERE state IN ('QUEUED', 'RUNNING')", ()),
    (
        "SELECT * FROM job INDEXED BY job_silence WHERE state IN ('QUEUED', 'RUNNING') AND silence_at <= ?"
        " ORDER BY silence_at LIMIT 5",
        (1,),
    ),
    (
        "SELECT id FROM job INDEXED BY job_expiry WHERE expires_at IS NOT NULL AND cancel_requested_at IS NULL AND state IN"
        " ('SCHEDULED', 'QUEUED', 'RUNNING') AND expires_at <= ? ORDER BY expires_at LIMIT 5",
        (1,),
    ),
    ("SELECT * FROM job WHERE seq > ? ORDER BY seq LIMIT 5", (0,)),
]


def test_dispatch_and_maintenance_reads_use_indexes(world: World) -> None:
    for query, params in QUERIES:
        plan = " ".join(str(row["detail"]) for row in world.sql.exec(f"EXPLAIN QUERY PLAN {query}", *params))
        assert "USING" in plan, (query, plan)
        assert "INDEX" in plan, (query, plan)
        assert "TEMP B-TREE" not in plan, (query, plan)
