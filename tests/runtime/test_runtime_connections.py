"""Six simultaneous open connections per invocation, the seventh queued, as Cloudflare documents (ADR-0102).

Cloudflare (developers.cloudflare.com/workers/platform/limits/, "Simultaneous open connections"): six connections
of one invocation may wait for their response headers at once; ``fetch()`` and queue ``send()`` / ``sendBatch()``
open one; a seventh waits until one of the six has its headers; Workers reached through Service Bindings share
the six of the top-level request. The HTTP API here is mocked (respx) and answers in virtual time. Against the
runtime before ADR-0102 every request arrives at once, and these tests fail.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.config import load_config
from tsumugi_dev.connections import ConnectionPool
from tsumugi_dev.runtime import LocalRuntime
from tsumugi_dev.worker import service_stub

CONFIG = Path(__file__).parent / "fixtures" / "limits" / "wrangler.jsonc"
API = "https://api.example/slow"
SIX = 6  # Cloudflare's number, spelled out (the proof runs without tsumugi_dev.connections)


class Api:
    """The mocked API: notes when each request arrived; sends its headers ``hold_ms`` later (virtual time)."""

    def __init__(self, clock: VirtualClock, hold_ms: dict[str, int], default_ms: int = 10_000) -> None:
        self.clock = clock
        self.start = clock.now_ms()
        self.hold_ms = hold_ms
        self.default_ms = default_ms
        self.arrivals: dict[str, int] = {}
        self.waiting = 0
        self.most_waiting = 0
        self.slow_body_ms = 0

    async def answer(self, request: httpx.Request) -> httpx.Response:
        name = request.url.params.get("i", "")
        self.arrivals[name] = self.clock.now_ms() - self.start
        self.waiting += 1
        self.most_waiting = max(self.most_waiting, self.waiting)
        try:
            await self.clock.sleep_ms(self.hold_ms.get(name, self.default_ms))
        finally:
            self.waiting -= 1
        if self.slow_body_ms:
            return httpx.Response(200, content=self._slow_body())
        return httpx.Response(200, text="ok")

    async def _slow_body(self) -> AsyncIterator[bytes]:
        await self.clock.sleep_ms(self.slow_body_ms)
        yield b"ok"


@pytest.fixture
async def limits(tmp_path: Path, clock: VirtualClock) -> AsyncIterator[LocalRuntime]:
    runtime = LocalRuntime([load_config(CONFIG)], data_dir=tmp_path / "data", clock=clock)
    await runtime.start()
    module: Any = runtime.workers["limits"].module
    module.SLEEP = clock.sleep_ms
    module.SEEN.clear()
    yield runtime
    await runtime.stop()
    assert clock.crashes == []


@pytest.fixture
def api(clock: VirtualClock) -> Iterator[Api]:
    mocked = Api(clock, {"0": 3_000})  # request 0 has its headers after 3 s, every other one after 10 s
    with respx.mock(assert_all_called=False) as router:
        router.get(url__startswith=API).mock(side_effect=mocked.answer)
        yield mocked


def _entry(runtime: LocalRuntime) -> Any:
    return service_stub(runtime.workers["limits"], None)


async def _run(clock: VirtualClock, call: Any, ms: int) -> Any:
    task = asyncio.ensure_future(call)
    await clock.advance(ms)
    assert task.done()
    return task.result()


async def test_the_seventh_fetch_of_an_invocation_waits_for_one_of_the_first_six(
    limits: LocalRuntime, clock: VirtualClock, api: Api
) -> None:
    assert await _run(clock, _entry(limits).fetches(API, SIX + 1), 30_000) == [200] * (SIX + 1)
    # Six go out at once; the seventh leaves when the first of them (request 0) has its headers, at 3 s.
    assert api.arrivals == {**{str(i): 0 for i in range(SIX)}, "6": 3_000}
    assert api.most_waiting == SIX
    assert limits.limits.connection_waits == 1


async def test_each_invocation_has_six_of_its_own(
    limits: LocalRuntime, clock: VirtualClock, api: Api
) -> None:
    api.hold_ms = {}
    entry = _entry(limits)
    first, second = (
        asyncio.ensure_future(entry.fetches(API, SIX)),
        asyncio.ensure_future(entry.fetches(API, SIX)),
    )
    await clock.advance(1)
    assert api.most_waiting == 2 * SIX  # two top-level invocations: twelve at once, nobody waits
    await clock.advance(10_000)
    assert (await first, await second) == ([200] * SIX, [200] * SIX)
    assert limits.limits.connection_waits == 0


async def test_a_connection_is_freed_when_its_headers_arrive_not_when_its_body_is_read(
    limits: LocalRuntime, clock: VirtualClock, api: Api
) -> None:
    api.hold_ms, api.default_ms, api.slow_body_ms = {}, 0, 60_000  # headers at once, bodies after a minute
    assert await _run(clock, _entry(limits).fetches(API, SIX + 1), 61_000) == [200] * (SIX + 1)
    # The seventh waited only for the first headers (the same instant), not for a body (a minute).
    assert set(api.arrivals.values()) == {0}


async def test_a_queue_send_waits_for_a_connection_as_a_fetch_does(
    limits: LocalRuntime, clock: VirtualClock, api: Api
) -> None:
    api.hold_ms = {"0": 5_000}
    module: Any = limits.workers["limits"].module
    call = asyncio.ensure_future(_entry(limits).fetches_and(API, SIX, "send"))
    await clock.advance(4_000)
    assert module.SEEN == []  # the send is still waiting for one of the six
    await clock.advance(2_000)  # request 0 has its headers at 5 s: the send goes out and is delivered
    assert module.SEEN == [(-1, 1)]
    await clock.advance(10_000)
    assert await call == [200] * SIX
    assert limits.limits.connection_waits == 1


async def test_a_d1_query_takes_no_connection(limits: LocalRuntime, clock: VirtualClock, api: Api) -> None:
    call = asyncio.ensure_future(_entry(limits).fetches_and(API, SIX, "d1"))
    await clock.advance(2_000)  # the six fetches wait for their headers; the query went through at 1 s
    rows = limits.d1("limits-db").connection.execute("SELECT n FROM t").fetchall()
    assert [tuple(row) for row in rows] == [(-1,)]
    await clock.advance(10_000)
    assert await call == [200] * SIX
    assert limits.limits.connection_waits == 0


async def test_a_durable_object_has_six_connections_of_its_own(
    limits: LocalRuntime, clock: VirtualClock, api: Api
) -> None:
    assert await _run(clock, _entry(limits).fetches_and(API, SIX, "object"), 20_000) == [200] * SIX
    assert api.arrivals["object"] == 1_000  # not queued behind the caller's six
    assert limits.limits.connection_waits == 0


async def test_workers_reached_through_service_bindings_share_the_callers_six(
    limits: LocalRuntime, clock: VirtualClock, api: Api
) -> None:
    # Seven Service Binding calls at once, each callee making one fetch: the calls take no connection (or the
    # callees would wait forever for their callers' slots), their fetches draw on the caller's six.
    assert await _run(clock, _entry(limits).through_service(API, SIX + 1), 30_000) == [200] * (SIX + 1)
    assert sorted(api.arrivals.values()) == [0] * SIX + [3_000]
    assert api.most_waiting == SIX
    assert limits.limits.connection_waits == 1


# -- the pool alone ------------------------------------------------------------------------------------------


async def test_a_waiter_cancelled_in_line_takes_no_connection() -> None:
    pool = ConnectionPool(limit=1)
    await pool.acquire()
    waiter = asyncio.ensure_future(pool.acquire())
    behind = asyncio.ensure_future(pool.acquire())
    await asyncio.sleep(0)
    waiter.cancel()
    await asyncio.sleep(0)
    pool.release()  # goes to `behind`, skipping the cancelled one
    await behind
    assert (pool.open, pool.waited) == (1, 2)
    pool.release()
    assert pool.open == 0


async def test_a_connection_handed_to_a_waiter_cancelled_before_it_ran_is_passed_on() -> None:
    pool = ConnectionPool(limit=1)
    await pool.acquire()
    waiter = asyncio.ensure_future(pool.acquire())
    behind = asyncio.ensure_future(pool.acquire())
    await asyncio.sleep(0)
    pool.release()  # handed to `waiter`...
    waiter.cancel()  # ...which is cancelled before it resumes
    with pytest.raises(asyncio.CancelledError):
        await waiter
    await behind
    assert pool.open == 1
