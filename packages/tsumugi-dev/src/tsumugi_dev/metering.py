"""Metering: every unit Cloudflare bills, counted per Worker, Durable Object class, queue and D1 database.

The runtime's facades each call this module at one point (ADR-0130):

- a Worker invocation (``WorkerHost.run``): one *request*, unless a Service Binding (or ``ctx.exports``) started
  it, which Cloudflare does not bill (counted apart as ``service_binding_calls``);
- a Durable Object event (``ObjectHost.event``): one *request* (each RPC method call on a stub, each
  ``fetch``, each ``alarm()``), and the object's *active wall-clock time*: the union of the intervals in
  which at least one of its events runs, so interleaved events are not counted twice;
- the Durable Object SQL API (``SqlStorage.exec``): rows read and rows written as workerd's SQLite counts
  them (`tsumugi_dev.sql_rows`); the runtime's own statements (the alarm table) are not counted;
- a queue (``QueueStore``): one operation per 64 KB (1,000-byte KB, plus about 100 bytes of metadata) of
  each message written, read (each delivery, retries included) and deleted (acked, or dropped after its
  last retry);
- a D1 database: each statement is one query, with its rows read and written;
- Analytics Engine: each point an invocation keeps (dropped points are not billed);
- subrequests, counted by `tsumugi_dev.invocation` (not billed on Cloudflare; limited per invocation).

Counting is a few integer additions per event; `Meter.snapshot` and `Meter.reset` are for whoever reads it
(bench/platform.py, tests). Prices live apart (`tsumugi_dev.billing`).
"""

from __future__ import annotations

import time
from typing import Final

__all__ = [
    "QUEUE_METADATA_BYTES",
    "QUEUE_OPERATION_BYTES",
    "ActiveSpan",
    "Meter",
    "Usage",
    "queue_operations",
]

QUEUE_OPERATION_BYTES: Final = 64_000
"""One queue operation per 64 KB of a message, a KB being 1,000 bytes (Cloudflare Queues pricing)."""
QUEUE_METADATA_BYTES: Final = 100
"""The internal metadata Cloudflare adds to each message when it counts its size (about 100 bytes)."""


def queue_operations(body_bytes: int) -> int:
    """Operations one write, read or delete of a message of ``body_bytes`` costs (at least one)."""
    return max(1, -(-(body_bytes + QUEUE_METADATA_BYTES) // QUEUE_OPERATION_BYTES))


class Usage:
    """What one account (a Worker, a Durable Object class, a queue, a D1 database) has used so far."""

    __slots__ = (
        "active_s",
        "alarms",
        "analytics_points",
        "d1_queries",
        "d1_rows_read",
        "d1_rows_written",
        "queue_deletes",
        "queue_reads",
        "queue_writes",
        "requests",
        "service_binding_calls",
        "sql_rows_read",
        "sql_rows_written",
        "subrequests",
    )

    FIELDS: Final = (
        "requests",
        "service_binding_calls",
        "alarms",
        "active_s",
        "sql_rows_read",
        "sql_rows_written",
        "queue_writes",
        "queue_reads",
        "queue_deletes",
        "d1_queries",
        "d1_rows_read",
        "d1_rows_written",
        "analytics_points",
        "subrequests",
    )
    """Every counter, in the order reports print them."""

    def __init__(self) -> None:
        self.requests = 0
        """Billed requests: Worker invocations not started by a Service Binding; Durable Object events."""
        self.service_binding_calls = 0
        """Worker invocations a Service Binding (or ``ctx.exports``) started: not billed as requests."""
        self.alarms = 0
        """``alarm()`` invocations of a Durable Object (each is also one of its ``requests``)."""
        self.active_s = 0.0
        """Seconds of wall clock a Durable Object class's objects spent running events (summed per object)."""
        self.sql_rows_read = 0
        self.sql_rows_written = 0
        self.queue_writes = 0
        """Queue operations for messages written (each 64 KB of each message, dead-letter moves included)."""
        self.queue_reads = 0
        """Queue operations for deliveries (each delivery of each message, retries included)."""
        self.queue_deletes = 0
        """Queue operations for messages removed (acked, or dropped after their last retry)."""
        self.d1_queries = 0
        self.d1_rows_read = 0
        self.d1_rows_written = 0
        self.analytics_points = 0
        self.subrequests = 0

    def as_dict(self) -> dict[str, float]:
        """Every counter by name."""
        return {name: getattr(self, name) for name in self.FIELDS}


class ActiveSpan:
    """An object's active wall-clock time: counted from its first running event until its last one ends."""

    __slots__ = ("_running", "_since", "_usage")

    def __init__(self, usage: Usage) -> None:
        self._usage = usage
        self._running = 0
        self._since = 0.0

    def enter(self) -> None:
        """An event starts (one billed request)."""
        self._usage.requests += 1
        if self._running == 0:
            self._since = time.perf_counter()
        self._running += 1

    def leave(self) -> None:
        """The event ended."""
        self._running -= 1
        if self._running == 0:
            self._usage.active_s += time.perf_counter() - self._since


class Meter:
    """Every account's `Usage`, made on first use and kept for the life of the runtime."""

    def __init__(self) -> None:
        self._accounts: dict[str, Usage] = {}

    def usage(self, account: str) -> Usage:
        """The `Usage` of ``account`` (e.g. ``"Worker tsumugi-scheduler"``), made if new."""
        found = self._accounts.get(account)
        if found is None:
            found = self._accounts[account] = Usage()
        return found

    def snapshot(self) -> dict[str, dict[str, float]]:
        """A copy of every account's counters (accounts that used nothing included)."""
        return {account: usage.as_dict() for account, usage in sorted(self._accounts.items())}

    def total(self) -> dict[str, float]:
        """Every counter summed over all accounts."""
        totals: dict[str, float] = dict.fromkeys(Usage.FIELDS, 0)
        for usage in self._accounts.values():
            for name in Usage.FIELDS:
                totals[name] += getattr(usage, name)
        return totals

    def reset(self) -> None:
        """Zero every counter (accounts stay, so facades keep their `Usage` objects)."""
        for usage in self._accounts.values():
            usage.__init__()
