"""Cloudflare Access sign-in (issue 30 item 1, ADR-0149, ADR-0150): the token verifier's every rule, the JWKS
cache, the scheme's roles, its configuration errors, and the REST API behind it.

Tokens are signed by the local Access stand-in (`tsumugi_dev.access_standin`), whose signer is written apart
from the scheduler's verifier; the JWKS is served by a counting fake, and time is passed in.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.api_world import T0, SteppedClock, World, quoted
from tsumugi_dev.access_standin import AccessStandIn, RsaKey, generate_rsa_key, sign_rs256
from tsumugi_scheduler.access import AccessTokenError, JwksCache, parse_jwks, verify_pkcs1_sha256
from tsumugi_scheduler.access.rsa_pkcs1 import SHA256_DIGEST_INFO
from tsumugi_scheduler.access.scheme import CloudflareAccess
from tsumugi_scheduler.definition import DefinitionError, define_tsumugi
from tsumugi_scheduler.identity import Role
from tsumugi_scheduler.sign_in import bearer_tokens, cloudflare_access

AUD = "4714c1358e65fe4b408ad6d432a5f878f08194bdb4752441fd56faefa9b2b6f2"
TEAM = "acme"
ISSUER = "https://acme.cloudflareaccess.com"
CERTS = "https://acme.cloudflareaccess.com/cdn-cgi/access/certs"
NOW_S = T0 // 1000
HOUR_MS = 3_600_000


@pytest.fixture(scope="module")
def key() -> RsaKey:
    return generate_rsa_key(kid="key-1")


@pytest.fixture(scope="module")
def other_key() -> RsaKey:
    return generate_rsa_key(kid="key-1")  # the same kid, another key: what a forger would publish


class Certs:
    """The team's certs URL: answers its document and counts the fetches."""

    def __init__(self, *keys: RsaKey) -> None:
        self.keys = list(keys)
        self.urls: list[str] = []

    async def __call__(self, url: str) -> tuple[int, str]:
        self.urls.append(url)
        return 200, json.dumps({"keys": [k.jwk() for k in self.keys]})


def claims(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "aud": [AUD],
        "email": "ada@acme.dev",
        "exp": NOW_S + 600,
        "iat": NOW_S,
        "nbf": NOW_S,
        "iss": ISSUER,
        "type": "app",
        "groups": ["sre"],
    }
    base.update(changes)
    return {k: v for k, v in base.items() if v is not None}


def access(certs: Certs, **options: Any) -> CloudflareAccess:
    return cloudflare_access(TEAM, AUD, fetch=certs, roles={"operator": {"groups": ["sre"]}}, **options)


async def verify(scheme: CloudflareAccess, token: str, now_ms: int = T0) -> dict[str, Any]:
    return await scheme.verify(token, None, now_ms=now_ms)


async def test_a_good_token_verifies_and_its_claims_and_role_reach_the_identity(key: RsaKey) -> None:
    certs = Certs(key)
    scheme = access(certs)
    token = sign_rs256(key, claims())
    identity = await scheme.admit(None, {"cf-access-jwt-assertion": token}, {}, now_ms=T0)
    assert identity is not None
    assert (identity.name, identity.role, identity.via, identity.claims["groups"]) == (
        "ada@acme.dev",
        Role.OPERATOR,
        "access",
        ["sre"],
    )
    assert certs.urls == [CERTS]
    # The cookie carries the same token when the browser calls the API directly.
    by_cookie = await scheme.admit(None, {"cookie": f"a=1; CF_Authorization={token}"}, {}, now_ms=T0)
    assert by_cookie == identity


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ({"alg": "HS256", "kid": "key-1"}, "header alg must be RS256, got 'HS256'"),
        ({"alg": "none", "kid": "key-1"}, "header alg must be RS256, got 'none'"),
        ({"alg": "RS512", "kid": "key-1"}, "header alg must be RS256, got 'RS512'"),
        ({"alg": "RS256"}, "header kid is required"),
        ({"alg": "RS256", "kid": ""}, "header kid is required"),
    ],
)
async def test_a_header_without_rs256_and_a_kid_is_refused(
    key: RsaKey, header: dict[str, str], reason: str
) -> None:
    certs = Certs(key)
    with pytest.raises(AccessTokenError) as caught:
        await verify(access(certs), sign_rs256(key, claims(), header=header))
    assert caught.value.reason == reason
    assert certs.urls == []  # refused before any key is fetched


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"iss": "https://evil.cloudflareaccess.com"}, f"iss must be {ISSUER}"),
        ({"iss": None}, f"iss must be {ISSUER}"),
        ({"aud": ["other-app", "third-app"]}, "aud must hold this application's audience tag"),
        ({"aud": "other-app"}, "aud must hold this application's audience tag"),
        ({"aud": None}, "aud must hold this application's audience tag"),
        ({"exp": NOW_S}, "token has expired (exp)"),
        ({"exp": NOW_S - 1}, "token has expired (exp)"),
        ({"exp": None}, "exp is required"),
        ({"exp": "soon"}, "exp must be a number of seconds"),
        ({"nbf": NOW_S + 1}, "token is not valid yet (nbf)"),
    ],
)
async def test_each_claim_rule_refuses_by_name(key: RsaKey, changes: dict[str, Any], reason: str) -> None:
    with pytest.raises(AccessTokenError) as caught:
        await verify(access(Certs(key)), sign_rs256(key, claims(**changes)))
    assert caught.value.reason == reason


@pytest.mark.parametrize(
    "changes",
    [{"exp": float("nan")}, {"exp": float("inf")}, {"nbf": float("nan")}, {"exp": 10**400}],
    ids=["exp NaN", "exp Infinity", "nbf NaN", "exp past a double"],
)
async def test_a_signed_token_with_a_time_that_is_no_number_is_refused(
    key: RsaKey, changes: dict[str, Any]
) -> None:
    # json.dumps writes NaN / Infinity and json.loads reads them back: NaN compares false with everything, so
    # such an exp never expired and such an nbf never held a token back.
    token = sign_rs256(key, claims(**changes))
    ten_years_later = T0 + 10 * 365 * 24 * 3_600_000
    for now_ms in (T0, ten_years_later):
        with pytest.raises(AccessTokenError):
            await verify(access(Certs(key)), token, now_ms=now_ms)


async def test_aud_as_a_string_or_a_list_holding_it_and_nbf_now_pass(key: RsaKey) -> None:
    scheme = access(Certs(key))
    assert (await verify(scheme, sign_rs256(key, claims(aud=AUD))))["aud"] == AUD
    assert (await verify(scheme, sign_rs256(key, claims(aud=["x", AUD], nbf=NOW_S))))["aud"] == ["x", AUD]


async def test_a_bad_signature_is_refused(key: RsaKey, other_key: RsaKey) -> None:
    scheme = access(Certs(key))
    token = sign_rs256(key, claims())
    head, payload, signature = token.split(".")
    raw = bytearray(base64.urlsafe_b64decode(signature + "=="))
    raw[-1] ^= 1
    flipped = base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()
    forged_payload = base64.urlsafe_b64encode(json.dumps(claims(email="eve@acme.dev")).encode()).rstrip(b"=")
    for bad in (
        f"{head}.{payload}.{flipped}",
        f"{head}.{forged_payload.decode()}.{signature}",
        sign_rs256(other_key, claims()),
        f"{head}.{payload}.",
        f"{head}.{payload}.{signature}==",
    ):
        with pytest.raises(AccessTokenError):
            await verify(scheme, bad)


async def test_an_unknown_kid_refetches_once_then_is_refused_and_the_refetch_is_bounded(key: RsaKey) -> None:
    certs = Certs(key)
    scheme = access(certs)
    await verify(scheme, sign_rs256(key, claims()))
    assert len(certs.urls) == 1
    stranger = RsaKey(kid="key-2", n=key.n, e=key.e, d=key.d)
    with pytest.raises(AccessTokenError, match="kid 'key-2' is not in the team's JWKS"):
        await verify(scheme, sign_rs256(stranger, claims()), now_ms=T0 + 10_000)
    assert len(certs.urls) == 2  # one refresh for the unknown kid
    with pytest.raises(AccessTokenError):
        await verify(scheme, sign_rs256(stranger, claims()), now_ms=T0 + 11_000)
    assert len(certs.urls) == 2  # within the floor: no fetch per made-up kid


async def test_a_rotated_key_is_found_by_the_refresh(key: RsaKey, other_key: RsaKey) -> None:
    certs = Certs(key)
    scheme = access(certs)
    await verify(scheme, sign_rs256(key, claims()))
    rotated = RsaKey(kid="key-2", n=other_key.n, e=other_key.e, d=other_key.d)
    certs.keys.append(rotated)  # Access publishes the new key beside the old one
    assert (await verify(scheme, sign_rs256(rotated, claims()), now_ms=T0 + 20_000))[
        "email"
    ] == "ada@acme.dev"
    assert len(certs.urls) == 2


async def test_the_jwks_is_cached_within_its_ttl_and_fetched_again_after(key: RsaKey) -> None:
    certs = Certs(key)
    scheme = access(certs, cache_ttl_ms=HOUR_MS)
    token = sign_rs256(key, claims(exp=NOW_S + 7_200))
    for at in (T0, T0 + 1, T0 + HOUR_MS - 1):
        await verify(scheme, token, now_ms=at)
    assert len(certs.urls) == 1
    await verify(scheme, token, now_ms=T0 + HOUR_MS)
    assert len(certs.urls) == 2


async def test_a_failed_or_broken_jwks_fetch_refuses() -> None:
    async def down(url: str) -> tuple[int, str]:
        raise OSError("connection refused")

    async def error(url: str) -> tuple[int, str]:
        return 500, "oops"

    for fetch, reason in (
        (down, "JWKS fetch failed: OSError: connection refused"),
        (error, "JWKS fetch answered 500"),
    ):
        with pytest.raises(AccessTokenError) as caught:
            await JwksCache(CERTS, fetch=fetch, ttl_ms=HOUR_MS).key("k", now_ms=T0)
        assert caught.value.reason == reason
    with pytest.raises(AccessTokenError, match="JWKS must be an object"):
        parse_jwks("[]")
    # Keys of another type or use are skipped; the number kept is bounded.
    many = {
        "keys": [
            {"kty": "EC", "kid": "ec"},
            {"kty": "RSA", "kid": "enc", "use": "enc", "n": "AQAB", "e": "AQAB"},
            *({"kty": "RSA", "kid": f"k{i}", "n": "AQAB", "e": "AQAB"} for i in range(40)),
        ]
    }
    assert sorted(parse_jwks(json.dumps(many))) == sorted(f"k{i}" for i in range(16))


def test_pkcs1_verify_compares_the_whole_encoding(key: RsaKey) -> None:
    message = b"header.payload"
    k = (key.n.bit_length() + 7) // 8

    def signed(encoded: bytes) -> bytes:
        return pow(int.from_bytes(encoded, "big"), key.d, key.n).to_bytes(k, "big")

    digest = __import__("hashlib").sha256(message).digest()
    good = b"\x00\x01" + b"\xff" * (k - 3 - 19 - 32) + b"\x00" + SHA256_DIGEST_INFO + digest
    assert verify_pkcs1_sha256(n=key.n, e=key.e, message=message, signature=signed(good))
    # Garbage after the digest in place of padding (the forgery lax parsers accepted), short padding,
    # another hash's DigestInfo, a signature one byte short, and one not below n.
    garbage = b"\x00\x01" + b"\xff" * 8 + b"\x00" + SHA256_DIGEST_INFO + digest + b"\x00" * (k - 11 - 51)
    sha1_info = bytes.fromhex("3021300906052b0e03021a05000414")
    other_hash = b"\x00\x01" + b"\xff" * (k - 3 - 15 - 32) + b"\x00" + sha1_info + digest
    for bad in (signed(garbage), signed(other_hash), signed(good)[1:], key.n.to_bytes(k, "big")):
        assert not verify_pkcs1_sha256(n=key.n, e=key.e, message=message, signature=bad)
    assert not verify_pkcs1_sha256(n=key.n, e=key.e, message=b"other", signature=signed(good))
    assert not verify_pkcs1_sha256(n=key.n, e=1, message=message, signature=signed(good))  # e = 1 is no key


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"team": "acme.example.com"},
            'auth.team must be a team name such as "acme" or acme.cloudflareaccess.com, '
            "got 'acme.example.com'",
        ),
        ({"aud": " "}, "auth.aud must be the Access application's audience tag, got ' '"),
        (
            {"roles": {"superuser": {"emails": ["a@b"]}}},
            "auth.roles.superuser must be one of viewer, operator, admin, got 'superuser'",
        ),
        (
            {"roles": {"admin": {"email": ["a@b"]}}},
            "auth.roles.admin.email is not a known option (emails, groups)",
        ),
        (
            {"roles": {"admin": {"emails": "a@b"}}},
            "auth.roles.admin.emails must be a list of strings, got 'a@b'",
        ),
        (
            {"roles": {"admin": {"groups": [""]}}},
            "auth.roles.admin.groups[0] must be a non-empty string, got ''",
        ),
        ({"default_role": "root"}, "auth.default_role must be one of viewer, operator, admin, got 'root'"),
        ({"cache_ttl_ms": 5}, "auth.cache_ttl_ms must be an integer of at least 60000, got 5"),
        (
            {"team_var": "not a var"},
            "auth.team_var must be the name of a Worker secret or var, got 'not a var'",
        ),
    ],
)
def test_bad_access_configuration_names_the_field(options: dict[str, Any], message: str) -> None:
    with pytest.raises(DefinitionError) as caught:
        cloudflare_access(**{"team": TEAM, "aud": AUD, **options})
    assert str(caught.value) == message


def test_define_tsumugi_refuses_what_is_not_a_sign_in_scheme() -> None:
    with pytest.raises(DefinitionError, match=r"^auth must be bearer_tokens\(\), cloudflare_access"):
        define_tsumugi(auth="token")
    with pytest.raises(DefinitionError, match=r"^auth\[1\] must be a sign-in scheme, got 5$"):
        define_tsumugi(auth=[bearer_tokens(), 5])
    with pytest.raises(DefinitionError, match=r"^auth.operator must be the name of a Worker secret or var"):
        bearer_tokens(operator="has space")


# -- the REST API behind Access ------------------------------------------------------------------------------


@pytest.fixture
async def access_world(tmp_path: Path, clock: SteppedClock, key: RsaKey) -> AsyncIterator[World]:
    scheme = cloudflare_access(
        fetch=Certs(key),
        roles={"operator": {"groups": ["ops"]}, "admin": {"emails": ["Boss@acme.dev"]}},
        default_role="viewer",
    )
    built = World(tmp_path, clock, define_tsumugi(performers=["MAIL"], auth=[bearer_tokens(), scheme]))
    built.env.TSUMUGI_ACCESS_TEAM = TEAM  # type: ignore[attr-defined]
    built.env.TSUMUGI_ACCESS_AUD = AUD  # type: ignore[attr-defined]
    yield built
    await built.aclose()


def as_user(key: RsaKey, email: str, *groups: str) -> dict[str, str]:
    stand_in = AccessStandIn(team=TEAM, aud=AUD, key=key)
    return {
        "authorization": "",
        "cf-access-jwt-assertion": stand_in.token_for(email, groups=groups, now_s=NOW_S),
    }


async def test_behind_access_each_user_gets_the_role_its_claims_earn(
    access_world: World, key: RsaKey
) -> None:
    job = quoted(await access_world.enqueue("MAIL", delayMs=60_000))
    viewer, operator = as_user(key, "v@acme.dev"), as_user(key, "o@acme.dev", "ops")
    json_post = {"content-type": "application/json", "origin": "http://scheduler.test"}
    assert (await access_world.request("GET", "/api/jobs", headers=viewer))[0] == 200
    status, refused = await access_world.request(
        "POST", f"/api/jobs/{job}/cancel", headers={**viewer, **json_post}
    )
    assert (status, refused["reason"]) == (
        403,
        "cancelJob needs the operator role; v@acme.dev has the viewer role",
    )
    status, _ = await access_world.request(
        "POST", f"/api/jobs/{job}/cancel", headers={**operator, **json_post}
    )
    assert status == 200
    status, refused = await access_world.request(
        "POST", "/api/bindings/MAIL/policy", '{"concurrency": 1}', headers={**operator, **json_post}
    )
    assert (status, refused["needs"]) == (403, "admin")
    boss = as_user(key, "boss@acme.dev")
    status, _ = await access_world.request(
        "POST", "/api/bindings/MAIL/policy", '{"concurrency": 1}', headers={**boss, **json_post}
    )
    assert status == 200
    status, session = await access_world.request("GET", "/api/session", headers=operator)
    assert session == {"signedIn": True, "identity": "o@acme.dev", "role": "operator", "tokenSignIn": True}


async def test_behind_access_the_browser_credential_gets_the_cross_origin_check(
    access_world: World, key: RsaKey
) -> None:
    job = quoted(await access_world.enqueue("MAIL", delayMs=60_000))
    operator = as_user(key, "o@acme.dev", "ops")
    status, body = await access_world.request(
        "POST", f"/api/jobs/{job}/cancel", headers={**operator, "origin": "https://evil.example"}
    )
    assert status == 403, body
    assert body["error"].startswith("cross-origin request refused")
    assert (await access_world.request("POST", f"/api/jobs/{job}/cancel", headers=operator))[0] == 415


async def test_without_the_team_and_audience_vars_access_refuses_and_the_token_still_works(
    access_world: World, key: RsaKey
) -> None:
    del access_world.env.TSUMUGI_ACCESS_AUD  # type: ignore[attr-defined]
    assert (await access_world.request("GET", "/api/jobs", headers=as_user(key, "boss@acme.dev")))[0] == 401
    assert (await access_world.request("GET", "/api/jobs"))[0] == 200  # the admin's bearer token
    _, session = await access_world.request("GET", "/api/session", headers={"authorization": ""})
    assert session == {"signedIn": False, "identity": None, "role": None, "tokenSignIn": True}


async def test_a_repeated_token_skips_the_signature_but_not_the_claims(key: RsaKey) -> None:
    certs = Certs(key)
    scheme = access(certs)
    token = sign_rs256(key, claims(exp=NOW_S + 60))
    await verify(scheme, token)
    certs.keys.clear()  # were the signature checked again, no key would be found
    assert (await verify(scheme, token, now_ms=T0 + 30_000))["email"] == "ada@acme.dev"
    with pytest.raises(AccessTokenError, match="expired"):
        await verify(scheme, token, now_ms=T0 + 60_000)


# -- what a forger can send before any signature is checked --------------------------------------------------

HUGE_INTEGER = "1" * 5_000
"""Past CPython's 4,300-digit limit for reading an integer: `json.loads` raises a plain ValueError."""


def _segment(raw: str) -> str:
    return base64.urlsafe_b64encode(raw.encode()).rstrip(b"=").decode()


FORGED = {
    "header": f'{_segment(f"""{{"alg":"RS256","kid":"key-1","x":{HUGE_INTEGER}}}""")}.{_segment("{}")}.AAAA',
    "payload": f'{_segment("""{"alg":"RS256","kid":"key-1"}""")}.{_segment(f"""{{"n":{HUGE_INTEGER}}}""")}.AAAA',
}


@pytest.mark.parametrize("part", sorted(FORGED))
async def test_a_token_holding_an_integer_python_will_not_read_is_refused_naming_its_part(
    key: RsaKey, part: str
) -> None:
    certs = Certs(key)
    with pytest.raises(AccessTokenError) as caught:
        await verify(access(certs), FORGED[part])
    assert caught.value.reason == f"{part} must be a JSON object"
    assert (
        await access(certs).admit(None, {"cookie": f"CF_Authorization={FORGED[part]}"}, {}, now_ms=T0) is None
    )


def test_a_jwks_holding_an_integer_python_will_not_read_leaves_no_key() -> None:
    with pytest.raises(AccessTokenError, match="JWKS must be JSON"):
        parse_jwks(f'{{"keys": [{{"kty": "RSA", "kid": "k", "n": {HUGE_INTEGER}, "e": "AQAB"}}]}}')


async def test_an_unforeseen_failure_while_verifying_refuses_instead_of_raising(
    key: RsaKey, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    scheme = access(Certs(key))

    async def broken(token: str, env: Any, *, now_ms: int) -> dict[str, Any]:
        raise RuntimeError("a bug in the verifier")

    monkeypatch.setattr(scheme, "verify", broken)
    token = sign_rs256(key, claims())
    assert await scheme.admit(None, {"cf-access-jwt-assertion": token}, {}, now_ms=T0) is None
    assert "verification failed unexpectedly" in caplog.text
    assert token not in caplog.text  # the token is never logged


@pytest.mark.parametrize("part", sorted(FORGED))
async def test_behind_access_a_forged_token_python_will_not_read_is_a_401_not_a_500(
    access_world: World, part: str
) -> None:
    for headers in (
        {"cf-access-jwt-assertion": FORGED[part]},
        {"cookie": f"CF_Authorization={FORGED[part]}"},
    ):
        for path in ("/api/jobs", "/api/session"):
            status, body = await access_world.request("GET", path, headers={"authorization": "", **headers})
            assert status == (401 if path == "/api/jobs" else 200), (path, body)
            if path == "/api/session":
                assert body["signedIn"] is False
