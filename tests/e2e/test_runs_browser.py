"""The runs tab and a run's detail (waterfall, DAG picture, node detail, retry / cancel) in headless Chromium.

The page's clock is Playwright's fake one, set to the fixtures' NOW: bars of unfinished nodes end there, and no
auto-refresh timer fires during a test. Layout numbers are derived by hand from the fixtures' timestamps.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, FloatRect, Page

from tests.e2e.fake_api import FAILED_ID, NOW, FakeApi, serve
from tests.e2e.fake_runs import DETAILS, FAILED_RUN, FANOUT_RUN, RUNNING_RUN, SUBFLOW_RUN, T0
from tests.e2e.playwright_chromium import ConsoleLog

pytestmark = pytest.mark.e2e

Opened = tuple[Page, ConsoleLog]


def _route(run_id: str) -> str:
    return "#/runs/" + urllib.parse.quote(run_id, safe="")


def _quiet(log: ConsoleLog) -> None:
    # The only expected console line: the feature probe's 501 from /api/schedules (no schedules in the fake).
    assert [e for e in log.errors if not ("status of 501" in e and "/api/schedules" in e)] == []


@pytest.fixture
def api() -> Iterator[FakeApi]:
    with serve(FakeApi(flows=True)) as served:
        yield served


def _open(page: Page, api: FakeApi, fragment: str) -> None:
    # Playwright takes seconds. Paused: Date.now() stays NOW and no timer (auto-refresh) fires by itself.
    page.clock.install(time=(NOW - 1_000) / 1000)
    page.clock.pause_at(NOW / 1000)
    page.goto(api.url(fragment))


def _open_run(page: Page, api: FakeApi, run_id: str) -> None:
    _open(page, api, _route(run_id))
    page.wait_for_selector(f'#run-detail[data-id="{run_id}"]')


def _row_ids(page: Page) -> list[str]:
    return page.eval_on_selector_all(".run-row", "rows => rows.map(r => r.dataset.id)")


def _runs_queries(api: FakeApi) -> list[dict[str, str]]:
    return [
        dict(urllib.parse.parse_qsl(path.partition("?")[2]))
        for method, path in api.requests
        if method == "GET" and path.split("?")[0] == "/api/runs"
    ]


def _wf_rows(page: Page) -> list[str]:
    return page.eval_on_selector_all(
        "#run-waterfall .wf-row[data-node]", "rows => rows.map(r => r.dataset.node)"
    )


def _posts(api: FakeApi) -> list[str]:
    return [path for method, path in api.requests if method == "POST"]


# -- the list ---------------------------------------------------------------------------------------------


def test_runs_tab_lists_runs_newest_update_first_with_progress(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open(opened, api, "#/runs")
    opened.wait_for_selector(".run-row")

    assert opened.locator('[data-tab="runs"].active').count() == 1
    ids = _row_ids(opened)
    assert ids[:4] == [RUNNING_RUN, SUBFLOW_RUN, FANOUT_RUN, FAILED_RUN]
    assert len(ids) == 20
    assert opened.text_content("#runs-total") == "26 runs"
    assert opened.text_content("#runs-page") == "Page 1 of 2"
    failed = opened.locator(f'.run-row[data-id="{FAILED_RUN}"] .run-nodes')
    assert failed.text_content() == "4 / 4 (1)"
    assert failed.locator(".error-text").count() == 1
    assert _runs_queries(api)[-1] == {"limit": "20", "offset": "0"}
    _quiet(log)


def test_paging_asks_for_the_next_offset_and_stops_at_the_last_page(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open(opened, api, "#/runs")
    opened.wait_for_selector(".run-row")

    opened.get_by_role("button", name="Next").click()
    opened.wait_for_function("document.querySelector('#runs-page').textContent === 'Page 2 of 2'")
    assert _runs_queries(api)[-1] == {"limit": "20", "offset": "20"}
    assert _row_ids(opened) == [f"greetings:bulk{i:02d}" for i in range(16, 22)]
    assert opened.get_by_role("button", name="Next").is_disabled()
    assert opened.get_by_role("button", name="Last").is_disabled()

    opened.get_by_role("button", name="First").click()
    opened.wait_for_function("document.querySelector('#runs-page').textContent === 'Page 1 of 2'")
    assert _runs_queries(api)[-1]["offset"] == "0"
    _quiet(log)


def test_filters_send_exact_flow_and_state_and_return_to_the_first_page(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open(opened, api, "#/runs")
    opened.wait_for_selector(".run-row")
    opened.get_by_role("button", name="Next").click()
    opened.wait_for_function("document.querySelector('#runs-page').textContent === 'Page 2 of 2'")

    assert opened.eval_on_selector_all("#runs-flow option", "o => o.map(x => x.value)") == [
        "",
        "etl",
        "greetings",
        "nightly",
    ]
    opened.select_option("#runs-flow", "greetings")
    opened.wait_for_function("document.querySelector('#runs-total').textContent === '24 runs'")
    assert _runs_queries(api)[-1] == {"flow": "greetings", "limit": "20", "offset": "0"}

    opened.select_option("#runs-state", "RUNNING")
    opened.wait_for_function("document.querySelector('#runs-total').textContent === '1 runs'")
    assert _runs_queries(api)[-1] == {"flow": "greetings", "state": "RUNNING", "limit": "20", "offset": "0"}
    assert _row_ids(opened) == [RUNNING_RUN]

    opened.get_by_role("button", name="Reset").click()
    opened.wait_for_function("document.querySelector('#runs-total').textContent === '26 runs'")
    assert _runs_queries(api)[-1] == {"limit": "20", "offset": "0"}
    _quiet(log)


def test_new_run_form_starts_a_run_and_opens_it(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open(opened, api, "#/runs")
    opened.wait_for_selector(".run-row")
    opened.select_option("#runs-flow", "greetings")
    opened.wait_for_function("document.querySelector('#runs-total').textContent === '24 runs'")
    opened.click("#new-run-open")
    assert opened.input_value('#new-run select[name="flow"]') == "greetings"  # the filtered flow comes first
    assert opened.input_value('#new-run textarea[name="input"]') == "{}"

    opened.fill('#new-run textarea[name="input"]', '{"names": [')
    opened.click('#new-run button[type="submit"]')
    assert opened.text_content("#new-run-error") == "Input must be valid JSON"
    assert api.bodies == []

    opened.fill('#new-run textarea[name="input"]', '{"names": ["a", "b", "c"]}')
    opened.fill('#new-run input[name="id"]', "fan1")
    opened.click('#new-run button[type="submit"]')
    opened.wait_for_selector(f'#run-detail[data-id="{FANOUT_RUN}"]')
    assert api.bodies == [
        ("/api/runs", {"flow": "greetings", "input": {"names": ["a", "b", "c"]}, "id": "fan1"})
    ]
    assert opened.text_content("#status") == f"Run started: {FANOUT_RUN}"
    assert opened.evaluate("location.hash") == _route(FANOUT_RUN)
    _quiet(log)


def test_new_run_form_shows_the_servers_refusal_verbatim(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open(opened, api, "#/runs")
    opened.wait_for_selector(".run-row")
    opened.click("#new-run-open")
    opened.fill('#new-run input[name="id"]', "bad id!")
    opened.click('#new-run button[type="submit"]')
    opened.wait_for_function("document.querySelector('#new-run-error').textContent !== ''")
    assert opened.text_content("#new-run-error") == "id is invalid: invalid localId: bad id!"
    assert api.bodies == [("/api/runs", {"flow": "etl", "input": {}, "id": "bad id!"})]
    # The one console line beyond the schedules probe is the browser reporting that 400.
    assert [e for e in log.errors if "/api/schedules" not in e] == [
        f"console: Failed to load resource: the server responded with a status of 400 (Bad Request) @ {api.url()}api/runs"
    ]


# -- the waterfall: pure layout -----------------------------------------------------------------------------


def _layout(page: Page, nodes: list[dict[str, Any]], now: int, expanded: list[str]) -> dict[str, Any]:
    return page.evaluate(
        "([nodes, now, expanded]) => waterfallLayout(nodes, now, new Set(expanded))", [nodes, now, expanded]
    )


def test_waterfall_layout_places_bars_on_a_whole_step_axis(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open(opened, api, "#/runs")
    nodes = DETAILS[FANOUT_RUN]["nodes"]

    layout = _layout(opened, nodes, NOW, [])
    # Span 32 s (T0 .. report's end) -> 10 s steps (the smallest giving <= 6 intervals); axis ends at 40 s.
    assert (layout["t0"], layout["t1"], layout["step"]) == (T0, T0 + 40_000, 10_000)
    assert [(t["left"], t["label"]) for t in layout["ticks"]] == [
        (0, "0 s"),
        (25, "10 s"),
        (50, "20 s"),
        (75, "30 s"),
        (100, "40 s"),
    ]
    bars = {r["id"]: (r["left"], r["width"], r["depth"], r["childCount"]) for r in layout["rows"]}
    # names 0-3 s; hello from names' end (3 s) to its aggregation (30 s); report from hello's settling (30 s,
    # although created at T0 with the run) to 32 s. Children stay hidden while hello is collapsed.
    assert bars == {"names": (0, 7.5, 0, 0), "hello": (7.5, 67.5, 0, 3), "report": (75, 5, 0, 0)}

    expanded = _layout(opened, nodes, NOW, ["hello"])
    assert [(r["id"], r["depth"], r["left"], r["width"]) for r in expanded["rows"]] == [
        ("names", 0, 0, 7.5),
        ("hello", 0, 7.5, 67.5),
        ("hello:0", 1, 7.5, 17.5),
        ("hello:1", 1, 7.5, 30),
        ("hello:2", 1, 7.5, 67.5),
        ("report", 0, 75, 5),
    ]
    _quiet(log)


def test_waterfall_layout_uses_api_times_marks_unstarted_nodes_and_ends_unfinished_ones_now(
    page: Opened, api: FakeApi
) -> None:
    opened, log = page
    _open(opened, api, "#/runs")

    failed = {r["id"]: r for r in _layout(opened, DETAILS[FAILED_RUN]["nodes"], NOW, [])["rows"]}
    # 9 s span -> 2 s steps, axis 10 s. load never started (SKIPPED): no bar, a marker where it settled (9 s).
    assert (failed["transform"]["left"], failed["transform"]["width"]) == (20, 70)
    assert (failed["audit"]["left"], failed["audit"]["width"]) == (20, 40)
    assert (failed["load"]["left"], failed["load"]["marker"]) == (None, 90)

    running = {r["id"]: r for r in _layout(opened, DETAILS[RUNNING_RUN]["nodes"], NOW, ["hello"])["rows"]}
    # Started 20 s before NOW: 5 s steps, axis 20 s. Unfinished nodes end at now; PENDING report has nothing.
    assert (running["hello"]["left"], running["hello"]["width"]) == (10, 90)
    assert (running["hello:1"]["left"], running["hello:1"]["width"]) == (10, 90)
    assert (running["report"]["left"], running["report"]["marker"]) == (None, None)

    # Explicit scheduled_at / finished_at win over the inference; scheduled_at null means never started.
    explicit = [
        {
            **DETAILS[FAILED_RUN]["nodes"][0],
            "scheduled_at": T0 + 1_000,
            "finished_at": T0 + 4_000,
            "created_at": T0,
            "updated_at": T0 + 8_000,
        },
        {
            **DETAILS[FAILED_RUN]["nodes"][1],
            "scheduled_at": None,
            "created_at": T0,
            "updated_at": T0 + 8_000,
            "state": "CANCELLED",
        },
    ]
    rows = {r["id"]: r for r in _layout(opened, explicit, NOW, [])["rows"]}
    # Span 8 s -> 2 s steps, axis 8 s.
    assert (rows["extract"]["left"], rows["extract"]["width"]) == (12.5, 37.5)
    assert (rows["transform"]["left"], rows["transform"]["marker"]) == (None, 100)
    _quiet(log)


def test_axis_steps_and_labels(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open(opened, api, "#/runs")
    steps = opened.evaluate(
        "spans => spans.map(axisStep)", [1, 7, 32_000, 61_000, 90_000, 3_600_000, 10 * 604_800_000]
    )
    assert steps == [1, 2, 10_000, 15_000, 15_000, 600_000, 2 * 604_800_000]
    labels = opened.evaluate(
        "cases => cases.map(([ms, step]) => fmtOffset(ms, step))",
        [
            [400, 200],
            [90_000, 15_000],
            [1_800_000, 600_000],
            [10_800_000, 3_600_000],
            [172_800_000, 86_400_000],
        ],
    )
    assert labels == ["400 ms", "90 s", "30 min", "3 h", "2 d"]
    _quiet(log)


# -- the waterfall: drawn -----------------------------------------------------------------------------------


def _box(page: Page, selector: str) -> FloatRect:
    # bounding_box() does not wait: a row drawn by the redraw a click starts may not be there yet.
    page.locator(selector).wait_for(state="visible")
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return box


def test_waterfall_bars_sit_on_the_time_axis_and_fan_out_children_expand(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open_run(opened, api, FANOUT_RUN)

    assert _wf_rows(opened) == ["names", "hello", "report"]
    ticks = opened.eval_on_selector_all("#run-waterfall .wf-tick", "t => t.map(x => x.textContent)")
    assert ticks == ["0 s", "10 s", "20 s", "30 s", "40 s"]
    track = _box(opened, '.wf-row[data-node="report"] .wf-track')
    report = _box(opened, '.wf-row[data-node="report"] .wf-bar')
    names = _box(opened, '.wf-row[data-node="names"] .wf-bar')
    lines = opened.eval_on_selector_all(
        "#run-waterfall .wf-line", "ls => ls.map(l => l.getBoundingClientRect().left)"
    )
    # report starts on the 30 s line and lasts 2 s (5 % of the axis); names starts on the 0 line.
    assert report["x"] == pytest.approx(lines[3], abs=1)
    assert report["width"] == pytest.approx(track["width"] * 0.05, abs=1)
    assert names["x"] == pytest.approx(lines[0], abs=1)
    assert names["x"] == pytest.approx(track["x"], abs=1)
    assert opened.get_attribute('.wf-row[data-node="report"] .wf-bar', "class") == "wf-bar bar-completed"
    assert opened.eval_on_selector_all("#run-legend .legend-item", "l => l.map(x => x.dataset.state)") == [
        "COMPLETED"
    ]

    toggle = opened.locator('.wf-row[data-node="hello"] .wf-toggle')
    assert toggle.get_attribute("aria-expanded") == "false"
    toggle.click()
    assert _wf_rows(opened) == ["names", "hello", "hello:0", "hello:1", "hello:2", "report"]
    assert opened.locator('.wf-row[data-node="hello"] .wf-toggle').get_attribute("aria-expanded") == "true"
    depths = opened.eval_on_selector_all(
        "#run-waterfall .wf-row[data-node]", "r => r.map(x => x.dataset.depth)"
    )
    assert depths == ["0", "0", "1", "1", "1", "0"]
    child = _box(opened, '.wf-row[data-node="hello:2"] .wf-bar')
    parent = _box(opened, '.wf-row[data-node="hello"] .wf-bar')
    assert (child["x"], child["width"]) == pytest.approx((parent["x"], parent["width"]), abs=1)

    opened.locator('.wf-row[data-node="hello"] .wf-toggle').click()
    assert _wf_rows(opened) == ["names", "hello", "report"]
    _quiet(log)


def test_unfinished_bars_reach_now_at_the_end_of_the_axis(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open_run(opened, api, RUNNING_RUN)
    opened.click('.wf-row[data-node="hello"] .wf-toggle')
    ticks = opened.eval_on_selector_all("#run-waterfall .wf-tick", "t => t.map(x => x.textContent)")
    assert ticks == ["0 s", "5 s", "10 s", "15 s", "20 s"]
    track = _box(opened, '.wf-row[data-node="hello:1"] .wf-track')
    for node in ("hello", "hello:1", "hello:2"):
        bar = _box(opened, f'.wf-row[data-node="{node}"] .wf-bar')
        assert bar["x"] + bar["width"] == pytest.approx(track["x"] + track["width"], abs=1), node
        assert bar["x"] == pytest.approx(track["x"] + track["width"] * 0.1, abs=1), node
    assert (
        opened.locator('.wf-row[data-node="report"] .wf-bar, .wf-row[data-node="report"] .wf-marker').count()
        == 0
    )
    assert opened.text_content('.wf-row[data-node="report"] .wf-dur') == "pending"
    assert opened.text_content('.wf-row[data-node="report"] .wf-track') == "pending: not started"
    _quiet(log)


def test_waterfall_colours_states_and_a_failed_run_shows_them_in_the_legend(
    page: Opened, api: FakeApi
) -> None:
    opened, log = page
    _open_run(opened, api, FAILED_RUN)
    legend = opened.eval_on_selector_all("#run-legend .legend-item", "l => l.map(x => x.dataset.state)")
    assert legend == ["COMPLETED", "FAILED", "SKIPPED"]
    assert opened.get_attribute('.wf-row[data-node="transform"] .wf-bar', "class") == "wf-bar bar-failed"
    assert opened.locator('.wf-row[data-node="load"] .wf-bar').count() == 0
    assert opened.get_attribute('.wf-row[data-node="load"] .wf-marker', "class") == "wf-marker bar-skipped"
    red = opened.eval_on_selector(
        '.wf-row[data-node="transform"] .wf-bar', "b => getComputedStyle(b).backgroundColor"
    )
    green = opened.eval_on_selector(
        '.wf-row[data-node="extract"] .wf-bar', "b => getComputedStyle(b).backgroundColor"
    )
    assert red != green
    _quiet(log)


def test_a_large_fan_out_shows_a_hundred_children_needing_attention_first(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open(opened, api, "#/runs")
    big = {
        "id": "big",
        "state": "COMPLETED",
        "container": True,
        "parent": None,
        "after": [],
        "position": 0,
        "created_at": T0,
        "updated_at": T0 + 10_000,
        "job_id": None,
        "child_run_id": None,
    }
    kids = [
        {
            **big,
            "id": f"big:{i}",
            "container": False,
            "parent": "big",
            "position": i + 1,
            "job_id": f"Hello#0:b{i}",
            "state": {103: "FAILED", 104: "STALLED"}.get(i, "COMPLETED"),
        }
        for i in range(105)
    ]
    rows = _layout(opened, [big, *kids], NOW, ["big"])["rows"]
    # 100 shown: the failed and the stalled child, then the first 98 others; all in position order.
    assert [r["id"] for r in rows] == ["big", *(f"big:{i}" for i in range(98)), "big:103", "big:104", None]
    assert (rows[-1]["more"], rows[-1]["counts"], rows[-1]["depth"]) == (5, [["COMPLETED", 5]], 1)

    text = opened.evaluate(
        """(nodes) => {
             const ui = { expanded: new Set(['big']), selected: null, onToggle() {}, onSelect() {} };
             return renderWaterfall(nodes, Date.now(), ui).querySelector('.wf-more').textContent;
           }""",
        [big, *kids],
    )
    assert text == "+5 moreCOMPLETED 5"
    _quiet(log)


def test_keyboard_focus_survives_a_toggle_and_the_auto_refresh(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open_run(opened, api, FANOUT_RUN)
    toggle = '.wf-row[data-node="hello"] .wf-toggle'
    opened.focus(toggle)
    opened.keyboard.press("Enter")
    assert _wf_rows(opened) == ["names", "hello", "hello:0", "hello:1", "hello:2", "report"]
    assert opened.evaluate(f"document.activeElement === document.querySelector('{toggle}')")

    # The 3 s auto-refresh redraws the detail with new elements; focus and the expanded group stay.
    opened.evaluate("document.querySelector('#run-detail').dataset.old = '1'")
    opened.clock.run_for(3_000)
    opened.wait_for_function(
        "document.querySelector('#run-detail') && !document.querySelector('#run-detail').dataset.old"
    )
    assert _wf_rows(opened) == ["names", "hello", "hello:0", "hello:1", "hello:2", "report"]
    assert opened.evaluate(f"document.activeElement === document.querySelector('{toggle}')")
    _quiet(log)


# -- the DAG ------------------------------------------------------------------------------------------------


def test_dag_layout_layers_columns_by_longest_dependency_chain(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open(opened, api, "#/runs")
    layout = opened.evaluate("nodes => dagLayout(nodes)", DETAILS[FAILED_RUN]["nodes"])
    # 168 x 54 cards, 56 px between columns, 16 between rows, 8 px padding.
    assert [(b["id"], b["layer"], b["row"], b["x"], b["y"]) for b in layout["boxes"]] == [
        ("extract", 0, 0, 8, 8),
        ("transform", 1, 0, 232, 8),
        ("audit", 1, 1, 232, 78),
        ("load", 2, 0, 456, 8),
    ]
    assert (layout["width"], layout["height"]) == (8 + 3 * 168 + 2 * 56 + 8, 8 + 2 * 54 + 16 + 8)
    assert [(e["from"], e["to"], e["d"]) for e in layout["edges"]] == [
        ("extract", "transform", "M176 35 C204 35 204 35 232 35"),
        ("extract", "audit", "M176 35 C204 35 204 105 232 105"),
        ("transform", "load", "M400 35 C428 35 428 35 456 35"),
        ("audit", "load", "M400 105 C428 105 428 35 456 35"),
    ]
    _quiet(log)


def test_dag_layout_orders_a_column_by_its_dependencies_and_drops_bad_edges(
    page: Opened, api: FakeApi
) -> None:
    opened, log = page
    _open(opened, api, "#/runs")

    def node(node_id: str, position: int, after: list[str], parent: str | None = None) -> dict[str, Any]:
        return {"id": node_id, "position": position, "after": after, "parent": parent}

    nodes = [
        node("a", 0, []),
        node("b", 1, []),
        node("c", 2, ["b", "b", "c", "ghost"]),  # duplicate, self and unknown dependencies are dropped
        node("d", 3, ["a"]),
        node("d:0", 4, [], parent="d"),  # a runtime child is not a card of its own
    ]
    layout = opened.evaluate("nodes => dagLayout(nodes)", nodes)
    # d follows a (row 0) and c follows b (row 1): d goes first in column 1 although c was declared first.
    assert [(b["id"], b["layer"], b["row"]) for b in layout["boxes"]] == [
        ("a", 0, 0),
        ("b", 0, 1),
        ("c", 1, 1),
        ("d", 1, 0),
    ]
    assert [(e["from"], e["to"]) for e in layout["edges"]] == [("b", "c"), ("a", "d")]
    _quiet(log)


def test_dag_picture_draws_cards_and_edges_and_selecting_a_card_opens_its_node(
    page: Opened, api: FakeApi
) -> None:
    opened, log = page
    _open_run(opened, api, FAILED_RUN)

    cards = opened.eval_on_selector_all(
        "#run-dag .dag-node", "g => g.map(x => [x.dataset.node, x.getAttribute('transform')])"
    )
    assert cards == [
        ["extract", "translate(8 8)"],
        ["transform", "translate(232 8)"],
        ["audit", "translate(232 78)"],
        ["load", "translate(456 8)"],
    ]
    edges = opened.eval_on_selector_all(
        "#run-dag path.dag-edge", "p => p.map(x => [x.dataset.from, x.dataset.to])"
    )
    assert edges == [["extract", "transform"], ["extract", "audit"], ["transform", "load"], ["audit", "load"]]
    assert opened.get_attribute("#dag-viewport", "data-width") == "632"
    assert "FAILED" in (opened.text_content('.dag-node[data-node="transform"] .dag-sub') or "")

    opened.click('.dag-node[data-node="transform"]')
    detail = opened.locator("#node-detail")
    assert detail.get_attribute("data-node") == "transform"
    assert opened.text_content("#node-error") == "SmtpError: mailbox full (third)"
    assert "selected" in (opened.get_attribute('.dag-node[data-node="transform"]', "class") or "")
    assert "selected" in (opened.get_attribute('.wf-row[data-node="transform"]', "class") or "")
    _quiet(log)


def test_fan_out_card_shows_children_progress(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open_run(opened, api, RUNNING_RUN)
    assert opened.evaluate("Date.now()") == NOW
    assert opened.text_content('.dag-node[data-node="hello"] .dag-sub') == "RUNNING \u00b7 Hello \u00b7 1/3"
    _quiet(log)


def test_a_fan_out_whose_children_failed_is_never_drawn_completed(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open_run(opened, api, FAILED_RUN)
    container = {"id": "each", "state": "COMPLETED", "container": True, "binding": "Hello"}
    kids = [
        {"id": f"each:{i}", "state": state, "parent": "each"} for i, state in enumerate(("FAILED", "STALLED"))
    ]
    shown = "([node, kids]) => [shownState(node, kids), dagCaption(node, kids)]"
    assert opened.evaluate(shown, [container, kids]) == ["FAILED", "Hello \u00b7 0/2 ok"]
    kids[0]["state"] = "COMPLETED"
    assert opened.evaluate(shown, [container, kids]) == ["PARTIAL", "Hello \u00b7 1/2 ok"]
    kids[1]["state"] = "COMPLETED"
    assert opened.evaluate(shown, [container, kids]) == ["COMPLETED", "Hello \u00b7 2/2 ok"]
    _quiet(log)


def test_a_failed_run_says_why_at_the_top(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open_run(opened, api, FAILED_RUN)
    assert opened.text_content("#run-failure") == (
        "Why it failed: node transform failed: SmtpError: mailbox full (third)"
    )
    _open_run(opened, api, FANOUT_RUN)
    assert opened.query_selector("#run-failure") is None
    _quiet(log)


# -- node detail, links, output ------------------------------------------------------------------------------


def test_node_detail_links_to_its_job(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open_run(opened, api, FAILED_RUN)
    opened.click('.wf-row[data-node="transform"] .wf-name')
    link = opened.locator("#node-detail .job-link")
    assert link.get_attribute("href") == "#/jobs/" + urllib.parse.quote(FAILED_ID, safe="")

    link.click()
    opened.wait_for_selector("#job-detail")
    assert opened.evaluate("location.hash") == "#/jobs/SendMail%230%3Afailedjob1"
    assert FAILED_ID in (opened.text_content("#job-detail") or "")
    _quiet(log)


def test_subflow_node_links_to_its_child_run_and_the_child_back_to_its_parent(
    page: Opened, api: FakeApi
) -> None:
    opened, log = page
    _open_run(opened, api, SUBFLOW_RUN)
    link = opened.locator('.wf-row[data-node="greet"] .run-link')
    assert link.get_attribute("href") == _route(FANOUT_RUN)
    assert opened.text_content('.dag-node[data-node="greet"] .dag-sub') == "COMPLETED \u00b7 subflow"

    link.click()
    opened.wait_for_selector(f'#run-detail[data-id="{FANOUT_RUN}"]')
    assert opened.evaluate("location.hash") == _route(FANOUT_RUN)
    assert opened.text_content("#run-parent") == f"{SUBFLOW_RUN} (node greet)"

    opened.click("#run-parent .run-link")
    opened.wait_for_selector(f'#run-detail[data-id="{SUBFLOW_RUN}"]')
    assert opened.evaluate("location.hash") == _route(SUBFLOW_RUN)
    _quiet(log)


def test_run_output_is_shown_when_the_api_gives_it(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open_run(opened, api, FANOUT_RUN)
    assert json.loads(opened.text_content("#run-output") or "") == {"greeted": 3}
    assert json.loads(opened.text_content("#run-input") or "") == {"names": ["a", "b", "c"]}

    opened.goto(api.url(_route(FAILED_RUN)))
    opened.wait_for_selector(f'#run-detail[data-id="{FAILED_RUN}"]')
    assert opened.locator("#run-output").count() == 0
    _quiet(log)


def _pending_reason(page: Page, run: dict[str, Any], nodes: list[dict[str, Any]], node_id: str) -> str:
    return page.evaluate(
        "([run, nodes, id]) => pendingReason(run, nodes, nodes.find((n) => n.id === id))",
        [run, nodes, node_id],
    )


def test_why_a_node_is_not_running(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open_run(opened, api, RUNNING_RUN)

    # A pending node: the dependencies the API says it waits on, with a fan-out's progress.
    opened.click('.wf-row[data-node="report"] .wf-name')
    assert opened.text_content("#node-why") == (
        "Why is it not running?Waiting on hello (RUNNING, 1 of 3 children settled)."
    )

    # A scheduled child: its job's explanation.
    opened.click('.wf-row[data-node="hello"] .wf-toggle')
    opened.click('.wf-row[data-node="hello:1"] .wf-name')
    opened.wait_for_function(
        "(document.querySelector('#node-why') || {}).textContent?.includes('Waits for job')"
    )
    assert "Waits for job Hello#0:runningjob1 of key user-1" in (opened.text_content("#node-why") or "")
    assert "/api/jobs/Hello%230%3Awaitingjob1/explain" in api.api_paths()

    # A completed node has nothing to explain.
    opened.click('.wf-row[data-node="names"] .wf-name')
    assert opened.text_content("#node-why") == ""
    _quiet(log)


def test_pending_reason_without_waiting_on_and_after_the_run_ended(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open(opened, api, "#/runs")
    run, nodes = DETAILS[RUNNING_RUN]["run"], DETAILS[RUNNING_RUN]["nodes"]
    older = [{k: v for k, v in n.items() if k != "waiting_on"} for n in nodes]  # an API without the key
    assert (
        _pending_reason(opened, run, older, "report")
        == "Waiting on hello (RUNNING, 1 of 3 children settled)."
    )
    settled = [{**n, "waiting_on": []} for n in nodes]
    assert _pending_reason(opened, run, settled, "report") == (
        "Its dependencies have settled: it starts at the run\u2019s next step."
    )
    failed = {**run, "state": "FAILED"}
    assert _pending_reason(opened, failed, nodes, "report") == (
        "The run is FAILED: this node will not start unless the run is resumed."
    )
    _quiet(log)


# -- retry and cancel -------------------------------------------------------------------------------------------


def test_retry_asks_for_confirmation_then_calls_the_retry_endpoint(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open_run(opened, api, FAILED_RUN)
    assert opened.locator("#run-cancel").is_disabled()

    opened.click("#run-retry")
    assert "Completed nodes keep their results" in (opened.text_content("#run-confirm") or "")
    opened.click("#run-confirm-no")
    assert opened.locator("#run-confirm").count() == 0
    assert _posts(api) == []

    opened.click("#run-retry")
    opened.click("#run-confirm-yes")
    opened.wait_for_function("document.querySelector('#status').textContent === 'Run resumed'")
    assert _posts(api) == ["/api/runs/etl%3Afailed1/retry"]
    assert opened.locator("#run-confirm").count() == 0
    _quiet(log)


def test_cancel_asks_for_confirmation_then_calls_the_cancel_endpoint(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open_run(opened, api, RUNNING_RUN)
    assert opened.locator("#run-retry").is_disabled()

    opened.click("#run-cancel")
    assert "jobs already running finish" in (opened.text_content("#run-confirm") or "")
    assert _posts(api) == []
    opened.click("#run-confirm-yes")
    opened.wait_for_function("document.querySelector('#status').textContent === 'Run cancelled'")
    assert _posts(api) == ["/api/runs/greetings%3Arunning1/cancel"]
    _quiet(log)


def test_completed_run_offers_neither_action(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open_run(opened, api, FANOUT_RUN)
    assert opened.locator("#run-retry").is_disabled()
    assert opened.locator("#run-cancel").is_disabled()
    _quiet(log)


# -- deep links -----------------------------------------------------------------------------------------------------


def test_deep_links_open_the_runs_tab_and_a_run_and_follow_the_view(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open(opened, api, "#/runs")
    opened.wait_for_selector(".run-row")
    assert opened.locator('[data-tab="runs"].active').count() == 1

    # View -> URL: opening a run from the list sets #/runs/<id>; closing it goes back to #/runs.
    opened.click(f'.run-row[data-id="{FAILED_RUN}"] .runs-col-id .run-link')
    opened.wait_for_selector(f'#run-detail[data-id="{FAILED_RUN}"]')
    assert opened.evaluate("location.hash") == _route(FAILED_RUN)
    opened.click("#modal-close")
    opened.wait_for_function("location.hash === '#/runs'")
    assert opened.locator("#modal").is_hidden()

    # URL -> view: a changed hash opens that run without a reload...
    opened.evaluate(f"location.hash = {json.dumps(_route(RUNNING_RUN))}")
    opened.wait_for_selector(f'#run-detail[data-id="{RUNNING_RUN}"]')

    # ...and so does loading the page on it.
    opened.goto("about:blank")
    opened.goto(api.url(_route(SUBFLOW_RUN)))
    opened.wait_for_selector(f'#run-detail[data-id="{SUBFLOW_RUN}"]')
    assert opened.locator('[data-tab="runs"].active').count() == 1
    _quiet(log)


# -- narrow screens --------------------------------------------------------------------------------------------------


@pytest.fixture
def narrow(browser: Browser) -> Iterator[Opened]:
    context = browser.new_context(viewport={"width": 420, "height": 900})
    opened = context.new_page()
    log = ConsoleLog()
    log.attach(opened)
    try:
        yield opened, log
    finally:
        context.close()


def _page_width(page: Page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


def test_runs_tab_and_detail_fit_420_px(narrow: Opened, api: FakeApi) -> None:
    opened, log = narrow
    _open(opened, api, "#/runs")
    opened.wait_for_selector(".run-row")
    assert _page_width(opened) <= 420
    # The ID column folds under the flow name.
    assert opened.locator(".runs-col-id").first.is_hidden()
    assert opened.locator(f'.run-row[data-id="{FAILED_RUN}"] .runs-narrow-id .run-link').is_visible()

    opened.goto(api.url(_route(FANOUT_RUN)))
    opened.wait_for_selector(f'#run-detail[data-id="{FANOUT_RUN}"]')
    opened.click('.wf-row[data-node="hello"] .wf-toggle')
    box = _box(opened, ".modal-box")
    assert box["x"] >= 0
    assert box["x"] + box["width"] <= 420
    assert opened.eval_on_selector(".modal-box", "b => b.scrollWidth <= b.clientWidth")
    # Every bar stays inside its track, and the last tick's label inside the waterfall.
    inside = opened.eval_on_selector_all(
        "#run-waterfall .wf-bar",
        """bars => bars.every((b) => {
             const t = b.parentElement.getBoundingClientRect(), r = b.getBoundingClientRect();
             return r.left >= t.left - 0.5 && r.right <= t.right + 0.5;
           })""",
    )
    assert inside
    wf = _box(opened, "#run-waterfall")
    last = _box(opened, "#run-waterfall .wf-tick.last")
    assert last["x"] + last["width"] <= wf["x"] + wf["width"]
    # The DAG is fitted inside its own box rather than widening the page (test_dag_zoom_browser.py).
    dag = _box(opened, ".dag-viewport")
    assert dag["x"] + dag["width"] <= 420
    _quiet(log)
