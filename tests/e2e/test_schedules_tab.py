"""The schedules tab in Chromium (Playwright) against the fake API's schedules: read, control, create."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from playwright.sync_api import Page

from tests.e2e.fake_api import FakeApi, serve
from tests.e2e.fake_schedules import LAST_JOB, LAST_RUN, FakeSchedules, flow_schedule
from tests.e2e.playwright_chromium import ConsoleLog

pytestmark = pytest.mark.e2e


@contextmanager
def schedules_tab(
    page: tuple[Page, ConsoleLog], expected_error: str | None = None
) -> Iterator[tuple[Page, FakeApi, FakeSchedules]]:
    opened, log = page
    fake = FakeSchedules()
    with serve(FakeApi(schedules=fake)) as api:
        opened.goto(api.url("#/schedules"))
        opened.wait_for_selector(".schedule-row")
        yield opened, api, fake
    # The browser logs a refused request itself; only the one the test provokes is expected.
    assert [e for e in log.errors if expected_error is None or expected_error not in e] == [], log.errors


def row(opened: Page, name: str) -> str:
    return f'.schedule-row[data-name="{name}"]'


def test_each_schedule_shows_target_timing_next_runs_last_run_error_and_skips(
    page: tuple[Page, ConsoleLog],
) -> None:
    with schedules_tab(page) as (opened, _, _):
        assert opened.locator('[data-tab="schedules"].active').count() == 1
        nightly = opened.locator(row(opened, "nightly"))
        assert "Hello" in nightly.locator("td").nth(1).inner_text()
        assert "every day at 03:00, Asia/Tokyo" in nightly.locator(".schedule-timing").inner_text()
        assert nightly.locator(".schedule-next div").count() == 3
        assert "fired 2.5 s late" in nightly.locator(".schedule-last").inner_text()  # in words since issue 26
        assert nightly.locator(".schedule-skipped").inner_text().startswith("2")
        assert nightly.locator(".schedule-delete").count() == 0  # code-defined: no delete
        customer = opened.locator(row(opened, "per-customer-7"))
        assert customer.locator(".schedule-error").inner_text() == "ValueError: no data yet"
        assert customer.locator(".schedule-source").inner_text() == "runtime"


def test_the_last_run_links_to_its_job(page: tuple[Page, ConsoleLog]) -> None:
    with schedules_tab(page) as (opened, api, _):
        opened.locator(row(opened, "nightly")).locator(".schedule-job").click()
        opened.wait_for_function(f"location.hash === '#/jobs/{urllib.parse.quote(LAST_JOB, safe='')}'")
        opened.wait_for_function(f"document.querySelector('#modal-body').textContent.includes('{LAST_JOB}')")
        assert urllib.parse.quote(LAST_JOB, safe="") in " ".join(api.api_paths())


def test_a_flow_schedules_last_run_links_to_its_run(page: tuple[Page, ConsoleLog]) -> None:
    opened, log = page
    with serve(FakeApi(schedules=FakeSchedules(items=[flow_schedule()]), flows=True)) as api:
        opened.goto(api.url("#/schedules"))
        flow_row = opened.locator(row(opened, "greet-hourly"))
        flow_row.wait_for()
        assert flow_row.locator(".schedule-job").count() == 0
        flow_row.locator(".schedule-run").click()
        opened.wait_for_function(f"location.hash === '#/runs/{urllib.parse.quote(LAST_RUN, safe='')}'")
        opened.wait_for_selector(
            f'#run-detail[data-id="{LAST_RUN}"]'
        )  # drawn from the answer, so it was asked
        assert f"/api/runs/{urllib.parse.quote(LAST_RUN, safe='')}" in " ".join(api.api_paths())
    assert log.errors == []


def test_pause_resume_and_run_now_call_the_api_and_show_the_result(page: tuple[Page, ConsoleLog]) -> None:
    with schedules_tab(page) as (opened, _, fake):
        opened.locator(row(opened, "nightly")).locator(".schedule-pause").click()
        opened.wait_for_selector(f"{row(opened, 'nightly')} .schedule-paused")
        opened.locator(row(opened, "nightly")).locator(".schedule-resume").click()
        opened.wait_for_selector(f"{row(opened, 'nightly')} .schedule-pause")
        opened.locator(row(opened, "nightly")).locator(".schedule-trigger").click()
        opened.wait_for_function(
            "document.querySelector('#status').textContent.includes('Enqueued one nightly job')"
        )
        assert [(m, p) for m, p, _ in fake.calls] == [
            ("POST", "/api/schedules/nightly/pause"),
            ("POST", "/api/schedules/nightly/resume"),
            ("POST", "/api/schedules/nightly/trigger"),
        ]


def test_delete_asks_first_and_keep_changes_nothing(page: tuple[Page, ConsoleLog]) -> None:
    with schedules_tab(page) as (opened, _, fake):
        customer = row(opened, "per-customer-7")
        opened.locator(customer).locator(".schedule-delete").click()
        assert (
            "Delete schedule per-customer-7?"
            in opened.locator(customer).locator(".schedule-confirm").inner_text()
        )
        opened.locator(customer).locator(".schedule-delete-no").click()
        opened.wait_for_selector(f"{customer} .schedule-delete")
        assert fake.calls == []
        opened.locator(customer).locator(".schedule-delete").click()
        opened.locator(customer).locator(".schedule-delete-yes").click()
        opened.wait_for_selector(customer, state="detached")
        assert [(m, p) for m, p, _ in fake.calls] == [("DELETE", "/api/schedules/per-customer-7")]


def test_the_form_creates_a_run_time_schedule_and_shows_a_refusal(page: tuple[Page, ConsoleLog]) -> None:
    with schedules_tab(page, expected_error="status of 400 (Bad Request) @ ") as (opened, _, fake):
        opened.click("#schedule-create summary")
        form = opened.locator(".schedule-form")
        form.locator('[name="name"]').fill("cust-9")
        form.locator('[name="binding"]').select_option("Hello")
        form.locator('[name="payload"]').fill('{"customer": 9}')
        form.locator('[name="every"]').fill("0.5")
        form.locator('button[type="submit"]').click()
        opened.wait_for_selector(".schedule-create-result.error-text")
        assert "everyMs must be an integer of at least 1000, got 500" in opened.inner_text(
            ".schedule-create-result"
        )
        form.locator('[name="kind"]').select_option("cron")
        form.locator('[name="cron"]').fill("0 9 * * 1-5")
        form.locator('[name="timezone"]').fill("Europe/Berlin")
        form.locator('button[type="submit"]').click()
        opened.wait_for_selector(row(opened, "cust-9"))
        method, path, body = fake.calls[-1]
        assert (method, path) == ("POST", "/api/schedules")
        assert body == {
            "name": "cust-9",
            "binding": "Hello",
            "payload": {"customer": 9},
            "overlap": "skip",
            "cron": "0 9 * * 1-5",
            "timezone": "Europe/Berlin",
        }
        assert json.dumps(fake.calls[0][2]["everyMs"]) == "500"


def test_no_schedules_reads_as_such(page: tuple[Page, ConsoleLog]) -> None:
    opened, log = page
    with serve(FakeApi(schedules=FakeSchedules(items=[]))) as api:
        opened.goto(api.url("#/schedules"))
        opened.wait_for_selector("#view .empty")
        assert opened.inner_text("#view .empty") == "No schedules."
    assert log.errors == []
