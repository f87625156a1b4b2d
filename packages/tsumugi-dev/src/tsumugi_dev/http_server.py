"""HTTP for each Worker with a ``fetch`` handler: a small ASGI app per Worker, served by uvicorn on 127.0.0.1.

The app turns the ASGI request into a JS Request (as workerd hands one to a Worker), runs the Worker through
``LocalRuntime.fetch_js``
(which also answers ``/cdn-cgi/handler/scheduled`` when ``test_scheduled`` is on, as ``wrangler dev
--test-scheduled`` does), and sends the JS Response back. An exception in the Worker becomes a 500, as on
Cloudflare. Before the Worker runs, the request must pass `HttpLimits` (Host, body size, time; ADR-0065).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import socket
import urllib.parse
from collections.abc import Awaitable, Callable, Generator, MutableMapping
from typing import Any

import uvicorn
from jsemu.fetch_api import Response as JsResponse
from jsemu.fetch_api import make_request

from tsumugi_dev.http_limits import DEFAULT_LIMITS, HttpLimits, deadline_protocol, raise_open_files_limit
from tsumugi_dev.runtime import SCHEDULED_PATH, LocalRuntime
from tsumugi_dev.workerd_methods import WORKERD_METHODS

__all__ = ["AppServer", "PortInUseError", "WorkerServer", "asgi_app"]

_log = logging.getLogger("tsumugi_dev")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class _Refused(Exception):
    """The request breaks a limit: answer ``status`` with ``text`` and close the connection."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


async def _read_body(receive: Receive, max_bytes: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        chunk = bytes(message.get("body", b""))
        size += len(chunk)
        if size > max_bytes:
            raise _Refused(413, f"request body larger than {max_bytes} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _check_head(scope: Scope, headers: dict[str, str], limits: HttpLimits) -> None:
    """Refuse what the request line and headers already show, before any of the body is read."""
    if not limits.allows_host(headers.get("host", "")):
        # DNS rebinding: a page on evil.test whose name now resolves to 127.0.0.1 sends Host: evil.test.
        raise _Refused(403, "Invalid Host header: tsumugi dev answers only 127.0.0.1, localhost and [::1]")
    if scope["method"] not in WORKERD_METHODS:
        # workerd's HTTP parser refuses it before any Worker runs (kj http.c++: 501 "Unrecognized
        # request method.").
        raise _Refused(501, "Unrecognized request method.")
    length = headers.get("content-length", "0").strip()
    if not length.isdigit() or int(length) > limits.max_body_bytes:
        raise _Refused(413, f"request body larger than {limits.max_body_bytes} bytes")


def _url(scope: Scope) -> str:
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    server = scope.get("server") or ("127.0.0.1", 80)
    host = headers.get("host") or f"{server[0]}:{server[1]}"
    query = scope.get("query_string", b"").decode("latin-1")
    # The URL keeps the path as the client sent it (``%23`` stays encoded), as Request.url does on Workers.
    raw_path = scope.get("raw_path")
    path = raw_path.decode("latin-1") if isinstance(raw_path, bytes) and raw_path else scope["path"]
    return f"{scope.get('scheme', 'http')}://{host}{path}" + (f"?{query}" if query else "")


async def _send_plain(send: Send, status: int, text: bytes, *, close: bool = False) -> None:
    headers = [(b"content-type", b"text/plain")] + ([(b"connection", b"close")] if close else [])
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text})


async def _send_json(send: Send, status: int, body: bytes, *, close: bool = False) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(b"connection", b"close")] if close else []
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _internal_error() -> JsResponse:
    from jsemu.fetch_api import Headers

    return JsResponse(b"Internal Server Error", 500, "", Headers([("content-type", "text/plain")]))


def asgi_app(
    runtime: LocalRuntime, worker: str, limits: HttpLimits = DEFAULT_LIMITS, *, test_scheduled: bool = False
) -> ASGIApp:
    """The ASGI app that serves ``worker`` within ``limits``; ``test_scheduled`` exposes the cron trigger URL."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        try:
            _check_head(scope, headers, limits)
            # The gate reads the path from the URL the runtime will parse, not from another parse of the
            # request line: a raw "#" after the path, or a Host carrying a path, once got past it (issue 25).
            if not test_scheduled and urllib.parse.urlsplit(_url(scope)).path == SCHEDULED_PATH:
                await _send_plain(send, 404, b"not found (run tsumugi dev --test-scheduled to trigger crons)")
                return
            async with asyncio.timeout(limits.body_timeout_s):
                body = await _read_body(receive, limits.max_body_bytes)
        except _Refused as refused:
            if refused.status == 413:
                # As JSON, like every error of the REST API behind it (issue 26): a client reads one shape.
                rule = f"must be at most {limits.max_body_bytes} bytes"
                text = json.dumps({"error": refused.text, "field": "body", "rule": rule})
                await _send_json(send, refused.status, text.encode(), close=True)
            else:
                await _send_plain(send, refused.status, refused.text.encode(), close=True)
            return
        except TimeoutError:
            await _send_plain(send, 408, b"request body not received in time", close=True)
            return
        pairs = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope.get("headers", [])]
        url, method = _url(scope), scope["method"]
        try:
            response: JsResponse = await runtime.fetch_js(worker, make_request(url, method, pairs, body))
            content = await response.read_bytes()
        except Exception:
            _log.exception("%s %s %s failed", worker, method, url)
            response, content = _internal_error(), b"Internal Server Error"
        _log.info("%s %s %s -> %d", worker, method, url, response.status)
        await send(
            {
                "type": "http.response.start",
                "status": response.status,
                "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers_sorted()],
            }
        )
        await send({"type": "http.response.body", "body": content})

    return app


class PortInUseError(OSError):
    """The port a Worker should be served on is taken by another process."""

    def __init__(self, port: int) -> None:
        super().__init__(errno.EADDRINUSE, f"port {port} is in use")
        self.port = port


def _listening_socket(host: str, port: int) -> socket.socket:
    """Bind here rather than in uvicorn, whose bind failure is a ``sys.exit`` from inside the event loop."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it: uvicorn writes a response's head and body separately, and with Nagle's
    # algorithm on, the body waited for the client's delayed ACK (~40 ms on every keep-alive request).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUseError(port) from None
        raise
    return sock


class _QuietServer(uvicorn.Server):
    """A uvicorn server that leaves signal handling to the caller (several run in one process)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


class WorkerServer:
    """Serves one Worker on ``127.0.0.1:port`` until ``stop()``, within ``limits`` (`HttpLimits`)."""

    def __init__(
        self,
        runtime: LocalRuntime,
        worker: str,
        port: int,
        host: str = "127.0.0.1",
        *,
        limits: HttpLimits = DEFAULT_LIMITS,
        test_scheduled: bool = False,
    ) -> None:
        raise_open_files_limit()  # before the cap is derived from it (deadline_protocol)
        config = uvicorn.Config(
            asgi_app(runtime, worker, limits, test_scheduled=test_scheduled),
            host=host,
            port=port,
            log_level="warning",
            lifespan="off",
            http=deadline_protocol(limits),
        )
        self.url = f"http://{host}:{port}"
        self._host, self._port = host, port
        self._server = _QuietServer(config)
        self._task: asyncio.Task[None] | None = None
        self._socket: socket.socket | None = None

    async def start(self) -> None:
        """Begin serving and return once the socket listens.

        Raises:
            PortInUseError: Another process listens on the port.
        """
        self._socket = _listening_socket(self._host, self._port)
        self._task = asyncio.get_running_loop().create_task(self._server.serve(sockets=[self._socket]))
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raises the bind error
                raise OSError(f"{self.url}: the server stopped before it started")
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        """Stop serving."""
        self._server.should_exit = True
        if self._task is not None:
            await self._task
        if self._socket is not None:
            self._socket.close()


class AppServer:
    """Serves a plain ASGI app (the local Access stand-in) on ``127.0.0.1:port`` until ``stop()``."""

    def __init__(self, app: Any, port: int, host: str = "127.0.0.1") -> None:
        """Serve ``app``; port 0 picks a free one (see `url` after `start`)."""
        self._host, self._port = host, port
        self._server = _QuietServer(
            uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off")
        )
        self._task: asyncio.Task[None] | None = None
        self._socket: socket.socket | None = None
        self.url = f"http://{host}:{port}"

    async def start(self) -> None:
        """Begin serving and return once the socket listens."""
        self._socket = _listening_socket(self._host, self._port)
        self.url = f"http://{self._host}:{self._socket.getsockname()[1]}"
        self._task = asyncio.get_running_loop().create_task(self._server.serve(sockets=[self._socket]))
        while not self._server.started:
            if self._task.done():
                self._task.result()
                raise OSError(f"{self.url}: the server stopped before it started")
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        """Stop serving."""
        self._server.should_exit = True
        if self._task is not None:
            await self._task
        if self._socket is not None:
            self._socket.close()
