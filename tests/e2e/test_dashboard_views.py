"""The dashboard's views in Playwright (Debian's Chromium) over the fake REST API (issue 11).

Binding cards, metrics charts, explanations, the job detail, deep links both ways, phone width, confirmations,
the new-job default, the notice filter and a quiet console on every tab. Waits are Playwright's own
(``expect`` polls the page); nothing sleeps.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.fake_api import (
    CANCELLED_ID,
    DELAYED_ID,
    FAILED_ID,
    NOTICE_ID,
    RUNNING_ID,
    SCHEDULED_ID,
    FakeApi,
    serve,
)
from tests.e2e.playwright_chromium import ConsoleLog

pytestmark = pytest.mark.e2e

Dash = tuple[Page, ConsoleLog, FakeApi]


def route(job_id: str) -> str:
    return "#/jobs/" + urllib.parse.quote(job_id, safe="")


@pytest.fixture
def dash(page: tuple[Page, ConsoleLog]) -> Iterator[Dash]:
    """The page over a fresh fake API, auto-refresh off so nothing redraws behind a test's back."""
    opened, log = page
    opened.add_init_script("localStorage.setItem('tsumugi:refresh', '0')")
    with serve(FakeApi()) as api:
        yield opened, log, api


def mine(errors: list[str]) -> list[str]:
    """Console errors, less the schedules probe's 501 (the schedules tab is another helper's, issue 11)."""
    return [e for e in errors if "/api/schedules" not in e]


def test_bindings_are_compact_cards_in_words(dash: Dash) -> None:
    page, log, api = dash
    page.goto(api.url("#/bindings"))
    cards = page.locator(".binding-card")
    expect(cards).to_have_count(6)
    # Six bindings fit in well under a screen and a half (the raw dump was 6,156 px tall).
    assert page.locator("#view").bounding_box()["height"] < 900  # type: ignore[index]
    hello = page.locator('.binding-card[data-binding="Hello"]')
    expect(hello.locator(".gauge-text")).to_have_text("1 / 100")
    expect(hello.locator('[role="meter"]')).to_have_attribute("aria-valuenow", "1")
    expect(hello.locator(".held-item")).to_have_text(
        "Per-key concurrency: 1 ready job waits for their key (at most 1 per key)."
    )
    send_mail = page.locator('.binding-card[data-binding="SendMail"]')
    expect(send_mail.locator(".gauge-text")).to_have_text("4 / 8")  # two shards of concurrency 4
    expect(send_mail.locator(".held-item")).to_have_text(
        "Rate limit: 5 ready jobs wait for a token (10 per 1 s)."
    )
    expect(page.locator('.binding-card[data-binding="NotifyFailure"] .badge')).to_contain_text(
        ["idle", "notices"]
    )
    # Per-shard detail is folded away; opened, durations are words and missing values a dash.
    shard_table = send_mail.locator("table.shards")
    expect(shard_table).to_be_hidden()
    send_mail.get_by_text("Settings and 2 shards").click()
    expect(shard_table.locator("tbody tr")).to_have_count(2)
    expect(send_mail.locator("dl.fields")).to_contain_text("Keep failed7 d")
    expect(hello.locator("dl.fields")).to_be_hidden()
    text = page.locator("#view").inner_text()
    for raw in ("null", "604800000", "perKey", "held_back_by", "per_key_concurrency", "true", "false"):
        assert raw not in text, raw
    assert mine(log.errors) == []


def test_pausing_a_binding_reads_paused_everywhere_and_says_what_was_applied(dash: Dash) -> None:
    page, log, api = dash
    page.goto(api.url("#/bindings"))
    hello = page.locator('.binding-card[data-binding="Hello"]')
    hello.get_by_text("Edit policy").click()
    hello.get_by_label("Dispatch").select_option("true")
    hello.get_by_role("button", name="Apply").click()
    expect(hello.locator(".policy-result")).to_have_text(
        "Applied to 1 shard: paused = true. Pinned until reset."
    )
    expect(hello.locator(".card-head .badge").first).to_have_text("paused")
    # The held-back reason and the shard's count agree (never "paused" beside a paused count of 0).
    expect(hello.locator(".held-item").first).to_have_text(
        "Paused: 2 waiting jobs will not start until dispatch is resumed."
    )
    hello.get_by_text("Settings and 1 shard").click()
    expect(hello.locator("table.shards")).to_contain_text("paused (2)")
    assert api.bodies == [("/api/bindings/Hello/policy", {"paused": True})]
    assert mine(log.errors) == []


def test_policy_edits_are_checked_before_sending_and_name_the_field(dash: Dash) -> None:
    page, _, api = dash
    page.goto(api.url("#/bindings"))
    boom = page.locator('.binding-card[data-binding="Boom"]')
    boom.get_by_text("Edit policy").click()
    boom.get_by_label("Concurrency", exact=True).fill("-1")
    boom.get_by_role("button", name="Apply").click()
    expect(boom.locator(".policy-result")).to_have_text("concurrency must be a whole number, at least 0")
    boom.get_by_label("Concurrency", exact=True).fill("5")
    boom.get_by_label("Rate tokens", exact=True).fill("3")
    boom.get_by_role("button", name="Apply").click()
    expect(boom.locator(".policy-result")).to_have_text(
        "rate needs both tokens and interval_ms (or neither, for unlimited)"
    )
    assert api.bodies == []
    boom.get_by_label("Rate interval (ms)", exact=True).fill("60000")
    boom.get_by_role("button", name="Apply").click()
    expect(boom.locator(".policy-result")).to_have_text(
        "Applied to 1 shard: concurrency = 5, rate = 3 per 1 min. Pinned until reset."
    )
    assert api.bodies == [
        ("/api/bindings/Boom/policy", {"concurrency": 5, "rate": {"tokens": 3, "interval_ms": 60_000}})
    ]


def test_metrics_are_charts_with_axes_units_time_labels_and_legends(dash: Dash) -> None:
    page, log, api = dash
    page.goto(api.url("#/metrics"))
    legends = {
        "chart-throughput": ["completed", "failed"],
        "chart-failure-rate": ["failure rate"],
        "chart-durations": ["p50", "p95", "p99"],
    }
    for chart_id, names in legends.items():
        chart = page.locator(f"#{chart_id}")
        expect(chart).to_be_visible()
        figure = page.locator("figure.chart-figure", has=chart)
        expect(figure.locator(".legend li")).to_have_text(names)
        assert chart.locator(".y-label").count() >= 3
        assert chart.locator(".x-label").count() >= 2
        assert chart.locator(".axis").count() == 2
        for label in chart.locator(".x-label").all_text_contents():
            assert re.search(r"\d{1,2}:\d{2}|[A-Z][a-z]{2} \d{1,2}", label), label  # times or dates
    expect(page.locator("figure.chart-figure figcaption")).to_have_text(
        [
            "Throughput · jobs per hour",
            "Failure rate · % of finished jobs",
            "Duration · percentiles per bucket",
        ]
    )
    assert (page.locator("#chart-failure-rate .y-label").last.text_content() or "").endswith("%")
    assert any(
        t.endswith(("ms", " s")) for t in page.locator("#chart-durations .y-label").all_text_contents()
    )
    expect(page.locator("#metrics-table thead th")).to_contain_text(["p50", "p95", "p99"])
    # The range and the binding are chosen: each asks the API for that window, bucket and binding.
    page.get_by_role("button", name="7 d").click()
    expect(page.get_by_role("button", name="7 d")).to_have_attribute("aria-pressed", "true")
    page.locator("#metrics-binding").select_option("SendMail")
    expect(page.locator("#metrics-table tbody tr")).to_have_count(1)
    queries = api.queries("/api/metrics")
    assert {"hours": "168", "bucket_minutes": "360"}.items() <= queries[-2].items()
    assert {"hours": "168", "bucket_minutes": "360", "binding": "SendMail"}.items() <= queries[-1].items()
    assert mine(log.errors) == []


def test_explanations_are_words_with_relative_times_and_links(dash: Dash) -> None:
    page, log, api = dash
    page.goto(api.url(route(DELAYED_ID)))
    explain = page.locator("#job-explain")
    expect(explain).to_contain_text("Not due yet: ready in 4 min 12 s")
    assert not re.search(r"\d{12,}", explain.inner_text())  # no raw epoch milliseconds
    page.goto(api.url(route(SCHEDULED_ID)))
    page.reload()
    expect(explain.locator("li")).to_have_text(
        f"Waits for job {RUNNING_ID} of key user-1 (at most 1 at a time per key)."
    )
    assert explain.inner_text().count(RUNNING_ID) == 1  # never "held by X held by X"
    explain.get_by_role("button", name=RUNNING_ID).click()
    expect(page.locator("#job-detail .job-id")).to_have_text(RUNNING_ID)
    assert page.evaluate("location.hash") == route(RUNNING_ID)
    assert mine(log.errors) == []


def test_job_detail_has_a_timeline_full_width_tracebacks_and_both_times(dash: Dash) -> None:
    page, log, api = dash
    page.goto(api.url(route(FAILED_ID)))
    attempts = page.locator("#attempts-log > li")
    expect(attempts).to_have_count(3)
    expect(attempts.locator(".attempt-head strong:first-child")).to_have_text(["#1", "#2", "#3"])
    expect(attempts.nth(0)).to_contain_text("took 500 ms")
    trace = attempts.nth(2).locator("pre.trace")
    expect(trace).to_contain_text("SmtpError: mailbox full (third)")
    # Full width, not a narrow column. Both widths in one evaluation, repeated until it holds (within the
    # timeout): the detail redraws on its refresh, and a read during a redraw sees no layout yet (CI saw 0).
    page.wait_for_function(
        "() => { const e = document.querySelectorAll('#attempts-log > li pre.trace');"
        " const t = e[e.length - 1], b = document.querySelector('#modal-body');"
        " return !!t && !!b && t.getBoundingClientRect().width > 0.9 * b.getBoundingClientRect().width; }",
        timeout=5_000,
    )
    # One scroll place: the traceback wraps and grows; it has no scrollbar of its own.
    assert trace.evaluate("e => e.scrollWidth <= e.clientWidth && e.scrollHeight <= e.clientHeight")
    created = page.locator("dl.fields dd").filter(has=page.locator("time")).first
    expect(created).to_contain_text(" ago · ")  # relative, and the absolute local time beside it
    assert created.locator("time").get_attribute("datetime") == "2025-12-31T23:59:00.000Z"
    assert mine(log.errors) == []


def test_a_cancelled_job_shows_what_happened_without_contradiction(dash: Dash) -> None:
    page, _, api = dash
    page.goto(api.url(route(CANCELLED_ID)))
    header = page.locator("#job-detail h2")
    expect(header).to_contain_text("CANCELLED")
    expect(header).to_contain_text("cancelled on request")
    expect(page.locator(".badge.cancel-requested")).to_have_count(0)
    attempt = page.locator("#attempts-log > li")
    expect(attempt.locator(".badge")).to_have_text("CANCELLED")  # the engine's old FAILED is not shown
    expect(attempt.locator("pre.trace")).to_have_text("SlowCancelledError: cancelled after 10s of 30s")


def test_deep_links_work_both_ways_and_back_closes_the_detail(dash: Dash) -> None:
    page, log, api = dash
    page.goto(api.url("#/jobs"))
    expect(page.locator(".job-row")).to_have_count(3)
    # A hash changed in the open page opens that job.
    page.evaluate(f"location.hash = {route(FAILED_ID)!r}")
    expect(page.locator("#job-detail .job-id")).to_have_text(FAILED_ID)
    page.locator("#modal-close").click()
    expect(page.locator("#modal")).to_be_hidden()
    assert page.evaluate("location.hash") == "#/jobs"
    # Opening a job writes the hash; Back closes it, Forward opens it again.
    page.locator(f'.job-row[data-id="{SCHEDULED_ID}"] .col-binding').click()
    expect(page.locator("#job-detail .job-id")).to_have_text(SCHEDULED_ID)
    assert page.evaluate("location.hash") == route(SCHEDULED_ID)
    page.go_back()
    expect(page.locator("#modal")).to_be_hidden()
    assert page.evaluate("location.hash") == "#/jobs"
    page.go_forward()
    expect(page.locator("#job-detail .job-id")).to_have_text(SCHEDULED_ID)
    page.keyboard.press("Escape")
    expect(page.locator("#modal")).to_be_hidden()
    # Tabs are history entries too.
    page.locator('[data-tab="metrics"]').click()
    expect(page.locator("#metrics-table")).to_be_visible()
    page.go_back()
    expect(page.locator('[data-tab="jobs"].active')).to_be_visible()
    expect(page.locator(".job-row")).to_have_count(3)
    assert mine(log.errors) == []


@pytest.mark.parametrize("view", ["#/jobs", "#/metrics", "#/bindings", route(FAILED_ID), route(SCHEDULED_ID)])
def test_phone_width_has_no_horizontal_overflow(dash: Dash, view: str) -> None:
    page, log, api = dash
    page.set_viewport_size({"width": 420, "height": 860})
    page.goto(api.url(view))
    page.wait_for_selector(".job-row, .binding-card, #metrics-table, #job-detail")
    if view.startswith("#/jobs/"):
        expect(page.locator("#job-detail")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 420
    assert mine(log.errors) == []


def test_at_phone_width_job_ids_stay_visible_and_rows_open_jobs(dash: Dash) -> None:
    page, _, api = dash
    page.set_viewport_size({"width": 420, "height": 860})
    page.goto(api.url("#/jobs"))
    row = page.locator(f'.job-row[data-id="{FAILED_ID}"]')
    expect(row.locator(".col-id")).to_be_visible()
    expect(row.locator(".col-id")).to_have_text(FAILED_ID)
    row.locator(".col-state").click()
    expect(page.locator("#job-detail .job-id")).to_have_text(FAILED_ID)


def test_cancel_asks_first_and_keep_sends_nothing(dash: Dash) -> None:
    page, _, api = dash
    page.goto(api.url("#/jobs"))
    running = page.locator(f'.job-row[data-id="{RUNNING_ID}"]')
    running.get_by_role("button", name="Cancel").click()
    dialog = page.locator("#confirm")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Cancel this job?")
    dialog.get_by_role("button", name="Keep").click()
    expect(dialog).to_be_hidden()
    assert api.bodies == []
    running.get_by_role("button", name="Cancel").click()
    dialog.get_by_role("button", name="Cancel job").click()
    expect(page.locator("#status")).to_have_text(f"Cancel requested for {RUNNING_ID}")
    assert [path for path, _ in api.bodies] == [f"/api/jobs/{urllib.parse.quote(RUNNING_ID, safe='')}/cancel"]


def test_cancel_from_the_detail_asks_over_it_and_escape_keeps_the_detail(dash: Dash) -> None:
    page, _, api = dash
    page.goto(api.url(route(SCHEDULED_ID)))
    page.locator("#job-detail").get_by_role("button", name="Cancel").click()
    expect(page.locator("#confirm")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#confirm")).to_be_hidden()
    expect(page.locator("#job-detail")).to_be_visible()
    assert api.bodies == []


def test_bulk_cancel_and_policy_reset_ask_first(dash: Dash) -> None:
    page, _, api = dash
    page.goto(api.url("#/jobs"))
    for job_id in (RUNNING_ID, SCHEDULED_ID):
        page.get_by_label(f"Select {job_id}").check()
    page.get_by_role("button", name="Cancel selected").click()
    dialog = page.locator("#confirm")
    expect(dialog).to_contain_text("Cancel 2 jobs?")
    dialog.get_by_role("button", name="Cancel 2 jobs").click()
    expect(page.locator("#status")).to_have_text("2 accepted")
    assert api.bodies == [("/api/jobs/bulk-cancel", {"ids": [RUNNING_ID, SCHEDULED_ID]})]
    page.locator('[data-tab="bindings"]').click()
    hello = page.locator('.binding-card[data-binding="Hello"]')
    hello.get_by_text("Edit policy").click()
    hello.get_by_role("button", name="Reset to code settings").click()
    expect(dialog).to_contain_text("Reset Hello?")
    dialog.get_by_role("button", name="Reset policy").click()
    expect(hello.locator(".policy-result")).to_have_text("Back to the code's settings on 1 shard.")
    assert api.bodies[-1] == ("/api/bindings/Hello/policy/reset", None)


def test_the_new_job_form_starts_on_hello_with_its_payload(dash: Dash) -> None:
    page, _, api = dash
    page.goto(api.url("#/jobs"))
    page.get_by_role("button", name="+ Job").click()
    form = page.locator("#new-job")
    expect(form.get_by_label("Binding")).to_have_value("Hello")
    expect(form.get_by_label("Payload (JSON)")).to_have_value('{\n  "name": "world"\n}')
    expect(form.locator("option", has_text="NotifyFailure (notice)")).to_have_count(1)
    form.get_by_role("button", name="Create").click()
    expect(page.locator("#status")).to_have_text("Job created: Hello#0:newjob1")
    assert api.bodies == [("/api/jobs", {"binding": "Hello", "payload": {"name": "world"}})]


def test_notice_jobs_are_hidden_by_default_and_can_be_shown(dash: Dash) -> None:
    page, _, api = dash
    page.goto(api.url("#/jobs"))
    expect(page.locator(".job-row")).to_have_count(3)
    assert api.queries("/api/jobs")[0]["exclude_bindings"] == "NotifyFailure,NotifySettled"
    page.get_by_label("Hide notice jobs").uncheck()
    expect(page.locator(f'.job-row[data-id="{NOTICE_ID}"]')).to_be_visible()
    assert "exclude_bindings" not in api.queries("/api/jobs")[-1]
    page.reload()  # the choice is remembered
    expect(page.locator(f'.job-row[data-id="{NOTICE_ID}"]')).to_be_visible()
    expect(page.get_by_label("Hide notice jobs")).not_to_be_checked()


def test_every_tab_and_detail_in_normal_use_logs_no_console_error(dash: Dash) -> None:
    page, log, api = dash
    page.goto(api.url("#/jobs"))
    expect(page.locator(".job-row")).to_have_count(3)
    for tab, ready in (("metrics", "#chart-throughput"), ("bindings", ".binding-card"), ("jobs", ".job-row")):
        page.locator(f'[data-tab="{tab}"]').click()
        page.wait_for_selector(ready)
        assert mine(log.errors) == [], tab
    for job_id in (FAILED_ID, SCHEDULED_ID, DELAYED_ID, CANCELLED_ID, RUNNING_ID, NOTICE_ID):
        page.evaluate(f"location.hash = {route(job_id)!r}")
        expect(page.locator("#job-detail .job-id")).to_have_text(job_id)
    page.evaluate("refreshNow()")  # an auto-refresh with the detail open redraws it quietly
    expect(page.locator("#job-detail .job-id")).to_have_text(NOTICE_ID)
    assert mine(log.errors) == []
