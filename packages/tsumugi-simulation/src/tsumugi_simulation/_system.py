"""The system a simulation runs: the built-in one (Tsumugi's scheduler and simulated performers) or a user's.

The built-in system is three Workers made from configs built in code: ``sim-scheduler`` (Tsumugi's real
scheduler classes: JobShard, queue consumer, RPC entrypoint, REST API), ``sim-performers`` (``SimA``, ``SimB``,
``SimC`` doing simulated work, ``SimFailure`` / ``SimSettled`` receiving notices) and ``sim-producer`` (a
Service Binding to the scheduler's RPC entrypoint). Each seed picks its bindings' policies (`Scenario`); the
scheduler's entry module reads them when the runtime loads it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, cast

import tsumugi_scheduler
from tsumugi_core.exceptions import InvalidFieldError, NotConfiguredError
from tsumugi_dev.config import (
    AnalyticsDatasetConfig,
    D1DatabaseConfig,
    DurableObjectBindingConfig,
    QueueConsumerConfig,
    QueueProducerConfig,
    ServiceBindingConfig,
    WorkerConfig,
)
from tsumugi_scheduler.definition import TsumugiDefinition, define_tsumugi
from tsumugi_scheduler.definition_types import OnSettledOptions, TerminalState

__all__ = [
    "BUILTIN_TOKEN",
    "EVENT_KEYS",
    "RUN_FAILED_RETENTION_MS",
    "RUN_SWEEP_AFTER_MS",
    "BindingSpec",
    "Scenario",
    "SystemUnderTest",
    "builtin_system",
    "current_definition",
]

BUILTIN_TOKEN: Final = "simulation-token"
_WORKERS: Final = Path(__file__).parent / "workers"
_TERMINAL: Final = ("COMPLETED", "FAILED", "CANCELLED", "STALLED")
_KEEP_MS: Final = 30 * 86_400_000
"""Finished jobs stay in the shards for the whole simulation (the checks read them at the end)."""
RUN_SWEEP_AFTER_MS: Final = 3_000
"""A settled run's object is deleted soon, so run ids are started again after their sweep while jobs of the
earlier run stay in their shards (issue 24 item 3), and schedules ask about swept runs (item 10)."""
RUN_FAILED_RETENTION_MS: Final = 30_000
"""A FAILED run stays resumable this long."""


@dataclass(frozen=True)
class BindingSpec:
    """One binding as the simulation knows it: shards and policy (the code's settings)."""

    name: str
    shards: int = 1
    concurrency: int = 100
    per_key_concurrency: int = 1
    rate: tuple[int, int] | None = None
    """``(tokens, interval_ms)``"""
    per_key_rate: tuple[int, int] | None = None
    reaper_grace_ms: int = 30_000


@dataclass(frozen=True)
class Scenario:
    """The bindings and notice rules of one simulated system."""

    bindings: tuple[BindingSpec, ...]
    on_failure: str | None = None
    on_settled: str | None = None
    settled_states: tuple[str, ...] = _TERMINAL

    @property
    def notice_bindings(self) -> frozenset[str]:
        """The bindings that receive notices."""
        return frozenset(b for b in (self.on_failure, self.on_settled) if b is not None)

    def spec(self, binding: str) -> BindingSpec:
        """The spec of ``binding``."""
        for spec in self.bindings:
            if spec.name == binding:
                return spec
        raise InvalidFieldError("binding", f"is not one of the simulation's bindings, got {binding!r}")


@dataclass(frozen=True)
class SystemUnderTest:
    """The Workers a simulation runs and where it finds its parts.

    Attributes:
        configs: every Worker (wrangler config paths or loaded `WorkerConfig`s).
        scenario: the bindings (with the policies their code sets) and the notice rules of the scheduler.
        work_bindings: the bindings the workload enqueues to.
        payload: builds a job's payload: ``payload(binding, rng, seq)``.
        scheduler: the scheduler Worker's name; ``producer``: a Worker binding its RPC entrypoint as ``TSUMUGI``;
            ``performers``: the Worker(s) whose entrypoints are the performers; ``queue`` / ``database``: the
            dispatch queue and the read model's D1 database; ``token``: the REST API's bearer token.
    """

    configs: tuple[WorkerConfig | Path | str, ...]
    scenario: Scenario
    work_bindings: tuple[str, ...]
    payload: Any
    scheduler: str
    producer: str
    performers: tuple[str, ...]
    queue: str = "tsumugi"
    database: str = "tsumugi"
    token: str = BUILTIN_TOKEN
    builtin: bool = False


_current: list[Scenario] = []


def current_definition() -> TsumugiDefinition:
    """The definition the built-in scheduler Worker loads: the scenario of the simulation being started."""
    if not _current:
        raise NotConfiguredError("the simulation scheduler Worker is only loaded by tsumugi_simulation")
    return definition_of(_current[-1])


def definition_of(scenario: Scenario) -> TsumugiDefinition:
    """``define_tsumugi`` for ``scenario``."""
    bindings: dict[str, Any] = {}
    for spec in scenario.bindings:
        policy: dict[str, Any] = {
            "concurrency": spec.concurrency,
            "per_key_concurrency": spec.per_key_concurrency,
            "reaper_grace_ms": spec.reaper_grace_ms,
        }
        if spec.rate is not None:
            policy["rate"] = {"tokens": spec.rate[0], "interval_ms": spec.rate[1]}
        if spec.per_key_rate is not None:
            policy["per_key_rate"] = {"tokens": spec.per_key_rate[0], "interval_ms": spec.per_key_rate[1]}
        bindings[spec.name] = {
            "shards": spec.shards,
            "policy": policy,
            "sweep_after_ms": _KEEP_MS,
            "failed_retention_ms": _KEEP_MS,
        }
    settled: OnSettledOptions | None = (
        None
        if scenario.on_settled is None
        else {
            "binding": scenario.on_settled,
            "states": cast("list[TerminalState]", list(scenario.settled_states)),
        }
    )
    from tsumugi_simulation._flows import SIM_FLOWS

    names = {spec.name for spec in scenario.bindings}
    return define_tsumugi(
        flows=list(SIM_FLOWS) if {"SimA", "SimB", "SimC"} <= names else [],
        runs={"sweep_after_ms": RUN_SWEEP_AFTER_MS, "failed_retention_ms": RUN_FAILED_RETENTION_MS},
        performers=[spec.name for spec in scenario.bindings],
        bindings=bindings,
        on_failure=scenario.on_failure,
        on_settled=settled,
    )


def random_scenario(rng: random.Random) -> Scenario:
    """The built-in system's bindings for one seed: small concurrencies so the limits bind."""
    grace = 2_000
    a_concurrency = rng.choice((2, 3, 4))
    a = BindingSpec(  # a free slot beside a busy key (the starvation probe runs on SimA)
        name="SimA",
        concurrency=a_concurrency,
        per_key_concurrency=1 if a_concurrency == 2 else rng.choice((1, 1, 2)),
        reaper_grace_ms=grace,
    )
    b = BindingSpec(
        name="SimB",
        shards=2,
        concurrency=rng.choice((2, 3)),
        rate=(rng.choice((2, 3, 5)), 1_000),
        per_key_rate=rng.choice((None, (1, 2_000))),
        reaper_grace_ms=grace,
    )
    c = BindingSpec(name="SimC", concurrency=rng.choice((1, 5, 100)), reaper_grace_ms=grace)
    notices = (
        BindingSpec(name="SimFailure", reaper_grace_ms=grace),
        BindingSpec(name="SimSettled", reaper_grace_ms=grace),
    )
    return Scenario(bindings=(a, b, c, *notices), on_failure="SimFailure", on_settled="SimSettled")


def builtin_payload(binding: str, rng: random.Random, seq: int) -> dict[str, Any]:
    """A `SimWork` payload: mostly short work; sometimes long work, slow heartbeats or a failure."""
    work_ms = rng.choice((5, 20, 50, 200, 800)) if rng.random() < 0.9 else rng.choice((2_500, 6_000))
    beat_ms = rng.choice((None, None, 300, 1_000, 7_000))
    fail = rng.choice((None,) * 8 + ("retryable", "fatal"))
    payload: dict[str, Any] = {"work_ms": work_ms, "beat_ms": beat_ms, "fail": fail, "seq": seq}
    # The durable part is drawn from a generator seeded by ``rng``'s state, which takes no draw from ``rng``:
    # the rest of the workload is what it was before step jobs joined it (ADR-0157).
    steps_rng = random.Random(hash(rng.getstate()[1]))  # its words only: hash(None) varies by process
    if steps_rng.random() < STEP_JOB_SHARE:
        payload.update(step_job(steps_rng, seq))
    return payload


STEP_JOB_SHARE: Final = 0.25
"""The share of the built-in workload's jobs that run steps, sleep or wait for an event (ADR-0157)."""
EVENT_KEYS: Final = ("e0", "e1", "e2")
"""The keys the simulator sends events to; a job waiting on another key (``n<seq>``) never gets one."""


def step_job(rng: random.Random, seq: int) -> dict[str, Any]:
    """The durable part of a step job: some steps, maybe a sleep, maybe an event wait (`WorkPayload`)."""
    part: dict[str, Any] = {"steps": rng.randint(1, 4), "step_ms": rng.choice((0, 10, 200))}
    if rng.random() < 0.5:
        part["sleep_ms"] = rng.choice((500, 3_000, 20_000))
    if rng.random() < 0.5:
        part["event_key"] = rng.choice(EVENT_KEYS) if rng.random() < 0.6 else f"n{seq}"
        part["event_timeout_ms"] = rng.choice((2_000, 8_000, 30_000))
    return part


def builtin_system(scenario: Scenario) -> SystemUnderTest:
    """The built-in system over ``scenario`` (its scheduler loads ``scenario`` when the runtime starts)."""
    _current[:] = [scenario]
    migrations = Path(tsumugi_scheduler.__file__).parent / "d1_migrations"
    names = [spec.name for spec in scenario.bindings]
    scheduler = WorkerConfig(
        name="sim-scheduler",
        main=_WORKERS / "scheduler.py",
        path=_WORKERS / "scheduler.jsonc",
        vars={"TSUMUGI_TOKEN": BUILTIN_TOKEN},
        secret_names=("TSUMUGI_TOKEN",),
        durable_objects=(
            DurableObjectBindingConfig(name="JOB_SHARD", class_name="TsumugiJobShard"),
            DurableObjectBindingConfig(name="RUN", class_name="TsumugiRun"),
            DurableObjectBindingConfig(name="SCHEDULER", class_name="TsumugiScheduler"),
        ),
        sqlite_classes=("TsumugiJobShard", "TsumugiRun", "TsumugiScheduler"),
        queue_producers=(QueueProducerConfig(binding="TSUMUGI_QUEUE", queue="tsumugi"),),
        queue_consumers=(
            QueueConsumerConfig(
                queue="tsumugi", max_batch_size=100, max_batch_timeout=0, max_retries=5, max_concurrency=50
            ),
        ),
        d1_databases=(
            D1DatabaseConfig(binding="TSUMUGI_DB", database_name="tsumugi", migrations_dir=str(migrations)),
        ),
        analytics_datasets=(AnalyticsDatasetConfig(binding="TSUMUGI_METRICS", dataset="tsumugi_metrics"),),
        services=tuple(
            ServiceBindingConfig(binding=name, service="sim-performers", entrypoint=name) for name in names
        ),
    )
    performers = WorkerConfig(
        name="sim-performers", main=_WORKERS / "performers.py", path=_WORKERS / "performers.jsonc"
    )
    producer = WorkerConfig(
        name="sim-producer",
        main=_WORKERS / "producer.py",
        path=_WORKERS / "producer.jsonc",
        services=(ServiceBindingConfig(binding="TSUMUGI", service="sim-scheduler", entrypoint="TsumugiRpc"),),
    )
    return SystemUnderTest(
        configs=(scheduler, performers, producer),
        scenario=scenario,
        work_bindings=("SimA", "SimB", "SimC"),
        payload=builtin_payload,
        scheduler="sim-scheduler",
        producer="sim-producer",
        performers=("sim-performers",),
        builtin=True,
    )
