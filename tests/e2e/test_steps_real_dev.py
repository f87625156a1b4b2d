"""The example Order job over a real ``tsumugi dev`` (the repository's Workers, the real clock), in Playwright:
it waits for its shipment, ``POST /api/events`` releases it, it completes, and its detail shows its steps."""

from __future__ import annotations

import os
import signal
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.playwright_chromium import ConsoleLog
from tests.support.dev_process import DevProcess

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "steps-real-dev-token"
STOP_TIMEOUT_S = 30

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture
def dev_url(tmp_path: Path) -> Iterator[str]:
    env = {**os.environ, "TSUMUGI_TOKEN": TOKEN}
    dev = DevProcess(
        ROOT,
        "--data-dir",
        str(tmp_path / "data"),
        env=env,
        stop_signal=signal.SIGINT,
        timeout_s=STOP_TIMEOUT_S,
    )
    try:
        yield dev.ready_url("tsumugi-scheduler")
    finally:
        dev.stop()


def _state(http: httpx.Client, job_id: str) -> str:
    return str(http.get("/api/jobs/" + urllib.parse.quote(job_id, safe="")).json()["job"]["state"])


def test_an_order_waits_for_its_event_completes_and_shows_its_steps(
    dev_url: str, page: tuple[Page, ConsoleLog]
) -> None:
    opened, log = page
    order = {"order_id": "order-e2e", "amount": 500, "email": "a@example.com", "follow_up_after_s": 1}
    with httpx.Client(base_url=dev_url, headers={"authorization": f"Bearer {TOKEN}"}, timeout=10.0) as http:
        job_id = http.post("/api/jobs", json={"binding": "Order", "payload": order}).json()["id"]
        signed_in = opened.context.request.post(f"{dev_url}/api/session", data={"token": TOKEN})
        assert signed_in.ok
        page_key = signed_in.json()["pageKey"]
        opened.add_init_script(
            f"localStorage.setItem('tsumugi:refresh', '0'); localStorage.setItem('tsumugi.pageKey', '{page_key}')"
        )
        opened.goto(dev_url + "/#/jobs/" + urllib.parse.quote(job_id, safe=""))
        steps = opened.locator("#job-steps li")
        for _ in range(150):  # the real clock: the job reaches its wait within moments
            opened.evaluate("refreshNow()")
            try:
                expect(steps).to_have_count(2, timeout=200)
                break
            except AssertionError:
                continue
        expect(opened.locator("#job-detail h2")).to_contain_text("SLEEPING")
        expect(steps.nth(1)).to_contain_text("event:shipped")
        expect(steps.nth(1)).to_contain_text("waiting")
        expect(opened.locator("#job-explain")).to_contain_text("waiting for event shipped/order-e2e")

        sent = http.post(
            "/api/events", json={"name": "shipped", "key": "order-e2e", "payload": {"tracking": "T1"}}
        )
        assert (sent.status_code, sent.json()["delivered"]) == (202, 1)
        for _ in range(150):
            opened.evaluate("refreshNow()")
            try:
                expect(steps).to_have_count(4, timeout=200)
                break
            except AssertionError:
                continue
        # The last step is stored before the performer reports: the job completes moments after.
        for _ in range(150):
            if _state(http, job_id) == "COMPLETED":
                break
            opened.wait_for_timeout(200)
        assert _state(http, job_id) == "COMPLETED"
        opened.evaluate("refreshNow()")
    expect(opened.locator("#job-detail h2")).to_contain_text("COMPLETED", timeout=10_000)
    expect(steps.nth(3)).to_contain_text("email")
    expect(steps.nth(0)).to_contain_text("ch_order-e2e")
    assert log.errors == []
