"""Fault injection: make the local runtime misbehave the ways Cloudflare may, on purpose, in a test.

``LocalRuntime.faults`` arms one-shot faults (``n`` times each) that strike where the runtime would otherwise
behave: a message accepted by ``send`` is lost, an acked message comes back, a message is overtaken by later
ones, a consumer dies before it acks, an ``alarm()`` fails or its object restarts in the middle of it (it is
retried on Cloudflare's schedule), an RPC between Workers fails (before or after the callee ran), D1 is out,
every Durable Object restarts. Users test
their performers' idempotency with them; our integration tests and ``tsumugi_simulation`` test the
scheduler's guarantees.

Example::

    # Tsumugi's dispatch messages are JSON text (ADR-0166); a matcher sees each body as the consumer would.
    lost = runtime.faults.drop_next("jobs", matching=lambda body: json.loads(body)["jobId"] == job_id)
    await clock.advance(1_000)
    assert lost.hits == 1
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any, Final, Protocol

from jsemu.core import js_error

__all__ = [
    "ALARM",
    "CRASH_CONSUMER",
    "D1_OUTAGE",
    "D1_OUTAGE_MESSAGE",
    "DROP",
    "DUPLICATE",
    "REORDER",
    "RESTART_MID_ALARM",
    "RPC",
    "RPC_FAILURE_MESSAGE",
    "Fault",
    "FaultInjector",
    "FaultTargets",
    "HasToString",
    "InjectedFault",
    "Matcher",
    "guard_rpc",
]

DROP: Final = "drop"
"""A message accepted by ``send`` / ``sendBatch`` is lost before it is stored."""
DUPLICATE: Final = "duplicate"
"""An acked message is delivered again (as when the ack is lost)."""
CRASH_CONSUMER: Final = "crash_consumer"
"""A batch's ``queue()`` handler raises before it runs: nothing is acked, every message is retried."""
ALARM: Final = "alarm"
"""An object's ``alarm()`` raises before it runs, so Cloudflare's retry schedule applies."""
RESTART_MID_ALARM: Final = "restart_mid_alarm"
"""An object restarts while its ``alarm()`` runs (at the handler's first await), so the run counts as failed."""
REORDER: Final = "reorder"
"""A message accepted by ``send`` is held back, so messages sent after it are delivered first."""
RPC: Final = "rpc"
"""An RPC call into a Worker entrypoint or a Durable Object fails (the callee ran or did not)."""
D1_OUTAGE: Final = "d1"
"""A D1 call fails before it reaches the database."""
RPC_FAILURE_MESSAGE: Final = "Network connection lost."
"""The message of an injected RPC failure. Cloudflare documents that infrastructure errors (network errors,
overloads) reach the caller as exceptions (developers.cloudflare.com/durable-objects/best-practices/error-handling/);
the wording is ours, after the common "Network connection lost." of a dropped connection."""
D1_OUTAGE_MESSAGE: Final = "D1_ERROR: Network connection lost."
"""The message of an injected D1 failure (a ``D1Error``, as D1 reports a failed call)."""

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

    def worker_names(self) -> Collection[str]:
        """Every Worker of the runtime."""
        ...

    def database_names(self) -> Collection[str]:
        """Every D1 database some Worker binds (``database_name``)."""
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
        kind: ``"drop"``, ``"duplicate"``, ``"reorder"``, ``"crash_consumer"``, ``"alarm"``,
            ``"restart_mid_alarm"``, ``"rpc"`` or ``"d1"``.
        target: the queue, the Durable Object class as ``<worker>:<class>``, the called Worker (``rpc``) or the
            D1 database (``d1``).
        remaining: strikes left (0 once spent or cancelled).
        hits: strikes so far.
        hold_ms: how much later a reordered message becomes visible (``reorder`` only).
        after_call: an RPC failure strikes after the callee ran, so only its answer is lost (``rpc`` only).
    """

    def __init__(
        self,
        kind: str,
        target: str,
        n: int,
        matching: Matcher | None,
        *,
        hold_ms: int = 0,
        after_call: bool = False,
    ) -> None:
        self.kind = kind
        self.target = target
        self.remaining = n
        self.hits = 0
        self.hold_ms = hold_ms
        self.after_call = after_call
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
    """The faults armed on one runtime: ``drop_next``, ``duplicate_next``, ``reorder_next``,
    ``crash_consumer_next``, ``fail_next_alarm``, ``restart_during_next_alarm``, ``fail_next_rpc``,
    ``fail_next_d1`` and ``restart_durable_objects``.
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

    def reorder_next(
        self, queue: str, n: int = 1, *, matching: Matcher | None = None, hold_ms: int = 1_000
    ) -> Fault:
        """Hold the next ``n`` messages sent to ``queue`` back by ``hold_ms``, so later messages overtake them.

        Cloudflare Queues does not guarantee delivery in publish order
        (developers.cloudflare.com/queues/reference/how-queues-works/); ``send`` succeeds and the message
        arrives ``hold_ms`` later than its ``delaySeconds`` asked.
        """
        if isinstance(hold_ms, bool) or not isinstance(hold_ms, int) or hold_ms < 1:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError(f"hold_ms must be a positive int of milliseconds (got {hold_ms!r})")
        return self._arm(REORDER, self._queue(queue), n, matching, hold_ms=hold_ms)

    def fail_next_rpc(
        self,
        worker: str,
        entrypoint: str | None = None,
        *,
        method: str | None = None,
        n: int = 1,
        after_call: bool = False,
    ) -> Fault:
        """Make the next ``n`` RPC calls into ``worker`` fail with ``Error: Network connection lost.``.

        ``entrypoint`` picks the entrypoint class or Durable Object class called (any when None), ``method`` the
        method (any when None). The caller receives a ``JsException`` as from a broken connection. Without
        ``after_call`` the callee never runs; with it, the callee runs to the end and only its answer is lost
        (the caller cannot tell which happened, as on Cloudflare).
        """
        known = self._targets.worker_names()
        if worker not in known:
            listed = ", ".join(sorted(known)) or "none"
            raise ValueError(f"worker: {worker!r} is not a Worker of this runtime (known: {listed})")
        matching = _call_matcher(entrypoint, method)
        return self._arm(RPC, worker, n, matching, after_call=after_call)

    def fail_next_d1(self, database: str, n: int = 1) -> Fault:
        """Make the next ``n`` calls to the D1 database ``database`` (``database_name``) fail: an outage.

        Each ``all`` / ``run`` / ``first`` / ``raw`` / ``batch`` / ``exec`` raises
        ``D1Error("D1_ERROR: Network connection lost.")`` before it touches the database (nothing applies).
        """
        known = self._targets.database_names()
        if database not in known:
            listed = ", ".join(sorted(known)) or "none"
            raise ValueError(f"database: {database!r} is not a D1 database of this runtime (known: {listed})")
        return self._arm(D1_OUTAGE, database, n, None)

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
        key, matching = self._object(worker, class_name, object_id, name, "fail_next_alarm")
        return self._arm(ALARM, key, n, matching)

    def restart_during_next_alarm(
        self,
        worker: str,
        class_name: str,
        object_id: str | HasToString | None = None,
        *,
        name: str | None = None,
        n: int = 1,
    ) -> Fault:
        """Restart the object while its next ``alarm()`` runs: it is evicted at the handler's first await.

        The object is picked as in `fail_next_alarm`. The interrupted run counts as failed and is retried on
        Cloudflare's schedule; the handler's later storage calls fail, as the old instance is gone.
        """
        key, matching = self._object(worker, class_name, object_id, name, "restart_during_next_alarm")
        return self._arm(RESTART_MID_ALARM, key, n, matching)

    def _object(
        self, worker: str, class_name: str, object_id: str | HasToString | None, name: str | None, what: str
    ) -> tuple[str, Matcher | None]:
        if object_id is not None and name is not None:
            raise ValueError(f"{what}: give object_id or name, not both")
        key = self._targets.namespace_key(worker, class_name)
        wanted = object_id if isinstance(object_id, str | None) else object_id.toString()
        if name is not None:
            wanted = self._targets.object_id_for_name(key, name)
        return key, None if wanted is None else _equals(wanted)

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
        return self.take(kind, target, subjects) is not None

    def take(
        self, kind: str, target: str, subjects: Callable[[], Sequence[Any]] | None = None
    ) -> Fault | None:
        """As `strike`, answering the fault that struck (its ``hold_ms`` / ``after_call``), or None."""
        if not self._faults:
            return None
        candidates = [f for f in self._faults if f.active and f.kind == kind and f.target == target]
        if not candidates:
            return None
        seen = subjects() if subjects is not None else ()
        for fault in candidates:
            if fault.applies(seen):
                fault.strike()
                _log.info("fault: %s on %s (%d left)", kind, target, fault.remaining)
                return fault
        return None

    def armed_kind(self, kind: str) -> bool:
        """True when some fault of ``kind`` may still strike (a cheap check before wrapping a call)."""
        return any(f.active and f.kind == kind for f in self._faults)

    # -- internals ------------------------------------------------------------------------------------------

    def _queue(self, queue: str) -> str:
        known = self._targets.queue_names()
        if queue not in known:
            listed = ", ".join(sorted(known)) or "none"
            raise ValueError(f"queue: {queue!r} is not a queue of this runtime (known: {listed})")
        return queue

    def _arm(
        self,
        kind: str,
        target: str,
        n: int,
        matching: Matcher | None,
        *,
        hold_ms: int = 0,
        after_call: bool = False,
    ) -> Fault:
        _check_n(n)
        _check_matching(matching)
        self._faults = [f for f in self._faults if f.active]
        fault = Fault(kind, target, n, matching, hold_ms=hold_ms, after_call=after_call)
        self._faults.append(fault)
        return fault


def _equals(wanted: str) -> Matcher:
    return lambda subject: subject == wanted


def _call_matcher(entrypoint: str | None, method: str | None) -> Matcher | None:
    if entrypoint is None and method is None:
        return None

    def matches(subject: Any) -> bool:
        called_class, called_method = subject
        return entrypoint in (None, called_class) and method in (None, called_method)

    return matches


def guard_rpc(
    faults: FaultInjector | None,
    worker: str,
    entrypoint: str,
    method: str,
    call: Callable[..., Awaitable[Any]],
) -> Callable[..., Awaitable[Any]]:
    """``call`` (one RPC into ``worker``'s ``entrypoint``), failing when an ``rpc`` fault strikes it.

    Without an armed ``rpc`` fault this is ``call`` itself: nothing is added to the hot path.
    """
    if faults is None or not faults.armed_kind(RPC):
        return call

    async def guarded(*args: Any, **kwargs: Any) -> Any:
        fault = faults.take(RPC, worker, lambda: [(entrypoint, method)])
        if fault is None:
            return await call(*args, **kwargs)
        if fault.after_call:
            await call(*args, **kwargs)
        else:
            await asyncio.sleep(0)
        raise js_error("Error", RPC_FAILURE_MESSAGE)

    return guarded
