"""Fail-closed auth: 404 without auth, 401 without the right token, bearer or cookie, openapi without auth."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

import pytest

from tests.api.api_world import TOKEN, SteppedClock, World
from tsumugi_scheduler.api.auth import BearerAuth, bearer_of, same_secret


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
    [
        {"authorization": ""},
        {"authorization": "Bearer wrong"},
        {"authorization": f"Basic {TOKEN}"},
        {"authorization": f"Bearer {TOKEN}x"},
        {"authorization": "", "cookie": "tsumugi_token=nope"},
    ],
)
async def test_a_missing_or_wrong_token_is_401(world: World, headers: dict[str, str]) -> None:
    assert await world.request("GET", "/api/jobs", headers=headers) == (401, {"error": "unauthorized"})


async def test_the_bearer_scheme_is_case_insensitive_and_a_raw_token_in_the_cookie_is_refused(
    tmp_path: Path, clock: SteppedClock
) -> None:
    token = "a b;c%"  # reserved characters an earlier dashboard percent-encoded in a script-set cookie
    world = World(tmp_path, clock, token=token)
    try:
        assert (await world.request("GET", "/api/jobs", headers={"authorization": f"bEaReR {token}"}))[
            0
        ] == 200
        # The cookie holds a signed session now (ADR-0064); the token itself there is no credential.
        cookie = f"other=1; tsumugi_token={urllib.parse.quote(token)}"
        assert (await world.request("GET", "/api/jobs", headers={"authorization": "", "cookie": cookie}))[
            0
        ] == 401
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


async def test_a_bearer_header_decides_alone_and_no_cookie_name_means_header_only() -> None:
    env = type("E", (), {"TSUMUGI_TOKEN": "c"})()
    assert bearer_of({"authorization": "Bearer from-header", "cookie": "tsumugi_token=x"}) == "from-header"
    assert bearer_of({"authorization": "Basic abc"}) is None
    assert await BearerAuth().admit(env, {"authorization": "Bearer wrong"}, {}, now_ms=0) is None
    assert await BearerAuth(cookie=None).admit(env, {"cookie": "tsumugi_token=c"}, {}, now_ms=0) is None
