"""The ledger of real executions: every call of a performer, seen from the performer's side.

`record_executions` wraps the ``run_attempt`` entrypoint method of each performer binding of a loaded Worker,
so whatever the performer is (ours or a user's), the ledger holds when each execution started and ended, the
job and attempt it ran, what it answered, and the dispatch payload (a notice's payload names the job it is
about). The wrapper can also make an execution misbehave as a performer may: raise before it works, or keep
running past its deadline ("hang") after the work is done, so the consumer gives up on it while it still runs.
"""

from __future__ import annotations

import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

from tsumugi_core.exceptions import TsumugiError
from tsumugi_performer.entrypoint import time_source

__all__ = ["HANG", "RAISE", "Execution", "Ledger", "PerformerFaults", "record_executions"]

RAISE: Final = "raise"
HANG: Final = "hang"


class SimulatedPerformerError(TsumugiError, RuntimeError):
    """What a performer made to raise by the simulation raises."""


@dataclass
class Execution:
    """One real execution of a performer (``ended_at`` None while it still runs)."""

    binding: str
    job_id: str
    attempt: int
    started_at: int
    payload: Any
    deadline_at: int | None = None
    """When the consumer stops waiting for it: the dispatch's deadline, moved on by accepted heartbeats."""
    last_beat_at: int | None = None
    """The last heartbeat the shard accepted."""
    ended_at: int | None = None
    outcome: str = "running"
    """``ok``, ``failed`` (the performer answered a failure), ``raised`` or ``running``."""
    fault: str | None = None
    """``raise`` or ``hang`` when the simulation made this execution misbehave."""

    def end_or(self, now_ms: int) -> int:
        """When it ended, or ``now_ms`` while it still runs."""
        return now_ms if self.ended_at is None else self.ended_at

    def accounted_end(self, now_ms: int) -> int:
        """The end of the slot it holds: its real end, or its deadline when it ran on past it (abandoned).

        An at-least-once attempt past its deadline is given up by the consumer and retried by design (the
        performer is told ``deadline_at`` and is expected to stop); limits count it until then (ADR-0060).
        """
        end = self.end_or(now_ms)
        return end if self.deadline_at is None else min(end, max(self.deadline_at, self.started_at))


@dataclass
class PerformerFaults:
    """How often the wrapper makes an execution misbehave (0 = never); ``exempt`` bindings never do."""

    raise_rate: float = 0.0
    hang_rate: float = 0.0
    hang_extra_ms: int = 3_000
    """A hanging execution keeps running this long past its deadline."""
    exempt: frozenset[str] = frozenset()


@dataclass
class Ledger:
    """Every execution of a simulation, in start order."""

    executions: list[Execution] = field(default_factory=list[Execution])
    faults: PerformerFaults = field(default_factory=PerformerFaults)
    rng: random.Random = field(default_factory=random.Random)
    injected: dict[str, int] = field(default_factory=dict[str, int])
    enabled: bool = True
    """False once the simulation stops injecting faults (the quiet phase)."""

    def start(self, binding: str, dispatch: Any) -> Execution:
        """Record the start of an execution of ``dispatch`` (the JSON text or mapping the consumer sent)."""
        decoded: Any = json.loads(dispatch) if isinstance(dispatch, str) else dict(dispatch)
        execution = Execution(
            binding=binding,
            job_id=str(decoded["jobId"]),
            attempt=int(decoded["attempt"]),
            started_at=time_source().now_ms(),
            payload=decoded.get("payload"),
            deadline_at=decoded.get("deadlineAt"),
        )
        execution.fault = self._choose_fault(binding)
        if execution.fault is not None:
            self.injected[execution.fault] = self.injected.get(execution.fault, 0) + 1
        self.executions.append(execution)
        return execution

    def _choose_fault(self, binding: str) -> str | None:
        f = self.faults
        if not self.enabled or binding in f.exempt:
            return None
        draw = self.rng.random()
        if draw < f.raise_rate:
            return RAISE
        if draw < f.raise_rate + f.hang_rate:
            return HANG
        return None

    def of_job(self, job_id: str) -> list[Execution]:
        """The executions of one job, in start order."""
        return [e for e in self.executions if e.job_id == job_id]


def _outcome(answer: Any) -> str:
    try:
        decoded: Any = json.loads(answer) if isinstance(answer, str) else answer
        return "ok" if decoded.get("ok") else "failed"
    except (ValueError, AttributeError):
        return "failed"


def _accepted(answer: Any) -> bool:
    try:
        decoded: Any = json.loads(answer) if isinstance(answer, str) else answer
        return bool(decoded.get("accepted"))
    except (ValueError, AttributeError):
        return False


def _recording(cls: type, binding: str, ledger: Ledger) -> type:
    run_attempt: Callable[..., Awaitable[Any]] = getattr(cls, "run_attempt")  # noqa: B009

    async def recorded(self: Any, dispatch: Any, heartbeat: Any = None) -> Any:
        execution = ledger.start(binding, dispatch)
        clock = time_source()
        timeout = None if execution.deadline_at is None else execution.deadline_at - execution.started_at

        async def beat(progress: Any = None) -> Any:
            answer = await heartbeat(progress)
            if _accepted(answer):
                execution.last_beat_at = clock.now_ms()
                if timeout is not None:
                    execution.deadline_at = execution.last_beat_at + timeout
            return answer

        try:
            if execution.fault == RAISE:
                raise SimulatedPerformerError(f"simulated failure of {binding} {execution.job_id}")
            answer: Any = await run_attempt(self, dispatch, beat if heartbeat is not None else None)
            if execution.fault == HANG:
                deadline = json.loads(dispatch)["deadlineAt"] if isinstance(dispatch, str) else clock.now_ms()
                await clock.sleep_ms(max(0, int(deadline) - clock.now_ms()) + ledger.faults.hang_extra_ms)
            execution.outcome = _outcome(answer)
            return answer
        except BaseException:
            execution.outcome = "raised"
            raise
        finally:
            execution.ended_at = clock.now_ms()

    return type(cls.__name__, (cls,), {"run_attempt": recorded})


def record_executions(module: Any, bindings: list[str], ledger: Ledger) -> list[str]:
    """Wrap the performer entrypoints named ``bindings`` in ``module`` (a loaded Worker); answers those found."""
    found: list[str] = []
    for binding in bindings:
        cls = getattr(module, binding, None)
        if isinstance(cls, type) and callable(getattr(cls, "run_attempt", None)):
            setattr(module, binding, _recording(cls, binding, ledger))
            found.append(binding)
    return found
