"""Benchmark of ``GET /api/jobs`` over a read model of 1,000,000 jobs, through the whole REST app.

Run: ``uv run python bench/api.py [--quick]``. Builds a migrated local D1 with direct batched INSERTs, then
times the dashboard's common lists through the ASGI app (auth, schema check, lenient parsing, the page and
its count, JSON encoding), each query on its first pages:

- ``by_state`` (``state=FAILED``), ``by_binding`` (``binding=SMS``), ``by_concurrency_key``
  (``concurrency_key=user-7``), ``newest_first`` (no filter, ``updated_at DESC``);
- text searches (issue 26, ADR-0139): ``search_payload`` (``text=ada@example``, in 1 % of the payloads),
  ``search_error_of_failed`` (``state=FAILED&text=mailbox full``, in some FAILED jobs' errors) and
  ``search_binding_payload`` (``binding=SMS&text=...``). Each reads at most 2,000 jobs of the list's own
  indexed walk and matches the text inside that window only;
- ``retry_all_failed``: the read-model selection of one ``POST /api/jobs/bulk-retry`` by filter
  (``binding=SMS``, FAILED), the 200 oldest ids and the count capped at 10,000, timed the same way, with
  whether both statements come off ``job_bulk_targets`` (covering, no sort: ADR-0160). Beside it, in the same
  run and on the same rows, the two statements it sent before migration 0016 (a walk of every ``SMS`` job
  through ``job_binding_recent``, each read from the table and sorted), fewer rounds, and the ratio.

For each it prints p50 / p99 in milliseconds next to its target (p50 < 50 ms, p99 < 200 ms at 1,000,000
rows), whether SQLite serves both statements from an index (``EXPLAIN QUERY PLAN``: no ``SCAN job``, no
temporary sort), how many rows match and whether the answer's ``total`` was capped, then exactly one
``RESULT {json}`` line. Comparison: the page comes off an index in order whatever the size (ADR-0022); the
original's ``total`` counts every matching index entry, so a query matching a large share of the rows cost
time linear in its matches (115 ms p50 newest first before the cap); the count now stops after 10,001 rows
(``tsumugi_scheduler.api.job_list``), so every query's cost is bounded. ``--quick`` uses 20,000 rows for a
smoke test; its figures say nothing about scale, and its targets are not judged.

Then authentication per request (issue 25 item 1, ADR-0121), in the same run and on the same read model:
``BearerAuth.admit`` for a bearer header and for a dashboard session (cookie + page key + its row in
``dashboard_session``), and, as the session check before that change, the signed cookie alone (one HMAC, no
read: what ``v1`` sessions cost). Printed as µs per request and the session's ratio after/before; the
session's extra cost is one primary-key read in D1 per cookie-authenticated request.

Then the cost of the payload checks per enqueue (ADR-0075, ADR-0077), in the same run: the scheduler's
enqueue path (`SchedulerService.enqueue_many` of one item: decoding, option validation, the portability walk
and the payload schema check, up to the shard call, which a stub answers) for a performer that publishes a
payload type and for the same performer publishing none, side by side as µs per enqueue and their ratio; and
the two checks alone on the same payload.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import httpx
import msgspec

from tsumugi_core.json_schema import compile_schema
from tsumugi_core.portable import check_portable
from tsumugi_dev.d1 import D1Database, apply_d1_migrations
from tsumugi_scheduler.api import SchemaGate, create_app
from tsumugi_scheduler.api.auth import BearerAuth
from tsumugi_scheduler.api.job_list import list_page
from tsumugi_scheduler.api.session import PAGE_KEY_HEADER, issue_session, page_key, signed_session_id
from tsumugi_scheduler.api.session_store import open_session
from tsumugi_scheduler.definition import define_tsumugi
from tsumugi_scheduler.payload_schemas import PayloadSchemas
from tsumugi_scheduler.producer_rpc import SchedulerService
from tsumugi_scheduler.readmodel import PROJECTED_COLUMNS, JobQuery, list_jobs, parse_job_query
from tsumugi_scheduler.readmodel.bulk import BULK_COUNT_CAP, BulkFilter, select_ids_for_bulk

REPO: Final = Path(__file__).resolve().parents[1]
TOKEN: Final = "bench-token"
T0: Final = 1_767_225_600_000
BINDINGS: Final = ("MAIL", "PUSH", "SMS", "WEBHOOK")
STATES: Final = ("SCHEDULED", "QUEUED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "STALLED")
QUERIES: Final = {
    "by_state": "state=FAILED",
    "by_binding": "binding=SMS",
    "by_concurrency_key": "concurrency_key=user-7",
    "newest_first": "",
    # Issue 26: text searches read a window of at most 2,000 jobs (SEARCH_WINDOW) of the list's indexed walk
    # (ADR-0139).
    "search_payload": "text=ada%40example",
    "search_error_of_failed": "state=FAILED&text=mailbox%20full",
    "search_binding_payload": "binding=SMS&text=ada%40example",
}
OFFSETS: Final = (0, 20, 40, 100)
BATCH: Final = 10_000
P50_TARGET_MS: Final = 50.0
P99_TARGET_MS: Final = 200.0


def rows(count: int) -> Iterator[tuple[Any, ...]]:
    """``count`` job rows in ``PROJECTED_COLUMNS`` order: bindings, states, keys and instants mixed."""
    for i in range(count):
        binding = BINDINGS[i % len(BINDINGS)]
        values = {
            "id": f"{binding}#0:j{i:08d}",
            "seq": 1,
            "binding": binding,
            "state": STATES[i % len(STATES)],
            "priority": i % 11 - 5,
            "attempts": i % 4,
            "max_attempts": 3,
            "concurrency_key": f"user-{i % 500}" if i % 3 == 0 else None,
            "unique_key": f"u-{i}" if i % 10 == 0 else None,
            "guarantee": "at-least-once",
            "created_at": T0 + i,
            "updated_at": T0 + (i * 7919) % count,
            "dispatched_at": None,
            "payload": '{"to":"ada@example.com"}' if i % 100 == 0 else '{"n":1}',
            "run_id": None,
            "node_id": None,
            "attempts_log": None,
            "result": None,
            "run_after": T0 + i,
            "progress": None,
            "traceparent": None,
            "expires_at": None,
            "cancel_requested_at": None,
            "reason": None,
            "shard": 0,
            "last_error": "SmtpError: mailbox full"
            if STATES[i % len(STATES)] == "FAILED" and i % 50 == 0
            else None,
        }
        yield tuple(values[c] for c in PROJECTED_COLUMNS)


def build_read_model(folder: Path, count: int) -> D1Database:
    """A migrated D1 holding ``count`` jobs, inserted in batches of 10,000 in one transaction."""
    db = D1Database(folder / "readmodel.sqlite")
    try:
        apply_d1_migrations(db, REPO / "migrations")
        insert = f"INSERT INTO job ({', '.join(PROJECTED_COLUMNS)}) VALUES ({', '.join('?' for _ in PROJECTED_COLUMNS)})"
        conn = db.connection
        conn.execute("BEGIN")
        batch: list[tuple[Any, ...]] = []
        for row in rows(count):
            batch.append(row)
            if len(batch) == BATCH:
                conn.executemany(insert, batch)
                batch.clear()
        conn.executemany(insert, batch)
        conn.execute("COMMIT")
    except BaseException:  # the caller closes the database it gets back; one that failed is closed here
        db.close()
        raise
    return db


class Env:
    """What ``GET /api/jobs`` reads: the token and the read model."""

    def __init__(self, d1: D1Database) -> None:
        self.TSUMUGI_DB = d1
        self.TSUMUGI_TOKEN = TOKEN


def query_plans(db: D1Database, query: JobQuery) -> list[list[str]]:
    """``EXPLAIN QUERY PLAN`` of the page and the capped count ``GET /api/jobs`` sends for ``query``."""
    sent: list[Any] = []
    execute = db.execute

    def recording(statement: Any) -> Any:
        sent.append(statement)
        return execute(statement)

    db.execute = recording  # type: ignore[method-assign]
    try:
        asyncio.run(list_page(db, query))
    finally:
        del db.execute
    return [[str(r[3]) for r in db.connection.execute(f"EXPLAIN QUERY PLAN {s.sql}", s.params)] for s in sent]


def served_by_index(plans: list[list[str]]) -> bool:
    """True when every statement uses an index and none scans ``job`` or sorts ``job`` in a temporary tree.

    A text search sorts its window, at most ``SEARCH_WINDOW`` rows that a ``LIMIT`` subquery (a co-routine)
    read through an index: that sort is bounded, so a temporary tree is allowed over a co-routine only.
    """
    return all(
        any("USING INDEX" in s or "USING COVERING INDEX" in s for s in plan)
        and not any(s == "SCAN job" for s in plan)
        and (not any("TEMP B-TREE" in s for s in plan) or any(s.startswith("CO-ROUTINE") for s in plan))
        for plan in plans
    )


async def time_queries(db: D1Database, rounds: int) -> dict[str, list[float]]:
    """Milliseconds per request for each query, ``rounds`` requests over ``OFFSETS``."""
    app = create_app(define_tsumugi(performers=list(BINDINGS)), gate=SchemaGate())

    async def with_env(scope: Any, receive: Any, send: Any) -> None:
        await app({**scope, "env": Env(db)}, receive, send)

    timings: dict[str, list[float]] = {name: [] for name in QUERIES}
    transport = httpx.ASGITransport(app=with_env)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://bench", headers={"authorization": f"Bearer {TOKEN}"}
    ) as client:
        await client.get("/api/jobs")  # warm the schema check and the page cache
        for i in range(rounds):
            for name, query in QUERIES.items():
                path = f"/api/jobs?{query}&offset={OFFSETS[i % len(OFFSETS)]}"
                start = time.perf_counter()
                answer = await client.get(path)
                timings[name].append((time.perf_counter() - start) * 1000)
                if answer.status_code != 200:
                    raise RuntimeError(f"{path}: {answer.status_code} {answer.text}")
    return timings


# What select_ids_for_bulk sent for {"binding", "state"} before migration 0016 (ADR-0160): SQLite serves it
# from job_binding_recent whatever else exists, since no partial index's WHERE term is repeated.
BULK_BEFORE_0016: Final = (
    "SELECT id FROM job WHERE binding = ? AND state IN (?) ORDER BY created_at ASC, id ASC LIMIT ?",
    "SELECT count(*) AS total FROM (SELECT 1 FROM job WHERE binding = ? AND state IN (?) LIMIT ?)",
)


def bulk_statements_sent(db: D1Database, filters: BulkFilter) -> list[Any]:
    """The statements one ``select_ids_for_bulk`` call sends (recorded from the local D1)."""
    sent: list[Any] = []
    execute = db.execute

    def recording(statement: Any) -> Any:
        sent.append(statement)
        return execute(statement)

    db.execute = recording  # type: ignore[method-assign]
    try:
        asyncio.run(select_ids_for_bulk(db, filters))
    finally:
        del db.execute
    return sent


def bulk_served_by_its_index(db: D1Database, statements: list[Any]) -> bool:
    """Both statements read only ``job_bulk_targets``'s entries (covering) and sort nothing."""
    plans = [
        [str(r[3]) for r in db.connection.execute(f"EXPLAIN QUERY PLAN {s.sql}", s.params)]
        for s in statements
    ]
    return all(
        any(s.startswith("SEARCH") for s in plan)
        and all(
            "USING COVERING INDEX job_bulk_targets" in s for s in plan if s.startswith(("SEARCH", "SCAN job"))
        )
        and not any("TEMP B-TREE" in s for s in plan)
        for plan in plans
    )


def selection_before_0016(db: D1Database, binding: str, state: str) -> tuple[list[str], int]:
    """The ids and capped count as the two statements sent before migration 0016 give them."""
    ids_sql, count_sql = BULK_BEFORE_0016
    ids = [str(r[0]) for r in db.connection.execute(ids_sql, (binding, state, 200))]
    total = int(db.connection.execute(count_sql, (binding, state, BULK_COUNT_CAP + 1)).fetchone()[0])
    return ids, max(0, min(total, BULK_COUNT_CAP) - len(ids))


def time_bulk_selection(db: D1Database, rounds: int, rounds_before: int) -> dict[str, Any]:
    """ "Retry all failed" of a binding (issue 26): each ``POST /api/jobs/bulk-retry {"binding", "state":
    "FAILED"}`` first picks its 200 oldest targets and the capped count from the read model; that is the part
    whose cost grew with the table, so it is the part timed here (the shards then act on 200 ids). The
    statements sent before migration 0016 are timed beside it, ``rounds_before`` times."""
    filters = BulkFilter(binding="SMS", states=("FAILED",))
    timings: list[float] = []
    last = asyncio.run(select_ids_for_bulk(db, filters))  # warm, and what the figures below describe
    for _ in range(rounds):
        start = time.perf_counter()
        selection = asyncio.run(select_ids_for_bulk(db, filters))
        timings.append((time.perf_counter() - start) * 1000)
        last = selection
    indexed = bulk_served_by_its_index(db, bulk_statements_sent(db, filters))
    before: list[float] = []
    same = selection_before_0016(db, "SMS", "FAILED") == (last.ids, last.remaining)
    for _ in range(rounds_before):
        start = time.perf_counter()
        selection_before_0016(db, "SMS", "FAILED")
        before.append((time.perf_counter() - start) * 1000)
    p50, p99 = statistics.median(timings), percentile(timings, 0.99)
    b50, b99 = statistics.median(before), percentile(before, 0.99)
    print(
        f"{'retry_all_failed':>20}: p50 {p50:7.2f} ms  p99 {p99:7.2f} ms  "
        f"index {'yes' if indexed else 'NO'}  (read-model selection of {len(last.ids)} ids, {last.remaining} more counted, count capped at "
        f"{BULK_COUNT_CAP})",
        flush=True,
    )
    print(
        f"{'before 0016':>20}: p50 {b50:7.2f} ms  p99 {b99:7.2f} ms  ({rounds_before} rounds, same answer: "
        f"{'yes' if same else 'NO'}); p50 ratio before/now {b50 / p50:.0f}",
        flush=True,
    )
    return {
        "retry_all_failed_p50_ms": round(p50, 3),
        "retry_all_failed_p99_ms": round(p99, 3),
        "retry_all_failed_remaining": last.remaining,
        "retry_all_failed_indexed": indexed,
        "retry_all_failed_before_0016_p50_ms": round(b50, 3),
        "retry_all_failed_before_0016_p99_ms": round(b99, 3),
        "retry_all_failed_before_0016_same_answer": same,
        "retry_all_failed_p50_ratio_before_now": round(b50 / p50, 1),
    }


def matching_rows(db: D1Database, query: str) -> int:
    """How many rows match ``query`` (the exact count, which ``total`` caps at 10,000; for a text search, the
    matches within the window it reads)."""
    params = {k: urllib.parse.unquote(v) for k, v in (p.split("=", 1) for p in query.split("&") if p)}
    if "text" in params:
        return asyncio.run(list_page(db, parse_job_query({**params, "limit": "1"}))).total
    return asyncio.run(list_jobs(db, parse_job_query({**params, "limit": "1"}))).total


def capped(db: D1Database, query: str) -> bool:
    """Whether ``GET /api/jobs?<query>`` answers ``total_capped``."""
    params = {k: urllib.parse.unquote(v) for k, v in (p.split("=", 1) for p in query.split("&") if p)}
    return asyncio.run(list_page(db, parse_job_query(params))).total_capped


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by the nearest-rank method."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def report(db: D1Database, name: str, query: str, timings: list[float], *, judged: bool) -> dict[str, Any]:
    """One query's figures, printed next to their targets; the ``RESULT`` keys for it."""
    p50, p99 = statistics.median(timings), percentile(timings, 0.99)
    indexed = served_by_index(
        query_plans(
            db,
            parse_job_query(
                {k: urllib.parse.unquote(v) for k, v in (p.split("=", 1) for p in query.split("&") if p)}
            ),
        )
    )
    matches, was_capped = matching_rows(db, query), capped(db, query)
    within = p50 < P50_TARGET_MS and p99 < P99_TARGET_MS
    verdict = ("ok" if within else "MISSED") if judged else "not judged (quick)"
    print(
        f"{name:>20}: p50 {p50:7.2f} ms (target < {P50_TARGET_MS:.0f})  p99 {p99:7.2f} ms (target < "
        f"{P99_TARGET_MS:.0f})  {verdict}  index {'yes' if indexed else 'NO'}  {matches} matching rows, "
        f"total {'capped' if was_capped else 'exact'}",
        flush=True,
    )
    return {
        f"{name}_p50_ms": round(p50, 3),
        f"{name}_p99_ms": round(p99, 3),
        f"{name}_indexed": indexed,
        f"{name}_matches": matches,
        f"{name}_total_capped": was_capped,
        f"{name}_within_target": within,
    }


class Address(msgspec.Struct):
    """A nested part of `Order`."""

    city: str
    zip: str | None = None


class Order(msgspec.Struct):
    """A typical small payload type: nested, optional, a union, a list."""

    name: str
    address: Address
    quantity: int | str = 1
    note: str | None = None
    lines: list[str] = []


ORDER: Final = {
    "name": "Ada",
    "address": {"city": "Paris", "zip": "75001"},
    "quantity": 2,
    "lines": ["a", "b"],
}


class Described:
    """A performer's Service Binding answering ``describe`` with ``schema``."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self._answer = json.dumps({"payloadSchema": schema})

    async def describe(self) -> str:
        return self._answer


class StubShard:
    """A JobShard that stores nothing: the figures are the scheduler's own enqueue work."""

    async def enqueue_checked(self, name: str, jobs: str, settings: str | None = None) -> str:
        return json.dumps([f"{name}:x" for _ in json.loads(jobs)])


class StubShards:
    def getByName(self, name: str) -> StubShard:
        return StubShard()


class EnqueueEnv:
    """The scheduler's env: a stub namespace and the two performers' bindings."""

    def __init__(self) -> None:
        self.JOB_SHARD = StubShards()
        self.Typed = Described(msgspec.json.schema(Order))
        self.Untyped = Described({})


BLOCK: Final = 100
"""Calls per timed block; each figure is the best block's mean, so other processes' noise weighs least."""


async def time_enqueues(rounds: int) -> dict[str, float]:
    """µs per one-item ``enqueue_many`` for the typed and the untyped performer, blocks interleaved."""
    service = SchedulerService(
        EnqueueEnv(), define_tsumugi(performers=["Typed", "Untyped"]), PayloadSchemas()
    )
    best = {"Typed": float("inf"), "Untyped": float("inf")}
    for binding in best:  # first enqueues fetch and compile the schemas: not timed
        await service.enqueue_many([{"binding": binding, "payload": ORDER}])
    for _ in range(rounds // BLOCK):
        for binding in best:
            item = {"binding": binding, "payload": ORDER, "maxAttempts": 5}
            start = time.perf_counter()
            for _ in range(BLOCK):
                await service.enqueue_many([item])
            best[binding] = min(best[binding], (time.perf_counter() - start) / BLOCK * 1e6)
    return best


def _best(call: Any, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds // BLOCK):
        start = time.perf_counter()
        for _ in range(BLOCK):
            call(ORDER)
        best = min(best, (time.perf_counter() - start) / BLOCK * 1e6)
    return best


def time_checks(rounds: int) -> dict[str, float]:
    """µs per call of the portability walk and of the compiled schema check on ``ORDER``."""
    return {
        "portable": _best(check_portable, rounds),
        "schema": _best(compile_schema(msgspec.json.schema(Order)), rounds),
    }


def report_enqueue_checks(rounds: int) -> dict[str, Any]:
    """The payload checks' cost per enqueue, printed; the ``RESULT`` keys for it."""
    per = asyncio.run(time_enqueues(rounds))
    alone = time_checks(rounds * 10)
    ratio = per["Typed"] / per["Untyped"]
    print(
        f"enqueue (scheduler side, stub shard): {per['Typed']:.1f} µs with a payload schema, "
        f"{per['Untyped']:.1f} µs without: ratio {ratio:.3f}; the checks alone: portability "
        f"{alone['portable']:.2f} µs, schema {alone['schema']:.2f} µs",
        flush=True,
    )
    return {
        "enqueue_with_schema_us": round(per["Typed"], 2),
        "enqueue_without_schema_us": round(per["Untyped"], 2),
        "enqueue_schema_ratio": round(ratio, 3),
        "portable_check_us": round(alone["portable"], 3),
        "schema_check_us": round(alone["schema"], 3),
    }


async def time_auth(db: D1Database, rounds: int) -> dict[str, float]:
    """µs per authentication: bearer, session (signature + page key + D1), and the signature alone."""
    auth, env, now = BearerAuth(), Env(db), T0
    session_id = "S" * 22
    await open_session(db, session_id, now_ms=now, expires_at=now + auth.session_ttl_ms)
    cookie = issue_session(TOKEN, now, session_id)
    bearer = {"authorization": f"Bearer {TOKEN}"}
    session = {"cookie": f"tsumugi_token={cookie}", PAGE_KEY_HEADER: page_key(TOKEN, session_id)}
    assert (await auth.admit(env, bearer, {}, now_ms=now)).via == "token"  # type: ignore[union-attr]
    assert (await auth.admit(env, session, {}, now_ms=now)).via == "session"  # type: ignore[union-attr]
    best = {"bearer": float("inf"), "session": float("inf"), "signature_only": float("inf")}
    for _ in range(rounds // BLOCK):
        for name, headers in (("bearer", bearer), ("session", session)):
            start = time.perf_counter()
            for _ in range(BLOCK):
                await auth.admit(env, headers, {}, now_ms=now)
            best[name] = min(best[name], (time.perf_counter() - start) / BLOCK * 1e6)
        start = time.perf_counter()
        for _ in range(BLOCK):
            signed_session_id(cookie, TOKEN, now_ms=now, ttl_ms=auth.session_ttl_ms)
        best["signature_only"] = min(best["signature_only"], (time.perf_counter() - start) / BLOCK * 1e6)
    return best


def report_auth(db: D1Database, rounds: int) -> dict[str, Any]:
    """Authentication's cost per request, printed; the ``RESULT`` keys for it."""
    per = asyncio.run(time_auth(db, rounds))
    ratio = per["session"] / per["signature_only"]
    print(
        f"auth per request: bearer {per['bearer']:.1f} µs; session {per['session']:.1f} µs (signature, page "
        f"key and one D1 read) against {per['signature_only']:.1f} µs before (the signature alone): ratio "
        f"{ratio:.1f}",
        flush=True,
    )
    return {
        "auth_bearer_us": round(per["bearer"], 2),
        "auth_session_us": round(per["session"], 2),
        "auth_session_before_us": round(per["signature_only"], 2),
        "auth_session_ratio": round(ratio, 2),
    }


def main() -> None:
    """Build, time, print; the last line is ``RESULT {json}``."""
    parser = argparse.ArgumentParser(description="REST list latency over a large read model.")
    parser.add_argument("--quick", action="store_true", help="20,000 rows, for a smoke test")
    args = parser.parse_args()
    count, rounds = (20_000, 40) if args.quick else (1_000_000, 400)
    result: dict[str, Any] = {
        "mode": "quick" if args.quick else "full",
        "jobs": count,
        "p50_target_ms": P50_TARGET_MS,
        "p99_target_ms": P99_TARGET_MS,
    }
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        with build_read_model(Path(folder), count) as db:
            result["build_seconds"] = round(time.perf_counter() - start, 2)
            print(f"read model: {count} jobs in {result['build_seconds']} s", flush=True)
            timings = asyncio.run(time_queries(db, rounds))
            for name, query in QUERIES.items():
                result.update(report(db, name, query, timings[name], judged=not args.quick))
            result.update(time_bulk_selection(db, *((40, 10) if args.quick else (200, 20))))
            result.update(report_auth(db, 2_000 if args.quick else 20_000))
    result.update(report_enqueue_checks(2_000 if args.quick else 20_000))
    print("RESULT " + json.dumps(result, sort_keys=True), flush=True)


if __name__ == "__main__":
    sys.exit(main())
