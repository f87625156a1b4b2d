"""The queue consumer with fake bindings: performer lookup order, claims, reports, acks."""

from __future__ import annotations

import json
from typing import Any

from tsumugi_performer import JobContext, Performer
from tsumugi_performer.entrypoint import performer_entrypoint
from tsumugi_scheduler.consumer import handle_batch


class Shard:
    def __init__(self, claim: bool = True) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self._claim = claim

    async def claim(self, *args: Any) -> bool:
        self.calls.append(("claim", *args))
        return self._claim

    async def report(self, *args: Any) -> dict[str, Any]:
        self.calls.append(("report", *args))
        return {"accepted": True, "state": "COMPLETED"}

    async def report_many(self, name: str, reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [await self.report(name, r["jobId"], r["attempt"], r["outcome"]) for r in reports]

    async def report_json(self, name: str, reports: str) -> str:
        """``report_many`` with JSON text in and out, as the shard host answers it (ADR-0166)."""
        return json.dumps(await self.report_many(name, json.loads(reports)))


class Namespace:
    def __init__(self, shard: Shard) -> None:
        self.shard = shard

    def getByName(self, name: str) -> Shard:
        return self.shard


class Env:
    def __init__(self, shard: Shard, **bindings: Any) -> None:
        self.JOB_SHARD = Namespace(shard)
        self.__dict__.update(bindings)


class Message:
    def __init__(self, body: Any) -> None:
        self.body = body
        self.acked = 0

    def ack(self) -> None:
        self.acked += 1


class Batch:
    def __init__(self, *messages: Message) -> None:
        self.messages = list(messages)


class Ctx:
    def __init__(self, exports: dict[str, Any]) -> None:
        self.exports = exports


class Echo(Performer[Any, Any]):
    async def perform(self, payload: Any, ctx: JobContext) -> Any:
        return {"echo": payload}


class Base:
    def __init__(self, ctx: Any, env: Any) -> None:
        self.ctx, self.env = ctx, env


def body(binding: str, *, claim: bool = False) -> dict[str, Any]:
    return {
        "jobId": f"{binding}#0:abc",
        "binding": binding,
        "attempt": 1,
        "payload": 7,
        "timeoutMs": 1000,
        "claimRequired": claim,
        "maxAttempts": 2,
    }


async def test_a_local_export_runs_before_a_service_binding_and_its_outcome_is_reported() -> None:
    shard = Shard()
    local = performer_entrypoint(Base, Echo)(None, None)
    message = Message(body("Echo"))
    await handle_batch(Batch(message), Env(shard, Echo=object()), Ctx({"Echo": local}))
    assert shard.calls == [("report", "Echo#0", "Echo#0:abc", 1, {"ok": True, "result": {"echo": 7}})]
    assert message.acked == 1


async def test_a_dispatch_sent_as_json_text_runs_like_an_object_body() -> None:
    # Shards send each dispatch as its JSON text (ADR-0166); one predating that sent the object.
    shard = Shard()
    local = performer_entrypoint(Base, Echo)(None, None)
    text, malformed = Message(json.dumps(body("Echo"))), Message('{"jobId": 7')
    await handle_batch(Batch(text, malformed), Env(shard), Ctx({"Echo": local}))
    assert shard.calls == [("report", "Echo#0", "Echo#0:abc", 1, {"ok": True, "result": {"echo": 7}})]
    assert (text.acked, malformed.acked) == (1, 1)


async def test_a_js_object_body_reads_its_nulls_as_none() -> None:
    # A body predating ADR-0166 is a JS object; the consumer reads messages on the JS objects themselves
    # (ADR-0169), so it reads the body as the SDK's wrapper would: JS null is None, not JsNull.
    import js

    shard = Shard()
    local = performer_entrypoint(Base, Echo)(None, None)
    legacy = Message(js.JSON.parse(json.dumps({**body("Echo"), "traceparent": None, "deadlineAt": None})))
    await handle_batch(Batch(legacy), Env(shard), Ctx({"Echo": local}))
    assert shard.calls == [("report", "Echo#0", "Echo#0:abc", 1, {"ok": True, "result": {"echo": 7}})]
    assert legacy.acked == 1


async def test_a_batch_asks_for_each_shard_stub_once_not_once_per_message() -> None:
    shard = Shard()
    names: list[str] = []
    env = Env(shard)
    lookup = env.JOB_SHARD.getByName
    env.JOB_SHARD.getByName = lambda name: names.append(name) or lookup(name)  # type: ignore[method-assign]
    local = performer_entrypoint(Base, Echo)(None, None)
    messages = [Message(json.dumps({**body("Echo"), "jobId": f"Echo#0:j{i}"})) for i in range(20)]
    await handle_batch(Batch(*messages), env, Ctx({"Echo": local}))
    assert len(shard.calls) == 20
    assert names == [
        "Echo#0"
    ]  # the batch's one report_json; attempts that never call their shard ask nothing


class CountingExports(dict[str, Any]):
    """A Worker's exports that count their lookups."""

    def __init__(self, **exports: Any) -> None:
        super().__init__(exports)
        self.lookups: list[str] = []

    def get(self, key: str, default: Any = None) -> Any:
        self.lookups.append(key)
        return super().get(key, default)


async def test_a_batch_looks_each_performer_up_once_not_once_per_message() -> None:
    shard = Shard()
    exports = CountingExports(Echo=performer_entrypoint(Base, Echo)(None, None))
    messages = [
        Message(json.dumps({**body(name), "jobId": f"{name}#0:j{i}"}))
        for i in range(10)
        for name in ("Echo", "Ghost")
    ]
    await handle_batch(Batch(*messages), Env(shard), Ctx(exports))
    assert sorted(exports.lookups) == ["Echo", "Ghost"]
    outcomes = [call[-1] for call in shard.calls]
    assert sum(o == {"ok": True, "result": {"echo": 7}} for o in outcomes) == 10
    assert sum(o["ok"] is False and "performer not found: Ghost" in o["error"] for o in outcomes) == 10


async def test_a_refused_claim_runs_nothing_and_a_malformed_message_is_dropped() -> None:
    shard = Shard(claim=False)
    duplicate, malformed = Message(body("Echo", claim=True)), Message({"nonsense": True})
    await handle_batch(Batch(duplicate, malformed), Env(shard), Ctx({}))
    assert shard.calls == [("claim", "Echo#0", "Echo#0:abc", 1)]
    assert (duplicate.acked, malformed.acked) == (1, 1)


async def test_an_unknown_binding_fails_the_attempt_with_performer_not_found() -> None:
    shard = Shard()
    await handle_batch(Batch(Message(body("Ghost"))), Env(shard), Ctx({}))
    (call,) = shard.calls
    assert call[-1] == {
        "ok": False,
        "error": "performer not found: Ghost (export it, or add a service binding)",
        "retryable": True,
        "retryAt": None,
    }
