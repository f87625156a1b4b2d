"""A producer's enqueues may cross the Service Binding as JSON text (``enqueue_json``, ADR-0166): one value each
way instead of a JS object per item, with the same checks and errors as ``enqueue_many``."""

from __future__ import annotations

import json

import pytest

from tests.integration.system_driver import PRODUCER, Driver
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime


async def test_enqueue_json_answers_ids_as_json_text_and_the_jobs_run(
    system: LocalRuntime, clock: VirtualClock, driver: Driver
) -> None:
    scheduler = system.env(PRODUCER).TSUMUGI
    items = [{"binding": "Hello", "payload": {"name": f"n{i}"}} for i in range(3)]
    answer = await scheduler.enqueue_json(json.dumps(items))
    assert isinstance(answer, str)
    ids = json.loads(answer)
    assert [i.split("#")[0] for i in ids] == ["Hello"] * 3
    await clock.advance(50)
    assert [(await driver.job(i)).state for i in ids] == ["COMPLETED"] * 3


@pytest.mark.parametrize(
    ("items", "rule"),
    [
        ("[{", "items must be valid JSON text"),
        ('[{"binding": "Hello", "payload": 1, "max_attempts": 0}]', "items[0].max_attempts"),
    ],
)
async def test_bad_json_text_is_refused_naming_the_field(system: LocalRuntime, items: str, rule: str) -> None:
    scheduler = system.env(PRODUCER).TSUMUGI
    with pytest.raises(Exception, match="EnqueueValidationError") as refused:
        await scheduler.enqueue_json(items)
    assert rule in str(refused.value)
