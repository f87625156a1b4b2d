"""Input the REST API used to accept, change or answer with a 500 (issue 11's spelling, issue 15 items 4, 7, 8)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.api.api_world import World, quoted
from tsumugi_dev.queues import encode_body


def _refusal(field: str, rule: str) -> tuple[int, dict[str, str]]:
    return 400, {"error": f"{field} {rule}", "field": field, "rule": rule}


SAFE = 2**53 - 1
INT_RULE = f"must be an integer between -{SAFE} and {SAFE} (JavaScript's safe integers), got "


# -- option spelling (issue 11) --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"maxAttempts": 0}, "maxAttempts"),
        ({"max_attempts": 0}, "max_attempts"),
    ],
)
async def test_an_error_names_the_option_as_the_request_spelled_it(
    world: World, options: Any, field: str
) -> None:
    body = {"binding": "MAIL", "payload": {}, **options}
    assert await world.request("POST", "/api/jobs", body) == _refusal(field, "must be at least 1")


@pytest.mark.parametrize(
    ("options", "field", "rule"),
    [
        ({"run_at": 1, "delay_ms": 1}, "run_at", "and delay_ms are mutually exclusive"),
        ({"expires_at": 1, "expires_in_ms": 1}, "expires_at", "and expires_in_ms are mutually exclusive"),
        ({"node_id": "n"}, "node_id", "is set only by the run a job belongs to"),
        ({"run_id": "f:r"}, "run_id", "is set only by the run a job belongs to"),
        ({"timeout_ms": "1s"}, "timeout_ms", "must be a number"),
        ({"backoff": {"kind": "fixed", "delay_ms": -1}}, "backoff.delay_ms", f"must be between 0 and {SAFE}"),
        ({"backoff": {"kind": "fixed", "delayMs": -1}}, "backoff.delayMs", f"must be between 0 and {SAFE}"),
        ({"concurrency_key": 5}, "concurrency_key", "must be a string"),
        (
            {"max_attempts": 2, "maxAttempts": 2},
            "maxAttempts",
            "and max_attempts are one option: send it once",
        ),
        (
            {"backoff": {"kind": "fixed", "delayMs": 1, "delay_ms": 1}},
            "backoff.delay_ms",
            "and backoff.delayMs are one option: send it once",
        ),
    ],
)
async def test_snake_case_options_are_read_and_named_as_sent(
    world: World, options: Any, field: str, rule: str
) -> None:
    body = {"binding": "MAIL", "payload": {}, **options}
    assert await world.request("POST", "/api/jobs", body) == _refusal(field, rule)


async def test_snake_case_options_take_effect_and_payload_keys_are_never_renamed(world: World) -> None:
    payload = {"max_attempts": 1, "runAt": "x"}
    job_id = await world.enqueue("MAIL", payload=payload, max_attempts=7, unique_key="u", delay_ms=5_000)
    status, body = await world.request("GET", f"/api/jobs/{quoted(job_id)}")
    assert status == 200
    job = body["job"]
    assert (
        job["max_attempts"],
        job["unique_key"],
        json.loads(job["payload"]) if isinstance(job["payload"], str) else job["payload"],
    ) == (7, "u", payload)
    status, body = await world.request(
        "POST",
        "/api/jobs/bulk-enqueue",
        {
            "items": [
                {"binding": "MAIL", "payload": 1, "maxAttempts": 2},
                {"binding": "MAIL", "payload": 2, "max_attempts": 0},
            ]
        },
    )
    assert (status, body) == _refusal("items[1].max_attempts", "must be at least 1")


async def test_policy_and_reschedule_take_either_spelling(world: World) -> None:
    assert (await world.request("POST", "/api/bindings/MAIL/policy", {"perKeyConcurrency": 2}))[0] == 200
    assert await world.request("POST", "/api/bindings/MAIL/policy", {"perKeyConcurrency": 0}) == _refusal(
        "perKeyConcurrency", "must be at least 1"
    )
    assert await world.request(
        "POST", "/api/bindings/MAIL/policy", {"rate": {"tokens": 1, "intervalMs": 0}}
    ) == (_refusal("rate.intervalMs", "must be at least 1"))
    job_id = await world.enqueue("MAIL", delayMs=60_000)
    path = f"/api/jobs/{quoted(job_id)}/reschedule"
    assert await world.request("POST", path, {"delay_ms": 1_000}) == (200, {"ok": True})
    assert await world.request("POST", path, {"delay_ms": -1}) == (
        400,
        {"error": "delay_ms must not be negative"},
    )


# -- reschedule bounds (issue 15 item 7) -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field", "rule"),
    [
        (
            {"delayMs": 1e300},
            "delayMs",
            "must be between 0 and 8000000000000000 (now + delayMs must stay a safe integer), got 1e+300",
        ),
        (
            {"delayMs": SAFE},
            "delayMs",
            f"must be between 0 and 8000000000000000 (now + delayMs must stay a safe integer), got {SAFE}",
        ),
        ({"runAt": -5}, "runAt", f"must be between 0 and {SAFE}, got -5"),
        ({"runAt": 1e300}, "runAt", f"must be between 0 and {SAFE}, got 1e+300"),
        ({"run_at": 1e300}, "run_at", f"must be between 0 and {SAFE}, got 1e+300"),
        ({"runAt": 1, "priority": -1e300}, "priority", f"must be between -{SAFE} and {SAFE}, got -1e+300"),
    ],
)
async def test_reschedule_refuses_out_of_range_values_naming_the_bound(
    world: World, body: Any, field: str, rule: str
) -> None:
    job_id = await world.enqueue("MAIL", delayMs=60_000)
    path = f"/api/jobs/{quoted(job_id)}/reschedule"
    assert await world.request("POST", path, body) == _refusal(field, rule)


# -- payload values that cannot cross (issue 15 items 4, 7, 8) ------------------------------------------------------


@pytest.mark.parametrize(
    ("payload_json", "field", "rule"),
    [
        ('{"n": 18446744073709551616}', "payload.n", f"{INT_RULE}18446744073709551616"),
        ('{"n": [9007199254740992]}', "payload.n[0]", f"{INT_RULE}9007199254740992"),
        ('{"n": -9007199254740992}', "payload.n", f"{INT_RULE}-9007199254740992"),
        ('{"x": 1e400}', "payload.x", "must be a finite number, got inf"),
        ('{"x": {"odd key": -1e400}}', 'payload.x["odd key"]', "must be a finite number, got -inf"),
    ],
)
async def test_a_value_that_cannot_cross_a_queue_or_rpc_is_refused_naming_its_path(
    world: World, payload_json: str, field: str, rule: str
) -> None:
    body = f'{{"binding": "MAIL", "payload": {payload_json}}}'
    assert await world.request("POST", "/api/jobs", body) == _refusal(field, rule)
    assert world.env.JOB_SHARD.objects == {}


async def test_one_bad_payload_in_a_batch_refuses_the_batch_and_the_good_ones_then_dispatch(
    world: World,
) -> None:
    good = [{"binding": "MAIL", "payload": {"n": i}} for i in range(3)]
    bad = {"binding": "MAIL", "payload": {"n": 2**64}}
    status, body = await world.request("POST", "/api/jobs/bulk-enqueue", {"items": [*good[:2], bad, good[2]]})
    assert (status, body["field"]) == (400, "items[2].payload.n")
    status, body = await world.request("POST", "/api/jobs/bulk-enqueue", {"items": good})
    assert status == 201
    await world.tick()
    assert sorted(m["jobId"] for m in world.env.TSUMUGI_QUEUE.sent) == sorted(body["ids"])


async def test_the_largest_safe_integers_are_accepted(world: World) -> None:
    await world.enqueue("MAIL", payload={"max": SAFE, "min": -SAFE, "big float": 1e300})


async def test_a_payload_nested_400_levels_is_refused_with_the_limit(world: World) -> None:
    payload_json = '{"a":' * 65 + "1" + "}" * 65
    status, body = await world.request(
        "POST", "/api/jobs", f'{{"binding": "MAIL", "payload": {payload_json}}}'
    )
    assert (status, body["rule"]) == (400, "must be nested at most 64 levels deep (arrays and objects)")
    assert body["field"] == "payload" + ".a" * 64
    deep = "[" * 400 + "]" * 400
    assert await world.request("POST", "/api/jobs", f'{{"binding": "MAIL", "payload": {deep}}}') == _refusal(
        "body", "must be nested at most 100 levels deep (arrays and objects)"
    )


async def test_a_body_nested_1000_levels_is_a_400_not_a_500(world: World) -> None:
    body = '{"a":' * 1000 + "1" + "}" * 1000
    assert await world.request("POST", "/api/jobs", body) == _refusal(
        "body", "must be nested at most 100 levels deep (arrays and objects)"
    )
    # Brackets inside strings are text, not nesting.
    status, _ = await world.request(
        "POST", "/api/jobs", json.dumps({"binding": "MAIL", "payload": "[" * 1000})
    )
    assert status == 201


async def test_invalid_utf8_is_refused_not_stored_as_replacement_characters(world: World) -> None:
    body = b'{"binding": "MAIL", "payload": "caf\xe9"}'
    assert await world.request("POST", "/api/jobs", body) == _refusal(
        "body", "must be UTF-8 text (invalid byte at offset 35)"
    )


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ('{"binding": "MAIL", "payload": {"to": "a", "to": "b"}}', "to"),
        ('{"binding": "MAIL", "binding": "SMS", "payload": 1}', "binding"),
    ],
)
async def test_a_key_given_twice_is_refused_naming_it(world: World, body: str, key: str) -> None:
    assert await world.request("POST", "/api/jobs", body) == _refusal(key, "is given twice in one object")


class EncodingQueue:
    """``env.TSUMUGI_QUEUE`` that measures and encodes every message as the local runtime's queue does."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.batches = 0

    async def sendBatch(self, messages: list[dict[str, Any]]) -> None:
        self.batches += 1
        for message in messages:
            encode_body(message["body"], "sendBatch", "sendBatch", message.get("contentType"))
        self.sent.extend(json.loads(m["body"]) for m in messages)


async def test_a_stored_job_whose_message_is_too_large_fails_alone_and_the_others_dispatch(
    world: World,
) -> None:
    queue = EncodingQueue()
    world.env.TSUMUGI_QUEUE = queue  # type: ignore[assignment]
    ids = [await world.enqueue("MAIL", payload={"n": i}) for i in range(4)]
    poisoned = ids[1]
    # Stored without enqueue's size check (or by other code): its message can never be sent.
    world.shard("MAIL#0").sql.exec(
        "UPDATE job SET payload = ? WHERE id = ?", json.dumps({"text": "€" * 43_000}), poisoned
    )
    await world.tick()
    assert sorted(m["jobId"] for m in queue.sent) == sorted(set(ids) - {poisoned})
    status, body = await world.request("GET", f"/api/jobs/{quoted(poisoned)}")
    assert (status, body["job"]["state"]) == (200, "FAILED")
    error = body["job"]["attempts_log"][0]["error"]
    assert error.startswith(
        "PayloadError: the payload cannot be sent in a queue message: the message would take "
    )
    assert error.endswith("bytes of UTF-8 JSON, over the 128000 a queue message may hold")
    await world.tick()  # nothing left to send: the failed job is not dispatched again
    assert len(queue.sent) == 3


async def test_a_stored_payload_javascript_cannot_hold_crosses_the_queue_exactly(world: World) -> None:
    # A dispatch is its JSON text (ADR-0166): an integer past 2**64, which a JS object body could not carry
    # (issue 15 item 4 failed the whole batch), now reaches the consumer as stored.
    queue = EncodingQueue()
    world.env.TSUMUGI_QUEUE = queue  # type: ignore[assignment]
    ids = [await world.enqueue("MAIL", payload={"n": i}) for i in range(3)]
    world.shard("MAIL#0").sql.exec(
        "UPDATE job SET payload = ? WHERE id = ?", '{"n": 18446744073709551616}', ids[1]
    )
    await world.tick()
    assert sorted(m["jobId"] for m in queue.sent) == sorted(ids)
    (sent,) = [m for m in queue.sent if m["jobId"] == ids[1]]
    assert sent["payload"] == {"n": 18446744073709551616}
