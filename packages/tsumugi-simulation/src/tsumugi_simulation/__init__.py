"""Seeded whole-system simulation: the real scheduler, queue consumer and performers under random faults.

``simulate(seed)`` starts the Workers on the local runtime under a `VirtualClock`, enqueues a random workload
(every enqueue option; cancel, retry, reschedule, policy changes and pauses through the client and the REST
API), arms random faults (`tsumugi_dev.faults`: lost, duplicated and reordered messages, consumer crashes,
failing alarms, Durable Object restarts, failed RPC between Workers, D1 outages) and makes performers raise or
run past their deadline; then it lets the system settle and checks invariants against a ledger of real
executions (see `INVARIANTS`). A failing seed's report names each violation and the command replaying it.

Example::

    report = await simulate(7)
    assert report.ok, report.summary()

Your own Workers: pass a `SystemUnderTest` with your configs and bindings (ADR-0060, packages/tsumugi-dev/README.md).
"""

from tsumugi_simulation._chaos import FAULT_KINDS
from tsumugi_simulation._invariants import FAIRNESS_WAIT_MS, INVARIANTS
from tsumugi_simulation._ledger import Execution, Ledger, PerformerFaults
from tsumugi_simulation._observed import START_MS, Violation
from tsumugi_simulation._run import SimulationConfig, SimulationReport, simulate
from tsumugi_simulation._system import BindingSpec, Scenario, SystemUnderTest

__all__ = [
    "FAIRNESS_WAIT_MS",
    "FAULT_KINDS",
    "INVARIANTS",
    "START_MS",
    "BindingSpec",
    "Execution",
    "Ledger",
    "PerformerFaults",
    "Scenario",
    "SimulationConfig",
    "SimulationReport",
    "SystemUnderTest",
    "Violation",
    "simulate",
]
