"""Screenshots of the runs tab and a run's detail at 1280 and 420 px, against the fake API's runs.

Usage: ``python3 -m uv run --frozen python tests/e2e/screens_runs.py [out_dir]`` (default /work/wt/notes/screens).
Writes runs-list-<width>.png, runs-detail-<width>.png (the fan-out run, its fan-out expanded and a node
selected), runs-failed-<width>.png (retry being confirmed) and runs-running-<width>.png (a pending node's
"why is it not running"). The PNGs are for looking at, not committed.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: tests.e2e

from tests.e2e.fake_api import NOW, FakeApi, serve
from tests.e2e.fake_runs import FAILED_RUN, FANOUT_RUN, RUNNING_RUN
from tests.e2e.playwright_chromium import launch_chromium


def _route(run_id: str) -> str:
    return "#/runs/" + run_id.replace(":", "%3A")


def main(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    saved: list[Path] = []
    with serve(FakeApi(flows=True)) as api, launch_chromium() as browser:
        for width in (1280, 420):
            context = browser.new_context(viewport={"width": width, "height": 900})
            page = context.new_page()
            page.clock.install(time=(NOW - 1_000) / 1000)  # Playwright takes seconds
            page.clock.pause_at(NOW / 1000)
            page.goto(api.url("#/runs"))
            page.wait_for_selector(".run-row")
            saved.append(out / f"runs-list-{width}.png")
            page.screenshot(path=saved[-1], full_page=True)

            page.set_viewport_size({"width": width, "height": 1900})
            page.goto(api.url(_route(FANOUT_RUN)))
            page.wait_for_selector("#run-waterfall")
            page.click('.wf-row[data-node="hello"] .wf-toggle')
            page.click('.wf-row[data-node="hello:1"] .wf-name')
            page.wait_for_selector("#node-detail")
            saved.append(out / f"runs-detail-{width}.png")
            page.screenshot(path=saved[-1], full_page=True)

            page.goto(api.url(_route(FAILED_RUN)))
            page.wait_for_selector("#run-waterfall")
            page.click('.dag-node[data-node="transform"]')
            page.click("#run-retry")
            saved.append(out / f"runs-failed-{width}.png")
            page.screenshot(path=saved[-1], full_page=True)

            page.goto(api.url(_route(RUNNING_RUN)))
            page.wait_for_selector(f'#run-detail[data-id="{RUNNING_RUN}"]')
            page.click('.wf-row[data-node="hello"] .wf-toggle')
            page.click('.wf-row[data-node="report"] .wf-name')
            saved.append(out / f"runs-running-{width}.png")
            page.screenshot(path=saved[-1], full_page=True)
            context.close()
    return saved


if __name__ == "__main__":
    for path in main(Path(sys.argv[1] if len(sys.argv) > 1 else "/work/wt/notes/screens")):
        print(path)
