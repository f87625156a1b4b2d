"""Invocations and their budgets: what one event of a Worker may use before Cloudflare stops it.

Every event a Worker or a Durable Object handles is one invocation: an HTTP request to ``fetch``, an RPC call
into an entrypoint or an object, an ``alarm()``, a queue batch, a ``scheduled`` event. The host that starts the
handler opens an `Invocation` (a context variable, so tasks the handler starts, ``waitUntil`` included, charge
the same one); the bindings charge it:

- subrequests (``fetch``, Service Binding and Durable Object stub calls, queue sends, D1 statements):
  `SUBREQUESTS_PER_INVOCATION` by default, or the config's ``limits.subrequests``; the next one raises
  `SubrequestLimitError`;
- D1 statements (each statement of a ``batch`` counts): `D1_QUERIES_PER_INVOCATION`; the call that would go
  over raises D1's error (``tsumugi_dev.d1``);
- Analytics Engine points: `DATA_POINTS_PER_INVOCATION`; later points are dropped silently, as on
  Cloudflare, and counted (`Invocation.dropped_points`, `LimitCounters.dropped_points`) with one warning;
- simultaneous open connections (``fetch``, queue sends): six waiting for their response headers at once,
  the seventh waits its turn (`tsumugi_dev.connections`, ADR-0102). An invocation started by a Service Binding
  call (``ctx.exports`` included) shares its caller's connections, as Cloudflare measures them from the
  top-level request.

Code that runs outside any handler (a test driving a binding directly) has no invocation and no budget.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Awaitable, Callable, Generator
from contextlib import contextmanager
from typing import Any, Final, TypeVar

from tsumugi_dev.connections import ConnectionPool
from tsumugi_dev.metering import Usage

__all__ = [
    "CONSUMER_WALL_TIME_MS",
    "D1_QUERIES_PER_INVOCATION",
    "DATA_POINTS_PER_INVOCATION",
    "LIMITS_URL",
    "SUBREQUESTS_PER_INVOCATION",
    "Invocation",
    "LimitCounters",
    "SubrequestLimitError",
    "admit_data_point",
    "charge_subrequest",
    "current_connections",
    "current_invocation",
    "enter_invocation",
    "invocation",
    "leave_invocation",
    "subrequest_call",
]

SUBREQUESTS_PER_INVOCATION: Final = 10_000
"""Workers Paid default (developers.cloudflare.com/workers/platform/limits/#subrequests); ``limits.subrequests``
in the wrangler config changes it."""
D1_QUERIES_PER_INVOCATION: Final = 1_000
"""Workers Paid (developers.cloudflare.com/d1/platform/limits/: "Queries per Worker invocation"); the limits
of a query apply to each statement of a batch."""
DATA_POINTS_PER_INVOCATION: Final = 250
"""developers.cloudflare.com/analytics/analytics-engine/limits/: "a maximum of 250 data points per Worker
invocation"; each ``writeDataPoint`` call counts."""
CONSUMER_WALL_TIME_MS: Final = 15 * 60_000
"""Queue consumer duration (wall clock), developers.cloudflare.com/queues/platform/limits/ (15 minutes)."""
LIMITS_URL: Final = "https://developers.cloudflare.com/workers/wrangler/configuration/#limits"

_log = logging.getLogger("tsumugi_dev")
_T = TypeVar("_T")


class SubrequestLimitError(Exception):
    """The invocation made more subrequests than its limit allows (Cloudflare's message)."""


class LimitCounters:
    """What the runtime dropped or refused for a limit, for tests to look at (``runtime.limits``)."""

    def __init__(self) -> None:
        self.dropped_points = 0
        """Analytics Engine points dropped because their invocation had written its 250."""
        self.most_d1_queries = 0
        """The most D1 queries one invocation has run so far (how close code came to the 1,000)."""
        self.connection_waits = 0
        """Outbound calls that waited for one of their invocation's six connections (ADR-0102)."""


class Invocation:
    """One event's budget: subrequests and D1 statements used, Analytics Engine points written, connections."""

    __slots__ = (
        "_connections",
        "_counters",
        "d1_queries",
        "dropped_points",
        "label",
        "points",
        "subrequest_limit",
        "subrequests",
        "usage",
    )

    def __init__(
        self,
        label: str,
        subrequest_limit: int,
        counters: LimitCounters | None,
        connections: ConnectionPool | None = None,
        usage: Usage | None = None,
    ) -> None:
        self.label = label
        self.subrequest_limit = subrequest_limit
        self.subrequests = 0
        self.d1_queries = 0
        self.points = 0
        self.dropped_points = 0
        self._counters = counters
        self._connections = connections
        self.usage = usage
        """Where this invocation's subrequests are metered (its Worker's or class's; ``tsumugi_dev.metering``)."""

    @property
    def connections(self) -> ConnectionPool:
        """The simultaneous connections this invocation draws on (its own, or its top-level caller's)."""
        pool = self._connections
        if pool is None:  # made on first use: most invocations open no connection
            pool = self._connections = ConnectionPool(self._counters)
        return pool

    def charge_subrequest(self, n: int = 1) -> None:
        """Count ``n`` subrequests; over the limit, raise as Cloudflare does (nothing counted)."""
        if self.subrequests + n > self.subrequest_limit:
            raise SubrequestLimitError(
                f"Too many subrequests by single Worker invocation. To configure this limit, refer to {LIMITS_URL}"
                f" ({self.label}: {self.subrequests} made, limit {self.subrequest_limit})"
            )
        self.subrequests += n
        if self.usage is not None:
            self.usage.subrequests += n

    def charge_d1(self, statements: int) -> bool:
        """Count one D1 call of ``statements`` queries (the call is one subrequest).

        False, and nothing counted, when the queries would go over the limit (the caller raises D1's error
        with `d1_limit_message`); a subrequest over its limit raises `SubrequestLimitError`.
        """
        if self.d1_queries + statements > D1_QUERIES_PER_INVOCATION:
            return False
        self.charge_subrequest()
        self.d1_queries += statements
        counters = self._counters
        if counters is not None and self.d1_queries > counters.most_d1_queries:
            counters.most_d1_queries = self.d1_queries
        return True

    def d1_limit_message(self, statements: int) -> str:
        """D1's error text when ``statements`` more queries would go over the limit."""
        return (
            f"D1_ERROR: Too many API requests by single Worker invocation. To configure this limit, refer "
            f"to {LIMITS_URL} ({self.label}: {self.d1_queries} D1 queries run, {statements} more asked, "
            f"limit {D1_QUERIES_PER_INVOCATION})"
        )

    def admit_data_point(self) -> bool:
        """True while the invocation may write another point; later points are dropped and counted."""
        if self.points < DATA_POINTS_PER_INVOCATION:
            self.points += 1
            return True
        self.dropped_points += 1
        if self._counters is not None:
            self._counters.dropped_points += 1
        if self.dropped_points == 1:
            _log.warning(
                "%s: Analytics Engine keeps %d points per invocation; later points are dropped",
                self.label,
                DATA_POINTS_PER_INVOCATION,
            )
        return False


_CURRENT: contextvars.ContextVar[Invocation | None] = contextvars.ContextVar(
    "tsumugi_dev_invocation", default=None
)


def current_invocation() -> Invocation | None:
    """The invocation the running code belongs to (None outside every handler)."""
    return _CURRENT.get()


def enter_invocation(
    label: str,
    subrequest_limit: int = SUBREQUESTS_PER_INVOCATION,
    counters: LimitCounters | None = None,
    *,
    share_connections: bool = False,
    usage: Usage | None = None,
) -> contextvars.Token[Invocation | None]:
    """Start a new invocation (a handler's event) in the running context; `leave_invocation` ends it.

    With ``share_connections`` (a Service Binding's callee) it draws on the calling invocation's connections,
    if there is a caller; otherwise on six of its own.
    """
    caller = _CURRENT.get() if share_connections else None
    connections = None if caller is None else caller.connections
    return _CURRENT.set(Invocation(label, subrequest_limit, counters, connections, usage))


def leave_invocation(token: contextvars.Token[Invocation | None]) -> None:
    """End the invocation `enter_invocation` started; the caller's is current again."""
    _CURRENT.reset(token)


@contextmanager
def invocation(
    label: str, subrequest_limit: int = SUBREQUESTS_PER_INVOCATION, counters: LimitCounters | None = None
) -> Generator[Invocation]:
    """Run the block as a new invocation (for tests and tools; hosts use `enter_invocation`)."""
    token = enter_invocation(label, subrequest_limit, counters)
    try:
        opened = token.var.get()
        assert opened is not None
        yield opened
    finally:
        leave_invocation(token)


def charge_subrequest() -> None:
    """Count one subrequest against the current invocation, if any."""
    current = _CURRENT.get()
    if current is not None:
        current.charge_subrequest()


def current_connections() -> ConnectionPool | None:
    """The connections the running code's invocation draws on (None outside every handler: no limit)."""
    current = _CURRENT.get()
    return None if current is None else current.connections


def admit_data_point() -> bool:
    """Whether the current invocation may write another Analytics Engine point (always, outside one)."""
    current = _CURRENT.get()
    return current is None or current.admit_data_point()


def subrequest_call(call: Callable[..., Awaitable[_T]]) -> Callable[..., Awaitable[_T]]:
    """``call`` (an RPC stub method) charged as one subrequest of the caller's invocation before it starts."""

    def charged(*args: Any, **kwargs: Any) -> Awaitable[_T]:
        # Charged when the call is made, as workerd counts a subrequest when it starts; no coroutine frame of
        # its own (every RPC goes through here).
        current = _CURRENT.get()
        if current is not None:
            current.charge_subrequest()
        return call(*args, **kwargs)

    return charged
