"""The D1 read model: migrations, projection of shard snapshots, retention sweep and the list queries.

Everything here speaks only Cloudflare's D1 API shape (``d1_port``), so it runs unchanged on ``env.DB`` and
on the local runtime's emulation.
"""

from tsumugi_scheduler.readmodel.bulk import BULK_LIMIT, BulkFilter, select_ids_for_bulk
from tsumugi_scheduler.readmodel.d1_port import D1Like, D1StatementLike, StatementT
from tsumugi_scheduler.readmodel.detail import get_job, parse_attempts_log
from tsumugi_scheduler.readmodel.job_query import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    SORT_COLUMNS,
    JobQuery,
    SortColumn,
    SortOrder,
    parse_job_query,
)
from tsumugi_scheduler.readmodel.listing import list_jobs
from tsumugi_scheduler.readmodel.migrations import EXPECTED_MIGRATIONS, MIGRATIONS_LEDGER, pending_migrations
from tsumugi_scheduler.readmodel.projection import (
    ATTEMPTS_LOG_LIMIT,
    IMMUTABLE_COLUMNS,
    PROJECTED_COLUMNS,
    PROJECTION_BATCH_LIMIT,
    AttemptLogEntry,
    project,
)
from tsumugi_scheduler.readmodel.retry_window import DEFAULT_FAILED_RETENTION_MS, RetryWindow
from tsumugi_scheduler.readmodel.stats import distinct_bindings, stats
from tsumugi_scheduler.readmodel.sweep import (
    DEFAULT_SWEEP_LIMIT,
    DEFAULT_SWEEP_OLDER_THAN_MS,
    TERMINAL_RUN_STATES,
    SweepResult,
    sweep,
)
from tsumugi_scheduler.readmodel.views import BulkSelection, JobDetail, JobList, JobStats, JobSummary

__all__ = [
    "ATTEMPTS_LOG_LIMIT",
    "BULK_LIMIT",
    "DEFAULT_FAILED_RETENTION_MS",
    "DEFAULT_LIMIT",
    "DEFAULT_SWEEP_LIMIT",
    "DEFAULT_SWEEP_OLDER_THAN_MS",
    "EXPECTED_MIGRATIONS",
    "IMMUTABLE_COLUMNS",
    "MAX_LIMIT",
    "MIGRATIONS_LEDGER",
    "PROJECTED_COLUMNS",
    "PROJECTION_BATCH_LIMIT",
    "SORT_COLUMNS",
    "TERMINAL_RUN_STATES",
    "AttemptLogEntry",
    "BulkFilter",
    "BulkSelection",
    "D1Like",
    "D1StatementLike",
    "JobDetail",
    "JobList",
    "JobQuery",
    "JobStats",
    "JobSummary",
    "RetryWindow",
    "SortColumn",
    "SortOrder",
    "StatementT",
    "SweepResult",
    "distinct_bindings",
    "get_job",
    "list_jobs",
    "parse_attempts_log",
    "parse_job_query",
    "pending_migrations",
    "project",
    "select_ids_for_bulk",
    "stats",
    "sweep",
]
