"""A caller that may pin job ids cannot take the ids the scheduler derives for itself (ADR-0177).

Pinning is a product feature (an enqueue with ``id`` answers an existing job instead of making a second), so an
id the scheduler derives from what callers can read (a schedule's name and its next instant, a shard's next
notice seq) could be enqueued first, and the scheduler's own enqueue of it would then be absorbed: the
schedule's occurrence or the failure notice silently replaced by the caller's job. Each such id ends in a
digest of a key that never leaves its Durable Object. Here a producer pins every id the readable part
predicts, through the public client, and the scheduler's own jobs still arrive.
"""

from __future__ import annotations

import json

from tests.integration.system_driver import Driver
from tests.support.derived_ids import readable
from tsumugi_dev.clock import VirtualClock

SCHEDULE = "hello-every-10-minutes"
"""The system's code schedule: Hello every 10 minutes, its payload naming the occurrence."""


async def test_a_pinned_job_at_an_occurrences_readable_id_does_not_replace_the_occurrence(
    clock: VirtualClock, driver: Driver
) -> None:
    status, found = await driver.rest("GET", f"/api/schedules/{SCHEDULE}")
    assert status == 200
    at = int(found["next_run_at"])
    decoy = await driver.enqueue(
        "Hello", {"name": "decoy"}, id=f"Hello#0:{SCHEDULE}-{at}", delay_ms=3_600_000
    )
    assert (
        decoy == f"Hello#0:{SCHEDULE}-{at}"
    )  # the pinned id was taken: what the original's format predicted

    await clock.advance(at - clock.now_ms() + 1_000)

    status, found = await driver.rest("GET", f"/api/schedules/{SCHEDULE}")
    fired = found["last_job_id"]
    assert fired != decoy
    assert readable(fired) == decoy
    job = await driver.job(fired)
    assert (job.state, json.loads(job.payload)) == ("COMPLETED", {"name": f"schedule at {at}"})
    assert (await driver.job(decoy)).state == "SCHEDULED"  # the caller's own job is left as it was


async def test_pinned_jobs_at_the_next_notices_readable_ids_do_not_replace_the_notices(
    clock: VirtualClock, driver: Driver
) -> None:
    decoy = {
        "job_id": "Boom#0:somebody-else",
        "binding": "Boom",
        "state": "FAILED",
        "attempts": 1,
        "max_attempts": 1,
        "error": "not this one",
        "run_id": None,
        "node_id": None,
    }
    for seq in range(1, 11):  # the notice outbox's next seqs on Boom#0, both kinds
        await driver.enqueue(
            "NotifyFailure", {**decoy, "failed_at": 0}, id=f"NotifyFailure#0:failure-Boom-0-{seq}"
        )
        await driver.enqueue(
            "NotifySettled",
            {**decoy, "result": None, "settled_at": 0},
            id=f"NotifySettled#0:settled-Boom-0-{seq}",
        )
    failed = await driver.enqueue("Boom", None, max_attempts=1)
    await clock.advance(1_000)

    assert (await driver.job(failed)).state == "FAILED"
    (failure,) = await driver.notices_for("NotifyFailure", failed)
    (settled,) = await driver.notices_for("NotifySettled", failed)
    for notice, kind in ((failure, "failure"), (settled, "settled")):
        assert notice["state"] == "COMPLETED"
        assert readable(notice["id"]).startswith(f"Notify{kind.capitalize()}#0:{kind}-Boom-0-")
        assert notice["id"] != readable(notice["id"])
