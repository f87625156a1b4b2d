"""The Run object's store on the real SQL (sqlite3 with workerd's bind limit): bulk work over many nodes is
a few statements, not one per node, and the rows come out as they went in."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import msgspec
import pytest

from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.run import sql_store as run_store
from tsumugi_scheduler.run.rows import NodeRow
from tsumugi_scheduler.run.sql_store import SqlRunStore
from tsumugi_scheduler.run.steps import ChildError, spawn_rows

T = TypeVar("T")


class CountingSql:
    """The object's SQL with every statement recorded."""

    def __init__(self, sql: SqlStorage) -> None:
        self.sql = sql
        self.statements: list[str] = []

    def exec(self, query: str, *params: Any) -> Any:
        self.statements.append(query)
        return self.sql.exec(query, *params)

    def transaction_sync(self, fn: Callable[[], T]) -> T:
        return self.sql.transaction_sync(fn)


def opened(sql: Any) -> SqlRunStore:
    """A store with its tables made (as a run's start makes them)."""
    store = SqlRunStore(sql)
    store.create()
    return store


@pytest.fixture
def sql() -> Iterator[CountingSql]:
    storage = SqlStorage()
    yield CountingSql(storage)
    storage.close()


def children(count: int) -> list[dict[str, Any]]:
    return [
        {"id": f"each:{i}", "payload": f'{{"n":{i}}}', "options": "{}", "seq": 1 + i} for i in range(count)
    ]


SHARED = {
    "binding": "Hello",
    "state": "PENDING",
    "container": 0,
    "parent": "each",
    "origin": "fanOut",
    "after": "[]",
    "gen": 0,
    "sent": 0,
    "created_at": 5,
    "updated_at": 5,
}


def test_a_thousand_children_are_inserted_started_and_finished_in_a_handful_of_statements(
    sql: CountingSql,
) -> None:
    store = opened(sql)
    ids = [f"each:{i}" for i in range(1_000)]
    sql.statements.clear()
    store.atomically(lambda: store.insert_nodes(children(1_000), SHARED))
    store.atomically(
        lambda: store.patch_nodes(
            {
                node_id: {"state": "SCHEDULED", "job_id": f"Hello#0:j{i}", "sent": 0, "updated_at": 6}
                for i, node_id in enumerate(ids)
            }
        )
    )
    store.atomically(lambda: store.update_nodes(ids, sent=1))
    changed = store.atomically(
        lambda: store.finish_nodes(
            [(node_id, f"Hello#0:j{i}", "COMPLETED", '"ok"', None) for i, node_id in enumerate(ids)], 7
        )
    )
    store.atomically(lambda: store.outbox_nodes(ids))

    assert len(sql.statements) <= 15  # one per node would be 4,000
    assert sorted(changed) == sorted(ids)
    rows = store.nodes()
    assert len(rows) == 1_000
    assert msgspec.structs.asdict(rows[3]) == {
        **SHARED,
        "id": "each:3",
        "payload": '{"n":3}',
        "options": "{}",
        "seq": 4,
        "state": "COMPLETED",
        "job_id": "Hello#0:j3",
        "sent": 1,
        "result": '"ok"',
        "error": None,
        "updated_at": 7,
        "subflow": None,
        "child_run_id": None,
        "scheduled_at": 6,
        "finished_at": 7,
        "hold_until": None,
        "steps_from": None,
    }
    assert len(store.outbox(5_000)) == 1_000


def test_an_inserted_node_keeps_an_existing_id(sql: CountingSql) -> None:
    store = opened(sql)
    store.insert_nodes(children(2), SHARED)
    store.insert_nodes([{"id": "each:1", "payload": '"other"', "options": "{}", "seq": 9}], SHARED)
    assert [(n.id, n.payload) for n in store.nodes()] == [("each:0", '{"n":0}'), ("each:1", '{"n":1}')]


def test_patches_take_each_nodes_own_values_and_values_they_share(sql: CountingSql) -> None:
    store = opened(sql)
    store.insert_nodes(children(3), SHARED)
    store.patch_nodes(
        {
            "each:0": {"state": "FAILED", "error": "boom", "updated_at": 9},
            "each:1": {"state": "FAILED", "error": "bang", "updated_at": 9},
            "each:2": {"state": "SKIPPED", "updated_at": 8},
        }
    )
    got = {n.id: (n.state, n.error, n.updated_at) for n in store.nodes()}
    assert got == {
        "each:0": ("FAILED", "boom", 9),
        "each:1": ("FAILED", "bang", 9),
        "each:2": ("SKIPPED", None, 8),
    }
    assert [v.state for v in store.views()] == ["FAILED", "FAILED", "SKIPPED"]


def test_patches_over_the_byte_bound_are_split_and_none_is_lost(
    sql: CountingSql, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_store, "PATCH_BYTES", 200)
    store = opened(sql)
    store.insert_nodes(children(40), SHARED)
    sql.statements.clear()
    store.patch_nodes({f"each:{i}": {"error": f"e{i}" * 10} for i in range(40)})
    assert len(sql.statements) > 1
    assert [n.error for n in store.nodes()] == [f"e{i}" * 10 for i in range(40)]


def test_an_outcome_applies_only_to_a_node_waiting_on_that_job(sql: CountingSql) -> None:
    store = opened(sql)
    store.insert_nodes(children(3), SHARED)
    store.patch_nodes(
        {
            "each:0": {"state": "SCHEDULED", "job_id": "j0"},
            "each:1": {"state": "SCHEDULED", "job_id": "j1"},
            "each:2": {"state": "COMPLETED", "job_id": "j2"},
        }
    )
    changed = store.finish_nodes(
        [
            ("each:0", "j0", "FAILED", None, "no"),  # its job: applies
            ("each:1", "old", "COMPLETED", '"x"', None),  # a job from before a resume: stale
            ("each:2", "j2", "FAILED", None, "late"),  # already ended: a duplicate
            ("ghost", "j9", "COMPLETED", None, None),  # no such node
        ],
        11,
    )
    assert changed == ["each:0"]
    assert {n.id: (n.state, n.error) for n in store.nodes()} == {
        "each:0": ("FAILED", "no"),
        "each:1": ("SCHEDULED", None),
        "each:2": ("COMPLETED", None),
    }


def test_a_node_is_stamped_when_scheduled_and_when_it_ends_unless_told_otherwise(sql: CountingSql) -> None:
    store = opened(sql)
    store.insert_nodes(children(4), SHARED)
    store.patch_nodes(
        {
            "each:0": {"state": "SCHEDULED", "updated_at": 10},
            "each:1": {"state": "SKIPPED", "updated_at": 11},
            "each:2": {"state": "RUNNING", "updated_at": 12},
        }
    )
    store.update_node("each:0", state="FAILED", updated_at=20)
    store.update_nodes(["each:3"], state="SCHEDULED", updated_at=30)
    store.update_node("each:3", state="PENDING", updated_at=31, scheduled_at=None)  # a resume clears it
    times = {n.id: (n.scheduled_at, n.finished_at) for n in store.nodes()}
    assert times == {"each:0": (10, 20), "each:1": (None, 11), "each:2": (None, None), "each:3": (None, None)}


def test_nodes_by_id_reads_only_the_columns_asked_for(sql: CountingSql) -> None:
    store = opened(sql)
    store.insert_nodes(children(2), SHARED)
    assert store.nodes_by_id(["each:1", "nope"], ("state",)) == {
        "each:1": NodeRow(id="each:1", state="PENDING")
    }
    assert store.nodes_by_id(["each:1"])["each:1"].binding == "Hello"  # all columns when none are named
    with pytest.raises(ValueError, match="not node columns: \\['colour'\\]"):
        store.nodes_by_id(["each:1"], ("colour",))


def test_the_childrens_views_and_the_failed_ones_are_read(sql: CountingSql) -> None:
    store = opened(sql)
    store.insert_nodes(children(4), SHARED)
    store.patch_nodes(
        {
            "each:0": {"state": "COMPLETED"},
            "each:1": {"state": "COMPLETED"},
            "each:2": {"state": "FAILED"},
            "each:3": {"state": "STALLED"},
        }
    )
    states = {v.id: v.state for v in store.views() if v.parent == "each"}
    assert states == {"each:0": "COMPLETED", "each:1": "COMPLETED", "each:2": "FAILED", "each:3": "STALLED"}
    assert store.failed(1) == [NodeRow(id="each:2", error=None)]


def test_an_object_of_an_older_version_is_upgraded_keeping_its_rows() -> None:
    storage = SqlStorage()
    try:
        storage.exec(
            "CREATE TABLE run_outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL,"
            " target TEXT NOT NULL, snapshot TEXT NOT NULL)"
        )
        storage.exec("INSERT INTO run_outbox (kind, target, snapshot) VALUES ('node', 'a', '{}')")
        storage.exec(
            "CREATE TABLE node (id TEXT PRIMARY KEY NOT NULL, binding TEXT NOT NULL, state TEXT NOT NULL,"
            " container INTEGER NOT NULL, parent TEXT, origin TEXT NOT NULL, after TEXT NOT NULL, payload TEXT,"
            " options TEXT, job_id TEXT, subflow TEXT, child_run_id TEXT, result TEXT, error TEXT,"
            " seq INTEGER NOT NULL, gen INTEGER NOT NULL DEFAULT 0, sent INTEGER NOT NULL DEFAULT 0,"
            " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)"
        )
        storage.exec(
            "INSERT INTO node (id, binding, state, container, origin, after, seq, created_at, updated_at)"
            " VALUES ('a', 'Hello', 'SCHEDULED', 0, 'static', '[]', 0, 1, 1)"
        )
        store = opened(storage)
        store.outbox_nodes(["b"])
        assert [(r["kind"], r["target"]) for r in store.outbox(10)] == [("node", "a"), ("node", "b")]
        store.update_node("a", state="COMPLETED", updated_at=5)
        assert {k: getattr(store.nodes()[0], k) for k in ("state", "scheduled_at", "finished_at")} == {
            "state": "COMPLETED",
            "scheduled_at": None,
            "finished_at": 5,
        }
        opened(storage)  # opening again changes nothing
    finally:
        storage.close()


def test_spawn_rows_make_one_child_per_id_fail_a_too_large_payload_and_refuse_a_bad_id() -> None:
    parent = "p"
    rows, refused = spawn_rows(
        parent,
        [
            {"id": "a", "binding": "Echo", "payload": 1},
            {"id": "a", "binding": "Echo", "payload": 2},  # the same id again: one child
            {"id": "b", "binding": "Echo", "payload": "z" * 200_000},
        ],
        seq=10,
        now=5,
    )
    assert [(r["id"], r["payload"], r["seq"]) for r in rows] == [("p:a", "1", 10), ("p:b", None, 11)]
    assert refused == {"p:b": "invalid job: payload must be at most 102400 bytes as JSON, got 200002"}
    with pytest.raises(ChildError, match="spawn id must be 1 to 128 of A-Z a-z 0-9 _ -, got 'a:b'"):
        spawn_rows(parent, [{"id": "a:b", "binding": "Echo"}], seq=0, now=0)
    deep = "x" * 511  # children of children: the whole id is bounded too
    with pytest.raises(ChildError, match="spawn id makes a node id of 513 characters, over 512"):
        spawn_rows(deep, [{"id": "y", "binding": "Echo"}], seq=0, now=0)
