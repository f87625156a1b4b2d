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
* the ``Host`` header must name this machine (``127.0.0.1``, ``localhost`` or ``[::1]``, and at most a port
  of digits): a page that a DNS-rebinding attack points at 127.0.0.1 sends its own host name and is refused
  (403), and so is anything else after the name (a path, a ``[``), which would change the URL the Worker reads;
* at most `HttpLimits.max_connections` connections are open at once in the process (and never more than a
  quarter of its file-descriptor limit, whose soft value the server first raises towards the hard one,
  `raise_open_files_limit`): at the cap a new connection closes the least recently active idle one
  (waiting for a request), or is itself closed when none is idle, so a flood of idle connections never
  exhausts the process's file descriptors and never locks out the next client (ADR-0120);
* a response must drain within ``write_timeout_s``: a client that stops reading has its connection reset, and
  an idle connection whose last answer is still unread in the kernel is reset rather than closed, so its
  buffers are freed at once (ADR-0120).

Example:
    >>> limits = HttpLimits()
    >>> limits.allows_host("127.0.0.1:8787"), limits.allows_host("localhost"), limits.allows_host("evil.test:8787")
    (True, True, False)
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import struct
import sys
from typing import Any, ClassVar, Final

import msgspec
from uvicorn.protocols.http.h11_impl import H11Protocol

try:
    import resource
except ImportError:  # pragma: no cover - Windows has no RLIMIT_NOFILE
    resource = None
try:
    import fcntl
    import termios
except ImportError:  # pragma: no cover - Windows
    fcntl = termios = None

__all__ = [
    "DEFAULT_LIMITS",
    "LOCAL_HOSTS",
    "HttpLimits",
    "connection_cap",
    "deadline_protocol",
    "open_connections",
    "raise_open_files_limit",
]

LOCAL_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "[::1]"})
"""Host names the dev server answers to."""


class HttpLimits(msgspec.Struct, frozen=True, kw_only=True):
    """The dev server's limits; tests shrink the timeouts instead of waiting."""

    max_body_bytes: int = 1024 * 1024
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    idle_timeout_s: float = 5.0
    write_timeout_s: float = 10.0
    max_connections: int = 2048
    connection_grace_s: float = 0.25
    """A connection this young is not closed to make room: asyncio accepts a flood's connections in batches of
    up to the listen backlog, so without it a client's connection could be closed by those accepted right after
    it, before its first request was read. When every idle connection is this young, the newcomer is closed."""
    hosts: frozenset[str] = LOCAL_HOSTS

    def allows_host(self, host: str) -> bool:
        """True when ``host`` (a Host header) is one of `hosts`, followed by nothing but an optional port."""
        match = _HOST.fullmatch(host.strip().lower())
        return match is not None and match["name"] in self.hosts


DEFAULT_LIMITS: Final = HttpLimits()
_HOST: Final = re.compile(r"(?P<name>\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::[0-9]{1,5})?")
_RESET: Final = struct.pack("ii", 1, 0)
"""``SO_LINGER`` on, zero seconds: closing sends a reset and frees the socket's buffers at once."""
_OUTQ: Final = getattr(termios, "TIOCOUTQ", None) if sys.platform.startswith("linux") else None
_INT: Final = struct.Struct("i")


def connection_cap(limits: HttpLimits) -> int:
    """How many connections the process keeps open: `HttpLimits.max_connections`, and at most a quarter of the
    file descriptors it may open (the rest are for its SQLite files, its log and the Workers' own I/O)."""
    if resource is None:  # pragma: no cover - Windows
        return limits.max_connections
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return (
        limits.max_connections
        if soft == resource.RLIM_INFINITY
        else max(1, min(limits.max_connections, soft // 4))
    )


def raise_open_files_limit(target: int = 65_536) -> int:
    """Raise this process's soft limit of open files towards ``target`` (never above the hard limit); the
    soft limit now. Many systems start processes at 1,024, which a thousand idle connections exhaust."""
    if resource is None:  # pragma: no cover - Windows
        return target
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = target if hard == resource.RLIM_INFINITY else min(target, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def open_connections() -> int:
    """How many connections the dev servers of this process hold open now."""
    return len(_DeadlineProtocol.open)


class _DeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol, plus a deadline for a request's headers, for draining a response, our own
    keep-alive idle time, and the process-wide connection cap.

    uvicorn closes a connection only when it idles after a response; one that never sends a request, or sends
    its headers a byte at a time (slowloris), would be kept open forever, and so would one whose client never
    reads its answer (uvicorn waits for the write buffer to drain without a deadline).
    """

    header_timeout_s: ClassVar[float]
    idle_timeout_s: ClassVar[float]
    write_timeout_s: ClassVar[float]
    max_connections: ClassVar[int]
    connection_grace_s: ClassVar[float]
    open: ClassVar[dict[_DeadlineProtocol, None]] = {}
    """Every open connection of the process, least recently active first."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.timeout_keep_alive = self.idle_timeout_s  # a float: sub-second in tests
        self._deadline: asyncio.TimerHandle | None = None
        self._write_deadline: asyncio.TimerHandle | None = None
        self._opened_at = 0.0

    def _is_idle(self) -> bool:
        """Waiting for a request, with nothing left to write, and open longer than the grace."""
        return (
            self._waiting_for_headers()
            and self.transport.get_write_buffer_size() == 0
            and self.loop.time() - self._opened_at >= self.connection_grace_s
        )

    def _reset(self) -> None:
        """Close at once with a reset: nothing is flushed, the kernel frees the socket's buffers now."""
        _DeadlineProtocol.open.pop(self, None)
        if self.transport.is_closing():
            return
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET)
        self.transport.abort()

    def _unread_by_client(self) -> bool:
        """True when bytes already written to the socket still wait in the kernel for the client to read."""
        if _OUTQ is None or fcntl is None:  # pragma: no cover - not Linux
            return False
        sock = self.transport.get_extra_info("socket")
        if sock is None:
            return False
        try:
            return _INT.unpack(fcntl.ioctl(sock.fileno(), _OUTQ, _INT.pack(0)))[0] > 0
        except OSError:
            return False

    def _close_idle(self) -> None:
        if self._unread_by_client():
            self._reset()
        else:
            self.transport.close()

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
            self._close_idle()

    def _write_expired(self) -> None:
        self._write_deadline = None
        self._reset()  # the client has not read its answer for write_timeout_s

    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)
        self._opened_at = self.loop.time()
        connections = _DeadlineProtocol.open
        if len(connections) >= self.max_connections:
            idle = next((connection for connection in connections if connection._is_idle()), None)
            if idle is None:
                self._reset()  # every slot serves a request: this one waits for none of them
                return
            idle._reset()
        connections[self] = None
        self._arm()

    def data_received(self, data: bytes) -> None:
        connections = _DeadlineProtocol.open
        if connections.pop(self, False) is None:
            connections[self] = None  # the most recently active now
        if self._waiting_for_headers():
            self._arm()  # a new request begins (or continues): its headers have until the deadline
        super().data_received(data)
        if not self._waiting_for_headers():
            self._disarm()

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._write_deadline is None:
            self._write_deadline = self.loop.call_later(self.write_timeout_s, self._write_expired)

    def resume_writing(self) -> None:
        if self._write_deadline is not None:
            self._write_deadline.cancel()
            self._write_deadline = None
        super().resume_writing()

    def timeout_keep_alive_handler(self) -> None:
        if self._unread_by_client():
            self._reset()
        else:
            super().timeout_keep_alive_handler()

    def connection_lost(self, exc: Exception | None) -> None:
        _DeadlineProtocol.open.pop(self, None)
        self._disarm()
        if self._write_deadline is not None:
            self._write_deadline.cancel()
            self._write_deadline = None
        super().connection_lost(exc)


def deadline_protocol(limits: HttpLimits) -> type[H11Protocol]:
    """The uvicorn protocol class enforcing ``limits``' deadlines, idle time and connection cap."""
    return type(
        "DeadlineProtocol",
        (_DeadlineProtocol,),
        {
            "header_timeout_s": limits.header_timeout_s,
            "idle_timeout_s": limits.idle_timeout_s,
            "write_timeout_s": limits.write_timeout_s,
            "max_connections": connection_cap(limits),
            "connection_grace_s": limits.connection_grace_s,
        },
    )
