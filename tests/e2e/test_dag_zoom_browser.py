"""Zooming and panning a run's DAG picture (pan_zoom.js, ADR-0096) in headless Chromium.

The wide run (fake_runs.WIDE_RUN: 4 columns, 37 rows, 856 x 2590 px at 1x) cannot fit its panel at its natural
size; the failed run (632 x 140) can. The view is the layer's transform, ``translate(x y) scale(k)``: a picture
point p is drawn at p * k + (x, y) in the SVG, whose origin is the viewport's content box.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.fake_api import NOW, FakeApi, serve
from tests.e2e.fake_runs import FAILED_RUN, WIDE_RUN
from tests.e2e.playwright_chromium import ConsoleLog

pytestmark = pytest.mark.e2e

Opened = tuple[Page, ConsoleLog]
View = tuple[float, float, float]  # k, x, y

WIDE = (856, 2590)  # 8 + 4 * 168 + 3 * 56 + 8, 8 + 37 * 54 + 36 * 16 + 8
SMALL = (632, 140)
LAYER = "#run-dag .dag-layer"
PORT = "#dag-viewport"


@pytest.fixture
def api() -> Iterator[FakeApi]:
    with serve(FakeApi(flows=True)) as served:
        yield served


def _open_run(page: Page, api: FakeApi, run_id: str) -> None:
    """The run's detail drawn once: from the loaded runs tab (a deep link loads it twice, the page's start
    and its first refresh, and a test must not hold elements the second drawing replaces)."""
    # Paused clock: no auto-refresh fires unless a test runs the clock on.
    page.clock.install(time=(NOW - 1_000) / 1000)
    page.clock.pause_at(NOW / 1000)
    page.goto(api.url("#/runs"))
    expect(page.locator(".run-row").first).to_be_visible()
    page.evaluate("route => { location.hash = route; }", "#/runs/" + urllib.parse.quote(run_id, safe=""))
    expect(page.locator(f'#run-detail[data-id="{run_id}"]')).to_be_visible()
    expect(page.locator(PORT)).to_have_attribute("data-fitted", "true")
    page.eval_on_selector(PORT, "p => p.scrollIntoView({ block: 'center' })")


def _quiet(log: ConsoleLog) -> None:
    # The only expected console line: the feature probe's 501 from /api/schedules (no schedules in the fake).
    assert [e for e in log.errors if not ("status of 501" in e and "/api/schedules" in e)] == []


def _view(page: Page) -> View:
    transform = page.get_attribute(LAYER, "transform") or ""
    match = re.fullmatch(r"translate\((\S+) (\S+)\) scale\((\S+)\)", transform)
    assert match, transform
    return float(match[3]), float(match[1]), float(match[2])


def _raw(page: Page) -> str:
    return page.get_attribute(LAYER, "transform") or ""


def _changed(page: Page, before: str) -> View:
    """Waits for the transform to leave `before` (input events arrive asynchronously), then reads it."""
    expect(page.locator(LAYER)).not_to_have_attribute("transform", before)
    return _view(page)


def _port(page: Page) -> dict[str, float]:
    """The viewport's content box on the page (where the SVG's origin is) and its size."""
    return page.eval_on_selector(
        PORT,
        """p => { const r = p.getBoundingClientRect();
                  return { left: r.left + p.clientLeft, top: r.top + p.clientTop,
                           width: p.clientWidth, height: p.clientHeight }; }""",
    )


def _fitted(pic: tuple[int, int], port: dict[str, float]) -> View:
    k = min(1, port["width"] / pic[0], port["height"] / pic[1])
    return k, (port["width"] - pic[0] * k) / 2, (port["height"] - pic[1] * k) / 2


def _close(a: View, b: View, places: float = 0.01) -> bool:
    return all(abs(p - q) <= places for p, q in zip(a, b, strict=True))


def _picture_point(view: View, port: dict[str, float], page_x: float, page_y: float) -> tuple[float, float]:
    k, x, y = view
    return (page_x - port["left"] - x) / k, (page_y - port["top"] - y) / k


# -- the pure part ------------------------------------------------------------------------------------------


def test_fit_zoom_and_clamp_arithmetic(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open_run(opened, api, FAILED_RUN)
    got: dict[str, Any] = opened.evaluate(
        """() => {
             const big = { width: 1000, height: 1000 }, port = { width: 500, height: 400 };
             return {
               fitBig: pzFit(big, port),
               fitSmall: pzFit({ width: 200, height: 100 }, port),
               zoom: pzZoomAt({ k: 1, x: 0, y: 0 }, 2, 100, 50, big, port),
               tooFar: pzZoomAt({ k: 1, x: 0, y: 0 }, 10, 0, 0, big, port).k,
               tooNear: pzZoomAt({ k: 1, x: 0, y: 0 }, 0.01, 0, 0, big, port).k,
               tiny: pzLimits({ width: 100, height: 100000 }, port).min,
               panned: pzClamp({ k: 1, x: 900, y: -5000 }, big, port),
               smallStays: pzClamp({ k: 1, x: -60, y: 395 }, { width: 30, height: 20 }, port),
               heights: [pzPortHeight(big, 500, 900), pzPortHeight({ width: 632, height: 70 }, 400, 900),
                         pzPortHeight(big, 2000, 900), pzPortHeight(big, 2000, 400)],
             };
           }"""
    )
    # Whole and centred; never enlarged past 1x.
    assert got["fitBig"] == {"k": 0.4, "x": 50, "y": 0}
    assert got["fitSmall"] == {"k": 1, "x": 150, "y": 150}
    # Zooming 2x at (100, 50) keeps the picture point under it, (100, 50), where it was.
    assert got["zoom"] == {"k": 2, "x": -100, "y": -50}
    # 0.2x-4x, but down to the fitted scale when the whole picture needs less.
    assert (got["tooFar"], got["tooNear"], got["tiny"]) == (4, 0.2, 0.004)
    # At least 48 px stay in view (all of a smaller picture).
    assert got["panned"] == {"k": 1, "x": 500 - 48, "y": 48 - 1000}
    assert got["smallStays"] == {"k": 1, "x": 0, "y": 400 - 20}
    # The panel: the picture's height at its fitted-to-width scale, 140 to 480 px (70% of a short window).
    assert got["heights"] == [480, 140, 480, 280]
    _quiet(log)


# -- starting fitted, buttons, keys, wheel -------------------------------------------------------------------


def test_the_picture_starts_fitted_and_a_small_one_keeps_its_natural_size(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open_run(opened, api, WIDE_RUN)
    port = _port(opened)
    assert port["height"] == 480  # the panel's tallest
    fitted = _fitted(WIDE, port)
    assert _close(_view(opened), fitted, 0.005)
    assert fitted[0] < 0.2  # the whole picture needs less than the 0.2x floor
    assert opened.text_content("#dag-zoom-level") == f"{round(fitted[0] * 100)}%"
    # Every card is inside the viewport.
    inside = opened.eval_on_selector_all(
        "#run-dag .dag-node",
        """(cards) => { const p = document.querySelector('#dag-viewport').getBoundingClientRect();
             return cards.every((c) => { const r = c.getBoundingClientRect();
               return r.left >= p.left && r.right <= p.right && r.top >= p.top && r.bottom <= p.bottom; }); }""",
    )
    assert inside

    _open_run(opened, api, FAILED_RUN)
    port = _port(opened)
    assert port["height"] == SMALL[1]
    assert _close(_view(opened), (1, (port["width"] - SMALL[0]) / 2, 0))
    assert opened.text_content("#dag-zoom-level") == "100%"
    _quiet(log)


def test_buttons_zoom_about_the_centre_within_bounds_and_fit_restores_the_view(
    page: Opened, api: FakeApi
) -> None:
    opened, log = page
    _open_run(opened, api, WIDE_RUN)
    port = _port(opened)
    start, raw = _view(opened), _raw(opened)
    centre = (port["left"] + port["width"] / 2, port["top"] + port["height"] / 2)
    point = _picture_point(start, port, *centre)

    opened.click("#dag-zoom-in")
    zoomed = _changed(opened, raw)
    assert zoomed[0] == pytest.approx(start[0] * 1.25, abs=1e-4)
    assert _picture_point(zoomed, port, *centre) == pytest.approx(point, abs=0.05)
    assert opened.text_content("#dag-zoom-level") == f"{round(zoomed[0] * 100)}%"
    assert opened.get_attribute(PORT, "data-fitted") == "false"

    for _ in range(16):
        opened.click("#dag-zoom-in")
    expect(opened.locator("#dag-zoom-level")).to_have_text("400%")
    assert _view(opened)[0] == 4

    opened.click("#dag-fit")
    expect(opened.locator(LAYER)).to_have_attribute("transform", raw)
    assert opened.get_attribute(PORT, "data-fitted") == "true"

    opened.click("#dag-zoom-out")  # below 0.2x only as far as the fitted scale
    expect(opened.locator("#dag-zoom-level")).to_have_text(f"{round(start[0] * 100)}%")
    assert _raw(opened) == raw
    _quiet(log)


def test_keys_zoom_pan_and_fit_when_the_picture_has_focus(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open_run(opened, api, WIDE_RUN)
    start, raw = _view(opened), _raw(opened)
    scrolled = opened.evaluate("document.querySelector('.modal').scrollTop")
    opened.focus(PORT)

    opened.keyboard.type("+")
    k, x, y = _changed(opened, raw)
    assert k == pytest.approx(start[0] * 1.25, abs=1e-4)
    opened.keyboard.press("=")
    assert _view(opened)[0] == pytest.approx(start[0] * 1.25**2, abs=1e-4)
    opened.keyboard.press("-")
    assert _view(opened) == pytest.approx((k, x, y), abs=0.02)
    opened.keyboard.press("ArrowRight")  # the picture moves left, as the view moves right
    assert _view(opened) == pytest.approx((k, x - 48, y), abs=0.02)
    opened.keyboard.press("ArrowDown")
    opened.keyboard.press("Shift+ArrowLeft")
    assert _view(opened) == pytest.approx((k, x - 48 + 192, y - 48), abs=0.02)
    opened.keyboard.press("0")
    assert _raw(opened) == raw
    assert opened.get_attribute(PORT, "data-fitted") == "true"
    # Keys with ctrl are the browser's (its own zoom); the arrows did not scroll the page.
    opened.keyboard.press("Control+-")
    assert _raw(opened) == raw
    assert opened.evaluate("document.querySelector('.modal').scrollTop") == scrolled
    _quiet(log)


def test_the_wheel_and_a_trackpad_pinch_zoom_around_the_pointer_without_scrolling(
    page: Opened, api: FakeApi
) -> None:
    opened, log = page
    _open_run(opened, api, WIDE_RUN)
    port = _port(opened)
    scrolled = opened.evaluate("document.querySelector('.modal').scrollTop")
    # On the parts' column, near the top; whole pixels, as a mouse event's clientX / clientY are.
    at = (round(port["left"] + port["width"] * 0.5 + 20), round(port["top"] + 60))
    opened.mouse.move(*at)
    start, raw = _view(opened), _raw(opened)
    point = _picture_point(start, port, *at)

    opened.mouse.wheel(0, -100)  # one notch towards the screen: in by 2^0.2
    zoomed = _changed(opened, raw)
    assert zoomed[0] == pytest.approx(start[0] * 2**0.2, abs=1e-4)
    assert _picture_point(zoomed, port, *at) == pytest.approx(point, abs=0.05)

    opened.keyboard.down("Control")  # what a trackpad pinch sends: small deltas, ctrlKey set
    before = _raw(opened)
    opened.mouse.wheel(0, -10)
    opened.keyboard.up("Control")
    pinched = _changed(opened, before)
    assert pinched[0] == pytest.approx(zoomed[0] * 2**0.1, abs=1e-4)
    assert _picture_point(pinched, port, *at) == pytest.approx(point, abs=0.05)

    before = _raw(opened)
    opened.mouse.wheel(0, 100)
    assert _changed(opened, before)[0] == pytest.approx(start[0] * 2**0.1, abs=1e-4)
    assert opened.evaluate("document.querySelector('.modal').scrollTop") == scrolled
    _quiet(log)


def test_a_safari_trackpad_pinch_zooms_around_the_pointer(page: Opened, api: FakeApi) -> None:
    # Chromium has no gesture events: these are built as Safari sends them (scale since the gesture began).
    opened, log = page
    _open_run(opened, api, WIDE_RUN)
    port = _port(opened)
    at = (round(port["left"] + port["width"] * 0.5 + 20), round(port["top"] + 60))
    start, raw = _view(opened), _raw(opened)
    point = _picture_point(start, port, *at)
    cancelled = opened.eval_on_selector(
        PORT,
        """(p, [x, y]) => ['gesturestart', 'gesturechange', 'gesturechange'].map((type, i) => {
             const event = Object.assign(new Event(type, { cancelable: true }), { scale: 1 + i, clientX: x, clientY: y });
             p.dispatchEvent(event);
             return event.defaultPrevented;
           })""",
        list(at),
    )
    assert cancelled == [True, True, True]  # the page itself does not zoom
    zoomed = _changed(opened, raw)
    assert zoomed[0] == pytest.approx(start[0] * 3, abs=1e-4)  # the last scale, 3, from where it began
    assert _picture_point(zoomed, port, *at) == pytest.approx(point, abs=0.05)
    _quiet(log)


# -- dragging and clicking ------------------------------------------------------------------------------------


def _centre(page: Page, selector: str) -> tuple[float, float]:
    box = page.locator(selector).bounding_box()
    assert box
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def test_a_drag_pans_without_opening_the_node_and_a_click_opens_it(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open_run(opened, api, FAILED_RUN)
    card = '.dag-node[data-node="transform"]'
    start, raw = _view(opened), _raw(opened)
    x, y = _centre(opened, card)

    opened.mouse.move(x, y)
    opened.mouse.down()
    opened.mouse.move(x - 30, y + 10, steps=3)
    opened.mouse.move(x - 60, y + 20, steps=3)
    opened.mouse.up()
    assert _changed(opened, raw) == pytest.approx((1, start[1] - 60, start[2] + 20), abs=0.01)
    assert opened.locator("#node-detail").count() == 0
    assert "selected" not in (opened.get_attribute(card, "class") or "")

    # A wobble under 4 px is still a click; the view survives the redraw the selection makes.
    moved = _raw(opened)
    x, y = _centre(opened, card)
    opened.mouse.move(x, y)
    opened.mouse.down()
    opened.mouse.move(x + 2, y + 1)
    opened.mouse.up()
    expect(opened.locator("#node-detail")).to_have_attribute("data-node", "transform")
    assert "selected" in (opened.get_attribute(card, "class") or "")
    assert _raw(opened) == moved
    _quiet(log)


def test_the_view_survives_the_auto_refresh_and_a_resize_until_fit(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open_run(opened, api, WIDE_RUN)
    raw = _raw(opened)
    opened.focus(PORT)
    opened.keyboard.press("=")
    opened.keyboard.press("ArrowDown")
    moved = _changed(opened, raw)

    # The 3 s auto-refresh redraws the detail with new elements: same view, focus kept.
    opened.evaluate("document.querySelector('#run-detail').dataset.old = '1'")
    opened.clock.run_for(3_000)
    expect(opened.locator("#run-detail[data-old]")).to_have_count(0)
    expect(opened.locator("#run-detail")).to_have_count(1)
    assert _view(opened) == moved
    assert opened.evaluate("document.activeElement.id") == "dag-viewport"

    # A narrower window leaves a moved view alone; Fit fits the new width.
    opened.set_viewport_size({"width": 900, "height": 900})
    narrower = _port(opened)
    assert narrower["width"] < 1000
    assert _view(opened)[0] == moved[0]
    opened.click("#dag-fit")
    assert _close(_view(opened), _fitted(WIDE, narrower), 0.005)

    # A fitted view stays fitted as the window changes.
    before = _raw(opened)
    opened.set_viewport_size({"width": 1280, "height": 900})
    _changed(opened, before)
    assert _close(_view(opened), _fitted(WIDE, _port(opened)), 0.005)
    _quiet(log)


def test_keyboard_focus_on_a_card_out_of_view_brings_it_into_view(page: Opened, api: FakeApi) -> None:
    opened, log = page
    _open_run(opened, api, WIDE_RUN)
    opened.focus(PORT)
    for _ in range(8):
        opened.keyboard.press("=")  # 0.19 * 1.25^8: about 1.1x, the report card far off to the right
    card = '.dag-node[data-node="report"]'
    outside = opened.eval_on_selector(
        card,
        "c => { const p = document.querySelector('#dag-viewport').getBoundingClientRect(), r = c.getBoundingClientRect();"
        " return r.right > p.right || r.bottom > p.bottom || r.left < p.left || r.top < p.top; }",
    )
    assert outside
    opened.keyboard.press("Tab")  # into the cards: the first, then focus the report as a keyboard user would
    opened.focus(card)
    inside = opened.eval_on_selector(
        card,
        "c => { const p = document.querySelector('#dag-viewport').getBoundingClientRect(), r = c.getBoundingClientRect();"
        " return r.left >= p.left + 7 && r.right <= p.right - 7 && r.top >= p.top + 7 && r.bottom <= p.bottom - 7; }",
    )
    assert inside
    _quiet(log)


# -- a phone ------------------------------------------------------------------------------------------------


@pytest.fixture
def phone(browser: Browser) -> Iterator[tuple[Page, ConsoleLog, Any]]:
    context = browser.new_context(viewport={"width": 420, "height": 900}, has_touch=True)
    opened = context.new_page()
    log = ConsoleLog()
    log.attach(opened)
    try:
        yield opened, log, context.new_cdp_session(opened)
    finally:
        context.close()


def test_at_420_px_touch_drags_and_pinches_and_the_page_never_scrolls_sideways(
    phone: tuple[Page, ConsoleLog, Any], api: FakeApi
) -> None:
    opened, log, cdp = phone
    _open_run(opened, api, WIDE_RUN)
    assert opened.evaluate("document.documentElement.scrollWidth") <= 420
    box = opened.locator(PORT).bounding_box()
    assert box
    assert box["x"] >= 0
    assert box["x"] + box["width"] <= 420
    port = _port(opened)
    start, raw = _view(opened), _raw(opened)
    assert _close(start, _fitted(WIDE, port), 0.005)

    def touch(kind: str, points: list[tuple[float, float]]) -> None:
        # Real touches through the browser's input pipeline (touch-action applies), not synthetic events.
        cdp.send(
            "Input.dispatchTouchEvent",
            {"type": kind, "touchPoints": [{"x": x, "y": y, "id": i} for i, (x, y) in enumerate(points)]},
        )

    cx, cy = port["left"] + port["width"] / 2, port["top"] + port["height"] / 2
    touch("touchStart", [(cx, cy)])
    for i in range(1, 6):
        touch("touchMove", [(cx + 10 * i, cy + 6 * i)])
    touch("touchEnd", [])
    dragged = _changed(opened, raw)
    assert dragged == pytest.approx((start[0], start[1] + 50, start[2] + 30), abs=0.01)

    point = _picture_point(dragged, port, cx, cy)
    before = _raw(opened)
    touch("touchStart", [(cx - 20, cy), (cx + 20, cy)])
    for i in range(1, 6):
        touch("touchMove", [(cx - 20 - 10 * i, cy), (cx + 20 + 10 * i, cy)])  # 40 px apart -> 140 px
    touch("touchEnd", [])
    pinched = _changed(opened, before)
    assert pinched[0] == pytest.approx(dragged[0] * 3.5, abs=1e-3)
    assert _picture_point(pinched, port, cx, cy) == pytest.approx(point, abs=0.1)
    assert opened.evaluate("document.documentElement.scrollWidth") <= 420
    assert opened.eval_on_selector(".modal-box", "b => b.scrollWidth <= b.clientWidth")

    # A tap on a card still opens it.
    opened.click("#dag-fit")
    opened.tap('.dag-node[data-node="source"]')
    expect(opened.locator("#node-detail")).to_have_attribute("data-node", "source")
    _quiet(log)
