"""What step jobs did, seen from the performer: step bodies run, steps completed, sleeps and event waits.

The simulated performers (`SimWork` with ``steps``, ``sleep_ms`` or ``event_key``) write here as they go; the
simulation installs a fresh `StepLog` per seed (`use_step_log`) and its invariants read it (ADR-0157). Every
record carries a number from one counter, so "before" and "after" hold even within one virtual millisecond.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["EventSend", "StepLog", "WaitRecord", "current_step_log", "use_step_log"]


@dataclass(frozen=True)
class BodyRun:
    """One execution of a step's body: its job and step, and the invocation that ran it."""

    job_id: str
    step: str
    invocation: int
    """The `StepLog.counter` value when that invocation's ``perform`` began."""
    seq: int


@dataclass(frozen=True)
class SleepRecord:
    """An invocation reaching ``ctx.sleep`` (``passed`` False) or getting past it (``passed`` True)."""

    job_id: str
    attempt: int
    at: int
    sleep_ms: int
    passed: bool


@dataclass(frozen=True)
class WaitRecord:
    """An invocation reaching ``ctx.wait_for_event`` (``outcome`` ``reached``), or the wait's answer: ``event``
    (``n``: which send it was) or ``timeout``."""

    job_id: str
    key: str
    at: int
    timeout_ms: int
    outcome: str
    n: int | None = None


@dataclass(frozen=True)
class EventSend:
    """An event the simulator sent: when, to which key, its number, and whether the scheduler acknowledged it."""

    key: str
    at: int
    n: int
    acknowledged: bool


@dataclass
class StepLog:
    """Everything the step jobs of one simulation did (in the order it happened)."""

    counter: int = 0
    bodies: list[BodyRun] = field(default_factory=list[BodyRun])
    completed: dict[tuple[str, str], int] = field(default_factory=dict[tuple[str, str], int])
    """(job, step) -> the counter value when a ``ctx.step`` of it first returned (its result stored)."""
    sleeps: list[SleepRecord] = field(default_factory=list[SleepRecord])
    waits: list[WaitRecord] = field(default_factory=list[WaitRecord])
    sends: list[EventSend] = field(default_factory=list[EventSend])

    def counts(self) -> dict[str, int]:
        """How much of each kind happened: step bodies run and steps completed, sleeps begun and passed,
        waits begun, events got, timeouts, events sent and acknowledged."""
        return {
            "step_bodies": len(self.bodies),
            "steps_completed": len(self.completed),
            "sleeps": sum(1 for r in self.sleeps if not r.passed),
            "sleeps_passed": sum(1 for r in self.sleeps if r.passed),
            "waits": sum(1 for r in self.waits if r.outcome == "reached"),
            "events_got": sum(1 for r in self.waits if r.outcome == "event"),
            "timeouts": sum(1 for r in self.waits if r.outcome == "timeout"),
            "events_sent": len(self.sends),
            "events_acknowledged": sum(1 for s in self.sends if s.acknowledged),
        }

    def tick(self) -> int:
        """The next number of the counter."""
        self.counter += 1
        return self.counter

    def body(self, job_id: str, step: str, invocation: int) -> None:
        """A step body starts to run."""
        self.bodies.append(BodyRun(job_id, step, invocation, self.tick()))

    def complete(self, job_id: str, step: str) -> None:
        """``ctx.step`` returned for ``step``: from now on its result is stored."""
        self.completed.setdefault((job_id, step), self.tick())


_current: list[StepLog] = [StepLog()]


def current_step_log() -> StepLog:
    """The log of the simulation running now."""
    return _current[-1]


def use_step_log(log: StepLog) -> StepLog:
    """Install ``log``; answers the one it replaces."""
    old = _current[-1]
    _current[-1] = log
    return old
