"""The dashboard's session (ADR-0064): sign-in sets an HttpOnly cookie that is not the token, cookie credentials
count only for same-origin requests, state changes must be JSON, and bodies are capped before auth."""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

import httpx
import pytest
from workers import Request

from tests.api.api_world import TOKEN, SteppedClock, World
from tsumugi_scheduler import _runtime
from tsumugi_scheduler.api.app import MAX_BODY_BYTES
from tsumugi_scheduler.api.session import PAGE_KEY_HEADER, SESSION_PATH, SESSION_TTL_MS
from tsumugi_scheduler.api.session_routes import NO_TOKEN_CONFIGURED, WRONG_TOKEN

ORIGIN = "http://scheduler.test"  # the World client's base URL: its Host is scheduler.test
OTHER_PORT = "http://scheduler.test:8800"
NO_BEARER = {"authorization": ""}

SIGNED_OUT = {"signedIn": False, "identity": None, "role": None, "tokenSignIn": True}
SIGNED_IN = {"signedIn": True, "identity": "TSUMUGI_TOKEN", "role": "admin", "tokenSignIn": True}


async def sign_in(world: World, token: str = TOKEN) -> httpx.Response:
    response = await world.client.post(
        SESSION_PATH,
        json={"token": token},
        headers={**NO_BEARER, "origin": ORIGIN, "sec-fetch-site": "same-origin"},
    )
    world.client.cookies.clear()  # each request below says which cookie it carries
    return response


class Signed(NamedTuple):
    """What the signed-in page holds: the cookie (the browser keeps it) and the page key (the page keeps it)."""

    cookie: str
    key: str


def session_value(response: httpx.Response) -> Signed:
    for header in response.headers.get_list("set-cookie"):
        if "Path=/api;" in header:
            return Signed(header.split(";", 1)[0].split("=", 1)[1], response.json()["pageKey"])
    raise AssertionError(response.headers)


def browser(signed: Signed, **more: str) -> dict[str, str]:
    """The page's request headers: the cookie and its page key."""
    return {**NO_BEARER, "cookie": f"tsumugi_token={signed.cookie}", PAGE_KEY_HEADER: signed.key, **more}


def replayed(cookie: str, **more: str) -> dict[str, str]:
    """A script's request with a copied cookie: no page key, no Origin, no Sec-Fetch-Site."""
    return {**NO_BEARER, "cookie": f"tsumugi_token={cookie}", "content-type": "application/json", **more}


async def jobs_total(world: World) -> int:
    status, body = await world.request("GET", "/api/jobs")
    assert status == 200
    return int(body["total"])


async def test_sign_in_sets_an_httponly_strict_api_scoped_cookie_that_is_not_the_token(world: World) -> None:
    response = await sign_in(world)

    assert response.status_code == 200
    assert response.json() == {
        "signedIn": True,
        "pageKey": session_value(response).key,
        "identity": "TSUMUGI_TOKEN",
        "role": "admin",
    }
    session, legacy = response.headers.get_list("set-cookie")
    value = session_value(response)
    assert TOKEN not in session
    assert TOKEN not in value.key
    assert re.fullmatch(
        r"tsumugi_token=v2\.\d+\.[\w-]{22}\.[\w-]+; Path=/api; Max-Age=43200; HttpOnly; SameSite=Strict",
        session,
    ), session
    # A raw token an earlier dashboard stored at path "/" (readable by any page of the host) is deleted.
    assert legacy == "tsumugi_token=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict"
    status, body = await world.request(
        "GET", "/api/jobs", headers=browser(value, **{"sec-fetch-site": "same-origin"})
    )
    assert status == 200, body


async def test_the_cookie_is_secure_when_the_dashboard_is_served_over_https(world: World) -> None:
    response = await world.client.post(
        "https://scheduler.test/api/session",
        json={"token": TOKEN},
        headers={**NO_BEARER, "origin": "https://scheduler.test"},
    )
    assert response.status_code == 200
    world.client.cookies.clear()
    assert response.headers.get_list("set-cookie")[0].endswith("; Secure")


async def test_a_wrong_token_or_a_missing_secret_says_what_went_wrong(
    tmp_path: Path, clock: SteppedClock
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    world = World(tmp_path / "a", clock)
    unset = World(tmp_path / "b", clock, token=None)
    try:
        wrong = await sign_in(world, "not-it")
        assert (wrong.status_code, wrong.json()) == (401, {"error": WRONG_TOKEN})
        assert "set-cookie" not in wrong.headers
        missing = await sign_in(unset, "anything")
        assert (missing.status_code, missing.json()) == (401, {"error": NO_TOKEN_CONFIGURED})
        empty = await world.client.post(SESSION_PATH, json={"token": " "}, headers=NO_BEARER)
        assert (empty.status_code, empty.json()) == (400, {"error": "token must be a non-empty string"})
    finally:
        await world.aclose()
        await unset.aclose()


async def test_the_session_probe_answers_200_signed_in_or_not(world: World) -> None:
    value = session_value(await sign_in(world))
    assert await world.request("GET", SESSION_PATH, headers=NO_BEARER) == (200, SIGNED_OUT)
    assert await world.request("GET", SESSION_PATH, headers=browser(value)) == (200, SIGNED_IN)
    assert await world.request("GET", SESSION_PATH) == (200, SIGNED_IN)  # the bearer header


async def test_a_session_ends_when_it_expires_or_the_token_rotates(world: World, clock: SteppedClock) -> None:
    value = session_value(await sign_in(world))
    clock.advance(SESSION_TTL_MS - 1)
    assert (await world.request("GET", "/api/jobs", headers=browser(value)))[0] == 200
    clock.advance(1)
    assert await world.request("GET", "/api/jobs", headers=browser(value)) == (401, {"error": "unauthorized"})
    fresh = session_value(await sign_in(world))
    world.env.TSUMUGI_TOKEN = "rotated"
    assert await world.request("GET", "/api/jobs", headers=browser(fresh)) == (401, {"error": "unauthorized"})


async def test_sign_out_deletes_the_cookie(world: World) -> None:
    value = session_value(await sign_in(world))
    response = await world.client.delete(SESSION_PATH, headers=browser(value, origin=ORIGIN))
    assert (response.status_code, response.json()) == (200, {"signedIn": False})
    assert (
        response.headers.get_list("set-cookie")[0]
        == "tsumugi_token=; Path=/api; Max-Age=0; HttpOnly; SameSite=Strict"
    )


# -- issue 25 item 1: the cookie alone is not a credential, and sign-out holds on the server --------------------


async def test_a_copied_cookie_without_the_page_key_reads_and_changes_nothing(world: World) -> None:
    # A page on another port of this host receives the cookie; a script replays it as JSON with no Origin.
    value = session_value(await sign_in(world))
    before = await jobs_total(world)
    headers = replayed(value.cookie)
    assert await world.request("GET", "/api/jobs", headers=headers) == (401, {"error": "unauthorized"})
    status, _ = await world.request("POST", "/api/jobs", {"binding": "MAIL", "payload": {}}, headers=headers)
    assert status == 401
    policy = await world.request("POST", "/api/bindings/MAIL/policy", {"concurrency": 7}, headers=headers)
    assert policy[0] == 401
    assert await world.request("GET", SESSION_PATH, headers=headers) == (200, SIGNED_OUT)
    assert await jobs_total(world) == before
    assert (await world.request("GET", "/api/jobs", headers=browser(value)))[0] == 200  # the page itself


async def test_a_page_key_opens_only_its_own_session(world: World) -> None:
    first = session_value(await sign_in(world))
    second = session_value(await sign_in(world))
    crossed = browser(Signed(first.cookie, second.key))
    assert await world.request("GET", "/api/jobs", headers=crossed) == (401, {"error": "unauthorized"})


async def test_sign_out_closes_the_session_on_the_server(world: World) -> None:
    value = session_value(await sign_in(world))
    other_tab = session_value(await sign_in(world))
    assert (await world.request("GET", "/api/jobs", headers=browser(value)))[0] == 200
    response = await world.client.delete(SESSION_PATH, headers=browser(value, origin=ORIGIN))
    assert response.status_code == 200
    # The copy a script kept, with the page key as well, no longer works: the server forgot the session.
    assert await world.request("GET", "/api/jobs", headers=browser(value)) == (401, {"error": "unauthorized"})
    assert await world.request("GET", SESSION_PATH, headers=browser(value)) == (200, SIGNED_OUT)
    assert (await world.request("GET", "/api/jobs", headers=browser(other_tab)))[0] == 200


@pytest.mark.parametrize(
    "cookie",
    [
        "v1.\u00b2.x",
        "v2.\u00b2.AAAAAAAAAAAAAAAAAAAAAA.x",
        "v2.\u00b9\u00b2.AAAAAAAAAAAAAAAAAAAAAA.x",
        "v2...",
    ],
)
async def test_a_malformed_session_cookie_is_a_401_not_a_fault(world: World, cookie: str) -> None:
    headers = {**NO_BEARER, "cookie": f"tsumugi_token={cookie}", PAGE_KEY_HEADER: "k"}
    # Sent as Latin-1 bytes, as the server reads header bytes: the cookie arrives with a superscript digit.
    raw = [(k.encode(), v.encode("latin-1")) for k, v in headers.items()]
    response = await world.client.get("/api/jobs", headers=raw)
    assert (response.status_code, response.json()) == (401, {"error": "unauthorized"})


async def test_a_deeply_nested_sign_in_body_is_a_400(world: World) -> None:
    body = '{"token":' * 5000 + '"x"' + "}" * 5000
    response = await world.client.post(
        SESSION_PATH, content=body, headers={**NO_BEARER, "content-type": "application/json"}
    )
    assert (response.status_code, response.json()) == (400, {"error": "token must be a non-empty string"})


@pytest.mark.parametrize(
    "where",
    [
        {"origin": OTHER_PORT},
        {"origin": "null"},
        {"sec-fetch-site": "same-site"},
        {"sec-fetch-site": "cross-site"},
        {"origin": ORIGIN, "sec-fetch-site": "same-site"},
    ],
)
async def test_a_cookie_from_another_origin_changes_nothing(world: World, where: dict[str, str]) -> None:
    value = session_value(await sign_in(world))
    before = await jobs_total(world)
    headers = browser(value, **where, **{"content-type": "application/json"})

    status, body = await world.request(
        "POST", "/api/jobs", {"binding": "MAIL", "payload": {}}, headers=headers
    )
    assert status == 403, body
    assert body["error"].startswith("cross-origin request refused")
    policy = await world.request("POST", "/api/bindings/MAIL/policy", {"concurrency": 7}, headers=headers)
    assert policy[0] == 403
    assert (await world.request("GET", "/api/jobs", headers=headers))[0] == 403  # reads too
    assert await jobs_total(world) == before
    assert await sign_in(world)  # the same browser, same origin, still works
    assert (
        await world.client.post(SESSION_PATH, json={"token": TOKEN}, headers={**NO_BEARER, **where})
    ).status_code == 403


@pytest.mark.parametrize(
    "content_type", [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]
)
async def test_a_cookie_authenticated_state_change_must_be_declared_json(
    world: World, content_type: str | None
) -> None:
    # What a <form enctype=text/plain> or a no-cors fetch can send, even without Origin / Sec-Fetch-Site.
    value = session_value(await sign_in(world))
    job = await world.enqueue()
    headers = browser(value) | ({"content-type": content_type} if content_type else {})
    body = '{"binding": "MAIL", "payload": {}, "x": "="}'
    response = await world.client.post("/api/jobs", content=body if content_type else None, headers=headers)
    assert (response.status_code, response.json()) == (
        415,
        {"error": "Content-Type must be application/json"},
    )
    cancel = await world.client.post(f"/api/jobs/{job.replace('#', '%23')}/cancel", headers=headers)
    assert cancel.status_code == 415
    assert (await world.request("GET", f"/api/jobs/{job.replace('#', '%23')}"))[1]["job"][
        "state"
    ] != "CANCELLED"


async def test_bearer_callers_skip_the_origin_check_but_a_body_must_still_be_json(world: World) -> None:
    created = await world.client.post(
        "/api/jobs",
        json={"binding": "MAIL", "payload": {}},
        headers={"origin": OTHER_PORT, "sec-fetch-site": "cross-site"},
    )
    assert created.status_code == 201
    plain = await world.client.post(
        "/api/jobs", content='{"binding": "MAIL", "payload": {}}', headers={"content-type": "text/plain"}
    )
    assert plain.status_code == 415
    job = created.json()["id"].replace("#", "%23")
    assert (await world.client.post(f"/api/jobs/{job}/cancel")).status_code == 200  # no body, no type: fine


async def test_an_oversized_body_is_refused_before_authentication(world: World) -> None:
    headers = {**NO_BEARER, "content-type": "application/json", "content-length": str(MAX_BODY_BYTES + 1)}
    response = await world.client.post("/api/jobs", content=b"", headers=headers)
    assert (response.status_code, response.json()) == (
        413,
        {"error": f"body must be at most {MAX_BODY_BYTES} bytes"},
    )
    at_cap = await world.client.post(
        "/api/jobs", content=b"", headers={**headers, "content-length": str(MAX_BODY_BYTES)}
    )
    assert at_cap.status_code == 401


class _UnreadRequest:
    """A request announcing 2 MB whose body must never be read."""

    headers = {"content-length": "2000000"}  # noqa: RUF012

    @property
    def js_object(self) -> _UnreadRequest:
        return self

    async def bytes(self) -> bytes:
        raise AssertionError("the body was read")


async def test_the_worker_refuses_an_oversized_body_before_the_adapter_reads_it(world: World) -> None:
    answer = await _runtime.serve_asgi(world.app, _UnreadRequest(), world.env)
    assert (answer.status, await answer.json()) == (
        413,
        {"error": f"body must be at most {MAX_BODY_BYTES} bytes"},
    )
    small = Request("http://scheduler.test/api/session", headers={"content-length": "0"})
    assert (await _runtime.serve_asgi(world.app, small, world.env)).status == 200


async def test_a_content_length_of_digits_that_are_not_ascii_is_refused_before_the_body_is_read(
    world: World,
) -> None:
    # str.isdigit() holds for '²', which int() refuses: only ASCII digits are a length.
    unreadable = _UnreadRequest()
    unreadable.headers = {"content-length": "\u00b2"}
    answer = await _runtime.serve_asgi(world.app, unreadable, world.env)
    assert answer.status == 413
    status, _ = await world.request("POST", "/api/jobs", headers={"content-length": b"\xb2"})
    assert status == 413
