"""Payloads checked against the performer's published schema at enqueue: REST, RPC and the HTTP client (issue 11).

The world's env carries real performer entrypoints (`performer_entrypoint`) under their binding names, as a
scheduler Worker's env carries Service Bindings; the scheduler asks each for its schema (``describe``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

import httpx
import msgspec
import pytest

from tests.api.api_world import TOKEN, SteppedClock, World, with_env
from tsumugi_client import AsyncTsumugiClient, EnqueueValidationError
from tsumugi_core.json_path import InvalidValueError
from tsumugi_performer import JobContext, Performer
from tsumugi_performer.entrypoint import performer_entrypoint
from tsumugi_scheduler.definition import define_tsumugi
from tsumugi_scheduler.entrypoints import RpcMethods
from tsumugi_scheduler.payload_schemas import RECHECK_MIN_MS, SCHEMA_TTL_MS, PayloadSchemas


class Address(msgspec.Struct, frozen=True, kw_only=True):
    city: str
    zip: str | None = None


class Card(msgspec.Struct, frozen=True, tag="card"):
    number: str


class Invoice(msgspec.Struct, frozen=True, tag="invoice"):
    days: int


class Order(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    address: Address
    quantity: int | str = 1
    note: str | None = None
    pay: Card | Invoice | None = None
    lines: list[Address] = []
    mode: Literal["fast", "slow"] = "fast"


class PlaceOrder(Performer[Order, None]):
    async def perform(self, payload: Order, ctx: JobContext) -> None:
        return None


class Anything(Performer[Any, None]):
    async def perform(self, payload: Any, ctx: JobContext) -> None:
        return None


class Strict(msgspec.Struct, frozen=True, kw_only=True):
    name: str


class StrictName(Performer[Strict, None]):
    async def perform(self, payload: Strict, ctx: JobContext) -> None:
        return None


class _Entrypoint:
    """Stands in for the SDK's ``WorkerEntrypoint``."""

    def __init__(self, ctx: Any = None, env: Any = None) -> None:
        self.ctx, self.env = ctx, env


class CountingPerformer:
    """A Service Binding to a performer Worker: counts ``describe`` calls; ``redeploy`` swaps the code."""

    def __init__(self, performer: type[Performer[Any, Any]]) -> None:
        self.describes = 0
        self.redeploy(performer)

    def redeploy(self, performer: type[Performer[Any, Any]]) -> None:
        self._target: Any = performer_entrypoint(_Entrypoint, performer, name="Order")()

    async def describe(self) -> str:
        self.describes += 1
        return await self._target.describe()


@pytest.fixture
async def typed(tmp_path: Path, clock: SteppedClock) -> AsyncIterator[World]:
    definition = define_tsumugi(performers=["Order", "Any", "Gone"])
    world = World(tmp_path, clock, definition)
    world.env.Order = CountingPerformer(PlaceOrder)  # type: ignore[attr-defined]
    world.env.Any = performer_entrypoint(_Entrypoint, Anything)()  # type: ignore[attr-defined]
    yield world
    await world.aclose()


GOOD = {"name": "Ada", "address": {"city": "Paris"}}


def _refusal(field: str, rule: str) -> tuple[int, dict[str, str]]:
    return 400, {"error": f"{field} {rule}", "field": field, "rule": rule}


@pytest.mark.parametrize(
    ("payload", "field", "rule"),
    [
        ({"name": 5, "address": {"city": "Paris"}}, "payload.name", "must be a string, got an integer"),
        ({"name": "Ada"}, "payload.address", "is required"),
        ({"name": "Ada", "address": {"city": 7}}, "payload.address.city", "must be a string, got an integer"),
        (
            {**GOOD, "address": {"city": "Paris", "zip": 75}},
            "payload.address.zip",
            "must be a string or null, got an integer",
        ),
        ({**GOOD, "quantity": [1]}, "payload.quantity", "must be an integer or a string, got an array"),
        (
            {**GOOD, "pay": {"type": "cash"}},
            "payload.pay.type",
            'must be one of "card", "invoice", got "cash"',
        ),
        (
            {**GOOD, "pay": {"type": "invoice", "days": "10"}},
            "payload.pay.days",
            "must be an integer, got a string",
        ),
        ({**GOOD, "lines": [{"city": "A"}, {"zip": "1"}]}, "payload.lines[1].city", "is required"),
        ({**GOOD, "mode": "warp"}, "payload.mode", 'must be one of "fast", "slow", got "warp"'),
        ("Ada", "payload", "must be an object, got a string"),
    ],
)
async def test_rest_refuses_a_payload_the_type_refuses_naming_the_path(
    typed: World, payload: Any, field: str, rule: str
) -> None:
    assert await typed.request("POST", "/api/jobs", {"binding": "Order", "payload": payload}) == _refusal(
        field, rule
    )
    status, body = await typed.request(
        "POST",
        "/api/jobs/bulk-enqueue",
        {"items": [{"binding": "Order", "payload": GOOD}, {"binding": "Order", "payload": payload}]},
    )
    assert (status, body["field"]) == (400, f"items[1].{field}")
    assert typed.env.TSUMUGI_QUEUE.sent == []
    assert typed.env.JOB_SHARD.objects == {}  # nothing reached a shard: nothing stored


@pytest.mark.parametrize(
    "payload",
    [
        GOOD,
        {**GOOD, "quantity": "2", "note": None, "pay": None, "mode": "slow"},
        {
            **GOOD,
            "pay": {"type": "card", "number": "4242"},
            "lines": [{"city": "B", "zip": None}],
            "extra": 1,
        },
    ],
)
async def test_a_payload_the_type_accepts_is_stored(typed: World, payload: Any) -> None:
    status, body = await typed.request("POST", "/api/jobs", {"binding": "Order", "payload": payload})
    assert status == 201, body
    assert PlaceOrder.decode_payload(payload) is not None  # the performer agrees


async def test_a_performer_with_no_declared_type_or_none_reachable_accepts_anything(typed: World) -> None:
    for binding in ("Any", "Gone"):  # Gone has no binding in the env: never asked, never checked
        for payload in (None, 5, "x", [1, {"a": []}], {"name": 5}):
            status, body = await typed.request("POST", "/api/jobs", {"binding": binding, "payload": payload})
            assert status == 201, (binding, payload, body)


async def test_the_schema_is_fetched_once_then_again_after_its_ttl(typed: World, clock: SteppedClock) -> None:
    order: CountingPerformer = typed.env.Order  # type: ignore[attr-defined]
    for _ in range(5):
        assert (await typed.request("POST", "/api/jobs", {"binding": "Order", "payload": GOOD}))[0] == 201
    assert order.describes == 1
    clock.advance(SCHEMA_TTL_MS)
    assert (await typed.request("POST", "/api/jobs", {"binding": "Order", "payload": GOOD}))[0] == 201
    assert order.describes == 2


async def test_a_refusal_asks_again_so_a_redeployed_performer_is_never_refused_by_a_stale_schema(
    typed: World, clock: SteppedClock
) -> None:
    order: CountingPerformer = typed.env.Order  # type: ignore[attr-defined]
    assert (await typed.request("POST", "/api/jobs", {"binding": "Order", "payload": GOOD}))[0] == 201
    order.redeploy(StrictName)  # now only {"name": str}
    clock.advance(RECHECK_MIN_MS)
    assert (await typed.request("POST", "/api/jobs", {"binding": "Order", "payload": {"name": "x"}}))[
        0
    ] == 201
    assert order.describes == 2
    # The fresh schema is kept: a payload the new type refuses is refused without another fetch.
    assert await typed.request("POST", "/api/jobs", {"binding": "Order", "payload": {"name": 1}}) == _refusal(
        "payload.name", "must be a string, got an integer"
    )
    assert order.describes == 2


class _Rpc(RpcMethods, _Entrypoint):
    tsumugi = define_tsumugi(performers=["Order", "Any"])


async def test_rpc_enqueue_refuses_naming_the_path(typed: World) -> None:
    rpc = _Rpc(None, typed.env)
    with pytest.raises(EnqueueValidationError) as caught:
        await rpc.enqueue({"binding": "Order", "payload": {"name": "Ada", "address": {"city": None}}})
    assert (caught.value.field, caught.value.rule) == ("payload.address.city", "must be a string, got null")
    with pytest.raises(EnqueueValidationError) as many:
        await rpc.enqueue_many([{"binding": "Any", "payload": 1}, {"binding": "Order", "payload": {}}])
    assert many.value.field == "items[1].payload.name"
    assert await rpc.enqueue({"binding": "Order", "payload": GOOD})


async def test_the_http_client_raises_a_typed_error_naming_the_path(typed: World) -> None:
    transport = httpx.ASGITransport(app=with_env(typed.app, typed.env))
    async with httpx.AsyncClient(transport=transport) as http:
        client = AsyncTsumugiClient("http://scheduler.test", token=TOKEN, http_client=http)
        with pytest.raises(EnqueueValidationError) as caught:
            await client.enqueue("Order", {"name": "Ada", "address": {"city": "P"}, "note": 3})
        assert (caught.value.field, caught.value.rule) == (
            "payload.note",
            "must be a string or null, got an integer",
        )
        assert (await client.enqueue("Order", GOOD)).id


class Silent:
    """A performer Worker that predates ``describe`` (workerd: the method does not exist), or fails."""

    def __init__(self, error: Exception) -> None:
        self.calls = 0
        self.error = error

    async def describe(self) -> str:
        self.calls += 1
        raise self.error


class Slow:
    """A performer whose ``describe`` answers only when released: concurrent first enqueues share the call."""

    def __init__(self) -> None:
        self.calls = 0
        self.release = asyncio.Event()

    async def describe(self) -> str:
        self.calls += 1
        await self.release.wait()
        return msgspec.json.encode({"payloadSchema": msgspec.json.schema(Strict)}).decode()


@pytest.mark.parametrize("error", [TypeError("Method describe does not exist"), RuntimeError("down")])
async def test_a_performer_that_cannot_describe_itself_is_not_checked_and_asked_once_per_ttl(
    error: Exception,
) -> None:
    silent = Silent(error)
    schemas = PayloadSchemas()
    env = SimpleNamespace(Order=silent)
    for payload in ({"name": 5}, "x"):
        await schemas.check("Order", payload, env)
    assert silent.calls == 1


async def test_concurrent_first_enqueues_share_one_describe() -> None:
    slow = Slow()
    schemas = PayloadSchemas()
    env = SimpleNamespace(Order=slow)
    checks = [asyncio.ensure_future(schemas.check("Order", {"name": str(i)}, env)) for i in range(5)]
    await asyncio.sleep(0)
    slow.release.set()
    await asyncio.gather(*checks)
    assert slow.calls == 1
    with pytest.raises(InvalidValueError):
        await schemas.check("Order", {"name": 1}, env)


async def test_exports_are_asked_before_env_bindings() -> None:
    schemas = PayloadSchemas()
    exported = performer_entrypoint(_Entrypoint, StrictName, name="Order")()
    await schemas.check("Order", {"name": "x"}, SimpleNamespace(), {"Order": exported})
    with pytest.raises(InvalidValueError):
        await schemas.check("Order", {"name": 1}, SimpleNamespace(), {"Order": exported})
