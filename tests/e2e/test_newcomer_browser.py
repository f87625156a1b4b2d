"""What a newcomer meets in the dashboard (issue 26), in Playwright over the fake REST API.

Each test failed on the dashboard before issue 26: the attempt in progress, counts that agree with the list,
a confirmation in the middle of the screen, and the rest of the issue's items below.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e import fake_runs
from tests.e2e.fake_api import CANCELLED_ID, FAILED_ID, RUNNING_ID, FakeApi, serve
from tests.e2e.fake_schedules import NOW, FakeSchedules, flow_schedule, schedule
from tests.e2e.playwright_chromium import ConsoleLog

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


def test_metrics_for_all_bindings_leave_the_notice_jobs_out_and_one_binding_asks_for_it_alone(
    dash: Dash,
) -> None:
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


def test_run_rows_open_the_run_and_show_when_it_started_and_how_long_it_took(
    page: tuple[Page, ConsoleLog],
) -> None:
    # Item 5: only the id link opened a run; the list had no start time or duration.
    opened, log = page
    opened.add_init_script("localStorage.setItem('tsumugi:refresh', '0')")
    with serve(FakeApi(flows=True)) as api:
        opened.goto(api.url("#/runs"))
        rows = opened.locator(".run-row")
        expect(rows.first).to_be_visible()
        first = rows.first
        run_id = first.get_attribute("data-id")
        assert run_id
        expect(first.locator(".runs-col-started time")).to_have_count(1)
        started = first.locator(".runs-col-started time")
        assert re.fullmatch(r"\d.* ago", started.inner_text()), started.inner_text()
        assert started.get_attribute("title")  # the exact time on hover
        assert re.search(r"\d", first.locator(".runs-col-duration").inner_text())
        first.locator(".run-nodes").click()
        expect(opened.locator(f'#run-detail[data-id="{run_id}"]')).to_be_visible()
    assert mine(log.errors) == []


def _schedules(items: list[dict[str, object]]) -> FakeSchedules:
    return FakeSchedules(items=items)


LONG = "nightly-report-for-customer-" + "x" * 40


def test_schedules_fit_a_phone_with_long_names_and_a_flow_target(page: tuple[Page, ConsoleLog]) -> None:
    # Item 4: the tab was 624-774 px wide at 420 px.
    opened, _ = page
    opened.set_viewport_size({"width": 420, "height": 860})
    items = [schedule("nightly"), schedule(LONG, target="SendMail" + "Y" * 40), flow_schedule()]
    with serve(FakeApi(schedules=_schedules(items), flows=True)) as api:
        opened.goto(api.url("#/schedules"))
        expect(opened.locator(".schedule-row")).to_have_count(3)
        width = opened.evaluate("document.documentElement.scrollWidth")
        assert width <= 420, width
        for selector in (".schedule-row", "#schedule-create"):
            for box in [el.bounding_box() for el in opened.locator(selector).all()]:
                assert box is not None, selector
                assert 0 <= box["x"] <= box["x"] + box["width"] <= 420, (selector, box)


def test_schedule_action_cells_line_up_with_their_rows(page: tuple[Page, ConsoleLog]) -> None:
    # Item 4: the action column's borders did not line up (the cell was a flex box, not a table cell).
    opened, _ = page
    with serve(FakeApi(schedules=FakeSchedules())) as api:
        opened.goto(api.url("#/schedules"))
        expect(opened.locator(".schedule-row")).to_have_count(2)
        for tr in opened.locator(".schedule-row").all():
            row_box, cell = tr.bounding_box(), tr.locator(".schedule-actions")
            assert cell.evaluate("e => getComputedStyle(e).display") == "table-cell"
            cell_box = cell.bounding_box()
            assert row_box is not None
            assert cell_box is not None
            assert abs(cell_box["y"] - row_box["y"]) <= 1
            assert abs(cell_box["height"] - row_box["height"]) <= 1


def test_a_new_schedule_can_start_a_flow(page: tuple[Page, ConsoleLog]) -> None:
    # Item 4: the New schedule form could only target a binding.
    opened, _ = page
    fake = FakeSchedules()
    with serve(FakeApi(schedules=fake, flows=True)) as api:
        opened.goto(api.url("#/schedules"))
        opened.locator("#schedule-create summary").click()
        form = opened.locator("#schedule-create form")
        form.locator('[name="name"]').fill("greet-often")
        form.get_by_label("Starts").select_option("flow")
        form.locator('[name="flow"]').select_option("greetings")
        form.locator('[name="payload"]').fill('{"names": ["a"]}')
        form.get_by_role("button", name="Create schedule").click()
        expect(opened.locator(".schedule-create-result")).to_contain_text("Created greet-often")
    (method, path, body) = fake.calls[-1]
    assert (method, path) == ("POST", "/api/schedules")
    assert body == {
        "name": "greet-often",
        "flow": "greetings",
        "input": {"names": ["a"]},
        "overlap": "skip",
        "everyMs": 60_000,
    }


def test_a_late_fire_reads_in_words_and_a_tiny_one_not_at_all(page: tuple[Page, ConsoleLog]) -> None:
    # Item 4: "Last run ... +1 ms" was unexplained.
    opened, _ = page
    items = [schedule("nightly"), schedule("punctual", last_fired_at=NOW - 3_600_000 + 1)]
    with serve(FakeApi(schedules=_schedules(items))) as api:
        opened.goto(api.url("#/schedules"))
        late = opened.locator('.schedule-row[data-name="nightly"] .schedule-late')
        expect(late).to_have_text("fired 2.5 s late")
        assert late.get_attribute("title") == "The alarm fired this long after the occurrence was due"
        last = opened.locator('.schedule-row[data-name="punctual"] .schedule-last')
        expect(last.locator("time")).to_have_count(1)
        assert "ms" not in last.inner_text()
        assert "+" not in last.inner_text()


@pytest.mark.parametrize(
    "route_",
    ["#/jobs", "#/runs", "#/schedules", "#/metrics", "#/bindings", route(FAILED_ID), route(RUNNING_ID)],
)
def test_no_view_is_wider_than_a_phone(page: tuple[Page, ConsoleLog], route_: str) -> None:
    # Item 4's acceptance: at 420 px nothing scrolls sideways, schedules with long names and a flow included.
    opened, _ = page
    opened.set_viewport_size({"width": 420, "height": 860})
    opened.add_init_script("localStorage.setItem('tsumugi:refresh', '0')")
    items = [schedule("nightly"), schedule(LONG, target="SendMail" + "Y" * 40), flow_schedule()]
    with serve(FakeApi(schedules=_schedules(items), flows=True)) as api:
        opened.goto(api.url(route_))
        opened.wait_for_selector(
            ".job-row, .run-row, .schedule-row, #metrics-table, .binding-card, #job-detail"
        )
        opened.wait_for_load_state("networkidle")
        width = opened.evaluate("document.documentElement.scrollWidth")
        assert width <= 420, (route_, width)


def test_rows_show_only_the_actions_a_job_can_take(dash: Dash) -> None:
    # Item 11: a disabled Retry and Cancel on every row.
    page, _, api = dash
    page.goto(api.url("#/jobs"))
    failed, running = (
        page.locator(f'.job-row[data-id="{FAILED_ID}"]'),
        page.locator(f'.job-row[data-id="{RUNNING_ID}"]'),
    )
    expect(failed.locator(".actions button")).to_have_text(["Retry"])
    expect(running.locator(".actions button")).to_have_text(["Cancel"])
    assert page.locator(".job-row button[disabled]").count() == 0


def test_earlier_tracebacks_fold_and_only_the_last_one_is_open(dash: Dash) -> None:
    # Item 11: five identical tracebacks, all expanded.
    page, _, api = dash
    page.goto(api.url(route(FAILED_ID)))
    attempts = page.locator("#attempts-log > li")
    expect(attempts).to_have_count(3)
    expect(attempts.nth(0).locator("details.attempt-error summary")).to_have_text(
        "SmtpError: timeout (first)"
    )
    expect(attempts.nth(0).locator("pre.trace")).to_be_hidden()
    expect(attempts.nth(2).locator("pre.trace")).to_be_visible()
    attempts.nth(0).locator("summary").click()
    expect(attempts.nth(0).locator("pre.trace")).to_be_visible()


def test_bindings_read_idle_without_work_and_policy_milliseconds_in_words(dash: Dash) -> None:
    # Item 11: a "running" badge on idle bindings; raw milliseconds in the policy form.
    page, _, api = dash
    page.goto(api.url("#/bindings"))
    expect(page.locator('.binding-card[data-binding="Boom"] .card-head .badge').first).to_have_text("idle")
    expect(page.locator('.binding-card[data-binding="Hello"] .card-head .badge').first).to_have_text(
        "running"
    )
    boom = page.locator('.binding-card[data-binding="Boom"]')
    boom.get_by_text("Edit policy").click()
    retention = boom.locator(".ms-input", has=page.get_by_label("Failed retention (ms)"))
    expect(retention.locator(".ms-words")).to_have_text(" ms = 7 d")
    boom.get_by_label("Failed retention (ms)").fill("90000")
    expect(retention.locator(".ms-words")).to_have_text(" ms = 1 min 30 s")


def test_search_by_payload_text_asks_the_api_and_says_how_far_it_read(dash: Dash) -> None:
    # Item 12: search by payload or error text.
    page, _, api = dash
    page.goto(api.url("#/jobs"))
    page.get_by_label("Search field").select_option("text")
    page.get_by_label("Search", exact=True).fill("mailbox full")
    page.get_by_label("Search", exact=True).press("Enter")
    expect(page.locator("#jobs-searched")).to_have_text(
        "searched 3 jobs"
    )  # the notice job is hidden, so not read
    assert api.queries("/api/jobs")[-1]["text"] == "mailbox full"
    expect(page.locator(".job-row")).to_have_count(1)


def test_retry_all_failed_of_a_binding_asks_then_retries_by_filter(dash: Dash) -> None:
    # Item 12: "retry all failed" for a binding.
    page, _, api = dash
    page.goto(api.url("#/jobs"))
    page.get_by_label("Binding").select_option("SendMail")
    page.locator("#retry-all-failed").click()
    page.locator("#confirm").get_by_role("button", name="Retry all failed").click()
    expect(page.locator("#status")).to_have_text("Retried 1 failed SendMail job")
    assert api.bodies == [("/api/jobs/bulk-retry", {"binding": "SendMail", "state": "FAILED"})]


def test_a_finished_job_runs_again_with_an_edited_payload(dash: Dash) -> None:
    # Item 12: re-run a finished job with an edited payload.
    page, _, api = dash
    page.goto(api.url(route(FAILED_ID)))
    page.locator("#run-again").click()
    expect(page.locator("#modal-body h2")).to_have_text("Run SendMail again")
    payload = page.get_by_label("Payload (JSON)")
    expect(payload).to_have_value('{\n  "to": "a@example.com"\n}')
    payload.fill('{"to": "b@example.com"}')
    page.get_by_role("button", name="Create").click()
    expect(page.locator("#status")).to_contain_text("Job created: SendMail#0:newjob1")
    assert api.bodies == [("/api/jobs", {"binding": "SendMail", "payload": {"to": "b@example.com"}})]


LONG_RUN = "greetings:long1"


def _long_run() -> dict[str, Any]:
    """The greetings flow as the example runs it, plus a node with a long name: the labels the run view cut."""
    t = NOW - 30_000
    nodes = [
        fake_runs._node("names", "COMPLETED", t, t + 1_000, 0, binding="ListNames"),
        fake_runs._node("hello", "COMPLETED", t, t + 5_000, 1, after=["names"], container=True),
        fake_runs._node("report", "COMPLETED", t, t + 6_000, 2, binding="ReportGreetings", after=["hello"]),
        fake_runs._node(
            "notify-the-customer-success-team",
            "RUNNING",
            t,
            t + 7_000,
            3,
            binding="NotifySettled",
            after=["report"],
        ),
    ]
    return fake_runs._run(LONG_RUN, "RUNNING", nodes, t, t + 7_000, {"names": ["a"]})


def test_run_graph_labels_are_whole_and_fit_their_cards(
    page: tuple[Page, ConsoleLog], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Item 11: node labels were cut with an ellipsis ("COMPLETED · ReportGreetin…"); the cards now fit them,
    # and the full name is also on hover.
    opened, log = page
    opened.add_init_script("localStorage.setItem('tsumugi:refresh', '0')")
    monkeypatch.setitem(fake_runs.UNLISTED, LONG_RUN, _long_run())
    with serve(FakeApi(flows=True)) as api:
        opened.goto(api.url("#/runs/" + urllib.parse.quote(LONG_RUN, safe="")))
        nodes = f'#run-detail[data-id="{LONG_RUN}"] .dag-node'
        expect(opened.locator(nodes)).to_have_count(4)
        cards: list[dict[str, Any]] = opened.eval_on_selector_all(
            nodes,
            """nodes => nodes.map((g) => {
                 const card = g.querySelector('.dag-card'), ids = g.querySelector('.dag-id');
                 const sub = g.querySelector('.dag-sub');
                 return { node: g.dataset.node, id: ids.textContent, sub: sub.textContent,
                          title: g.querySelector('title').textContent, room: card.width.baseVal.value,
                          idEnd: ids.x.baseVal[0].value + ids.getComputedTextLength(),
                          subEnd: sub.x.baseVal[0].value + sub.getComputedTextLength() };
               })""",
        )
    report = next(c for c in cards if c["node"] == "report")
    assert report["sub"] == "COMPLETED \u00b7 ReportGreetings", report
    for card in cards:
        assert card["id"] == card["node"], card
        assert "\u2026" not in card["sub"], card
        assert card["title"].startswith(f"{card['node']}: "), card  # the full name on hover too
        assert card["idEnd"] <= card["room"] - 4, card
        assert card["subEnd"] <= card["room"] - 4, card
    assert mine(log.errors) == []


def test_run_again_starts_at_the_left_edge_when_there_is_no_retry_or_cancel(dash: Dash) -> None:
    # Seen in the screenshots: an empty Retry/Cancel group still took a gap, so "Run again" stood indented.
    page, log, api = dash
    page.goto(api.url(route(CANCELLED_ID)))
    run_again = page.locator("#run-again")
    expect(run_again).to_be_visible()
    # Measured once the dialog has settled (it may still be moving in as it opens).
    edges = (
        "() => [document.querySelector('#run-again'), document.querySelector('#job-detail h2')]"
        ".map(e => e.getBoundingClientRect().left)"
    )
    page.wait_for_function(f"(({edges})()).every((x, _, all) => Math.abs(x - all[1]) <= 1)", timeout=5_000)
    left, heading = page.evaluate(f"({edges})()")
    assert abs(left - heading) <= 1, (left, heading)
    assert mine(log.errors) == []
