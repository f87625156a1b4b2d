"""Browser tests of the dashboard: a real headless Chromium against a fake REST API on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

from tests.e2e.playwright_chromium import ConsoleLog, launch_chromium


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: end-to-end tests (real browser or build tools)")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Debian Chromium (Playwright) per test module.

    Not per session: while Playwright's sync API runs, its event loop is the thread's running loop, and every
    asyncio test collected after the browser tests (tests/integration, tests/runtime...) would fail with
    "Cannot run the event loop while another loop is running".
    """
    with launch_chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Browser) -> Iterator[tuple[Page, ConsoleLog]]:
    """A fresh browser context and page (desktop size) with its console errors recorded."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    log = ConsoleLog()
    log.attach(opened)
    try:
        yield opened, log
    finally:
        context.close()
