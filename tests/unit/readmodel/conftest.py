"""Read-model fixtures: a fresh migrated D1 per test, and one shared 10,000-job model for read-only tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.readmodel.readmodel_world import Job, as_snapshot, load_snapshots, migrated_d1, population
from tsumugi_dev.d1 import D1Database


@pytest.fixture
def d1(tmp_path: Path) -> Iterator[D1Database]:
    db = migrated_d1(tmp_path)
    yield db
    db.close()


@pytest.fixture(scope="session")
def jobs() -> list[Job]:
    return population()


@pytest.fixture(scope="session")
def big_d1(tmp_path_factory: pytest.TempPathFactory, jobs: list[Job]) -> Iterator[D1Database]:
    """Read-only: tests that write must use ``d1``."""
    db = migrated_d1(tmp_path_factory.mktemp("big"))
    load_snapshots(db.connection, (as_snapshot(job, seq=1) for job in jobs))
    yield db
    db.close()
