"""The dev server under the attacks of issue 25: a connection flood, clients that never read, the cron gate,
and forged log lines. Each test fails on the server before that issue's fixes.

Clients run in threads (blocking sockets) or as asyncio streams; the server shares this event loop, so a
client never blocks it. Timeouts are shrunk through `HttpLimits`; ``GUARD_S`` is only reached when the server
never acts.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import select
import socket
import subprocess
import sys
import textwrap

import pytest
from test_runtime_http_limits import GUARD_S, exchange, head, served, status_of

from tsumugi_dev import cli
from tsumugi_dev.http_limits import HttpLimits, connection_cap, open_connections, raise_open_files_limit
from tsumugi_dev.log_lines import one_line
from tsumugi_dev.runtime import LocalRuntime

FLOOD = HttpLimits(
    max_connections=4, header_timeout_s=60, idle_timeout_s=60, body_timeout_s=60, connection_grace_s=0
)
"""A small cap, and deadlines far beyond the guard: only the cap can close the flood's connections."""


async def _idle(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    await asyncio.sleep(0)  # let the server accept it
    return reader, writer


async def _closed_by_server(reader: asyncio.StreamReader) -> bool:
    """True once the server closed (or reset) the connection, having sent nothing on it."""
    async with asyncio.timeout(GUARD_S):
        try:
            return await reader.read() == b""
        except ConnectionResetError:
            return True


async def _close(*writers: asyncio.StreamWriter) -> None:
    for writer in writers:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


async def test_a_flood_of_idle_connections_closes_the_oldest_and_the_next_client_is_served(
    runtime: LocalRuntime,
) -> None:
    async with served(runtime, limits=FLOOD) as port:
        flood = [await _idle(port) for _ in range(10)]
        while open_connections() < FLOOD.max_connections:
            await asyncio.sleep(0.01)
        answer = await exchange(port, head("GET", "/hello", port, "Connection: close"))
        assert status_of(answer) == 200
        # The six oldest (and then the rest, as the answering client arrived) were closed by the server.
        closed = [await _closed_by_server(reader) for reader, _ in flood[:6]]
        assert closed == [True] * 6
        assert open_connections() <= FLOOD.max_connections
        await _close(*(writer for _, writer in flood))


async def test_a_connection_with_a_request_in_progress_is_never_the_one_closed(runtime: LocalRuntime) -> None:
    limits = HttpLimits(
        max_connections=2, header_timeout_s=60, idle_timeout_s=60, body_timeout_s=60, connection_grace_s=0
    )
    async with served(runtime, limits=limits) as port:
        busy_reader, busy = await _idle(port)
        busy.write(head("POST", "/echo", port, "Content-Length: 6", "Connection: close") + b'"ab')
        await busy.drain()
        idle_reader, idle = await _idle(port)
        while open_connections() < 2:
            await asyncio.sleep(0.01)
        _, newcomer = await _idle(port)  # at the cap: the idle one goes, not the one mid-request
        assert await _closed_by_server(idle_reader)
        busy.write(b'cd"')
        async with asyncio.timeout(GUARD_S):
            assert status_of(await busy_reader.read()) == 200
        await _close(busy, idle, newcomer)


async def test_at_the_cap_a_burst_closes_the_newcomers_not_a_connection_just_opened(
    runtime: LocalRuntime,
) -> None:
    # A flood accepted in one batch must not close a client's connection before its first request is read.
    limits = HttpLimits(max_connections=2, header_timeout_s=60, idle_timeout_s=60, connection_grace_s=60)
    async with served(runtime, limits=limits) as port:
        first_reader, first = await _idle(port)
        _, second = await _idle(port)
        while open_connections() < 2:
            await asyncio.sleep(0.01)
        late_reader, late = await _idle(port)
        assert await _closed_by_server(late_reader)  # the newcomer, not the two within their grace
        first.write(head("GET", "/hello", port, "Connection: close"))
        async with asyncio.timeout(GUARD_S):
            assert status_of(await first_reader.read()) == 200
        await _close(first, second, late)


def test_the_cap_leaves_three_quarters_of_the_file_descriptors_to_the_rest_of_the_process() -> None:
    resource = pytest.importorskip("resource")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (400, hard))
    try:
        assert connection_cap(HttpLimits()) == 100
        assert connection_cap(HttpLimits(max_connections=50)) == 50
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_the_server_raises_a_low_soft_file_limit_towards_the_hard_one() -> None:
    resource = pytest.importorskip("resource")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    try:
        expected = 65_536 if hard == resource.RLIM_INFINITY else min(65_536, hard)
        assert raise_open_files_limit() == expected
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _until_reset(sock: socket.socket, guard_s: float) -> int:
    """Wait, without reading, until the socket reports an error or a hang-up; the poll events (0: none)."""
    poller = select.poll()
    poller.register(sock, select.POLLERR | select.POLLHUP)
    events = poller.poll(guard_s * 1000)
    return events[0][1] if events else 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the kernel's send queue (Linux)")
@pytest.mark.parametrize("size", [2_000, 600_000], ids=["answer-left-in-the-kernel", "answer-never-drains"])
async def test_a_client_that_never_reads_its_answers_is_reset(runtime: LocalRuntime, size: int) -> None:
    limits = HttpLimits(max_body_bytes=1 << 20, write_timeout_s=0.3, idle_timeout_s=0.3, header_timeout_s=60)
    body = b'"' + b"x" * size + b'"'
    async with served(runtime, limits=limits) as port:
        client = socket.socket()
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        client.connect(("127.0.0.1", port))
        request = head("POST", "/echo", port, f"Content-Length: {len(body)}") + body
        await asyncio.to_thread(client.sendall, request * 2)
        events = await asyncio.to_thread(_until_reset, client, GUARD_S)
        client.close()
    assert events & (select.POLLERR | select.POLLHUP), "the server kept the connection and its buffers"


@pytest.mark.parametrize(
    ("target", "host"),
    [
        ("/cdn-cgi/handler/scheduled#x?cron=1+2+3+4+5", None),
        ("/api", "127.0.0.1:1/cdn-cgi/handler/scheduled?"),
        ("/hello", "127.0.0.1:[/cdn-cgi/handler/scheduled"),
    ],
    ids=["fragment-after-the-path", "path-in-the-host-port", "bracket-in-the-host-port"],
)
async def test_the_cron_trigger_stays_shut_without_test_scheduled(
    runtime: LocalRuntime, target: str, host: str | None
) -> None:
    ran: list[str] = []
    host_of = runtime.workers["conformance"]
    original = host_of.scheduled

    async def spy(cron: str, at: int) -> None:
        ran.append(cron)
        await original(cron, at)

    host_of.scheduled = spy  # type: ignore[method-assign]
    async with served(runtime) as port:
        answer = await exchange(port, head("GET", target, port, "Connection: close", host=host))
    assert status_of(answer) in (403, 404)
    assert ran == []


def test_c1_controls_in_a_log_line_are_escaped() -> None:
    stream = io.StringIO()
    cli.configure_logging(stream, verbose=True)  # the runtime's request lines show with --verbose
    try:
        logging.getLogger("tsumugi_dev").info("GET %s", "/a\x9b2J\x85forged\x1b[0m")
    finally:
        logging.getLogger().handlers.clear()
    line = stream.getvalue()
    assert line.count("\n") == 1
    assert line.rstrip("\n").endswith("GET /a\\x9b2J\\x85forged\\x1b[0m")
    assert one_line("\u2028\x00\x7f\x9f\xa0é") == "\\u2028\\x00\\x7f\\x9f\xa0é"


def test_a_log_line_is_written_when_the_process_has_no_file_descriptor_left() -> None:
    # A fresh interpreter, so no codec is imported yet; every descriptor is then used up, as by a flood.
    script = textwrap.dedent(
        """
        import io, logging, resource, sys
        from tsumugi_dev.log_lines import OneLineFormatter
        stream = io.StringIO()
        handler = logging.StreamHandler(stream)
        handler.setFormatter(OneLineFormatter("%(message)s"))
        log = logging.getLogger("flood")
        log.addHandler(handler)
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
        held = []
        try:
            while True:
                held.append(open("/dev/null"))
        except OSError:
            pass
        logging.raiseExceptions = True
        log.error("accept failed: %s", "\\x00\\x85")
        for f in held:
            f.close()
        sys.stdout.write(stream.getvalue())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stderr == ""
    assert done.stdout == "accept failed: \\x00\\x85\n"
