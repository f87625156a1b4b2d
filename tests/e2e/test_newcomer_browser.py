"""What a newcomer meets in the dashboard (issue 26), in Playwright over the fake REST API.

Each test failed on the dashboard before issue 26: the attempt in progress, counts that agree with the list,
a confirmation in the middle of the screen, and the rest of the issue's items below.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator

import pytest
from fake_api import FAILED_ID, RUNNING_ID, FakeApi, serve
from playwright.sync_api import Page, expect
from playwright_chromium import ConsoleLog

pytestmark = pytest.mark.e2e

Dash = tuple[Page, ConsoleLog, FakeApi]


def route(job_id: str) -> str:
    return "#/jobs/" + urllib.parse.quote(job_id, safe="")


def mine(errors: list[str]) -> list[str]:
    """Console errors, less the schedules probe's 501 (the fake offers no schedules by default)."""
    return [e for e in errors if "/api/schedules" not in e]


@pytest.fixture
def dash(page: tuple[Page, ConsoleLog]) -> Iterator[Dash]:
    """The page over a fresh fake API, auto-refresh off so nothing redraws behind a test's back."""
    opened, log = page
    opened.add_init_script("localStorage.setItem('tsumugi:refresh', '0')")
    with serve(FakeApi()) as api:
        yield opened, log, api


def test_a_running_job_shows_the_attempt_in_progress_in_its_row_detail_and_timeline(dash: Dash) -> None:
    # Item 1: "Attempts 0 / 3" during the first attempt; the timeline left the running attempt out.
    page, log, api = dash
    page.goto(api.url("#/jobs"))
    expect(page.locator(f'.job-row[data-id="{RUNNING_ID}"] .col-attempts')).to_have_text("2 / 3")
    expect(page.locator(f'.job-row[data-id="{FAILED_ID}"] .col-attempts')).to_have_text("3 / 3")
    page.goto(api.url(route(RUNNING_ID)))
    expect(page.locator("#job-attempts")).to_have_text("2 of 3 (running)")
    timeline = page.locator("#attempts-log > li")
    expect(timeline.locator(".attempt-head strong:first-child")).to_have_text(["#1", "#2"])
    expect(timeline.nth(0).locator(".badge")).to_have_text("FAILED")
    expect(timeline.nth(1).locator(".badge")).to_have_text("RUNNING")
    expect(timeline.nth(1)).to_contain_text("in progress")
    expect(page.locator("#job-detail h3").filter(has_text="Attempts")).to_have_text("Attempts (2)")
    assert mine(log.errors) == []


def test_state_counts_add_up_to_the_list_total_with_notice_jobs_hidden(dash: Dash) -> None:
    # Item 2: the chips counted the hidden notice jobs ("COMPLETED 70" above "38 jobs").
    page, log, api = dash
    page.goto(api.url("#/jobs"))
    expect(page.locator("#jobs-total")).to_have_text("3 jobs")
    chips = page.locator(".chips .chip")
    expect(chips).to_have_count(3)
    counts = [int(re.sub(r"\D", "", text)) for text in chips.all_text_contents()]
    assert sum(counts) == 3
    assert api.queries("/api/stats")[-1]["exclude_bindings"] == "NotifyFailure,NotifySettled"
    page.locator("#hide-notices").uncheck()
    expect(page.locator("#jobs-total")).to_have_text("4 jobs")
    expect(page.locator(".chips .chip", has_text="COMPLETED")).to_have_text("COMPLETED 1")
    assert mine(log.errors) == []


def test_metrics_for_all_bindings_leave_the_notice_jobs_out_and_one_binding_asks_for_it_alone(dash: Dash) -> None:
    # Item 2: metrics counted notice jobs in the totals and the failure rate.
    page, log, api = dash
    page.goto(api.url("#/metrics"))
    expect(page.locator("#metrics-table")).to_be_visible()
    assert api.queries("/api/metrics")[-1]["exclude_bindings"] == "NotifyFailure,NotifySettled"
    page.locator("#metrics-binding").select_option("SendMail")
    expect(page.locator("#metrics-table tbody tr")).to_have_count(1)
    last = api.queries("/api/metrics")[-1]
    assert (last["binding"], "exclude_bindings" in last) == ("SendMail", False)
    assert mine(log.errors) == []


@pytest.mark.parametrize("width", [1280, 420])
def test_the_cancel_confirmation_opens_in_the_middle_of_the_screen(dash: Dash, width: int) -> None:
    # Item 3: a generic .confirm rule gave the dialog margin 0, so it opened in the top-left corner.
    page, _, api = dash
    page.set_viewport_size({"width": width, "height": 860})
    page.goto(api.url(route(RUNNING_ID)))
    page.locator("#job-detail").get_by_role("button", name="Cancel").click()
    dialog = page.locator("#confirm")
    expect(dialog).to_be_visible()
    box = dialog.bounding_box()
    assert box is not None
    assert abs(box["x"] + box["width"] / 2 - width / 2) <= 2, box
    assert abs(box["y"] + box["height"] / 2 - 860 / 2) <= 2, box


def test_invalid_json_in_the_new_job_form_says_the_line_and_column(dash: Dash) -> None:
    # Item 7: "Payload must be valid JSON" and nothing more.
    page, _, api = dash
    page.goto(api.url("#/jobs"))
    page.get_by_role("button", name="+ Job").click()
    page.get_by_label("Payload (JSON)").fill('{\n  "name": "a",\n  "age" 5\n}')
    page.get_by_role("button", name="Create").click()
    error = page.locator("#new-job-error")
    expect(error).to_contain_text("Payload must be valid JSON: line 3, column 9")
    assert api.bodies == []


def test_a_stopped_server_is_named_as_such_not_failed_to_fetch(page: tuple[Page, ConsoleLog]) -> None:
    # Item 7: a stopped server showed "Failed to load: Failed to fetch".
    opened, _ = page
    opened.add_init_script("localStorage.setItem('tsumugi:refresh', '0')")
    with serve(FakeApi()) as api:
        opened.goto(api.url("#/jobs"))
        expect(opened.locator("#jobs-total")).to_have_text("3 jobs")
    opened.locator("#refresh-now").click()  # the server is gone now
    status = opened.locator("#status")
    expect(status).to_contain_text("did not answer: is tsumugi dev (or the scheduler Worker) running?")
    assert "Failed to fetch" not in status.inner_text()
