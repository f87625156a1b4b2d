"""Simultaneous open connections: six per top-level invocation, the seventh waits for one of them (ADR-0102).

Cloudflare's Workers limits ("Simultaneous open connections", developers.cloudflare.com/workers/platform/
limits/): an invocation may have six connections at once that wait for their response headers; the calls
that open one are ``fetch()``, Queues ``send()`` / ``sendBatch()`` (and KV, Cache, R2, ``connect()``,
outbound WebSockets, which the runtime does not have). A seventh is not refused: it is put in a queue and
starts when one of the six receives its headers. Since 2026-04-09 a connection stops counting when its headers
arrive (Cloudflare changelog, "Relaxed simultaneous connection limiting for Workers"), not when its body has
been read. The limit is measured from the top-level request: Workers reached through Service Bindings (and a
Worker's own ``ctx.exports``) share their caller's six. D1, Durable Object stubs and Service Binding calls
themselves are not on the list and take no connection here.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from tsumugi_dev.invocation import LimitCounters

__all__ = ["SIMULTANEOUS_CONNECTIONS", "ConnectionPool"]

SIMULTANEOUS_CONNECTIONS: Final = 6
"""Connections one invocation may have waiting for response headers at once (every plan)."""


class ConnectionPool:
    """The six connections of one top-level invocation, handed out first come, first served.

    ``acquire`` returns at once while fewer than six are open, else waits in line; ``release`` (the response
    headers arrived, or the call failed) hands the connection to the first caller still waiting, or frees it.
    While anyone waits, all six are open.
    """

    __slots__ = ("_counters", "_waiting", "limit", "open", "waited")

    def __init__(self, counters: LimitCounters | None = None, limit: int = SIMULTANEOUS_CONNECTIONS) -> None:
        self.limit = limit
        self.open = 0
        """Connections open now (waiting for their headers)."""
        self.waited = 0
        """Calls that had to wait for a connection so far."""
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._counters = counters

    async def acquire(self) -> None:
        """Open a connection: at once while fewer than six are open, else when one is handed over."""
        if self.open < self.limit:
            self.open += 1
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(turn)
        self.waited += 1
        if self._counters is not None:
            self._counters.connection_waits += 1
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.release()  # handed over just as the caller was cancelled: pass it on
            else:
                turn.cancel()
                with contextlib.suppress(ValueError):  # `release` may have skipped it already
                    self._waiting.remove(turn)
            raise

    def release(self) -> None:
        """The connection's headers arrived (or it failed): the next caller in line gets it."""
        waiting = self._waiting
        while waiting:
            turn = waiting.popleft()
            if not turn.done():
                turn.set_result(None)  # handed over: as many stay open
                return
        self.open -= 1
