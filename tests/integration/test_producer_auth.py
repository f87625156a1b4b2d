"""The example producer authenticates its callers (issue 15 item 3, ADR-0066): a bearer PRODUCER_TOKEN, refused
when unset, enqueueing by POST only, and no job read without the token."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.system_driver import PRODUCER, PRODUCER_TOKEN, Driver, example_configs, quoted
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.config import WorkerConfig, load_config
from tsumugi_dev.runtime import LocalRuntime

REPO = Path(__file__).resolve().parents[2]
BEARER = {"authorization": f"Bearer {PRODUCER_TOKEN}"}


@pytest.fixture
def system_configs() -> list[WorkerConfig]:
    """This module's subject is the example producer: the system runs this repository's Workers."""
    return example_configs()


async def _hello_jobs(driver: Driver, clock: VirtualClock) -> list[str]:
    await clock.advance(10)  # the read model catches up
    return [row["id"] for row in await driver.jobs_of("Hello")]


@pytest.mark.parametrize(
    ("method", "headers"),
    [
        ("POST", {}),
        ("POST", {"authorization": "Bearer wrong"}),
        ("POST", {"authorization": f"Basic {PRODUCER_TOKEN}"}),
        ("GET", {}),
        ("GET", BEARER),
    ],
)
async def test_only_an_authorized_post_enqueues(
    system: LocalRuntime, clock: VirtualClock, driver: Driver, method: str, headers: dict[str, str]
) -> None:
    answer = await system.fetch(PRODUCER, "http://producer/hello?name=x", method=method, headers=headers)
    assert answer.status == (405 if headers == BEARER else 401)
    if answer.status == 405:
        assert answer.headers.get("allow") == "POST"
    assert await _hello_jobs(driver, clock) == []


async def test_job_states_are_read_only_with_the_token(
    system: LocalRuntime, clock: VirtualClock, driver: Driver
) -> None:
    job_id = await driver.enqueue("Hello", {"name": "secret"})
    await clock.advance(10)
    path = f"http://producer/jobs/{quoted(job_id)}"

    refused = await system.fetch(PRODUCER, path)
    assert (refused.status, json.loads(await refused.text())) == (401, {"error": "unauthorized"})
    read = await system.fetch(PRODUCER, path, headers=BEARER)
    assert json.loads(await read.text()) == {"state": "COMPLETED", "result": "Hello, secret!"}


async def test_without_the_secret_the_producer_refuses_everything(
    tmp_path: Path, clock: VirtualClock
) -> None:
    configs = [
        load_config(REPO / "services" / "scheduler" / "wrangler.jsonc"),
        load_config(REPO / "services" / "performers" / "wrangler.jsonc"),
        load_config(REPO / "services" / "performers" / "producer" / "wrangler.jsonc"),
    ]
    runtime = LocalRuntime(configs, data_dir=tmp_path / "data", clock=clock)
    await runtime.start()
    try:
        for headers in ({}, {"authorization": "Bearer "}, {"authorization": "Bearer undefined"}):
            answer = await runtime.fetch(PRODUCER, "http://producer/hello", method="POST", headers=headers)
            assert answer.status == 401
            # It says why, and where the example secret file is (issue 26 item 7).
            detail = json.loads(await answer.text())["detail"]
            assert "no PRODUCER_TOKEN secret" in detail
            assert ".dev.vars.example" in detail
        assert (REPO / "services" / "performers" / "producer" / ".dev.vars.example").read_text().count(
            "\nPRODUCER_TOKEN="
        ) == 1
    finally:
        await runtime.stop()
