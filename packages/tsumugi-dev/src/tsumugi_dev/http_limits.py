"""What the dev HTTP server accepts: body size, time to send a request, idle time, and which Host names.

Cloudflare's edge refuses request bodies above 100 MB (Free and Pro plans; 200 MB Business, 500 MB Enterprise
by default), URLs above 16 KB and request headers above 128 KB in total, and it closes slow clients itself
(developers.cloudflare.com/workers/platform/limits). The dev server faces the same browsers from one machine
and a smaller memory, so it is stricter (ADR-0065):

* a body is at most `HttpLimits.max_body_bytes` (1 MiB, above the REST API's own cap and a payload's 100 KiB):
  a larger ``Content-Length`` is refused with 413 before a byte of the body is read and before the Worker
  (and so its authentication) runs; a chunked body is counted while it is read and refused the same way;
* the request line and headers must arrive within ``header_timeout_s`` of the connection opening (or of the
  previous response), the body within ``body_timeout_s``; an idle keep-alive connection is closed after
  ``idle_timeout_s``. Headers are capped at h11's 16 KiB (an incomplete event larger than that is a 400);
* the ``Host`` header must name this machine (``127.0.0.1``, ``localhost`` or ``[::1]``, any port): a page
  that a DNS-rebinding attack points at 127.0.0.1 sends its own host name and is refused (403).

Example:
    >>> limits = HttpLimits()
    >>> limits.allows_host("127.0.0.1:8787"), limits.allows_host("localhost"), limits.allows_host("evil.test:8787")
    (True, True, False)
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar, Final

import msgspec
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["DEFAULT_LIMITS", "LOCAL_HOSTS", "HttpLimits", "deadline_protocol"]

LOCAL_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "[::1]"})
"""Host names the dev server answers to."""


class HttpLimits(msgspec.Struct, frozen=True, kw_only=True):
    """The dev server's limits; tests shrink the timeouts instead of waiting."""

    max_body_bytes: int = 1024 * 1024
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    idle_timeout_s: float = 5.0
    hosts: frozenset[str] = LOCAL_HOSTS

    def allows_host(self, host: str) -> bool:
        """True when ``host`` (a Host header, with or without a port) names this machine."""
        name = host.strip().lower()
        name = name[: name.find("]") + 1] if name.startswith("[") else name.partition(":")[0]
        return name in self.hosts


DEFAULT_LIMITS: Final = HttpLimits()


class _DeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol, plus a deadline for a request's headers and our own keep-alive idle time.

    uvicorn closes a connection only when it idles after a response; one that never sends a request, or sends
    its headers a byte at a time (slowloris), would be kept open forever.
    """

    header_timeout_s: ClassVar[float]
    idle_timeout_s: ClassVar[float]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.timeout_keep_alive = self.idle_timeout_s  # a float: sub-second in tests
        self._deadline: asyncio.TimerHandle | None = None

    def _waiting_for_headers(self) -> bool:
        return self.cycle is None or self.cycle.response_complete  # pyright: ignore[reportUnnecessaryComparison]

    def _arm(self) -> None:
        if self._deadline is None:
            self._deadline = self.loop.call_later(self.header_timeout_s, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if self._waiting_for_headers() and not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._waiting_for_headers():
            self._arm()  # a new request begins (or continues): its headers have until the deadline
        super().data_received(data)
        if not self._waiting_for_headers():
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def deadline_protocol(limits: HttpLimits) -> type[H11Protocol]:
    """The uvicorn protocol class enforcing ``limits``' header deadline and idle time."""
    return type(
        "DeadlineProtocol",
        (_DeadlineProtocol,),
        {"header_timeout_s": limits.header_timeout_s, "idle_timeout_s": limits.idle_timeout_s},
    )
