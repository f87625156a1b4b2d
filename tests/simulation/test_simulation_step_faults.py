"""Each step invariant catches a fault planted in the real system (ADR-0157).

Every test breaks one rule on purpose inside the running code (the performer library's step journal or the
shard), runs a short seed whose jobs all use steps, sleeps and events, and sees the checker name the breach;
the same seed without the plant is clean. The workload is the built-in one with every job a step job and no
infrastructure faults, so each plant is the only thing wrong.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from tsumugi_performer._steps import StepJournal
from tsumugi_scheduler.shard import outcomes
from tsumugi_scheduler.shard.records import Suspended
from tsumugi_scheduler.shard.step_commands import StepCommands, suspend_change
from tsumugi_simulation import SimulationConfig, SimulationReport, SystemUnderTest, simulate
from tsumugi_simulation._system import builtin_payload, builtin_system, random_scenario, step_job

SEED = 4
CONFIG = SimulationConfig(
    jobs=14,
    active_ms=12_000,
    fault_rate=0.0,
    performer_raise_rate=0.0,
    performer_hang_rate=0.0,
    runs=0,
    schedule_every_ms=None,
    event_rate=0.08,
    invariants=("step_once", "sleep_wake", "event_once", "event_timeout", "no_lost_jobs"),
)


def _all_steps(binding: str, rng: random.Random, seq: int) -> dict[str, Any]:
    payload = builtin_payload(binding, rng, seq)
    payload.update(step_job(rng, seq))
    payload.update(fail=None, steps=max(2, payload["steps"]))
    payload.setdefault("sleep_ms", 3_000)
    return payload


def _system(rng: random.Random) -> SystemUnderTest:
    return dataclasses.replace(builtin_system(random_scenario(rng)), payload=_all_steps)


def _run() -> SimulationReport:
    return asyncio.run(simulate(SEED, CONFIG, system=_system))


@pytest.fixture(autouse=True)
def quiet() -> Iterator[None]:
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


def _broken(report: SimulationReport) -> set[str]:
    return {v.invariant for v in report.violations}


@pytest.mark.timeout(120)
def test_the_unplanted_seed_is_clean_and_exercises_steps_sleeps_events_and_timeouts() -> None:
    report = _run()
    assert report.ok, report.summary()
    counts = report.steps
    assert counts["steps_completed"] > 0
    assert counts["sleeps_passed"] > 0
    assert counts["events_got"] > 0
    assert counts["timeouts"] > 0


@pytest.mark.timeout(120)
def test_step_once_catches_a_journal_that_forgets_stored_results(monkeypatch: pytest.MonkeyPatch) -> None:
    async def forgetful(
        self: StepJournal, name: str, fn: Any, args: tuple[Any, ...], result_type: Any
    ) -> Any:
        full = self._name(name)  # pyright: ignore[reportPrivateUsage]
        stored = await self._run(full, fn, args, None)  # pyright: ignore[reportPrivateUsage]
        return msgspec.json.decode(stored.result or "null", type=result_type)

    monkeypatch.setattr(StepJournal, "step", forgetful)
    report = _run()
    assert "step_once" in _broken(report), report.summary()


@pytest.mark.timeout(120)
def test_sleep_wake_catches_a_shard_that_wakes_a_sleeper_early(monkeypatch: pytest.MonkeyPatch) -> None:
    real = suspend_change

    def early(job: Any, suspended: Suspended, now: int, notices: Any) -> Any:
        if suspended.reason == "sleep" and suspended.until - now > 1_000:  # wake halfway (then at the time)
            suspended = msgspec.structs.replace(suspended, until=now + (suspended.until - now) // 2)
        return real(job, suspended, now, notices)

    monkeypatch.setattr(outcomes, "suspend_change", early)
    report = _run()
    assert "sleep_wake" in _broken(report), report.summary()


@pytest.mark.timeout(120)
def test_sleep_wake_catches_a_journal_that_goes_past_a_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    async def sleepless(self: StepJournal, until: int, name: str | None) -> None:
        return None

    monkeypatch.setattr(StepJournal, "sleep_until", sleepless)
    report = _run()
    assert "sleep_wake" in _broken(report), report.summary()


@pytest.mark.timeout(120)
def test_event_once_catches_a_shard_that_drops_deliveries(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: StepCommands, deliveries: Any) -> list[bool]:
        return [False for _ in deliveries]

    monkeypatch.setattr(StepCommands, "deliver_events", refuse)
    report = _run()
    assert "event_once" in _broken(report), report.summary()


@pytest.mark.timeout(120)
def test_event_timeout_catches_a_timeout_before_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    real = StepJournal.wait_for_event

    async def hasty(self: StepJournal, event: str, key: str, until: int, result_type: Any) -> Any:
        now = self._now()  # pyright: ignore[reportPrivateUsage]
        return await real(self, event, key, now + (until - now) // 2, result_type)

    monkeypatch.setattr(StepJournal, "wait_for_event", hasty)
    report = _run()
    assert "event_timeout" in _broken(report), report.summary()
