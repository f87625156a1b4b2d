"""The dev HTTP server's limits (ADR-0065), over raw sockets: body size before reading, deadlines, Host names.

Timeouts are shrunk to a fraction of a second through `HttpLimits`, so a test waits only for the server to do
what it must (answer, or close the socket); a server that never does fails the test's own guard.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.http_limits import HttpLimits
from tsumugi_dev.http_server import WorkerServer
from tsumugi_dev.runtime import LocalRuntime

LIMITS = HttpLimits(max_body_bytes=1024, header_timeout_s=0.3, body_timeout_s=0.3, idle_timeout_s=0.3)
GUARD_S = 20  # far beyond every limit above: reaching it means the server never acted


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@asynccontextmanager
async def served(runtime: LocalRuntime, worker: str = "conformance", **options: object) -> AsyncIterator[int]:
    port = _free_port()
    server = WorkerServer(runtime, worker, port, limits=options.pop("limits", LIMITS), **options)  # type: ignore[arg-type]
    await server.start()
    try:
        yield port
    finally:
        await server.stop()


async def exchange(port: int, *parts: bytes) -> bytes:
    """Send ``parts`` and read until the server closes the connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for part in parts:
            writer.write(part)
            await writer.drain()
        async with asyncio.timeout(GUARD_S):
            return await reader.read()
    finally:
        writer.close()
        await writer.wait_closed()


def head(method: str, path: str, port: int, *extra: str, host: str | None = None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host or f'127.0.0.1:{port}'}", *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


async def test_a_declared_oversized_body_is_refused_before_any_of_it_is_read(runtime: LocalRuntime) -> None:
    async with served(runtime) as port:
        # 100 MB announced, nothing sent: the answer comes at once, and the connection is closed.
        answer = await exchange(port, head("POST", "/echo", port, "Content-Length: 100000000"))
    assert status_of(answer) == 413
    assert b"connection: close" in answer.lower()
    assert b"request body larger than 1024 bytes" in answer
    # JSON, as every REST error is (issue 26 item 7): it was the one plain-text error a client met.
    assert b"content-type: application/json" in answer.lower()
    body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert body == {
        "error": "request body larger than 1024 bytes",
        "field": "body",
        "rule": "must be at most 1024 bytes",
    }


async def test_a_chunked_body_is_counted_while_it_is_read(runtime: LocalRuntime) -> None:
    chunk = b"x" * 600
    framed = b"%x\r\n%s\r\n" % (len(chunk), chunk)
    async with served(runtime) as port:
        answer = await exchange(
            port, head("POST", "/echo", port, "Transfer-Encoding: chunked"), framed, framed
        )
    assert status_of(answer) == 413


async def test_a_body_at_the_cap_is_served(runtime: LocalRuntime) -> None:
    body = b'{"a": "' + b"y" * (LIMITS.max_body_bytes - 9) + b'"}'
    assert len(body) == LIMITS.max_body_bytes
    async with served(runtime) as port:
        request = head("POST", "/echo", port, f"Content-Length: {len(body)}", "Connection: close") + body
        answer = await exchange(port, request)
    assert status_of(answer) == 200


@pytest.mark.parametrize(
    "sent",
    [b"", b"GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\n", b"GET /hel"],
    ids=["nothing", "headers-half-sent", "request-line-half-sent"],
)
async def test_a_connection_that_does_not_finish_its_headers_is_closed(
    runtime: LocalRuntime, sent: bytes
) -> None:
    async with served(runtime) as port:
        assert await exchange(port, sent) == b""


async def test_a_half_sent_body_times_out_with_408(runtime: LocalRuntime) -> None:
    async with served(runtime) as port:
        answer = await exchange(port, head("POST", "/echo", port, "Content-Length: 100"), b'{"a": ')
    assert status_of(answer) == 408


async def test_an_idle_keep_alive_connection_is_closed_after_its_response(runtime: LocalRuntime) -> None:
    async with served(runtime) as port:
        answer = await exchange(port, head("GET", "/hello", port))
    assert status_of(answer) == 200
    assert b"hello from conformance" in answer  # then the server closed the idle connection


@pytest.mark.parametrize("host", ["evil.test", "evil.test:8787", "192.168.1.10:8787", "127.0.0.1.evil.test"])
async def test_a_foreign_host_name_is_refused(runtime: LocalRuntime, host: str) -> None:
    async with served(runtime) as port:
        answer = await exchange(port, head("GET", "/hello", port, "Connection: close", host=host))
    assert status_of(answer) == 403


@pytest.mark.parametrize("host", ["localhost", "localhost:{port}", "127.0.0.1", "[::1]:{port}"])
async def test_this_machines_names_are_served(runtime: LocalRuntime, host: str) -> None:
    async with served(runtime) as port:
        answer = await exchange(
            port, head("GET", "/hello", port, "Connection: close", host=host.format(port=port))
        )
    assert status_of(answer) == 200


async def test_the_cron_trigger_url_needs_test_scheduled(runtime: LocalRuntime, clock: VirtualClock) -> None:
    path = "/cdn-cgi/handler/scheduled?cron=1+2+3+4+5"
    async with served(runtime) as port:
        refused = await exchange(port, head("GET", path, port, "Connection: close"))
    async with served(runtime, test_scheduled=True) as port:
        ran = await exchange(port, head("GET", path, port, "Connection: close"))
    assert status_of(refused) == 404
    assert status_of(ran) == 200
    assert b"\r\nok\r\n" in ran


async def test_the_scheduler_refuses_an_oversized_body_before_authentication(
    repo_system: tuple[LocalRuntime, VirtualClock],
) -> None:
    runtime, _ = repo_system
    async with served(runtime, "tsumugi-scheduler", limits=HttpLimits()) as port:
        answer = await exchange(port, head("POST", "/api/jobs", port, "Content-Length: 2000000"))
    assert status_of(answer) == 413  # not 401: nothing was read, nothing ran


async def test_a_worker_without_a_cron_handler_answers_404_not_a_traceback(
    repo_system: tuple[LocalRuntime, VirtualClock],
) -> None:
    runtime, _ = repo_system
    for worker in ("tsumugi-performers", "tsumugi-producer"):
        response = await runtime.fetch(worker, "http://127.0.0.1/cdn-cgi/handler/scheduled")
        assert (response.status, await response.text()) == (404, f"{worker} has no scheduled handler")
