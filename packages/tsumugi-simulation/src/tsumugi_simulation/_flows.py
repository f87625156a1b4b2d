"""The built-in system's flow: ``first`` (SimA) -> ``spread`` (a fan-out of SimC) -> ``last`` (SimB).

Each node's work comes from the run input, so a seed decides how long nodes work and which fail; the
simulation starts a few runs among its jobs and checks that every run settles with every node (``runs``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from tsumugi_performer.flow import FlowBuilder, flow
from tsumugi_simulation._performers import SimWork, WorkPayload

__all__ = ["SIM_FLOW", "SimFlowInput"]


class SimFlowInput(msgspec.Struct, frozen=True, kw_only=True):
    """A run's work: one payload for ``first`` and ``last``, one per fan-out child."""

    first: WorkPayload
    items: list[WorkPayload]
    last: WorkPayload


class _SimA(SimWork):
    pass


class _SimB(SimWork):
    pass


class _SimC(SimWork):
    pass


_SimA.__name__ = "SimA"  # the binding names the nodes run on
_SimB.__name__ = "SimB"
_SimC.__name__ = "SimC"


def _declare(f: FlowBuilder[SimFlowInput]) -> None:
    first = f.node("first", _SimA, input=lambda run, deps: run.first)
    spread = f.fan_out("spread", _SimC, after=[first], over=lambda run, deps: run.items,
                       input=lambda item, run, index: item)  # fmt: skip
    f.node("last", _SimB, after=[spread], input=lambda run, deps: run.last)


SIM_FLOW: Any = flow("simflow", SimFlowInput)(_declare)
