"""The read model's D1 migrations, as the code expects them, and which of them a database still lacks.

``migrations/`` at the repository root holds the SQL files; ``wrangler d1 migrations apply`` (or the local
runtime's ``apply_d1_migrations``) applies them and records each file name in the ``d1_migrations`` ledger.
A drift test keeps ``EXPECTED_MIGRATIONS`` equal to the folder. The package ships a copy as package data
(``tsumugi_scheduler/d1_migrations``), which ``tsumugi init`` writes into a new project; a test keeps the copy
equal to ``migrations/`` (ADR-0049).
"""

from __future__ import annotations

from typing import Final

from tsumugi_scheduler.readmodel.d1_port import D1Like, StatementT, result_rows

__all__ = ["EXPECTED_MIGRATIONS", "MIGRATIONS_LEDGER", "pending_migrations"]

EXPECTED_MIGRATIONS: Final[tuple[str, ...]] = (
    # The original's eight, names kept verbatim so a database migrated by the original counts as applied.
    "0001_create_job_read_model.sql",
    "0002_add_attempt_log.sql",
    "0003_add_result.sql",
    "0004_create_run_read_model.sql",
    "0005_add_subflow.sql",
    "0006_add_run_after.sql",
    "0007_add_key_indexes.sql",
    "0008_add_progress.sql",
    # Ours.
    "0009_add_job_detail_columns.sql",
    "0010_add_list_indexes.sql",
    "0011_partial_key_indexes.sql",
    "0012_add_run_output.sql",
    "0013_add_run_node_times.sql",
    "0014_create_dashboard_session.sql",
    "0015_create_action_log.sql",
    "0016_add_bulk_target_index.sql",
)
"""Every migration file the code relies on, in the order they apply."""

MIGRATIONS_LEDGER: Final = "d1_migrations"
"""The table in which wrangler records applied migration file names."""

_LEDGER_EXISTS = "SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = ?"
_APPLIED = f"SELECT name FROM {MIGRATIONS_LEDGER}"


async def pending_migrations(d1: D1Like[StatementT]) -> list[str]:
    """The expected migrations not recorded in the ledger, in order.

    A database with no ledger table has had nothing applied, so every migration is pending. Other D1
    failures propagate: they say nothing about the schema and must not be reported as missing migrations.

    Args:
        d1: The read-model database.

    Returns:
        File names from ``EXPECTED_MIGRATIONS`` still to apply (empty when the schema is current).
    """
    # Asking sqlite_master first avoids relying on the text of a "no such table" error, which differs
    # between D1 and sqlite3.
    if await d1.prepare(_LEDGER_EXISTS).bind(MIGRATIONS_LEDGER).first() is None:
        return list(EXPECTED_MIGRATIONS)
    applied = {str(row["name"]) for row in result_rows(await d1.prepare(_APPLIED).all())}
    return [name for name in EXPECTED_MIGRATIONS if name not in applied]
