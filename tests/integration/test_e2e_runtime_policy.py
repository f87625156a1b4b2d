"""Runtime policy on the local runtime: a change pins the whole settings until reset (ADR-0058)."""

from __future__ import annotations

from tests.integration.system_driver import Driver
from tsumugi_dev.clock import VirtualClock


async def test_a_runtime_change_pins_the_deployed_settings_and_holds_until_reset(
    clock: VirtualClock, driver: Driver
) -> None:
    # services/scheduler/src/entry.py gives Slow reaper_grace_ms 5000; no Slow job reached its shard yet.
    status, body = await driver.rest("POST", "/api/bindings/Slow/policy", {"paused": True})
    assert status == 200
    [shard] = body["shards"]
    assert (shard["pinned"], shard["settings"]["paused"], shard["settings"]["reaper_grace_ms"]) == (
        True,
        True,
        5_000,
    )

    job_id = await driver.enqueue("Slow", {"seconds": 1})  # the enqueue carries the code's settings: ignored
    await clock.advance(1_000)
    assert (await driver.job(job_id)).state == "SCHEDULED"
    status, diagnostics = await driver.rest("GET", "/api/diagnostics")
    slow, hello = diagnostics["bindings"]["Slow"], diagnostics["bindings"]["Hello"]
    assert (slow["pinned"], slow["shards"][0]["pinned"], slow["held_back_by"]) == (True, True, ["paused"])
    assert hello["pinned"] is False

    status, body = await driver.rest("POST", "/api/bindings/Slow/policy/reset")
    assert (body["shards"][0]["pinned"], body["shards"][0]["settings"]["paused"]) == (False, False)
    await clock.advance(5_000)
    assert (await driver.job(job_id)).state == "COMPLETED"
