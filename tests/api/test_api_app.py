"""The REST app's answers at its edges: repeated query parameters, trailing slashes, 405 with Allow, a fault
answered 500 and logged, a missing D1 binding named in a 503, Durable Object results as JavaScript hands them
back."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.api.api_world import World, quoted


async def test_a_repeated_query_parameter_takes_its_first_value(world: World) -> None:
    job_id = await world.enqueue("MAIL")
    await world.tick()  # dispatches; the next alarm projects what this one changed
    await world.tick()
    status, body = await world.request("GET", "/api/jobs?state=QUEUED&state=NOPE")
    assert (status, [j["id"] for j in body["jobs"]]) == (200, [job_id])
    # metrics validates hours before it looks for a store: the first value (2) is valid, the last (0) is not
    assert await world.request("GET", "/api/metrics?hours=2&hours=0") == (
        501,
        {"error": "metrics is not configured"},
    )


@pytest.mark.parametrize("path", ["/api/jobs/", "/api/bindings/", "/api/stats/"])
async def test_a_trailing_slash_is_a_json_404_not_a_redirect(world: World, path: str) -> None:
    assert await world.request("GET", path) == (404, {"error": "not found"})


async def test_another_method_on_a_known_path_is_405_json_with_allow(world: World) -> None:
    response = await world.client.request("DELETE", "/api/jobs")
    assert (response.status_code, response.json()) == (405, {"error": "method not allowed"})
    assert set(response.headers["allow"].replace(" ", "").split(",")) >= {"GET", "POST"}


async def test_a_fault_answers_internal_error_and_logs_the_detail(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    assert (await world.request("GET", "/api/stats"))[0] == 200  # the schema check is cached from here on

    def broken(sql: str) -> Any:
        raise RuntimeError("secret detail /srv/db.sqlite")

    world.d1.prepare = broken
    with caplog.at_level(logging.ERROR, logger="tsumugi_scheduler.api"):
        assert await world.request("GET", "/api/stats") == (500, {"error": "internal error"})
    assert "secret detail /srv/db.sqlite" in caplog.text
    assert "GET /api/stats" in caplog.text


async def test_a_missing_read_model_binding_is_503_naming_it(world: World) -> None:
    del world.env.TSUMUGI_DB
    assert await world.request("GET", "/api/jobs") == (
        503,
        {
            "error": "the TSUMUGI_DB binding (D1 read model) is missing",
            "missing": [{"kind": "d1", "name": "TSUMUGI_DB"}],
        },
    )


class JsLike:
    """What Cloudflare hands back from a Durable Object call: attributes and ``to_py``, no ``__getitem__``."""

    def __init__(self, value: Any) -> None:
        self._value = value

    def to_py(self) -> Any:
        return self._value

    def __getattr__(self, name: str) -> Any:
        return getattr(self._value, name)


class JsStub:
    def __init__(self, target: Any) -> None:
        self._target = target

    def __getattr__(self, method: str) -> Any:
        call = getattr(self._target, method)

        async def js_call(*args: Any) -> Any:
            result = await call(*args)
            return None if result is None else JsLike(result)  # JS null arrives as None

        return js_call


class JsNamespace:
    def __init__(self, namespace: Any) -> None:
        self.inner = namespace

    def getByName(self, name: str) -> JsStub:
        return JsStub(self.inner.getByName(name))


async def test_durable_object_results_reach_handlers_as_plain_values(world: World) -> None:
    world.env.JOB_SHARD = JsNamespace(world.env.JOB_SHARD)  # type: ignore[assignment]
    failed = await world.enqueue("MAIL", maxAttempts=1)
    world.env.JOB_SHARD = world.env.JOB_SHARD.inner  # type: ignore[attr-defined]
    await world.fail(failed)  # the test drives the shard directly, then goes back through JS-like results
    world.env.JOB_SHARD = JsNamespace(world.env.JOB_SHARD)  # type: ignore[assignment]
    other = await world.enqueue("MAIL")
    assert (await world.request("GET", f"/api/jobs/{quoted(failed)}"))[1]["job"]["state"] == "FAILED"
    assert await world.request("POST", f"/api/jobs/{quoted(failed)}/retry") == (200, {"ok": True})
    assert await world.request("POST", f"/api/jobs/{quoted(other)}/reschedule", {"delayMs": 5}) == (
        200,
        {"ok": True},
    )
    assert await world.request("POST", f"/api/jobs/{quoted(other)}/cancel") == (
        200,
        {"ok": True, "requested": False, "cancelled": True},
    )
    status, body = await world.request("POST", "/api/jobs/bulk-cancel", {"ids": [failed]})
    assert (status, body["ok"]) == (200, [failed])
    assert (await world.request("GET", f"/api/jobs/{quoted(failed)}/explain"))[0] == 200
    assert (await world.request("GET", "/api/diagnostics"))[0] == 200
    status, body = await world.request("POST", "/api/bindings/MAIL/policy", {"paused": True})
    assert (status, body["shards"][0]["settings"]["paused"]) == (200, True)
