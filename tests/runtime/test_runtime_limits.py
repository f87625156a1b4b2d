"""Cloudflare's per-invocation limits, enforced by the local runtime the way Cloudflare enforces them.

Each number and its source: packages/tsumugi-dev/README.md (the emulation table) and ``tsumugi_dev.invocation``.
Every test here fails against the runtime before invocations had budgets (it let each call through).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from pyodide.ffi import JsException

from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.config import ConfigError, load_config
from tsumugi_dev.runtime import LocalRuntime
from tsumugi_dev.worker import service_stub

CONFIG = Path(__file__).parent / "fixtures" / "limits" / "wrangler.jsonc"
# The numbers, spelled out here so that these tests also run against a runtime without them (the proof that
# they fail there); their sources are in packages/tsumugi-dev/README.md and tsumugi_dev.invocation.
SUBREQUESTS_PER_INVOCATION = 10_000
D1_QUERIES_PER_INVOCATION = 1_000
DATA_POINTS_PER_INVOCATION = 250
MAX_MESSAGE_BYTES = 128_000
MAX_BATCH_BYTES = 256_000


async def _start(tmp_path: Path, clock: VirtualClock, subrequests: int | None = None) -> LocalRuntime:
    config = load_config(CONFIG)
    if subrequests is not None:
        config = msgspec.structs.replace(config, subrequest_limit=subrequests)
    runtime = LocalRuntime([config], data_dir=tmp_path / "data", clock=clock)
    await runtime.start()
    module: Any = runtime.workers["limits"].module
    module.SLEEP = clock.sleep_ms
    module.SEEN.clear()
    return runtime


@pytest.fixture
async def limits(tmp_path: Path, clock: VirtualClock) -> AsyncIterator[LocalRuntime]:
    runtime = await _start(tmp_path, clock)
    yield runtime
    await runtime.stop()
    assert clock.crashes == []


def _entry(runtime: LocalRuntime) -> Any:
    """The Worker's Default entrypoint, called as another Worker would: each call is one invocation."""
    return service_stub(runtime.workers["limits"], None)


# -- subrequests ----------------------------------------------------------------------------------------------


async def test_an_invocation_may_make_10000_subrequests_and_the_next_one_fails(limits: LocalRuntime) -> None:
    entry = _entry(limits)
    assert await entry.stub_calls(SUBREQUESTS_PER_INVOCATION) == SUBREQUESTS_PER_INVOCATION
    with pytest.raises(Exception, match="Too many subrequests by single Worker invocation"):
        await entry.stub_calls(SUBREQUESTS_PER_INVOCATION + 1)
    assert await entry.stub_calls(3) == 3  # the budget is per invocation: the next call starts afresh


async def test_limits_subrequests_in_the_config_sets_the_budget(tmp_path: Path, clock: VirtualClock) -> None:
    runtime = await _start(tmp_path, clock, subrequests=5)
    try:
        entry = _entry(runtime)
        assert await entry.stub_calls(5) == 5
        with pytest.raises(Exception, match="Too many subrequests"):
            await entry.stub_calls(6)
        with pytest.raises(Exception, match="Too many subrequests"):
            await entry.stub_fetches(6)  # a stub's fetch counts as well
        with pytest.raises(Exception, match="Too many subrequests"):
            await entry.sends(6)  # so does each queue send
        assert await entry.sends(5) == 5
    finally:
        await runtime.stop()


def test_limits_subrequests_is_read_from_wrangler_config(tmp_path: Path) -> None:
    text = CONFIG.read_text()
    (tmp_path / "src").symlink_to(CONFIG.parent / "src")
    good = tmp_path / "wrangler.jsonc"
    good.write_text(
        text.replace('"name": "limits",', '"name": "limits", "limits": { "subrequests": 50000 },')
    )
    assert load_config(good).subrequest_limit == 50_000
    assert load_config(CONFIG).subrequest_limit == SUBREQUESTS_PER_INVOCATION
    good.write_text(text.replace('"name": "limits",', '"name": "limits", "limits": { "subrequests": 0 },'))
    with pytest.raises(
        ConfigError, match=r"limits\.subrequests must be an integer between 1 and 10000000 \(got 0\)"
    ):
        load_config(good)


# -- D1 queries -----------------------------------------------------------------------------------------------


async def test_an_invocation_may_run_1000_d1_queries_and_each_batch_statement_counts(
    limits: LocalRuntime,
) -> None:
    entry = _entry(limits)
    assert await entry.d1_runs(D1_QUERIES_PER_INVOCATION) == D1_QUERIES_PER_INVOCATION
    with pytest.raises(Exception, match="D1_ERROR: Too many API requests by single Worker invocation"):
        await entry.d1_runs(D1_QUERIES_PER_INVOCATION + 1)
    # Five batches of 200 statements are the 1,000; a sixth statement in the same invocation is refused.
    assert await entry.d1_batches([200] * 5) == 1_000
    with pytest.raises(Exception, match="Too many API requests"):
        await entry.d1_batches([200] * 5 + [1])
    rows = limits.d1("limits-db").connection.execute("SELECT count(*) FROM t").fetchone()[0]
    assert rows == 1_000 + 1_000 + 1_000 + 1_000  # the refused calls changed nothing


# -- Analytics Engine points ------------------------------------------------------------------------------------


async def test_points_beyond_250_per_invocation_are_dropped_silently_and_counted(
    limits: LocalRuntime,
) -> None:
    entry = _entry(limits)
    assert await entry.points(DATA_POINTS_PER_INVOCATION + 50) == 300  # no error, as on Cloudflare
    assert await entry.points(10) == 10
    stored = limits.analytics.query("SELECT count(*) AS n FROM limits_points")[0]["n"]
    assert stored == DATA_POINTS_PER_INVOCATION + 10
    assert limits.limits.dropped_points == 50


def test_a_points_blobs_may_hold_16000_bytes_together(limits: LocalRuntime) -> None:
    dataset = limits.env("limits").POINTS
    dataset.writeDataPoint({"blobs": ["a" * 8_000, "b" * 8_000]})
    with pytest.raises(JsException, match="Cumulative size of blobs exceeds 16000 bytes"):
        dataset.writeDataPoint({"blobs": ["a" * 8_000, "b" * 8_001]})


# -- queue message and batch sizes --------------------------------------------------------------------------------


def _text_of_json_size(size: int) -> str:
    """An ASCII text whose body ``{"text": ...}`` takes exactly ``size`` bytes as JSON (``{"text":""}``: 11)."""
    return "x" * (size - 11)


async def test_a_message_may_take_128000_bytes_as_utf8_json(limits: LocalRuntime) -> None:
    entry = _entry(limits)
    await entry.send(_text_of_json_size(MAX_MESSAGE_BYTES))
    with pytest.raises(Exception, match="Queue send failed: Payload Too Large"):
        await entry.send(_text_of_json_size(MAX_MESSAGE_BYTES + 1))
    # 128 KiB was the old limit: a body of 130,000 bytes is refused now.
    with pytest.raises(Exception, match=r"130011 bytes as UTF-8 JSON exceeds limit of 128000"):
        await limits.env("limits").OUT.send({"text": "x" * 130_000})


async def test_numbers_are_measured_as_json_not_as_v8_doubles(limits: LocalRuntime) -> None:
    # 80,001 bytes of JSON; V8's structured clone would take 9 bytes a number (180,000+), which the queue
    # refused before it measured JSON (issue 22, item 3).
    await limits.env("limits").OUT.send([0.5] * 20_000)
    assert len(limits.queues.pending("limits-q")) == 1


async def test_a_non_ascii_text_is_measured_in_utf8(limits: LocalRuntime) -> None:
    # 43,000 euro signs: 3 bytes each in UTF-8 (129,000 + quotes), although V8 would store 2 bytes each.
    with pytest.raises(
        Exception, match=r"Payload Too Large \(send body: message length of 129002 bytes as UTF-8 JSON"
    ):
        await limits.env("limits").OUT.send("€" * 43_000)
    await limits.env("limits").OUT.send("€" * 42_600)  # 127,802 bytes
    assert len(limits.queues.pending("limits-q")) == 1


async def test_a_send_batch_may_take_256000_bytes_together(limits: LocalRuntime) -> None:
    entry = _entry(limits)
    third = _text_of_json_size(MAX_BATCH_BYTES // 3)
    await entry.send_batch([third, third, third])  # 255,999 bytes
    big = _text_of_json_size(100_000)
    with pytest.raises(Exception, match="Queue sendBatch failed: Payload Too Large"):
        await entry.send_batch([big, big, big])  # three 100 KB messages: each fits, together they do not
    assert len(limits.queues.pending("limits-q")) <= 3  # the refused batch stored nothing


# -- the consumer's wall time -------------------------------------------------------------------------------------


async def test_a_consumer_still_running_after_15_minutes_is_stopped_and_its_unacked_messages_redelivered(
    limits: LocalRuntime, clock: VirtualClock
) -> None:
    out = limits.env("limits").OUT
    await out.sendBatch([{"body": {"n": 1, "slow": True}}, {"body": {"n": 2, "ack": True}}])
    await clock.advance(14 * 60_000)
    seen: list[tuple[int, int]] = limits.workers["limits"].module.SEEN
    assert seen == [(1, 1), (2, 1)]  # still running: nothing redelivered yet
    await clock.advance(60_000)
    # Stopped at 15 minutes: message 1 (no verdict) comes back; message 2 was acked explicitly and stays done.
    assert seen == [(1, 1), (2, 1), (1, 2)]
    await clock.advance(60 * 60_000)
    assert seen == [(1, 1), (2, 1), (1, 2)]
    assert limits.queues.pending("limits-q") == []


async def test_a_consumer_that_finishes_within_15_minutes_is_not_stopped(
    limits: LocalRuntime, clock: VirtualClock
) -> None:
    module: Any = limits.workers["limits"].module

    async def sleep_14_minutes(ms: int) -> None:
        await clock.sleep_ms(14 * 60_000)

    module.SLEEP = sleep_14_minutes
    await limits.env("limits").OUT.send({"n": 7, "slow": True})
    await clock.advance(30 * 60_000)
    assert module.SEEN == [(7, 1)]


# -- bound parameters -----------------------------------------------------------------------------------------------


def test_a_d1_query_takes_at_most_100_bound_parameters(limits: LocalRuntime) -> None:
    db = limits.env("limits").DB
    marks = ", ".join("?" * 100)
    db.prepare(f"SELECT {marks}").bind(*range(100))
    with pytest.raises(Exception, match="too many SQL variables: 101 bound parameters, at most 100"):
        db.prepare(f"SELECT {marks}, ?").bind(*range(101))
    # Durable Object SQL has the same limit: tests/unit/shard/test_do_sql_rows.py covers it.
