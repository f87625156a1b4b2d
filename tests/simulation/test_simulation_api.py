"""The simulation as users run it: a seed replays exactly, and their own Workers run under the same faults."""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tsumugi_dev.config import load_config
from tsumugi_simulation import (
    INVARIANTS,
    BindingSpec,
    Scenario,
    SimulationConfig,
    SystemUnderTest,
    simulate,
)

REPO = Path(__file__).resolve().parents[2]
SMALL = SimulationConfig(jobs=12, active_ms=10_000, invariants=tuple(INVARIANTS))


@pytest.fixture(autouse=True)
def quiet_logs() -> Iterator[None]:
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


async def test_a_seed_replays_exactly() -> None:
    first, again = await simulate(4, SMALL), await simulate(4, SMALL)
    assert (first.jobs, first.executions, first.faults, first.operations) == (
        again.jobs,
        again.executions,
        again.faults,
        again.operations,
    )
    assert [str(v) for v in first.violations] == [str(v) for v in again.violations]
    assert first.replay == "uv run python bench/simulate.py --seed 4 --jobs 12 --active-ms 10000"
    assert first.jobs > 12  # notices and retries come on top of the enqueued jobs
    other = await simulate(5, SMALL)
    assert (other.jobs, other.executions) != (first.jobs, first.executions)


def _repo_payload(binding: str, rng: random.Random, seq: int) -> Any:
    return {"seconds": rng.choice((0, 1, 3))} if binding == "Slow" else {"name": f"n{seq}"}


def repo_system() -> SystemUnderTest:
    """This repository's scheduler, example performers and producer, described as a user describes theirs."""
    scheduler = load_config(REPO / "services" / "scheduler" / "wrangler.jsonc").with_secrets(
        {"TSUMUGI_TOKEN": "t"}
    )
    performers = load_config(REPO / "services" / "performers" / "wrangler.jsonc")
    producer = load_config(REPO / "services" / "performers" / "producer" / "wrangler.jsonc")
    names = ("Hello", "Boom", "Slow", "SendMail", "NotifyFailure", "NotifySettled")
    grace = {"Slow": 5_000}
    scenario = Scenario(
        bindings=tuple(BindingSpec(name=n, reaper_grace_ms=grace.get(n, 30_000)) for n in names),
        on_failure="NotifyFailure",
        on_settled="NotifySettled",
    )
    return SystemUnderTest(
        configs=(scheduler, performers, producer),
        scenario=scenario,
        work_bindings=("Hello", "Slow"),
        payload=_repo_payload,
        scheduler="tsumugi-scheduler",
        producer="tsumugi-producer",
        performers=("tsumugi-performers",),
        token="t",
    )


async def test_users_run_their_own_workers_under_the_same_faults() -> None:
    report = await simulate(2, SMALL, system=repo_system())
    assert report.ok, report.summary()
    assert report.executions >= 12
    assert sum(report.faults.values()) > 0
