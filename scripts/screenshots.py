"""Screenshots of every dashboard view at desktop (1280 px) and phone (420 px) width.

    python3 -m uv run --frozen python scripts/screenshots.py [--out DIR] [--url URL --token TOKEN]

Without ``--url`` it serves the dashboard over the browser tests' fake REST API (tests/e2e/fake_api.py), so
the pictures are the same on every machine; with ``--url`` (e.g. a running ``tsumugi dev``) it signs in
with ``--token`` and shows that server's data (job views then need ``--job`` ids). PNGs go to ``--out``
(default ``.tsumugi/screens``, not committed). Drives Debian's Chromium through Playwright, as the tests do.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the fake API of the browser tests: tests.e2e

from playwright.sync_api import Page  # noqa: E402

from tests.e2e.fake_api import (  # noqa: E402
    CANCELLED_ID,
    DELAYED_ID,
    FAILED_ID,
    NOW,
    SCHEDULED_ID,
    FakeApi,
    serve,
)
from tests.e2e.fake_runs import FAILED_RUN, FANOUT_RUN, WIDE_RUN  # noqa: E402
from tests.e2e.fake_schedules import FakeSchedules  # noqa: E402
from tests.e2e.playwright_chromium import launch_chromium  # noqa: E402

WIDTHS = {"desktop": (1280, 900), "phone": (420, 860)}


def _job(job_id: str) -> str:
    return "#/jobs/" + urllib.parse.quote(job_id, safe="")


def views(jobs: dict[str, str], runs: dict[str, str]) -> dict[str, str]:
    """Name -> hash route of every view to capture."""
    found = {
        "jobs": "#/jobs",
        "bindings": "#/bindings",
        "metrics": "#/metrics",
        "schedules": "#/schedules",
        "runs": "#/runs",
    }
    found.update({f"job-{name}": _job(job_id) for name, job_id in jobs.items()})
    found.update(
        {f"run-{name}": "#/runs/" + urllib.parse.quote(run_id, safe="") for name, run_id in runs.items()}
    )
    return found


def _settle(page: Page, route: str) -> None:
    # Wait for what each view draws last; the refresh loop is paused so the picture is stable.
    page.wait_for_function("document.querySelector('#view').children.length > 0")
    if route.startswith("#/jobs/"):
        page.wait_for_selector("#job-detail")
        if page.locator("#job-detail .badge.st-scheduled").count():
            page.wait_for_selector("#job-explain h3")
    elif route == "#/metrics":
        page.wait_for_selector("#metrics-table, #metrics-empty")
    elif route == "#/bindings":
        page.wait_for_selector(".binding-card")
    elif route == "#/schedules":
        page.wait_for_selector(".schedule-row, #schedules-empty, .empty")
    elif route == "#/runs":
        page.wait_for_selector(".run-row, .empty")
    elif route.startswith("#/runs/"):
        page.wait_for_selector("#run-waterfall")


def capture(
    base_url: str,
    out: Path,
    jobs: dict[str, str],
    runs: dict[str, str],
    token: str | None,
    now_ms: int | None = None,
) -> list[Path]:
    """Every view at every width; returns the PNG paths. ``now_ms``: the pages' clock (the fake API's jobs,
    runs and schedules are dated around its own NOW; without it every time read "335 d ago")."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with launch_chromium() as browser:
        for width_name, (width, height) in WIDTHS.items():
            context = browser.new_context(viewport={"width": width, "height": height})
            clocked = False
            if token:
                # Sign in as the page does (ADR-0064): the server's HttpOnly session cookie lands in the context.
                signed = context.request.post(base_url.rstrip("/") + "/api/session", data={"token": token})
                if not signed.ok:
                    raise SystemExit(f"sign-in to {base_url} failed: HTTP {signed.status}")
            shots = [*views(jobs, runs).items(), ("new-job", "#/jobs")]
            # A fresh page per view, so each starts from its own route. The fake's metrics are laid over the
            # wall clock, everything else over its NOW; the clock is the context's, so metrics go first.
            shots.sort(key=lambda shot: shot[1] != "#/metrics")
            for name, route in shots:
                if now_ms is not None and route != "#/metrics" and not clocked:
                    context.clock.install(time=now_ms / 1000)
                    clocked = True
                page = context.new_page()
                page.add_init_script("localStorage.setItem('tsumugi:refresh', '0')")
                page.goto(base_url.rstrip("/") + "/" + route)
                _settle(page, route)
                if name == "new-job":
                    page.wait_for_selector(".job-row")
                    page.click("text=+ Job")
                elif route.startswith(("#/jobs/", "#/runs/")):
                    # The detail is a fixed overlay: grow the window to the dialog so the picture shows it all.
                    tall = page.evaluate("document.querySelector('.modal-box').scrollHeight + 100")
                    page.set_viewport_size({"width": width, "height": max(height, int(tall))})
                path = out / f"{name}-{width_name}.png"
                page.screenshot(path=str(path), full_page=True)
                written.append(path)
                page.close()
            context.close()
    return written


@contextlib.contextmanager
def _fake() -> Iterator[str]:
    with serve(FakeApi(flows=True, schedules=FakeSchedules())) as api:
        yield api.url()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=REPO / ".tsumugi" / "screens")
    parser.add_argument("--url", help="a running scheduler (default: the fake API)")
    parser.add_argument("--token", help="the API token for --url")
    parser.add_argument("--job", action="append", default=[], help="name=id of a job to show (with --url)")
    parser.add_argument("--run", action="append", default=[], help="name=id of a run to show (with --url)")
    args = parser.parse_args(argv)
    if args.url:
        jobs = dict(item.split("=", 1) for item in args.job)
        runs = dict(item.split("=", 1) for item in args.run)
        written = capture(args.url, args.out, jobs, runs, args.token)
    else:
        jobs = {
            "failed": FAILED_ID,
            "waiting": SCHEDULED_ID,
            "delayed": DELAYED_ID,
            "cancelled": CANCELLED_ID,
        }
        with _fake() as url:
            shown_runs = {"fan-out": FANOUT_RUN, "failed": FAILED_RUN, "wide": WIDE_RUN}
            written = capture(url, args.out, jobs, shown_runs, None, now_ms=NOW)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
