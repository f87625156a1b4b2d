"""Migration drift: the files, the ledger check, and the schema the projector and queries rely on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.unit.readmodel.readmodel_world import MIGRATIONS_DIR
from tsumugi_dev.d1 import D1Database, D1Error, apply_d1_migrations, split_statements
from tsumugi_scheduler.readmodel import EXPECTED_MIGRATIONS, PROJECTED_COLUMNS, pending_migrations

ORIGINAL_EIGHT = (
    "0001_create_job_read_model.sql",
    "0002_add_attempt_log.sql",
    "0003_add_result.sql",
    "0004_create_run_read_model.sql",
    "0005_add_subflow.sql",
    "0006_add_run_after.sql",
    "0007_add_key_indexes.sql",
    "0008_add_progress.sql",
)


def _columns(db: D1Database, table: str) -> list[str]:
    return [r[0] for r in db.connection.execute("SELECT name FROM pragma_table_info(?)", (table,))]


def test_expected_migrations_are_the_files_in_order() -> None:
    assert tuple(sorted(p.name for p in MIGRATIONS_DIR.glob("*.sql"))) == EXPECTED_MIGRATIONS


def test_the_originals_eight_come_first_with_their_exact_names() -> None:
    # A database migrated by the original has these names in its ledger; renaming one would re-apply it.
    assert EXPECTED_MIGRATIONS[:8] == ORIGINAL_EIGHT


def test_applied_schema_has_exactly_the_columns_the_projector_writes(d1: D1Database) -> None:
    assert sorted(_columns(d1, "job")) == sorted(PROJECTED_COLUMNS)
    assert len(PROJECTED_COLUMNS) == len(set(PROJECTED_COLUMNS))


def test_run_tables_match_the_reference(d1: D1Database) -> None:
    assert _columns(d1, "run") == [
        "id",
        "seq",
        "flow",
        "state",
        "input",
        "node_total",
        "node_done",
        "node_failed",
        "created_at",
        "updated_at",
        "parent_run_id",
        "parent_node_id",
        "output",  # beyond the original: migration 0012 (ADR-0084)
    ]
    assert _columns(d1, "run_node") == [
        "run_id",
        "node_id",
        "seq",
        "binding",
        "state",
        "container",
        "parent",
        "origin",
        "after",
        "job_id",
        "result",
        "error",
        "position",
        "created_at",
        "updated_at",
        "child_run_id",
        "scheduled_at",
        "finished_at",  # beyond the original: migration 0013 (ADR-0094)
    ]


def test_after_the_original_eight_the_reference_indexes_exist(tmp_path: Path) -> None:
    original = tmp_path / "original"
    original.mkdir()
    for name in ORIGINAL_EIGHT:
        (original / name).write_text((MIGRATIONS_DIR / name).read_text())
    db = D1Database(tmp_path / "db.sqlite")
    apply_d1_migrations(db, original)
    indexes = {
        name: [c for (c,) in db.connection.execute("SELECT name FROM pragma_index_info(?)", (name,))]
        for (name,) in db.connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
        )
    }
    assert indexes == {
        "job_state": ["state", "updated_at"],
        "job_binding": ["binding", "updated_at"],
        "job_created": ["created_at"],
        "job_unique_key": ["unique_key", "updated_at"],
        "job_concurrency_key": ["concurrency_key", "updated_at"],
        "run_state": ["state", "updated_at"],
        "run_flow": ["flow", "updated_at"],
        "run_created": ["created_at"],
        "run_updated": ["updated_at", "id"],
        "run_node_run": ["run_id", "position"],
    }
    db.close()


def test_after_every_migration_the_indexes_are_the_list_indexes_and_four_partial_ones(
    d1: D1Database,
) -> None:
    # Each index costs a write on every projected change; 0011 and 0016 keep rows out of the ones that never
    # serve them (ADR-0033, ADR-0160). An index that lost its WHERE would take an entry for every job again.
    conn = d1.connection
    indexes = {
        name: ([c for (c,) in conn.execute("SELECT name FROM pragma_index_info(?)", (name,))], bool(partial))
        for (name, partial) in conn.execute(
            "SELECT name, partial FROM pragma_index_list('job') WHERE origin = 'c'"
        )
    }
    assert indexes == {
        "job_state_recent": (["state", "updated_at", "id"], False),
        "job_binding_recent": (["binding", "updated_at", "id"], False),
        "job_recent": (["updated_at", "id"], False),
        "job_created_recent": (["created_at", "id"], False),
        "job_concurrency_key_recent": (["concurrency_key", "updated_at", "id"], True),
        "job_unique_key_recent": (["unique_key", "updated_at", "id"], True),
        "job_scheduled_due": (["run_after", "created_at"], True),
        "job_bulk_targets": (["binding", "state", "created_at", "id"], True),
    }
    conditions = {
        name: " ".join(sql.split(" WHERE ", 1)[1].split())
        for (name, sql) in conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql LIKE '%WHERE%'"
        )
    }
    assert conditions == {
        "job_concurrency_key_recent": "concurrency_key IS NOT NULL",
        "job_unique_key_recent": "unique_key IS NOT NULL",
        "job_scheduled_due": "state = 'SCHEDULED'",
        # ADR-0160: bulk selection repeats this term (readmodel/bulk.py) so that SQLite can use the index.
        "job_bulk_targets": "state IN ('SCHEDULED', 'FAILED', 'STALLED')",
    }


@pytest.mark.parametrize("name", EXPECTED_MIGRATIONS)
def test_every_index_says_why_it_exists(name: str) -> None:
    for statement in split_statements((MIGRATIONS_DIR / name).read_text()):
        if re.search(r"\bCREATE\s+INDEX\b", statement, re.IGNORECASE):
            assert statement.lstrip().startswith("--"), (
                f"{name}: no comment before {statement.splitlines()[-1]}"
            )


async def test_no_ledger_means_every_migration_is_pending(tmp_path: Path) -> None:
    db = D1Database(tmp_path / "empty.sqlite")
    assert await pending_migrations(db) == list(EXPECTED_MIGRATIONS)
    db.close()


async def test_a_migrated_database_has_nothing_pending(d1: D1Database) -> None:
    assert await pending_migrations(d1) == []


async def test_missing_files_are_reported_in_order(d1: D1Database) -> None:
    d1.connection.execute(
        "DELETE FROM d1_migrations WHERE name IN (?, ?)", (EXPECTED_MIGRATIONS[9], EXPECTED_MIGRATIONS[2])
    )
    assert await pending_migrations(d1) == [EXPECTED_MIGRATIONS[2], EXPECTED_MIGRATIONS[9]]


async def test_other_database_errors_are_not_reported_as_missing_migrations(tmp_path: Path) -> None:
    # A ledger that cannot be read says nothing about which files ran: the error must surface (the REST
    # layer answers "temporarily unavailable", never "apply migrations").
    db = D1Database(tmp_path / "odd.sqlite")
    db.connection.execute("CREATE TABLE d1_migrations (id INTEGER PRIMARY KEY)")
    with pytest.raises(D1Error, match="name"):
        await pending_migrations(db)
    db.close()
