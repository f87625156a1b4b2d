"""The dashboard against a page on another port of the same host (issue 15, ADR-0064), in Debian's Chromium.

The real scheduler serves the real page over the dev HTTP server on one 127.0.0.1 port; an attacker's pages are
served from another port: the same *site* (SameSite=Strict cookies go along) but another *origin*. Before
ADR-0064 the token sat in a script-set cookie, so such a page read it from ``document.cookie``, and its
``text/plain`` fetch and ``<form enctype=text/plain>`` enqueued jobs and changed a policy.
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, Response

from tests.e2e.live_app import LiveApp, attacker_site, live_app
from tests.e2e.playwright_chromium import ConsoleLog

pytestmark = pytest.mark.e2e

TOKEN = "tok-e2e-0123456789abcdef"


def _attack_pages(app: str, scheduled_id: str) -> dict[str, str]:
    enqueue = '{"binding": "Hello", "payload": {"name": "csrf"}}'
    bulk_cancel = f'{{"ids": ["{scheduled_id}"]}}'
    script = f"""
<script>
window.stolen = document.cookie;
const shots = [
  ['{app}/api/jobs', {enqueue!r}],
  ['{app}/api/bindings/SendMail/policy', '{{"concurrency": 7}}'],
  ['{app}/api/jobs/bulk-cancel', {bulk_cancel!r}],
];
Promise.all(shots.map(([url, body]) => fetch(url, {{method: 'POST', mode: 'no-cors', credentials: 'include',
  headers: {{'content-type': 'text/plain'}}, body}}).catch(() => null)))
  .then(() => {{ window.done = true; }});
</script>"""
    # A text/plain form sends "<name>=<value>": the name carries the JSON, the value closes a padding string.
    form = f"""
<form id="f" method="POST" action="{app}/api/jobs" enctype="text/plain">
  <input type="hidden" name='{{"binding": "Hello", "payload": {{"name": "form"}}, "pad": "' value='"}}'>
</form>
<script>document.getElementById('f').submit();</script>"""
    frame = f'<iframe id="victim" src="{app}/"></iframe>'
    return {"/fetch": script, "/form": form, "/frame": frame}


def _sign_in(opened: Page, token: str) -> None:
    opened.fill("#token-form input[name=token]", token)
    opened.click("#token-form button[type=submit]")


def _concurrency_of(app: LiveApp, binding: str) -> Any:
    status, body = app.api("GET", "/api/diagnostics")
    assert status == 200, body
    return [shard["settings"].get("concurrency") for shard in body["bindings"][binding]["shards"]]


def test_a_page_on_another_port_can_neither_act_nor_read_the_credential(
    page: tuple[Page, ConsoleLog], tmp_path: Path
) -> None:
    opened, log = page
    with live_app(tmp_path / "data", TOKEN) as app:
        status, created = app.api(
            "POST", "/api/jobs", {"binding": "Hello", "payload": {"name": "later"}, "delayMs": 3_600_000}
        )
        assert status == 201, created
        scheduled_id = created["id"]
        policy_before = _concurrency_of(app, "SendMail")
        with attacker_site(_attack_pages(app.url, scheduled_id)) as evil:
            opened.goto(f"{app.url}/")
            opened.wait_for_selector("#token-form")
            assert log.errors == []  # no 401 (or anything) before sign-in: the page asks /api/session first
            _sign_in(opened, TOKEN)
            opened.wait_for_selector("#auth", state="hidden")
            opened.wait_for_selector(".job-row")
            # Not even the dashboard's own script can read the credential.
            assert opened.evaluate("document.cookie") == ""
            assert TOKEN not in opened.evaluate(
                "JSON.stringify(Object.assign({}, localStorage, sessionStorage))"
            )
            # The CSP's hashes match the page: nothing refused. (Feature probes answering 501 are not ours.)
            assert [e for e in log.errors if "status of 501" not in e] == []

            answers: list[tuple[str, str, int]] = []

            def record(response: Response) -> None:
                if response.url.startswith(f"{app.url}/api/"):
                    answers.append((response.request.method, response.url, response.status))

            opened.on("response", record)
            opened.goto(f"{evil}/fetch")
            opened.wait_for_function("window.done === true")
            stolen = opened.evaluate("window.stolen")
            with opened.expect_response(f"{app.url}/api/jobs"):
                opened.goto(f"{evil}/form")

        # Checked over the API with the bearer token, while the app still runs.
        assert _concurrency_of(app, "SendMail") == policy_before
        status, job = app.api("GET", f"/api/jobs/{urllib.parse.quote(scheduled_id, safe='')}")
        assert (status, job["job"]["state"]) == (200, "SCHEDULED")

    assert TOKEN not in stolen
    assert "tsumugi_token" not in stolen
    posts = [(url, status) for method, url, status in answers if method == "POST"]
    assert len(posts) == 4, answers  # three fetches and the form
    # Every attempt was refused: 401, the cookie without its page's key opens nothing (ADR-0121; nothing was
    # enqueued: that is a 201).
    assert {status for _, status in posts} == {401}, posts


def test_sign_in_with_a_wrong_token_says_so_and_the_right_one_signs_in(
    page: tuple[Page, ConsoleLog], tmp_path: Path
) -> None:
    opened, log = page
    with live_app(tmp_path / "data", TOKEN) as app:
        opened.goto(f"{app.url}/")
        opened.wait_for_selector("#token-form")
        _sign_in(opened, "not-the-token")
        error = opened.wait_for_selector("#sign-in-error", state="visible")
        assert error is not None
        assert "That token is not correct" in error.inner_text()
        assert opened.input_value("#token-form input[name=token]") == "not-the-token"  # kept, to fix a typo
        assert opened.is_visible("#token-form")
        _sign_in(opened, TOKEN)
        opened.wait_for_selector("#auth", state="hidden")
        opened.wait_for_selector("#sign-out")
        # The only console error is the browser's note of the refused sign-in (a 401 on /api/session).
        errors = [e for e in log.errors if "status of 501" not in e]
        assert len(errors) == 1, log.errors
        assert "401" in errors[0]
        opened.click("#sign-out")
        opened.wait_for_selector("#token-form")
        assert opened.evaluate("fetch('/api/session').then((r) => r.json())")["signedIn"] is False


def test_no_other_page_can_frame_the_dashboard(page: tuple[Page, ConsoleLog], tmp_path: Path) -> None:
    opened, _ = page
    with live_app(tmp_path / "data", TOKEN) as app, attacker_site(_attack_pages(app.url, "x")) as evil:
        with opened.expect_response(f"{app.url}/") as framed:
            opened.goto(f"{evil}/frame")
        assert framed.value.status == 200
        headers = framed.value.headers
        assert headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        frame = opened.frame_locator("#victim")
        assert frame.locator("#token-form, #auth, header.top").count() == 0
