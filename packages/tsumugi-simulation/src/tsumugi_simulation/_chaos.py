"""Random infrastructure faults, armed through ``runtime.faults`` (every kind it offers).

Each fault is armed to strike once; `Chaos` remembers them, notices when they strike (so the invariants can
tell which instants a fault may shadow) and counts what struck.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Final

from tsumugi_dev.faults import Fault
from tsumugi_dev.runtime import LocalRuntime
from tsumugi_simulation._system import SystemUnderTest

__all__ = ["FAULT_KINDS", "Chaos"]

FAULT_KINDS: Final = (
    "drop",
    "duplicate",
    "reorder",
    "crash_consumer",
    "alarm",
    "restart",
    "restart_mid_alarm",
    "rpc_performer",
    "rpc_shard",
    "rpc_scheduler",
    "d1_outage",
)
"""The infrastructure faults a simulation arms (``raise`` and ``hang`` are the performers', see the ledger)."""


class Chaos:
    """Arms random faults on one runtime and records when they strike."""

    def __init__(
        self, runtime: LocalRuntime, system: SystemUnderTest, rng: random.Random, shard_class: str
    ) -> None:
        self._runtime = runtime
        self._system = system
        self._rng = rng
        self._shard_class = shard_class
        self._armed: list[tuple[str, Fault, int]] = []
        self.struck: Counter[str] = Counter()
        self.strike_times: list[int] = []

    def draw(self) -> float:
        """A number in [0, 1) from the faults' own stream (whether to arm one at this step)."""
        return self._rng.random()

    def arm_random(self) -> None:
        """Arm one fault of a random kind (a restart happens at once)."""
        faults, rng, system = self._runtime.faults, self._rng, self._system
        kind = rng.choice(FAULT_KINDS)
        now = self._runtime.clock.now_ms()
        if kind == "restart":
            faults.restart_durable_objects()
            self.struck[kind] += 1
            self.strike_times.append(now)
            return
        if kind == "drop":
            fault = faults.drop_next(system.queue)
        elif kind == "duplicate":
            fault = faults.duplicate_next(system.queue)
        elif kind == "reorder":
            fault = faults.reorder_next(system.queue, hold_ms=rng.choice((200, 1_000, 3_000)))
        elif kind == "crash_consumer":
            fault = faults.crash_consumer_next(system.queue)
        elif kind == "alarm":
            fault = faults.fail_next_alarm(system.scheduler, self._shard_class, n=rng.randint(1, 2))
        elif kind == "restart_mid_alarm":
            fault = faults.restart_during_next_alarm(system.scheduler, self._shard_class)
        elif kind == "rpc_performer":
            worker = rng.choice(system.performers)
            fault = faults.fail_next_rpc(worker, method="run_attempt", after_call=rng.random() < 0.5)
        elif kind == "rpc_shard":
            fault = faults.fail_next_rpc(system.scheduler, self._shard_class, after_call=rng.random() < 0.5)
        elif kind == "rpc_scheduler":
            fault = faults.fail_next_rpc(system.scheduler, "TsumugiRpc", after_call=rng.random() < 0.5)
        else:
            fault = faults.fail_next_d1(system.database, n=rng.randint(1, 5))
        self._armed.append((kind, fault, fault.hits))

    def observe(self) -> None:
        """Note the faults that struck since the last call (at the current instant)."""
        now = self._runtime.clock.now_ms()
        still: list[tuple[str, Fault, int]] = []
        for kind, fault, hits in self._armed:
            if fault.hits > hits:
                self.struck[kind] += fault.hits - hits
                self.strike_times.append(now)
            if fault.active:
                still.append((kind, fault, fault.hits))
        self._armed = still

    def stop(self) -> None:
        """Disarm every fault that has not struck."""
        self.observe()
        self._runtime.faults.clear()
        self._armed = []
