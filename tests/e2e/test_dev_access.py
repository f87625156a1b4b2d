"""``tsumugi dev --access`` end to end (issue 30 item 3, ADR-0157): the real scheduler Worker, as the dev runs
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
from pathlib import Path
from typing import Any

import pytest
from live_app import LiveApp, live_app

from tsumugi_dev.access_dev import AccessDev
from tsumugi_dev.cli import _parser  # pyright: ignore[reportPrivateUsage]

TOKEN = "dev-access-token"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def sign_in(access: AccessDev, email: str, *groups: str) -> str:
    """The CF_Authorization cookie the stand-in sets for ``email`` (as a browser would keep it)."""
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        opener.open(access.login_url(email, groups, "http://127.0.0.1/"), timeout=30)
    except urllib.error.HTTPError as redirect:
        with redirect:
            assert redirect.code == 302
            cookie = redirect.headers["set-cookie"]
    else:
        raise AssertionError("the stand-in's sign-in did not redirect")
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

    assert call(app, viewer, "GET", "/api/session") == (200, {"signedIn": True, "identity": "viewer@example.com",
                                                             "role": "viewer", "tokenSignIn": True})  # fmt: skip
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
