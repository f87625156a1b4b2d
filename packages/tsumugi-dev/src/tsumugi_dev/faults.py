"""Fault injection: make the local runtime misbehave the ways Cloudflare may, on purpose, in a test.

``LocalRuntime.faults`` arms one-shot faults (``n`` times each) that strike where the runtime would otherwise
behave: a message accepted by ``send`` is lost, an acked message comes back, a consumer dies before it acks,
an ``alarm()`` fails (and is retried on Cloudflare's schedule), every Durable Object restarts. Users test
their performers' idempotency with them; our integration tests test the scheduler's guarantees.

Example::

    lost = runtime.faults.drop_next("jobs", matching=lambda body: body["jobId"] == job_id)
    await clock.advance(1_000)
    assert lost.hits == 1
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from typing import Any, Final, Protocol

__all__ = [
    "ALARM",
    "CRASH_CONSUMER",
    "DROP",
    "DUPLICATE",
    "Fault",
    "FaultInjector",
    "FaultTargets",
    "HasToString",
    "InjectedFault",
    "Matcher",
]

DROP: Final = "drop"
"""A message accepted by ``send`` / ``sendBatch`` is lost before it is stored."""
DUPLICATE: Final = "duplicate"
"""An acked message is delivered again (as when the ack is lost)."""
CRASH_CONSUMER: Final = "crash_consumer"
"""A batch's ``queue()`` handler raises before it runs: nothing is acked, every message is retried."""
ALARM: Final = "alarm"
"""An object's ``alarm()`` raises before it runs, so Cloudflare's retry schedule applies."""

Matcher = Callable[[Any], bool]
"""Selects the message bodies (as the consumer receives them) a queue fault applies to."""

_log = logging.getLogger("tsumugi_dev")


class InjectedFault(RuntimeError):
    """The exception an injected consumer crash or alarm failure raises."""


class HasToString(Protocol):
    """A Durable Object id (``DurableObjectId``): anything with ``toString()``."""

    def toString(self) -> str:
        """The id as 64 hex characters."""
        ...


class FaultTargets(Protocol):
    """What the injector needs from the runtime to check targets (``LocalRuntime`` implements it)."""

    def queue_names(self) -> Collection[str]:
        """Every queue some Worker produces to or consumes (dead-letter queues included)."""
        ...

    def namespace_key(self, worker: str, class_name: str) -> str:
        """The key of a hosted Durable Object class; raises ``ValueError`` naming an unknown one."""
        ...

    def object_id_for_name(self, namespace_key: str, name: str) -> str:
        """The hex id ``idFromName(name)`` gives in that namespace."""
        ...

    def evict_durable_objects(self) -> None:
        """Drop every live Durable Object instance; storage and alarms stay."""
        ...


class Fault:
    """One armed fault: strikes up to ``n`` times; ``hits`` counts the strikes so far.

    Attributes:
        kind: ``"drop"``, ``"duplicate"``, ``"crash_consumer"`` or ``"alarm"``.
        target: the queue, or the Durable Object class as ``<worker>:<class>``.
        remaining: strikes left (0 once spent or cancelled).
        hits: strikes so far.
    """

    def __init__(self, kind: str, target: str, n: int, matching: Matcher | None) -> None:
        self.kind = kind
        self.target = target
        self.remaining = n
        self.hits = 0
        self._matching = matching

    @property
    def active(self) -> bool:
        """True while the fault may still strike."""
        return self.remaining > 0

    def cancel(self) -> None:
        """Disarm the fault (strikes already made stay counted)."""
        self.remaining = 0

    def applies(self, subjects: Sequence[Any]) -> bool:
        """True when the fault is armed and has no matcher, or its matcher accepts one of ``subjects``.

        A matcher that raises (say ``body["jobId"]`` on a body without it) counts as no match: the fault must
        not turn into an error inside the Worker code that sent the message.
        """
        if not self.active:
            return False
        if self._matching is None:
            return True
        for subject in subjects:
            try:
                if self._matching(subject):
                    return True
            except Exception as exc:
                _log.warning("fault %r: its matcher raised %r; treated as no match", self, exc)
        return False

    def strike(self) -> None:
        """Record one strike."""
        self.remaining -= 1
        self.hits += 1

    def __repr__(self) -> str:
        return f"Fault({self.kind} {self.target}, remaining={self.remaining}, hits={self.hits})"


def _check_n(n: int) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ValueError(f"n must be a positive int (got {n!r})")


def _check_matching(matching: Matcher | None) -> None:
    if matching is not None and not callable(matching):
        raise TypeError(f"matching must be a callable taking a message body (got {type(matching).__name__})")


class FaultInjector:
    """The faults armed on one runtime: ``drop_next``, ``duplicate_next``, ``crash_consumer_next``,
    ``fail_next_alarm`` and ``restart_durable_objects``.
    """

    def __init__(self, targets: FaultTargets) -> None:
        self._targets = targets
        self._faults: list[Fault] = []

    # -- arming (the public API) ----------------------------------------------------------------------------

    def drop_next(self, queue: str, n: int = 1, *, matching: Matcher | None = None) -> Fault:
        """Lose the next ``n`` messages sent to ``queue`` (those ``matching`` accepts, when given).

        ``send`` still succeeds: the message vanishes as a lost message would.
        """
        return self._arm(DROP, self._queue(queue), n, matching)

    def duplicate_next(self, queue: str, n: int = 1, *, matching: Matcher | None = None) -> Fault:
        """Deliver the next ``n`` acked messages of ``queue`` once more (same id, ``attempts`` + 1)."""
        return self._arm(DUPLICATE, self._queue(queue), n, matching)

    def crash_consumer_next(self, queue: str, n: int = 1, *, matching: Matcher | None = None) -> Fault:
        """Make the next ``n`` batches of ``queue`` fail before the handler runs (every message is retried).

        With ``matching``, only batches holding a matching message crash.
        """
        return self._arm(CRASH_CONSUMER, self._queue(queue), n, matching)

    def fail_next_alarm(
        self,
        worker: str,
        class_name: str,
        object_id: str | HasToString | None = None,
        *,
        name: str | None = None,
        n: int = 1,
    ) -> Fault:
        """Make the next ``n`` ``alarm()`` runs of one object (or of any object of the class) raise.

        The object is given by ``object_id`` (hex or a ``DurableObjectId``) or by ``name`` (as ``getByName``);
        with neither, any object of ``class_name`` in ``worker``. A failed alarm is retried as Cloudflare
        retries it (2 s, doubling, up to 6 retries).
        """
        if object_id is not None and name is not None:
            raise ValueError("fail_next_alarm: give object_id or name, not both")
        key = self._targets.namespace_key(worker, class_name)
        wanted = object_id if isinstance(object_id, str | None) else object_id.toString()
        if name is not None:
            wanted = self._targets.object_id_for_name(key, name)
        matching = None if wanted is None else _equals(wanted)
        return self._arm(ALARM, key, n, matching)

    def restart_durable_objects(self) -> None:
        """Restart every Durable Object now: instances are dropped, storage and alarms stay."""
        _log.info("fault: every durable object restarts")
        self._targets.evict_durable_objects()

    def armed(self) -> list[Fault]:
        """The faults that may still strike, oldest first."""
        return [f for f in self._faults if f.active]

    def clear(self) -> None:
        """Disarm every fault."""
        for fault in self._faults:
            fault.cancel()
        self._faults.clear()

    # -- striking (called by the runtime) -------------------------------------------------------------------

    def strike(self, kind: str, target: str, subjects: Callable[[], Sequence[Any]] | None = None) -> bool:
        """Use up one strike of the oldest armed fault of ``kind`` on ``target`` that applies; True if any.

        ``subjects`` produces what matchers look at (message bodies, an object id); it is only called when a
        fault of that kind and target is armed, so the cost is nil without faults.
        """
        candidates = [f for f in self._faults if f.active and f.kind == kind and f.target == target]
        if not candidates:
            return False
        seen = subjects() if subjects is not None else ()
        for fault in candidates:
            if fault.applies(seen):
                fault.strike()
                _log.info("fault: %s on %s (%d left)", kind, target, fault.remaining)
                return True
        return False

    # -- internals ------------------------------------------------------------------------------------------

    def _queue(self, queue: str) -> str:
        known = self._targets.queue_names()
        if queue not in known:
            listed = ", ".join(sorted(known)) or "none"
            raise ValueError(f"queue: {queue!r} is not a queue of this runtime (known: {listed})")
        return queue

    def _arm(self, kind: str, target: str, n: int, matching: Matcher | None) -> Fault:
        _check_n(n)
        _check_matching(matching)
        self._faults = [f for f in self._faults if f.active]
        fault = Fault(kind, target, n, matching)
        self._faults.append(fault)
        return fault


def _equals(wanted: str) -> Matcher:
    return lambda subject: subject == wanted
