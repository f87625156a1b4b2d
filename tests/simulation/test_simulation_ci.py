"""The whole-system simulation on a fixed set of seeds: every invariant that is not awaiting a fix holds.

All CI seeds run once (a module fixture) with every invariant checked, so the known-defect invariants are
evaluated too; the parametrised test then asserts each invariant on every seed. `AWAITING_FIX` names the two
invariants that catch open defects (issue 10 items 1 and 2, fixed on other branches): their findings are
printed, not asserted. Once a fix is merged, delete its entry and the invariant is enforced on the CI seeds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import pytest

from tsumugi_dev.simulation import INVARIANTS, KNOWN_DEFECTS, SimulationConfig, SimulationReport, simulate

AWAITING_FIX: dict[str, str] = {
    "at_most_once": "issue 10 item 1 (an at-most-once attempt 2 starts while a timed-out attempt 1 runs)",
    "fairness": "issue 10 item 2 (a busy concurrency key starves the other keys)",
}
"""Invariants whose violations are reported but not asserted until their fix is merged (then delete the line)."""

CI_SEEDS = tuple(range(10))
"""Small workloads, every fault kind among them; about 0.5 s each on the local runtime."""
BURST_SEEDS = (3, 5)
"""Seeds that add the hot-key burst (the starvation probe of item 2); a few seconds each."""
CI_CONFIG = SimulationConfig(jobs=25, active_ms=25_000)


@pytest.fixture(scope="module")
def reports() -> Iterator[dict[int, SimulationReport]]:
    logging.disable(
        logging.CRITICAL
    )  # every injected failure is logged by the system; the reports say enough

    async def run() -> dict[int, SimulationReport]:
        found = {seed: await simulate(seed, CI_CONFIG) for seed in CI_SEEDS}
        burst = SimulationConfig(jobs=10, active_ms=10_000, burst_chance=1.0)
        found.update({1_000 + seed: await simulate(seed, burst) for seed in BURST_SEEDS})
        return found

    try:
        yield asyncio.run(run())
    finally:
        logging.disable(logging.NOTSET)


def test_awaiting_fix_names_exactly_the_known_defect_invariants() -> None:
    assert set(AWAITING_FIX) <= set(KNOWN_DEFECTS)
    assert set(AWAITING_FIX) <= set(INVARIANTS)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("invariant", [name for name in INVARIANTS if name not in AWAITING_FIX])
def test_invariant_holds_on_every_ci_seed(invariant: str, reports: dict[int, SimulationReport]) -> None:
    broken = {seed: [str(v) for v in r.violations if v.invariant == invariant] for seed, r in reports.items()}
    broken = {seed: found for seed, found in broken.items() if found}
    replays = "\n".join(reports[seed].replay for seed in broken)
    assert broken == {}, f"{invariant} broken; replay with:\n{replays}"


def test_ci_seeds_exercise_every_fault_kind_and_check_every_invariant(
    reports: dict[int, SimulationReport],
) -> None:
    struck = set().union(*(r.faults for r in reports.values()))
    assert struck >= {"drop", "duplicate", "reorder", "crash_consumer", "alarm", "restart", "restart_mid_alarm",
                      "rpc_performer", "rpc_shard", "d1_outage", "raise", "hang"}  # fmt: skip
    assert all(r.jobs > 0 and r.executions > 0 for r in reports.values())
    assert not [v for r in reports.values() for v in r.violations if v.invariant == "crash"]


def test_known_defect_findings_are_reported(
    reports: dict[int, SimulationReport], capsys: pytest.CaptureFixture[str]
) -> None:
    # Printed for the log, never asserted while AWAITING_FIX lists them (see the module docstring).
    with capsys.disabled():
        for seed, report in sorted(reports.items()):
            for v in report.violations:
                if v.invariant in AWAITING_FIX:
                    print(f"\nawaiting fix, seed {seed}: {v}\n  replay: {report.replay}")
