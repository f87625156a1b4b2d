"""New job rows stored by `insert_statements`: every column as given, whatever the rows share (ADR-0167)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from tests.contract.test_store import row
from tsumugi_core.states import JobState
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.shard.new_rows import insert_statements
from tsumugi_scheduler.shard.schema import JobRow
from tsumugi_scheduler.shard.sql_store import SqlShardStore

T0 = 1_767_225_600_000


def _row(n: int, **changes: Any) -> JobRow:
    """A fresh job row (tests/contract/test_store.py's), its payload and seq told apart by ``n``."""
    with SqlStorage() as scratch:
        base = row(SqlShardStore(scratch), f"job{n:04d}")
    return msgspec.structs.replace(base, **{"payload": f'{{"n":{n}}}', "seq": 100 + n, **changes})


def _stored(sql: SqlStorage) -> list[JobRow]:
    return [msgspec.convert(r, JobRow) for r in sql.exec("SELECT * FROM job ORDER BY id").toArray()]


@pytest.fixture
def sql() -> Iterator[SqlStorage]:
    with SqlStorage() as storage:
        yield storage


def _insert(sql: SqlStorage, rows: list[JobRow]) -> list[str]:
    store = SqlShardStore(sql)
    statements = [text for text, _ in insert_statements(rows)]
    store.insert_new(rows)
    return statements


def test_a_batch_sharing_its_options_reads_only_id_and_payload_and_stores_every_column(
    sql: SqlStorage,
) -> None:
    rows = [_row(n) for n in range(5)]
    statements = _insert(sql, rows)
    assert _stored(sql) == rows
    assert [s.count("->>") for s in statements] == [2]
    assert "?2 + key" in statements[0]


def test_rows_differing_in_every_column_they_may_are_stored_as_given(sql: SqlStorage) -> None:
    rows = [
        _row(0),
        _row(
            1,
            binding="MAIL",
            priority=7,
            max_attempts=1,
            guarantee="at_most_once",
            timeout_ms=5_000,
            backoff='{"kind":"fixed","delay_ms":10}',
            run_after=T0 + 9_000,
            eligible_at=T0 + 9_000,
            expires_at=T0 + 60_000,
            created_at=T0 + 1,
            updated_at=T0 + 1,
            traceparent="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            run_id="flow:r1",
            node_id="a",
        ),
        _row(2, priority=-3, payload="null", seq=900),  # seqs that do not follow each other
    ]
    statements = _insert(sql, rows)
    assert _stored(sql) == rows
    assert "?2 + key" not in statements[0]


def test_one_row_is_read_as_a_bare_id(sql: SqlStorage) -> None:
    rows = [_row(3)]
    statements = _insert(sql, rows)
    assert _stored(sql) == rows
    assert statements[0].count("->>") == 0


def test_batches_cut_by_size_keep_each_rows_seq(sql: SqlStorage) -> None:
    big = "x" * 400_000
    rows = [_row(n, payload=f'"{big}{n}"') for n in range(4)]  # over BATCH_BYTES: several statements
    statements = _insert(sql, rows)
    assert len(statements) > 1
    assert _stored(sql) == rows


@pytest.mark.parametrize(
    "changes",
    [
        {"state": JobState.QUEUED},
        {"attempts": 1},
        {"concurrency_key": "k"},
        {"unique_key": "u"},
        {"updated_at": T0 + 1},
        {"result": "1"},
        {"key_head": 0},
    ],
)
def test_a_row_that_is_not_a_fresh_job_without_keys_is_refused_and_nothing_is_stored(
    changes: dict[str, Any], sql: SqlStorage
) -> None:
    store = SqlShardStore(sql)
    with pytest.raises(ValueError, match="just admitted without keys"):
        store.insert_new([_row(0), _row(1, **changes)])
    assert _stored(sql) == []
