"""Fail-closed auth: 404 without auth, 401 without the right token, bearer or cookie, openapi without auth."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

import pytest
from api_world import TOKEN, SteppedClock, World

from tsumugi_scheduler.api.auth import BearerAuth, credentials_of, same_secret


async def test_without_auth_every_api_path_answers_plain_404(tmp_path: Path, clock: SteppedClock) -> None:
    world = World(tmp_path, clock, auth=None)
    try:
        for path in ("/api/jobs", "/api/openapi.json", "/api/nope", "/"):
            assert await world.request("GET", path) == (404, "not found")
        assert await world.request("POST", "/api/jobs", {"binding": "MAIL", "payload": 1}) == (
            404,
            "not found",
        )
    finally:
        await world.aclose()


@pytest.mark.parametrize(
    "headers",
    [{"authorization": ""}, {"authorization": "Bearer wrong"}, {"authorization": f"Basic {TOKEN}"},
     {"authorization": f"Bearer {TOKEN}x"}, {"authorization": "", "cookie": "tsumugi_token=nope"}],
)  # fmt: skip
async def test_a_missing_or_wrong_token_is_401(world: World, headers: dict[str, str]) -> None:
    assert await world.request("GET", "/api/jobs", headers=headers) == (401, {"error": "unauthorized"})


async def test_the_bearer_scheme_is_case_insensitive_and_the_cookie_is_url_decoded(
    tmp_path: Path, clock: SteppedClock
) -> None:
    token = "a b;c%"  # reserved characters the dashboard percent-encodes in the cookie
    world = World(tmp_path, clock, token=token)
    try:
        assert (await world.request("GET", "/api/jobs", headers={"authorization": f"bEaReR {token}"}))[
            0
        ] == 200
        cookie = f"other=1; tsumugi_token={urllib.parse.quote(token)}"
        assert (await world.request("GET", "/api/jobs", headers={"authorization": "", "cookie": cookie}))[
            0
        ] == 200
    finally:
        await world.aclose()


async def test_a_missing_secret_refuses_everything_but_the_document(
    tmp_path: Path, clock: SteppedClock
) -> None:
    world = World(tmp_path, clock, token=None)
    try:
        assert await world.request("GET", "/api/jobs") == (401, {"error": "unauthorized"})
        status, document = await world.request("GET", "/api/openapi.json", headers={"authorization": ""})
        assert status == 200
        assert document["info"]["title"] == "Tsumugi REST API"
    finally:
        await world.aclose()


async def test_outside_the_api_get_serves_the_dashboard_and_unknown_api_paths_are_json_404(
    world: World,
) -> None:
    status, page = await world.request("GET", "/dashboard", headers={"authorization": ""})
    assert status == 200
    assert '<script>window.__TSUMUGI__={"tokenCookie":"tsumugi_token"}</script>' in page
    assert await world.request("POST", "/dashboard") == (404, "not found")
    assert await world.request("GET", "/api/nothing-here") == (404, {"error": "not found"})


def test_secrets_compare_equal_only_when_identical_whatever_the_length() -> None:
    assert same_secret("abc", "abc")
    assert not same_secret("abc", "abcd")
    assert not same_secret("", "abc")


def test_credentials_prefer_the_bearer_header_over_the_cookie() -> None:
    headers = {"authorization": "Bearer from-header", "cookie": "tsumugi_token=from-cookie"}
    assert credentials_of(headers, "tsumugi_token") == "from-header"
    assert credentials_of({"cookie": "tsumugi_token=c"}, None) is None
    assert not BearerAuth(cookie=None).allows(
        type("E", (), {"TSUMUGI_TOKEN": "c"})(), {"cookie": "tsumugi_token=c"}
    )
