"""The built-in system's flows, covering what flows can do (ADR-0118).

- ``simflow``: ``first`` (SimA) -> ``spread`` (a fan-out of SimC) -> ``last`` (SimB, at-most-once, a 3 s
  timeout: long work stalls it, and a resume must then wait for the stalled attempt's hold);
- ``simsub``: ``a`` (SimA, which may spawn children) -> ``child`` (a subflow running ``simflow``) -> ``z`` (SimB);
- ``simnest``: ``mid``, a subflow running ``simsub`` (so subflows nest two deep).

Each node's work comes from the run input, so a seed decides how long nodes work, which fail and what they
spawn; the simulation starts runs among its jobs, cancels and resumes them, retries their nodes' jobs through
the job API, starts run ids again after their objects were swept, and lets a schedule start runs.
"""

from __future__ import annotations

import random
from typing import Any, Final

import msgspec

from tsumugi_core.options import Guarantee
from tsumugi_performer.flow import FlowBuilder, flow
from tsumugi_simulation._performers import SimWork, WorkPayload

__all__ = ["SIM_FLOWS", "SimFlowInput", "SimNestInput", "flow_input"]


class SimFlowInput(msgspec.Struct, frozen=True, kw_only=True):
    """A ``simflow`` run's work: one payload for ``first`` and ``last``, one per fan-out child."""

    first: WorkPayload
    items: list[WorkPayload]
    last: WorkPayload


class SimNestInput(msgspec.Struct, frozen=True, kw_only=True):
    """A ``simsub`` / ``simnest`` run's work: ``a``, the child ``simflow`` run's input, ``z``."""

    a: WorkPayload
    inner: SimFlowInput
    z: WorkPayload


class _SimA(SimWork):
    pass


class _SimB(SimWork):
    pass


class _SimC(SimWork):
    pass


_SimA.__name__ = "SimA"  # the binding names the nodes run on
_SimB.__name__ = "SimB"
_SimC.__name__ = "SimC"

LAST_TIMEOUT_MS: Final = 3_000
"""``simflow``'s ``last`` node: at-most-once with this timeout, so its long work ends STALLED."""


def _simflow(f: FlowBuilder[SimFlowInput]) -> None:
    first = f.node("first", _SimA, input=lambda run, deps: run.first)
    spread = f.fan_out(
        "spread", _SimC, after=[first], over=lambda run, deps: run.items, input=lambda item, run, index: item
    )
    f.node(
        "last",
        _SimB,
        after=[spread],
        input=lambda run, deps: run.last,
        guarantee=Guarantee.AT_MOST_ONCE,
        timeout_ms=LAST_TIMEOUT_MS,
        max_attempts=1,
    )


SIM_FLOW: Any = flow("simflow", SimFlowInput)(_simflow)


def _simsub(f: FlowBuilder[SimNestInput]) -> None:
    a = f.node("a", _SimA, input=lambda run, deps: run.a)
    child = f.subflow("child", SIM_FLOW, after=[a], input=lambda run, deps: run.inner)
    f.node("z", _SimB, after=[child], input=lambda run, deps: run.z)


SIM_SUB: Any = flow("simsub", SimNestInput)(_simsub)


def _simnest(f: FlowBuilder[SimNestInput]) -> None:
    f.subflow("mid", SIM_SUB, input=lambda run, deps: run)


SIM_NEST: Any = flow("simnest", SimNestInput)(_simnest)
SIM_FLOWS: Final = (SIM_FLOW, SIM_SUB, SIM_NEST)
"""Every flow of the built-in system, child flows first."""


def flow_input(flow_name: str, rng: random.Random, payload: Any, seq: int) -> dict[str, Any]:
    """A random input of ``flow_name``; ``payload(binding, rng, seq)`` makes each node's work."""
    simflow = {
        "first": payload("SimA", rng, seq),
        "last": payload("SimB", rng, seq - 1),
        "items": [payload("SimC", rng, seq - 2 - i) for i in range(rng.randrange(0, 5))],
    }
    if flow_name == "simflow":
        return simflow
    a = dict(payload("SimA", rng, seq - 10))
    if rng.random() < 0.5:
        a["spawn"] = [rng.choice((5, 50, 400)) for _ in range(rng.randrange(1, 4))]
    return {"a": a, "inner": simflow, "z": payload("SimB", rng, seq - 11)}
