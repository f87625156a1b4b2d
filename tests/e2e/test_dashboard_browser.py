"""The dashboard in a real headless Chromium (``--dump-dom`` after a virtual-time budget; no sleeps).

Fails (never skips) when /usr/bin/chromium is missing: CI installs the Debian package ``chromium``.
"""

from __future__ import annotations

import re
import urllib.parse

import pytest

from tests.e2e.browser import Dom, dump_dom
from tests.e2e.fake_api import FAILED_ID, SCHEDULED_ID, FakeApi, serve

pytestmark = pytest.mark.e2e


def _job_route(job_id: str) -> str:
    return "#/jobs/" + urllib.parse.quote(job_id, safe="")


def test_jobs_table_renders_a_row_per_job():
    with serve(FakeApi()) as api:
        dom = Dom(dump_dom(api.url()))

    rows = dom.by_class("job-row")
    assert [attributes["data-id"] for attributes, _ in rows] == [
        FAILED_ID,
        "Hello#0:runningjob1",
        SCHEDULED_ID,
    ]
    assert "FAILED" in rows[0][1]
    assert "3 / 3" in rows[0][1]
    assert dom.by_id("jobs-total") == ("3 jobs", False)
    assert "/api/jobs" in api.api_paths()
    auth = dom.by_id("auth")
    assert auth is not None
    assert auth[1] is True  # signed in: no token form


def test_tabs_hide_features_the_api_does_not_offer():
    with serve(FakeApi()) as api:
        dom = Dom(dump_dom(api.url()))

    # schedules answer 501 in the fake and no flow is registered: those tabs stay hidden.
    assert re.findall(r'data-tab="(\w+)"', dom.html) == ["jobs", "metrics", "bindings"]
    assert [text for _, text in dom.by_class("active")] == ["jobs"]


def test_unauthorized_api_shows_the_token_form():
    with serve(FakeApi(token="s3cret")) as api:
        dom = Dom(dump_dom(api.url()))

    auth = dom.by_id("auth")
    assert auth is not None
    text, hidden = auth
    assert hidden is False
    assert "Enter your access token to continue." in text
    assert "Sign in" in text
    assert dom.by_id("token-form") is not None
    assert dom.by_class("job-row") == []


def test_unauthorized_without_a_token_cookie_points_to_the_identity_provider():
    with serve(FakeApi(token="s3cret", token_cookie=None)) as api:
        dom = Dom(dump_dom(api.url()))

    auth = dom.by_id("auth")
    assert auth is not None
    assert auth == ("Not authorized. Sign in through your identity provider and reload.", False)
    assert dom.by_id("token-form") is None


def test_detail_view_shows_the_attempts_log_oldest_first():
    with serve(FakeApi()) as api:
        dom = Dom(dump_dom(api.url(_job_route(FAILED_ID))))

    modal = dom.by_id("modal")
    assert modal is not None
    assert modal[1] is False
    log = dom.by_id("attempts-log")
    assert log is not None
    text = log[0]
    first, second, third = (text.index(s) for s in ("timeout (first)", "reset (second)", "full (third)"))
    assert first < second < third
    assert next(t for _, t in dom.by_class("attempt-row")).startswith("#1")
    payload = dom.by_id("job-payload")
    assert payload is not None
    assert '"to": "a@example.com"' in payload[0]
    # The id went out percent-encoded: "#" as %23, ":" as %3A.
    assert "/api/jobs/SendMail%230%3Afailedjob1" in api.api_paths()


def test_detail_of_a_waiting_job_explains_why_it_is_not_running():
    with serve(FakeApi()) as api:
        dom = Dom(dump_dom(api.url(_job_route(SCHEDULED_ID))))

    explain = dom.by_id("job-explain")
    assert explain is not None
    assert "Why is it not running?" in explain[0]
    assert "Waits for job Hello#0:runningjob1 of key user-1 (at most 1 at a time per key)." in explain[0]
    assert "/api/jobs/Hello%230%3Awaitingjob1/explain" in api.api_paths()


def test_metrics_view_renders_the_per_binding_table():
    with serve(FakeApi()) as api:
        dom = Dom(dump_dom(api.url("#/metrics")))

    table = dom.by_id("metrics-table")
    assert table is not None
    assert "SendMail" in table[0]
    assert "20.0%" in table[0]
    assert "2.5 s" in table[0]


def test_bindings_view_offers_a_policy_form_per_binding():
    with serve(FakeApi()) as api:
        dom = Dom(dump_dom(api.url("#/bindings")))

    cards = {a.get("data-binding"): text for a, text in dom.by_class("binding")}
    assert list(cards) == ["Boom", "Hello", "NotifyFailure", "NotifySettled", "SendMail", "Slow"]
    assert (
        "Per-key concurrency: 1 ready job waits for their key" in cards["Hello"]
    )  # what holds Hello back now
    pinned = {a.get("data-binding") for a, _ in dom.by_class("binding") if "runtime policy" in _}
    assert pinned == {"Hello"}  # Hello's settings were changed at run time (ADR-0058)
    assert "Nothing holds it back." in cards["Slow"]
    assert len(dom.by_class("policy")) == 6
    assert "/api/diagnostics" in api.api_paths()
