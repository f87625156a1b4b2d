"""``tsumugi dev --access`` end to end (issue 30 item 3, ADR-0152): the real scheduler Worker, as the dev runs
it, signs people in through the local Access stand-in. A viewer may look but not cancel; an operator's cancel
is recorded under the operator's email and shows in the job detail.

The stand-in and its wiring are the ones the CLI uses (`tsumugi_dev.access_dev.AccessDev`); the Worker fetches
the team's real certs URL, which the runtime routes to the stand-in, and verifies as on Cloudflare.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.live_app import LiveApp, live_app
from tests.e2e.playwright_chromium import ConsoleLog
from tsumugi_dev.access_dev import AccessDev
from tsumugi_dev.cli import _parser  # pyright: ignore[reportPrivateUsage]

TOKEN = "dev-access-token"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def sign_in(access: AccessDev, email: str, *groups: str) -> str:
    """The CF_Authorization cookie the stand-in sets for ``email`` (as a browser would keep it)."""
    opener = urllib.request.build_opener(_NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as caught:  # the redirect, not followed
        opener.open(access.login_url(email, groups, "http://127.0.0.1/"), timeout=30)
    with caught.value as redirect:
        assert redirect.code == 302
        cookie = str(redirect.headers["set-cookie"])
    return cookie.split(";", 1)[0]


def call(app: LiveApp, cookie: str, method: str, path: str) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"{app.url}{path}", method=method, data=b"{}" if method == "POST" else None
    )
    request.add_header("cookie", cookie)
    if method == "POST":  # what the dashboard sends: same origin, JSON
        request.add_header("origin", app.url)
        request.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read())


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveApp]:
    with live_app(tmp_path_factory.mktemp("dev-access"), TOKEN, AccessDev()) as running:
        yield running


def test_the_cli_takes_the_flag() -> None:
    assert _parser().parse_args(["dev", "--access"]).access is True
    assert _parser().parse_args(["dev"]).access is False


def test_a_viewer_looks_an_operator_cancels_and_the_detail_says_who(app: LiveApp) -> None:
    assert app.access is not None
    status, created = app.api(
        "POST", "/api/jobs", {"binding": "Hello", "payload": {"name": "x"}, "delayMs": 600_000}
    )
    assert status == 201, created
    job = urllib.parse.quote(created["id"], safe="")
    viewer = sign_in(app.access, "viewer@example.com")
    operator = sign_in(app.access, "operator@example.com", "tsumugi-operators")

    assert call(app, viewer, "GET", "/api/session") == (
        200,
        {"signedIn": True, "identity": "viewer@example.com", "role": "viewer", "tokenSignIn": True},
    )
    assert call(app, viewer, "GET", f"/api/jobs/{job}")[0] == 200
    status, refused = call(app, viewer, "POST", f"/api/jobs/{job}/cancel")
    assert (status, refused["needs"]) == (403, "operator")

    status, answer = call(app, operator, "POST", f"/api/jobs/{job}/cancel")
    assert status == 200, answer
    status, detail = call(app, viewer, "GET", f"/api/jobs/{job}")
    assert detail["job"]["state"] == "CANCELLED"
    assert [(a["action"], a["by"], a["role"]) for a in detail["actions"]] == [
        ("cancelJob", "operator@example.com", "operator")
    ]


def test_a_token_from_another_key_is_refused(app: LiveApp) -> None:
    forged = AccessDev()  # the same team and audience, another key: what a forger would sign with
    token = forged.stand_in.token_for("boss@example.com", groups=["tsumugi-admins"])
    assert call(app, f"CF_Authorization={token}", "GET", "/api/jobs")[0] == 401


def _dashboard_as(page: Page, app: LiveApp, email: str, *groups: str) -> None:
    assert app.access is not None
    page.goto(
        app.access.login_url(email, groups, f"{app.url}/")
    )  # the stand-in sets the cookie, then redirects
    page.wait_for_selector("#signed-in-as")
    page.wait_for_selector("tbody tr [data-needs]")  # a job row with its actions


@pytest.mark.e2e
def test_the_dashboard_as_a_viewer_shows_no_action_it_can_take_and_says_why(
    app: LiveApp, page: tuple[Page, ConsoleLog]
) -> None:
    opened, _ = page
    status, created = app.api(
        "POST", "/api/jobs", {"binding": "Hello", "payload": {"name": "v"}, "delayMs": 600_000}
    )
    assert status == 201, created
    _dashboard_as(opened, app, "viewer@example.com")
    assert opened.text_content("#signed-in-as") == "viewer@example.com \u00b7 viewer"
    assert "actions need the operator role" in (opened.get_attribute("#signed-in-as", "title") or "")
    opened.click(
        f"tbody tr:has-text('{created['id']}') button.link"
    )  # the job's detail opens, with its actions
    opened.wait_for_selector("#job-detail [data-needs]")
    actions = opened.eval_on_selector_all(
        "[data-needs]", "els => els.map(e => [e.textContent, e.disabled, e.title])"
    )
    # Only what the job can take is shown (issue 26): a scheduled job has Cancel and Reschedule, no Retry.
    assert {text for text, _, _ in actions} >= {"+ Job", "Cancel", "Reschedule"}
    for text, disabled, title in actions:
        assert disabled, text
        assert title.startswith("Needs the operator role; viewer@example.com has the viewer role"), (
            text,
            title,
        )
    opened.keyboard.press("Escape")  # the detail closes
    opened.wait_for_selector("#job-detail", state="detached")
    opened.click("#tabs button:has-text('bindings')")
    opened.wait_for_selector("form.policy [data-needs='admin']", state="attached")
    for disabled, title in opened.eval_on_selector_all(
        "form.policy [data-needs]", "els => els.map(e => [e.disabled, e.title])"
    ):
        assert disabled
        assert title == "Needs the admin role; viewer@example.com has the viewer role"


@pytest.mark.e2e
def test_the_dashboard_as_an_operator_may_cancel_but_not_change_a_policy(
    app: LiveApp, page: tuple[Page, ConsoleLog]
) -> None:
    opened, _ = page
    status, created = app.api(
        "POST", "/api/jobs", {"binding": "Hello", "payload": {"name": "o"}, "delayMs": 600_000}
    )
    assert status == 201, created
    _dashboard_as(opened, app, "operator@example.com", "tsumugi-operators")
    assert opened.text_content("#signed-in-as") == "operator@example.com \u00b7 operator"
    cancel = opened.locator(f"tbody tr:has-text('{created['id']}') button:has-text('Cancel')")
    assert cancel.is_enabled()
    cancel.click()
    opened.click("#confirm button:has-text('Cancel job')")
    opened.click(f"tbody tr:has-text('{created['id']}') button.link")  # the detail says who cancelled it
    expect(opened.locator("#job-changes li")).to_contain_text("Cancelled by operator@example.com (operator)")
    opened.keyboard.press("Escape")
    opened.wait_for_selector("#job-detail", state="detached")
    opened.click("#tabs button:has-text('bindings')")
    opened.wait_for_selector("form.policy [data-needs='admin']", state="attached")
    assert all(opened.eval_on_selector_all("form.policy [data-needs]", "els => els.map(e => e.disabled)"))
