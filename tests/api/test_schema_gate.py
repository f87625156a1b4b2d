"""Pending D1 migrations answer 503 naming the files; D1 failures 503 without blaming the schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.api.api_world import SteppedClock, World
from tsumugi_dev.d1 import D1Database
from tsumugi_scheduler.readmodel import EXPECTED_MIGRATIONS, MIGRATIONS_LEDGER


async def test_an_unmigrated_database_names_every_missing_file(tmp_path: Path, clock: SteppedClock) -> None:
    world = World(tmp_path, clock, d1=D1Database(tmp_path / "empty.sqlite"))
    try:
        status, body = await world.request("GET", "/api/jobs")
        assert status == 503
        assert body["pending"] == list(EXPECTED_MIGRATIONS)
        assert body["error"] == (
            f"database schema is out of date: {', '.join(EXPECTED_MIGRATIONS)} not applied. "
            'run "wrangler d1 migrations apply TSUMUGI_DB --remote"'
        )
        assert (await world.request("GET", "/api/openapi.json"))[0] == 200  # the document needs no database
    finally:
        await world.aclose()
        world.d1.close()


async def test_a_partly_migrated_database_names_only_the_missing_files_and_recovers_at_once(
    world: World,
) -> None:
    world.d1.connection.execute("DELETE FROM d1_migrations WHERE name = ?", (EXPECTED_MIGRATIONS[-1],))
    status, body = await world.request("POST", "/api/jobs", {"binding": "MAIL", "payload": 1})
    assert (status, body["pending"]) == (503, [EXPECTED_MIGRATIONS[-1]])
    world.d1.connection.execute("INSERT INTO d1_migrations (name) VALUES (?)", (EXPECTED_MIGRATIONS[-1],))
    assert (await world.request("GET", "/api/jobs"))[0] == 200


class FlakyD1:
    """A D1 binding whose every statement fails (an outage, not a schema problem)."""

    def __init__(self) -> None:
        self.calls = 0

    def prepare(self, query: str) -> Any:
        self.calls += 1
        raise RuntimeError("D1_ERROR: network connection lost")


async def test_a_d1_failure_is_503_unavailable_and_is_not_asked_again_for_5_s(world: World) -> None:
    flaky = FlakyD1()
    world.env.TSUMUGI_DB = flaky  # type: ignore[assignment]
    unavailable = (503, {"error": "database temporarily unavailable"})
    assert await world.request("GET", "/api/stats") == unavailable
    world.clock.advance(4_999)
    assert await world.request("GET", "/api/stats") == unavailable
    assert flaky.calls == 1
    world.clock.advance(1)
    assert await world.request("GET", "/api/stats") == unavailable
    assert flaky.calls == 2


async def test_a_current_schema_is_checked_once(world: World) -> None:
    assert (await world.request("GET", "/api/jobs"))[0] == 200
    world.d1.connection.execute("DELETE FROM d1_migrations")
    assert (await world.request("GET", "/api/jobs"))[0] == 200  # cached for the isolate's life


class CountingD1:
    """``env.TSUMUGI_DB`` as the SDK hands it out: a new wrapper on every access, over one database."""

    def __init__(self, d1: Any) -> None:
        self._d1 = d1
        self.schema_reads = 0

    def wrapper(self) -> Any:
        outer = self

        class Wrapper:
            def prepare(self, query: str) -> Any:
                if MIGRATIONS_LEDGER in query or "sqlite_master" in query:
                    outer.schema_reads += 1
                return outer._d1.prepare(query)

            def __getattr__(self, name: str) -> Any:
                return getattr(outer._d1, name)

        return Wrapper()


async def test_a_current_schema_is_checked_once_when_each_request_wraps_the_binding_anew(
    world: World,
) -> None:
    counting = CountingD1(world.d1)
    plain_env = type(world.env)

    class SdkEnv(plain_env):
        @property
        def TSUMUGI_DB(self) -> Any:  # the binding's name
            return counting.wrapper()

    world.env.__class__ = SdkEnv
    try:
        for _ in range(3):
            assert (await world.request("GET", "/api/stats"))[0] == 200
    finally:
        world.env.__class__ = plain_env
    assert counting.schema_reads == 2  # the ledger's table, then its rows: once, not on every request
