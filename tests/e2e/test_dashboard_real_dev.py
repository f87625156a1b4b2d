"""The dashboard over a real ``tsumugi dev`` (the repository's Workers, the real clock), in Playwright.

The fake API keeps the view tests fast and exact; this one checks the page against the real REST API: every
tab and a job detail in normal use log no console error (bar the schedules probe's 501, another helper's part
of issue 11), a failed job's traceback shows, and pausing a binding with a job waiting reads the same on the
card and in the explanation.
"""

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
TOKEN = "dashboard-real-dev-token"
STOP_TIMEOUT_S = 30

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture
def dev_url(tmp_path: Path) -> Iterator[str]:
    """``tsumugi dev`` on free ports; its output read line by line until it says ready (no polling)."""
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


def route(job_id: str) -> str:
    return "#/jobs/" + urllib.parse.quote(job_id, safe="")


def test_the_dashboard_over_the_real_api_is_quiet_and_consistent(
    dev_url: str, page: tuple[Page, ConsoleLog]
) -> None:
    opened, log = page
    auth = {"authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=dev_url, headers=auth, timeout=10.0) as http:
        boom = http.post("/api/jobs", json={"binding": "Boom", "payload": {}, "maxAttempts": 1}).json()["id"]
        assert http.post("/api/bindings/SendMail/policy", json={"paused": True}).status_code == 200
        mail = http.post(
            "/api/jobs",
            json={
                "binding": "SendMail",
                "payload": {"to": "a@example.com", "subject": "hi", "body": "hello"},
            },
        ).json()["id"]
    # Sign in as the page does (ADR-0069, ADR-0121): the session cookie lands in the context's cookie jar and
    # the page keeps the session's page key, which every API call sends with the cookie.
    signed_in = opened.context.request.post(f"{dev_url}/api/session", data={"token": TOKEN})
    assert signed_in.ok
    page_key = signed_in.json()["pageKey"]
    opened.add_init_script(
        f"localStorage.setItem('tsumugi:refresh', '0'); localStorage.setItem('tsumugi.pageKey', '{page_key}')"
    )
    opened.goto(dev_url + "/#/jobs")
    expect(opened.locator(f'.job-row[data-id="{mail}"]')).to_be_visible()
    tabs = (
        ("runs", ".run-row, .empty"),
        ("schedules", ".schedule-row"),
        ("metrics", "#metrics-table, #metrics-empty"),
        ("bindings", ".binding-card"),
        ("jobs", ".job-row"),
    )
    for tab, ready in tabs:
        opened.locator(f'[data-tab="{tab}"]').click()
        opened.wait_for_selector(ready)
    card = opened.locator('.binding-card[data-binding="SendMail"]')
    opened.locator('[data-tab="bindings"]').click()
    expect(card.locator(".held-item")).to_have_text(
        "Paused: 1 waiting job will not start until dispatch is resumed."
    )
    opened.evaluate(f"location.hash = {route(mail)!r}")
    expect(opened.locator("#job-explain li")).to_have_text(
        "Its binding is paused: it starts once dispatch is resumed (bindings tab)."
    )
    opened.evaluate(f"location.hash = {route(boom)!r}")
    # The job fails on the real clock; the page is reloaded until its detail says so.
    expect(opened.locator("#job-detail h2")).to_contain_text("Job")
    # Reload, then wait up to 200 ms for the trace (30 s in all). Not wait_for_function: its string is evaluated
    # in the page, which the dashboard's CSP (no 'unsafe-eval', ADR-0068) refuses, as it should.
    trace = opened.locator("#job-detail pre.trace")
    for _ in range(150):
        opened.evaluate("refreshNow()")
        try:
            expect(trace).to_be_attached(timeout=200)
            break
        except AssertionError:
            continue
    expect(opened.locator("#attempts-log pre.trace")).to_contain_text("RuntimeError: intentional failure")
    assert log.errors == []  # every tab, over the real API: the schedules and runs routes answer too
