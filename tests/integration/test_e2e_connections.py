"""A batch of slow performers under the six simultaneous connections of the consumer's invocation (ADR-0102).

The performers (``Call``, an export of the scheduler Worker reached through ``ctx.exports``) share the queue
consumer's six connections, as Workers reached through Service Bindings do on Cloudflare. Fifteen of them in one
batch, each fetching an API that sends its headers after 6 minutes, go out six at a time: 6 answered at 6
minutes, 6 at 12, and the last 3 could only be answered at 18. The consumer stops those at its 14-minute bound
(ADR-0047), which the waiting counted against, reports and acks: the invocation ends inside its 15 minutes
and nothing is delivered again. Before ADR-0102 all fifteen were answered together at 6 minutes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import msgspec
import pytest
import respx

from tsumugi_client import EnqueueItemDict, create_client
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.config import load_config
from tsumugi_dev.runtime import LocalRuntime

INLINE_CONFIG = Path(__file__).parent / "fixtures" / "inline_scheduler" / "wrangler.jsonc"
INLINE = "tsumugi-inline"
API = "https://api.example/slow"
MINUTE = 60_000
HEADERS_AFTER_MS = 6 * MINUTE
MAX_TIMEOUT_MS = 840_000  # tsumugi_core.options.MAX_TIMEOUT_MS, spelled out
JOBS = 15


@pytest.fixture
async def inline(tmp_path: Path, clock: VirtualClock) -> AsyncIterator[LocalRuntime]:
    config = load_config(INLINE_CONFIG)
    consumers = tuple(msgspec.structs.replace(c, max_batch_size=100) for c in config.queue_consumers)
    runtime = LocalRuntime(
        [msgspec.structs.replace(config, queue_consumers=consumers)], data_dir=tmp_path / "data", clock=clock
    )
    await runtime.start()
    yield runtime
    await runtime.stop()
    assert clock.crashes == []


class SlowApi:
    """Sends its headers `HEADERS_AFTER_MS` after a request arrives (virtual time); notes every arrival."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.arrivals: list[int] = []

    async def answer(self, request: httpx.Request) -> httpx.Response:
        self.arrivals.append(self.clock.now_ms())
        await self.clock.sleep_ms(HEADERS_AFTER_MS)
        return httpx.Response(200, text="ok")


@pytest.fixture
def api(clock: VirtualClock) -> Iterator[SlowApi]:
    slow = SlowApi(clock)
    with respx.mock(assert_all_called=False) as router:
        router.get(url__startswith=API).mock(side_effect=slow.answer)
        yield slow


async def test_a_batch_of_slow_performers_goes_out_six_at_a_time_and_ends_inside_the_consumers_wall_time(
    inline: LocalRuntime, clock: VirtualClock, api: SlowApi
) -> None:
    env = inline.env(INLINE)
    client = create_client()
    items: list[EnqueueItemDict] = [
        {"binding": "Call", "payload": f"{API}?i={i}", "timeout_ms": MAX_TIMEOUT_MS, "max_attempts": 1}
        for i in range(JOBS)
    ]
    ids = await client.enqueue_many(env, items)
    await clock.advance(30 * MINUTE)

    assert len(api.arrivals) == JOBS  # each performer ran once: no message was delivered again
    batch_start = api.arrivals[0]
    waves = [(at - batch_start) // MINUTE for at in api.arrivals]
    assert waves == [0] * 6 + [6] * 6 + [12] * 3  # six at a time, each wave when the last one had its headers
    assert inline.limits.connection_waits == JOBS - 6

    # The read model (finished jobs leave the shard): one attempt each, ended inside the invocation's time.
    query = "SELECT id, state, attempts, updated_at, attempts_log FROM job"
    read = inline.d1(INLINE).connection.execute(query).fetchall()
    assert sorted(job_id for job_id, *_ in read) == sorted(ids)
    assert (
        sorted((state, attempts) for _, state, attempts, *_ in read)
        == [("COMPLETED", 1)] * 12 + [("FAILED", 1)] * 3
    )
    for _, state, _, updated_at, log in read:
        # Every outcome was reported inside the consumer invocation's 15 minutes of wall time.
        assert updated_at - batch_start < 15 * MINUTE
        if state == "FAILED":  # the third wave was still waiting for headers at the 14-minute bound
            (entry,) = json.loads(log)
            assert f"stopped at {MAX_TIMEOUT_MS} ms" in entry["error"]
