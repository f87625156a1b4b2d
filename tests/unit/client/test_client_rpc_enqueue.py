"""Enqueue over the Service Binding transport: wire shape, copy semantics, defaults, grouping per shard."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.unit.client.client_fakes import FakeScheduler, RuntimeBinding, job_detail, sent_items
from tsumugi_client import EnqueueItem, EnqueueValidationError, FixedBackoff, Guarantee, create_client
from tsumugi_core.options import MAX_PAYLOAD_BYTES
from tsumugi_core.sharding import fnv1a32


class TestEnqueue:
    async def test_sends_one_camel_case_item_and_returns_its_id(
        self, scheduler: FakeScheduler, env: Any
    ) -> None:
        client = create_client()
        job_id = await client.enqueue(
            env,
            binding="MAIL",
            payload={"to": "a"},
            max_attempts=5,
            delay_ms=100,
            backoff=FixedBackoff(delay_ms=250, jitter=False),
            guarantee=Guarantee.AT_MOST_ONCE,
            concurrency_key="user-1",
        )
        assert job_id == "MAIL#0:j1"
        assert sent_items(scheduler) == [
            [
                {
                    "binding": "MAIL",
                    "payload": {"to": "a"},
                    "maxAttempts": 5,
                    "delayMs": 100,
                    "backoff": {"kind": "fixed", "delayMs": 250, "jitter": False},
                    "guarantee": "at-most-once",
                    "concurrencyKey": "user-1",
                }
            ]
        ]

    async def test_sends_only_plain_builtins_and_shares_nothing_with_the_caller(
        self, scheduler: FakeScheduler, env: Any
    ) -> None:
        payload = {"tags": ("a", "b"), "nested": {"n": [1, 2.5]}}
        await create_client().enqueue(env, binding="MAIL", payload=payload, guarantee="at-least-once")
        ((item,),) = sent_items(scheduler)
        assert item["payload"] == {"tags": ["a", "b"], "nested": {"n": [1, 2.5]}}
        assert type(item["guarantee"]) is str
        payload["nested"]["n"].append(3)  # the caller keeps mutating its object after the call
        assert item["payload"]["nested"]["n"] == [1, 2.5]

    async def test_uses_the_named_service_binding_and_accepts_a_mapping_env(
        self, scheduler: FakeScheduler
    ) -> None:
        client = create_client(service="JOBS")
        assert await client.enqueue({"JOBS": scheduler}, binding="MAIL", payload=1) == "MAIL#0:j1"

    async def test_unknown_option_is_refused_before_sending(self, scheduler: FakeScheduler, env: Any) -> None:
        with pytest.raises(EnqueueValidationError) as caught:
            await create_client().enqueue(env, binding="MAIL", payload=1, max_attempt=3)  # type: ignore[call-arg]
        assert (caught.value.field, caught.value.rule) == ("max_attempt", "is not an enqueue option")
        assert scheduler.calls == []

    @pytest.mark.parametrize(
        ("options", "field"),
        [
            ({"max_attempts": 0}, "max_attempts"),
            ({"run_at": 5, "delay_ms": 5}, "run_at"),
            ({"node_id": "n"}, "node_id"),
            ({"backoff": FixedBackoff(delay_ms=-1)}, "backoff.delay_ms"),
        ],
    )
    async def test_invalid_options_are_refused_before_sending(
        self, scheduler: FakeScheduler, env: Any, options: dict[str, Any], field: str
    ) -> None:
        with pytest.raises(EnqueueValidationError) as caught:
            await create_client().enqueue(env, binding="MAIL", payload=1, **options)
        assert caught.value.field == field
        assert scheduler.calls == []

    async def test_oversized_or_unencodable_payload_is_refused_before_sending(
        self, scheduler: FakeScheduler, env: Any
    ) -> None:
        client = create_client()
        with pytest.raises(EnqueueValidationError, match="payload must be at most"):
            await client.enqueue(env, binding="MAIL", payload="x" * MAX_PAYLOAD_BYTES)
        with pytest.raises(EnqueueValidationError, match="payload must be JSON-serialisable"):
            await client.enqueue(env, binding="MAIL", payload=object())
        assert scheduler.calls == []

    async def test_invalid_binding_is_refused_before_sending(
        self, scheduler: FakeScheduler, env: Any
    ) -> None:
        with pytest.raises(EnqueueValidationError) as caught:
            await create_client().enqueue(env, binding="bad name", payload=1)
        assert caught.value.field == "binding"
        assert scheduler.calls == []


class TestOnEnqueue:
    async def test_hook_defaults_are_sent_and_the_caller_wins(
        self, scheduler: FakeScheduler, env: Any
    ) -> None:
        seen: list[EnqueueItem] = []

        def hook(item: EnqueueItem) -> dict[str, Any]:
            seen.append(item)
            return {"priority": 1, "timeout_ms": 5000}

        await create_client(on_enqueue=hook).enqueue(env, binding="MAIL", payload=None, priority=9)
        assert seen[0].priority == 9  # the hook sees the caller's input
        ((item,),) = sent_items(scheduler)
        assert (item["priority"], item["timeoutMs"]) == (9, 5000)

    async def test_an_async_hook_is_awaited(self, scheduler: FakeScheduler, env: Any) -> None:
        async def hook(item: EnqueueItem) -> dict[str, Any]:
            return {"max_attempts": 8}

        await create_client(on_enqueue=hook).enqueue(env, binding="MAIL", payload=None)
        assert sent_items(scheduler)[0][0]["maxAttempts"] == 8

    async def test_a_hook_returning_none_changes_nothing(self, scheduler: FakeScheduler, env: Any) -> None:
        await create_client(on_enqueue=lambda item: None).enqueue(env, binding="MAIL", payload=None)
        assert sent_items(scheduler) == [[{"binding": "MAIL", "payload": None}]]

    async def test_a_not_defaultable_default_is_refused_before_sending(
        self, scheduler: FakeScheduler, env: Any
    ) -> None:
        client = create_client(on_enqueue=lambda item: {"unique_key": "same-for-all"})
        with pytest.raises(EnqueueValidationError) as caught:
            await client.enqueue(env, binding="MAIL", payload=None)
        assert caught.value.field == "unique_key"
        assert scheduler.calls == []

    async def test_a_default_that_breaks_a_rule_is_refused_before_sending(
        self, scheduler: FakeScheduler, env: Any
    ) -> None:
        client = create_client(on_enqueue=lambda item: {"max_attempts": 0})
        with pytest.raises(EnqueueValidationError, match="max_attempts must be at least 1"):
            await client.enqueue(env, binding="MAIL", payload=None)
        assert scheduler.calls == []


class TestEnqueueMany:
    async def test_one_call_per_destination_shard_and_ids_in_input_order(
        self, scheduler: FakeScheduler, env: Any
    ) -> None:
        keys = [f"user-{i}" for i in range(12)]
        client = create_client(bindings={"MAIL": {"shards": 3}})
        ids = await client.enqueue_many(
            env, [{"binding": "MAIL", "payload": i, "partition_key": key} for i, key in enumerate(keys)]
        )
        calls = sent_items(scheduler)
        shards_used = {fnv1a32(key) % 3 for key in keys}
        assert len(calls) == len(shards_used)
        for call in calls:
            assert len({item["shard"] for item in call}) == 1  # each call goes to one shard
            assert [item["payload"] for item in call] == sorted(item["payload"] for item in call)
        assert [int(job_id.split("#")[1].split(":")[0]) for job_id in ids] == [
            fnv1a32(key) % 3 for key in keys
        ]
        assert [scheduler.issued[job_id]["payload"] for job_id in ids] == list(range(12))

    async def test_mixed_bindings_and_item_forms(self, scheduler: FakeScheduler, env: Any) -> None:
        client = create_client(bindings={"SMS": {"shards": 1}})
        ids = await client.enqueue_many(
            env,
            [
                EnqueueItem(binding="MAIL", payload="m1"),
                {"binding": "SMS", "payload": "s1", "partition_key": "ignored"},
                EnqueueItem(binding="MAIL", payload="m2"),
            ],
        )
        calls = sent_items(scheduler)
        assert calls[0] == [{"binding": "MAIL", "payload": "m1"}, {"binding": "MAIL", "payload": "m2"}]
        assert calls[1] == [{"binding": "SMS", "payload": "s1", "partitionKey": "ignored", "shard": 0}]
        assert ids == ["MAIL#0:j1", "SMS#0:j3", "MAIL#0:j2"]

    async def test_a_pinned_id_goes_to_its_shard(self, scheduler: FakeScheduler, env: Any) -> None:
        ids = await create_client().enqueue_many(
            env, [{"binding": "MAIL", "payload": 1, "id": "MAIL#2:fixed"}]
        )
        assert ids == ["MAIL#2:fixed"]
        assert sent_items(scheduler)[0][0]["shard"] == 2

    async def test_empty_list_sends_nothing(self, scheduler: FakeScheduler, env: Any) -> None:
        assert await create_client().enqueue_many(env, []) == []
        assert scheduler.calls == []

    async def test_big_batches_are_chunked(self, scheduler: FakeScheduler, env: Any) -> None:
        ids = await create_client().enqueue_many(
            env, [{"binding": "MAIL", "payload": i} for i in range(1201)]
        )
        assert [len(call) for call in sent_items(scheduler)] == [500, 500, 201]
        assert [item["payload"] for call in sent_items(scheduler) for item in call] == list(range(1201))
        assert len(set(ids)) == 1201

    async def test_one_bad_item_stops_everything_and_is_named_by_index(
        self, scheduler: FakeScheduler, env: Any
    ) -> None:
        client = create_client(bindings={"MAIL": {"shards": 2}})
        items: list[Any] = [
            {"binding": "MAIL", "payload": 1, "partition_key": "a"},
            {"binding": "MAIL", "payload": 2},
        ]
        with pytest.raises(EnqueueValidationError) as caught:
            await client.enqueue_many(env, items)
        assert caught.value.field == "items[1].partition_key"
        assert scheduler.calls == []

    async def test_an_item_that_is_not_an_item_is_named(self, scheduler: FakeScheduler, env: Any) -> None:
        with pytest.raises(
            EnqueueValidationError, match=r"items\[0\]\.item must be an EnqueueItem or a dict"
        ):
            await create_client().enqueue_many(env, ["MAIL"])  # type: ignore[list-item]
        with pytest.raises(EnqueueValidationError, match=r"items\[0\]\.payload is required"):
            await create_client().enqueue_many(env, [{"binding": "MAIL"}])  # type: ignore[typeddict-item]


class TestAcrossABindingBoundary:
    async def test_payload_with_tuples_and_enums_crosses(self, scheduler: FakeScheduler) -> None:
        env = SimpleNamespace(TSUMUGI=RuntimeBinding(scheduler))
        job_id = await create_client().enqueue(
            env, binding="MAIL", payload={"pair": (1, 2)}, guarantee=Guarantee.AT_MOST_ONCE
        )
        assert job_id == "MAIL#0:j1"
        assert sent_items(scheduler)[0][0]["payload"] == {"pair": [1, 2]}

    async def test_a_validation_error_raised_by_the_scheduler_comes_back_as_one(
        self, scheduler: FakeScheduler
    ) -> None:
        scheduler.raises["enqueue_many"] = EnqueueValidationError(
            "items[0].binding", "is not a registered binding: MAIL"
        )
        env = SimpleNamespace(TSUMUGI=RuntimeBinding(scheduler))
        with pytest.raises(EnqueueValidationError) as caught:
            await create_client().enqueue(env, binding="MAIL", payload=1)
        assert (caught.value.field, caught.value.rule) == ("binding", "is not a registered binding: MAIL")

    async def test_a_detail_comes_back_as_jsdict_and_decodes(self, scheduler: FakeScheduler) -> None:
        scheduler.answers["get"] = job_detail(progress=0.5)
        env = SimpleNamespace(TSUMUGI=RuntimeBinding(scheduler))
        job = await create_client().get(env, "MAIL#0:abc")
        assert job is not None
        assert job.progress == 0.5
