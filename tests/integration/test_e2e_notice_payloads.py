"""Notice jobs carry exactly the fields of FailureNotice and SettledNotice.

Source: docs/reference/additions.md A2 (FailureNotice) and A3 (SettledNotice).
"""

from __future__ import annotations

from tests.integration.system_driver import Driver
from tsumugi_dev.clock import VirtualClock

FAILURE_NOTICE_KEYS = {
    "job_id",
    "binding",
    "state",
    "attempts",
    "max_attempts",
    "error",
    "run_id",
    "node_id",
    "failed_at",
}
"""docs/reference/additions.md A2."""
SETTLED_NOTICE_KEYS = {
    "job_id",
    "binding",
    "state",
    "attempts",
    "max_attempts",
    "error",
    "result",
    "run_id",
    "node_id",
    "settled_at",
}
"""docs/reference/additions.md A3."""


async def test_notice_payloads_hold_exactly_the_documented_fields(
    clock: VirtualClock, driver: Driver
) -> None:
    failed = await driver.enqueue("Boom", None, max_attempts=1)
    completed = await driver.enqueue("Hello", {"name": "keys"})
    await clock.advance(1_000)

    (failure,) = await driver.notices_for("NotifyFailure", failed)
    (settled_failure,) = await driver.notices_for("NotifySettled", failed)
    (settled_success,) = await driver.notices_for("NotifySettled", completed)
    assert set(failure["payload"]) == FAILURE_NOTICE_KEYS
    assert set(settled_failure["payload"]) == SETTLED_NOTICE_KEYS
    assert set(settled_success["payload"]) == SETTLED_NOTICE_KEYS
    assert (failure["payload"]["state"], failure["payload"]["binding"], failure["payload"]["attempts"]) == (
        "FAILED",
        "Boom",
        1,
    )
    assert "intentional failure" in failure["payload"]["error"]
    assert (settled_success["payload"]["state"], settled_success["payload"]["result"]) == (
        "COMPLETED",
        "Hello, keys!",
    )
    # The notice jobs ran: their performers decode these payloads.
    assert {failure["state"], settled_failure["state"], settled_success["state"]} == {"COMPLETED"}
