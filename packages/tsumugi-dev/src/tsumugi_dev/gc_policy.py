"""The cyclic garbage collector's settings for a process that runs the local runtime under load.

CPython collects its youngest generation after every 700 container allocations, and each full collection
walks every object alive, the runtime's loaded modules included. A busy runtime allocates many short-lived
containers (RPC copies, rows, futures), almost all freed by reference counting, so most of those collections
find nothing: in bench/e2e.py they took about 9% of the run. `tune_for_throughput` freezes what exists once
the runtime has started (modules, classes, configuration: never garbage) out of every later collection and
lets the youngest generation grow to 10,000 before it is collected. Cycles are still collected.
"""

from __future__ import annotations

import gc
from typing import Final

__all__ = ["YOUNG_THRESHOLD", "tune_for_throughput"]

YOUNG_THRESHOLD: Final = 10_000
"""Container allocations (net of frees) before the youngest generation is collected (CPython's default: 700)."""


def tune_for_throughput() -> tuple[int, int, int]:
    """Collect once, freeze the survivors and raise the youngest generation's threshold.

    Call it once the runtime has started (its modules are loaded). Returns the previous thresholds.
    """
    previous = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, previous[1], previous[2])
    return previous
