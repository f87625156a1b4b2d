"""Playwright driving Debian's Chromium (``/usr/bin/chromium``); Playwright's own browser download is never used.

`launch_chromium` launches it with browser.py's flags (`CHROMIUM_FLAGS`); the ``browser`` and ``page`` fixtures
in conftest use it.
A page fixture records console errors and failed requests so a test can assert a quiet console.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from playwright.sync_api import Browser, ConsoleMessage, Page, Playwright, sync_playwright

from tests.e2e.browser import CHROMIUM, CHROMIUM_FLAGS, require_chromium


@contextmanager
def launch_chromium() -> Iterator[Browser]:
    """A headless Debian Chromium under Playwright, closed on exit."""
    require_chromium()
    playwright: Playwright
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS, headless=True
        )
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class ConsoleLog:
    """Console errors and page errors seen by a page, for 'no console errors in normal use' checks."""

    errors: list[str] = field(default_factory=list)

    def attach(self, page: Page) -> None:
        def on_console(message: ConsoleMessage) -> None:
            if message.type == "error":
                self.errors.append(f"console: {message.text} @ {message.location.get('url', '')}")

        page.on("console", on_console)
        page.on("pageerror", lambda error: self.errors.append(f"pageerror: {error}"))
