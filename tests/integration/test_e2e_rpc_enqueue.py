"""``TsumugiRpc.enqueue(item)``: one camelCase item over the Service Binding, answered with the job id."""

from __future__ import annotations

import pytest

from tests.integration.system_driver import Driver
from tsumugi_dev.clock import VirtualClock


async def test_enqueue_over_rpc_returns_the_id_and_the_job_runs(clock: VirtualClock, driver: Driver) -> None:
    rpc = driver.producer_env.TSUMUGI
    job_id = await rpc.enqueue(
        {"binding": "Hello", "payload": {"name": "Rpc"}, "maxAttempts": 2, "priority": 4}
    )
    assert isinstance(job_id, str)
    assert job_id.startswith("Hello#0:")
    again = await rpc.enqueue({"binding": "Hello", "payload": {"name": "x"}, "uniqueKey": "one"})
    assert await rpc.enqueue({"binding": "Hello", "payload": {"name": "y"}, "uniqueKey": "one"}) == again
    await clock.advance(100)

    job = await driver.job(job_id)
    assert (job.state, job.max_attempts, job.priority, job.result_value()) == (
        "COMPLETED",
        2,
        4,
        "Hello, Rpc!",
    )


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (
            {"binding": "Hello", "payload": {}, "maxAttempts": 0},
            "EnqueueValidationError: max_attempts must be at least 1",
        ),
        (
            {"binding": "Hello", "payload": {}, "colour": 1},
            "EnqueueValidationError: colour is not an enqueue option",
        ),
        ({"payload": {}}, "EnqueueValidationError: binding is required"),
        ("Hello", "EnqueueValidationError: item must be an object, got str"),
    ],
)
async def test_a_bad_item_raises_naming_the_bare_field(driver: Driver, item: object, message: str) -> None:
    with pytest.raises(Exception, match="EnqueueValidationError") as caught:
        await driver.producer_env.TSUMUGI.enqueue(item)
    # As on Cloudflare: a PythonError whose message is the traceback, its last line the exception (ADR-0042).
    last_line = str(caught.value).rstrip().splitlines()[-1]
    assert last_line == f"tsumugi_core.options.{message}"
    assert await driver.jobs_of("Hello") == []
