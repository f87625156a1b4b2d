"""Playwright drives Debian's Chromium against the dashboard served by the fake API: a click changes the view."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tests.e2e.fake_api import FakeApi, serve
from tests.e2e.playwright_chromium import ConsoleLog

pytestmark = pytest.mark.e2e


def test_clicking_the_bindings_tab_shows_the_bindings_view(page: tuple[Page, ConsoleLog]) -> None:
    opened, log = page
    with serve(FakeApi()) as api:
        opened.goto(api.url())
        opened.wait_for_selector(".job-row")
        opened.click('[data-tab="bindings"]')
        opened.wait_for_function("location.hash.startsWith('#/bindings')")
        assert opened.locator('[data-tab="bindings"].active').count() == 1
    assert not [e for e in log.errors if "501" not in e], log.errors
