"""Enqueue rates of the HTTP clients against one real ``tsumugi dev``, beside huey's enqueue rate, in one run.

Run: ``uv run python bench/client.py [--quick]``. Starts ``tsumugi dev`` on this repository's Workers with a temp
data folder (a separate process, as a user's scheduler would be), then times, against that server:

- ``sync_single``: `TsumugiClient.enqueue`, one job per request, one after the other;
- ``sync_batched``: `TsumugiClient.enqueue_many` in calls of 500 items (``POST /api/jobs/bulk-enqueue``);
- ``async_single``: `AsyncTsumugiClient.enqueue`, one job per request, one after the other;
- ``async_concurrent``: the same single ``enqueue`` calls with 16 in flight (all to the one shard of
  ``Hello``); the client sends the calls of one event-loop turn as one bulk call per shard (ADR-0164), and
  ``async_concurrent_vs_single`` is this rate over ``async_single``'s (issue 27 asks at least 4);
- ``async_batched``: `AsyncTsumugiClient.enqueue_many` of all items at once (calls of 500, concurrently);
- ``httpx_sync_single`` / ``httpx_async_single``: the same single enqueues as bare ``httpx.Client`` /
  ``httpx.AsyncClient`` POSTs (no client logic), so the client's own cost per call can be read off;
- ``huey_single``: ``SqliteHuey`` enqueueing the same number of tasks one after the other into a temp file
  (no consumer), the established single-machine queue this project compares itself with.

Every enqueue is a ``Hello`` job delayed by an hour, so the server stores jobs but runs none while it is timed:
what is measured is the enqueue path (client, HTTP, REST validation, the shard's transaction). Each figure is
jobs per second; each ratio is that rate over huey's. The client's own retries, client-made ids and pooled
connections are on, as a user gets them. Prints the table, then exactly one ``RESULT {json}`` line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final

import httpx
from huey import SqliteHuey  # pyright: ignore[reportMissingTypeStubs]

from tsumugi_client import AsyncTsumugiClient, EnqueueItemDict, TsumugiClient

# The shared `tsumugi dev` helper of the tests (tests.support, from the repository root).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.dev_process import DevProcess

REPO: Final = Path(__file__).resolve().parents[1]

TOKEN: Final = "bench-client-token"
HOUR_MS: Final = 3_600_000
DEADLINE_S: Final = 60.0


def items(count: int, tag: str) -> list[EnqueueItemDict]:
    return [{"binding": "Hello", "payload": {"name": f"{tag}{i}"}, "delay_ms": HOUR_MS} for i in range(count)]


def rate(count: int, run: Callable[[], None]) -> float:
    started = time.perf_counter()
    run()
    return count / (time.perf_counter() - started)


async def arate(count: int, run: Callable[[], Awaitable[None]]) -> float:
    started = time.perf_counter()
    await run()
    return count / (time.perf_counter() - started)


def sync_rates(url: str, singles: int, batched: int) -> dict[str, float]:
    with TsumugiClient(url, token=TOKEN) as client:
        client.enqueue("Hello", {"name": "warm-up"}, delay_ms=HOUR_MS)  # connection and shard counts

        def single() -> None:
            for item in items(singles, "s"):
                client.enqueue("Hello", item["payload"], delay_ms=HOUR_MS)

        def many() -> None:
            client.enqueue_many(items(batched, "b"))

        return {"sync_single": rate(singles, single), "sync_batched": rate(batched, many)}


async def async_rates(url: str, singles: int, batched: int, in_flight: int = 16) -> dict[str, float]:
    async with AsyncTsumugiClient(url, token=TOKEN) as client:
        await client.enqueue("Hello", {"name": "warm-up"}, delay_ms=HOUR_MS)
        gate = asyncio.Semaphore(in_flight)

        async def one(payload: Any) -> None:
            async with gate:
                await client.enqueue("Hello", payload, delay_ms=HOUR_MS)

        async def single() -> None:
            for item in items(singles, "a"):
                await client.enqueue("Hello", item["payload"], delay_ms=HOUR_MS)

        async def concurrent() -> None:
            await asyncio.gather(*(one(item["payload"]) for item in items(singles, "c")))

        async def many() -> None:
            await client.enqueue_many(items(batched, "ab"))

        return {
            "async_single": await arate(singles, single),
            "async_concurrent": await arate(singles, concurrent),
            "async_batched": await arate(batched, many),
        }


def bare_httpx_rates(url: str, count: int) -> dict[str, float]:
    headers = {"authorization": f"Bearer {TOKEN}"}
    bodies = [
        {"binding": "Hello", "payload": item["payload"], "delayMs": HOUR_MS} for item in items(count, "x")
    ]
    with httpx.Client(base_url=url, headers=headers) as http:
        http.get("/api/bindings")

        def run() -> None:
            for body in bodies:
                http.post("/api/jobs", json=body).raise_for_status()

        figures = {"httpx_sync_single": rate(count, run)}

    async def run_async() -> float:
        async with httpx.AsyncClient(base_url=url, headers=headers) as http:
            await http.get("/api/bindings")

            async def run() -> None:
                for body in bodies:
                    (await http.post("/api/jobs", json=body)).raise_for_status()

            return await arate(count, run)

    figures["httpx_async_single"] = asyncio.run(run_async())
    return figures


def huey_rate(count: int) -> float:
    with tempfile.TemporaryDirectory(prefix="huey-enqueue-") as folder:
        huey = SqliteHuey("bench", filename=str(Path(folder) / "huey.db"), results=False)

        def hello(name: str) -> str:
            return f"Hello, {name}!"

        task = huey.task()(hello)  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]

        def run() -> None:
            for i in range(count):
                task(f"h{i}")

        figure = rate(count, run)
        huey.storage.close()  # pyright: ignore[reportUnknownMemberType]
        return figure


def main() -> None:
    """Start the server, time every mode, print the table and the RESULT line."""
    parser = argparse.ArgumentParser(description="HTTP client enqueue rates beside huey's.")
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke test, not a measurement")
    quick = parser.parse_args().quick
    singles, batched = (50, 500) if quick else (1_000, 5_000)
    with tempfile.TemporaryDirectory(prefix="bench-client-") as folder:
        # This repository's Workers, which this environment can import: an `init`ed project's performers
        # package is installed only in that project's own environment (ADR-0112).
        data = Path(folder) / "data"
        env = {**os.environ, "TSUMUGI_TOKEN": TOKEN}
        server = DevProcess(REPO, "--data-dir", str(data), env=env, timeout_s=DEADLINE_S)
        try:
            url = server.ready_url("tsumugi-scheduler")
            figures = sync_rates(url, singles, batched)
            figures.update(asyncio.run(async_rates(url, singles, batched)))
            figures.update(bare_httpx_rates(url, singles))
        finally:
            server.stop()
    figures["huey_single"] = huey_rate(singles)
    huey = figures["huey_single"]
    print(f"{'mode':<16}{'jobs/s':>12}{'vs huey':>10}")
    for mode, value in figures.items():
        print(f"{mode:<16}{value:>12,.0f}{value / huey:>10.2f}")
    result = {mode: round(value, 1) for mode, value in figures.items()}
    result.update(
        {
            f"{mode}_vs_huey": round(value / huey, 3)
            for mode, value in figures.items()
            if mode != "huey_single"
        }
    )
    concurrency = figures["async_concurrent"] / figures["async_single"]
    print(f"async 16 in flight / 1 in flight: {concurrency:.2f}")
    result.update(
        {
            "singles": singles,
            "batched": batched,
            "quick": quick,
            "async_concurrent_vs_single": round(concurrency, 3),
        }
    )
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
