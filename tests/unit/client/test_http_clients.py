"""`TsumugiClient` and `AsyncTsumugiClient` against a respx-mocked REST API: every call, every error mapping,
retries with backoff and jitter, and the retried enqueue that had in fact arrived (one job, one id).

Each test runs twice, once per client (the ``h`` fixture), with a fake clock and sleep."""

from __future__ import annotations

import json
from typing import Any

import httpx
import msgspec
import pytest
import respx

from tests.unit.client.http_harness import BASE, TOKEN, Harness, detail, one_shard_each
from tsumugi_client import (
    AsyncTsumugiClient,
    AuthError,
    CancelResult,
    ConflictError,
    EnqueueValidationError,
    InvalidJobIdError,
    JobFailedError,
    JobNotFoundError,
    JobState,
    PerformerRef,
    RetryPolicy,
    TsumugiClient,
    TsumugiClientError,
    UnavailableError,
    WaitTimeoutError,
)
from tsumugi_core.sharding import resolve_shard
from tsumugi_performer import JobContext, Performer

FIRST_ID = "Hello#0:job000000000000000000001"
ENCODED = "/api/jobs/Hello%230%3Ajob000000000000000000001"


class Greeting(msgspec.Struct, frozen=True):
    text: str


class Greet(Performer[dict[str, str], Greeting]):
    async def perform(self, payload: dict[str, str], ctx: JobContext) -> Greeting:
        return Greeting(text=f"Hello, {payload['name']}!")


def body_of(request: httpx.Request) -> Any:
    return json.loads(request.content)


class TestEnqueue:
    async def test_one_job_goes_to_post_jobs_with_a_client_made_id_on_its_shard(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        bindings = one_shard_each(api, "Hello")
        route = api.post("/api/jobs").respond(201, json={"id": FIRST_ID})
        client = h.client()
        job = await h(client.enqueue("Hello", {"name": "a"}, priority=5, delay_ms=1_000))
        assert job.id == FIRST_ID
        sent = route.calls.last.request
        assert body_of(sent) == {
            "binding": "Hello",
            "payload": {"name": "a"},
            "priority": 5,
            "delayMs": 1000,
            "id": FIRST_ID,
            "shard": 0,
        }
        assert sent.headers["authorization"] == f"Bearer {TOKEN}"
        assert sent.headers["content-type"] == "application/json"
        await h(client.enqueue("Hello", {"name": "b"}))
        assert bindings.call_count == 1  # the shard counts are asked once per client

    async def test_configured_bindings_need_no_question_and_route_by_partition_key(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        bindings = api.get("/api/bindings")
        route = api.post("/api/jobs").respond(201, json={"id": "SMS#1:job000000000000000000001"})
        client = h.client(bindings={"SMS": {"shards": 2}})
        await h(client.enqueue("SMS", 1, partition_key="user-1"))
        assert not bindings.called
        sent = body_of(route.calls.last.request)
        shard = resolve_shard("SMS", 2, "user-1")
        assert (sent["id"], sent["shard"]) == (f"SMS#{shard}:job000000000000000000001", shard)

    async def test_a_sharded_binding_without_partition_key_is_refused_before_anything_is_sent(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        route = api.post("/api/jobs")
        client = h.client(bindings={"SMS": {"shards": 2}})
        with pytest.raises(EnqueueValidationError) as caught:
            await h(client.enqueue("SMS", 1))
        assert caught.value.field == "partition_key"
        assert not route.called

    async def test_a_scheduler_that_gives_no_shard_counts_routes_itself_and_is_asked_once(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        bindings = api.get("/api/bindings").respond(200, json={"bindings": ["Hello"]})
        route = api.post("/api/jobs").respond(201, json={"id": FIRST_ID})
        client = h.client()
        await h(client.enqueue("Hello", 1))
        await h(client.enqueue("Hello", 2))
        assert "id" not in body_of(route.calls.last.request)
        assert bindings.call_count == 1

    async def test_bad_options_are_refused_locally_naming_the_option(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        route = api.post("/api/jobs")
        client = h.client()
        with pytest.raises(EnqueueValidationError) as caught:
            await h(client.enqueue("Hello", {}, max_attempts=0))
        assert (caught.value.field, caught.value.rule) == ("max_attempts", "must be at least 1")
        with pytest.raises(EnqueueValidationError) as unknown:
            await h(client.enqueue("Hello", {}, colour="red"))  # type: ignore[call-overload]
        assert (unknown.value.field, unknown.value.rule) == ("colour", "is not an enqueue option")
        assert not route.called

    async def test_the_schedulers_validation_error_names_the_option_as_sent(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        one_shard_each(api, "Hello")
        api.post("/api/jobs").respond(
            400,
            json={
                "error": "binding is not a registered performer: Hello",
                "field": "binding",
                "rule": "is not a registered performer: Hello",
            },
        )
        with pytest.raises(EnqueueValidationError) as caught:
            await h(h.client().enqueue("Hello", {}))
        assert (caught.value.field, caught.value.rule) == ("binding", "is not a registered performer: Hello")

    async def test_a_performer_class_names_the_binding_and_types_the_result(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        one_shard_each(api, "Greet")
        route = api.post("/api/jobs").respond(201, json={"id": "Greet#0:job000000000000000000001"})
        api.get("/api/jobs/Greet%230%3Ajob000000000000000000001").respond(
            200, json={"job": detail("Greet#0:job000000000000000000001", result='{"text":"Hello, a!"}')}
        )
        client = h.client()
        job = await h(client.enqueue(Greet, {"name": "a"}))
        assert body_of(route.calls.last.request)["binding"] == "Greet"
        assert await h(job.result()) == Greeting(text="Hello, a!")

    async def test_a_performer_ref_names_the_binding_and_decodes_into_its_result_type(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        one_shard_each(api, "Greet")
        route = api.post("/api/jobs").respond(201, json={"id": "Greet#0:job000000000000000000001"})
        api.get("/api/jobs/Greet%230%3Ajob000000000000000000001").respond(
            200, json={"job": detail("Greet#0:job000000000000000000001", result='{"text":"Hi"}')}
        )
        ref: PerformerRef[dict[str, str], Greeting] = PerformerRef[dict[str, str], Greeting](
            "Greet"
        ).returning(Greeting)
        job = await h(h.client().enqueue(ref, {"name": "a"}))
        assert body_of(route.calls.last.request)["payload"] == {"name": "a"}
        assert await h(job.result()) == Greeting(text="Hi")

    async def test_a_struct_payload_is_sent_as_its_json_object(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        one_shard_each(api, "Hello")
        route = api.post("/api/jobs").respond(201, json={"id": FIRST_ID})
        await h(h.client().enqueue("Hello", Greeting(text="x")))
        assert body_of(route.calls.last.request)["payload"] == {"text": "x"}

    async def test_on_enqueue_defaults_fill_what_the_caller_left_out(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        one_shard_each(api, "Hello")
        route = api.post("/api/jobs").respond(201, json={"id": FIRST_ID})
        client = h.client(on_enqueue=lambda item: {"priority": 9, "max_attempts": 5})
        await h(client.enqueue("Hello", {}, priority=1))
        sent = body_of(route.calls.last.request)
        assert (sent["priority"], sent["maxAttempts"]) == (1, 5)


class TestEnqueueMany:
    async def test_items_go_in_one_bulk_call_per_shard_and_handles_come_back_in_input_order(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        def answer(request: httpx.Request) -> httpx.Response:
            return httpx.Response(201, json={"ids": [item["id"] for item in body_of(request)["items"]]})

        route = api.post("/api/jobs/bulk-enqueue").mock(side_effect=answer)
        client = h.client(bindings={"SMS": {"shards": 2}})
        keys = ["user-1", "user-2", "user-1", "user-2"]
        jobs = await h(
            client.enqueue_many(
                [{"binding": "SMS", "payload": i, "partition_key": k} for i, k in enumerate(keys)]
            )
        )
        assert route.call_count == 2
        shards = [job.id.split(":")[0] for job in jobs]
        assert shards[0] == shards[2] != shards[1] == shards[3]
        assert len({job.id for job in jobs}) == 4

    async def test_an_items_error_names_its_position_in_the_callers_list(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        one_shard_each(api, "A", "B")
        api.post("/api/jobs/bulk-enqueue").respond(
            400,
            json={
                "error": "items[1].priority must be an integer",
                "field": "items[1].priority",
                "rule": "must be an integer",
            },
        )
        api.post("/api/jobs").respond(201, json={"id": "B#0:job000000000000000000002"})
        items: list[Any] = [
            {"binding": "A", "payload": 0},
            {"binding": "B", "payload": 1},
            {"binding": "A", "payload": 2},
        ]
        with pytest.raises(EnqueueValidationError) as caught:
            await h(h.client().enqueue_many(items))
        assert caught.value.field == "items[2].priority"

    async def test_a_bad_item_is_refused_before_any_is_sent(self, h: Harness, api: respx.MockRouter) -> None:
        route = api.post("/api/jobs/bulk-enqueue")
        with pytest.raises(EnqueueValidationError) as caught:
            await h(
                h.client().enqueue_many(
                    [{"binding": "A", "payload": 0}, {"binding": "A", "payload": 1, "delay_ms": -1}]
                )
            )
        assert caught.value.field == "items[1].delay_ms"
        assert not route.called

    async def test_nothing_to_enqueue_sends_nothing(self, h: Harness, api: respx.MockRouter) -> None:
        assert await h(h.client().enqueue_many([])) == []


class TestRetries:
    async def test_a_retried_enqueue_whose_first_try_arrived_makes_one_job_with_one_id(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        one_shard_each(api, "Hello")
        stored: dict[str, Any] = {}
        tries: list[int] = []

        def scheduler(request: httpx.Request) -> httpx.Response:
            item = body_of(request)
            stored.setdefault(item["id"], item)  # a pinned id that exists answers the existing job
            tries.append(1)
            if len(tries) == 1:  # stored, but the answer is lost on the way back
                raise httpx.ReadError("connection reset after the request was sent", request=request)
            return httpx.Response(201, json={"id": item["id"]})

        route = api.post("/api/jobs").mock(side_effect=scheduler)
        job = await h(h.client().enqueue("Hello", {"name": "a"}))
        assert route.call_count == 2
        assert list(stored) == [job.id] == [FIRST_ID]
        first, second = (body_of(call.request) for call in route.calls)
        assert first == second

    @pytest.mark.parametrize("status", [502, 503, 504])
    async def test_unavailable_answers_are_retried_with_jittered_exponential_backoff(
        self, h: Harness, api: respx.MockRouter, status: int
    ) -> None:
        route = api.get(ENCODED).mock(
            side_effect=[
                httpx.Response(status),
                httpx.Response(status),
                httpx.Response(200, json={"job": detail()}),
            ]
        )
        policy = RetryPolicy(attempts=4, base_s=0.2, factor=2.0, max_s=5.0)
        job = await h(h.client(retry=policy).get(FIRST_ID))
        assert job.state is JobState.COMPLETED
        assert route.call_count == 3
        first, second = h.clock.slept
        assert 0.1 <= first <= 0.2
        assert 0.2 <= second <= 0.4

    async def test_the_same_seed_gives_the_same_pauses(self, api: respx.MockRouter) -> None:
        api.get(ENCODED).respond(503)
        pauses: list[list[float]] = []
        for _ in range(2):
            harness = Harness("sync")
            with pytest.raises(UnavailableError):
                harness.client(seed=42).get(FIRST_ID)
            pauses.append(harness.clock.slept)
            await harness.close()
        assert pauses[0] == pauses[1]
        assert len(pauses[0]) == 3

    async def test_when_tries_run_out_the_last_answer_is_an_unavailable_error(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        api.get(ENCODED).respond(503, json={"error": "database temporarily unavailable"})
        with pytest.raises(UnavailableError) as caught:
            await h(h.client(retry=RetryPolicy(attempts=2)).get(FIRST_ID))
        assert (caught.value.status, caught.value.message) == (503, "database temporarily unavailable")
        assert len(h.clock.slept) == 1

    async def test_connection_failures_are_retried_then_unavailable_without_a_status(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        route = api.get(ENCODED).mock(side_effect=httpx.ConnectError("refused"))
        with pytest.raises(UnavailableError) as caught:
            await h(h.client(retry=RetryPolicy(attempts=3)).get(FIRST_ID))
        assert caught.value.status is None
        assert route.call_count == 3

    async def test_an_enqueue_without_a_client_id_is_not_repeated_once_it_may_have_arrived(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        api.get("/api/bindings").respond(200, json={"bindings": []})  # an older scheduler: no shard counts
        route = api.post("/api/jobs").mock(side_effect=httpx.ReadTimeout("no answer"))
        with pytest.raises(UnavailableError):
            await h(h.client().enqueue("Hello", {}))
        assert route.call_count == 1

    async def test_an_enqueue_without_a_client_id_is_repeated_when_it_cannot_have_arrived(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        api.get("/api/bindings").respond(200, json={"bindings": []})
        route = api.post("/api/jobs").mock(
            side_effect=[httpx.ConnectError("refused"), httpx.Response(201, json={"id": FIRST_ID})]
        )
        job = await h(h.client().enqueue("Hello", {}))
        assert (job.id, route.call_count) == (FIRST_ID, 2)

    async def test_mutations_are_not_repeated_after_a_503(self, h: Harness, api: respx.MockRouter) -> None:
        route = api.post(f"{ENCODED}/cancel").respond(503)
        with pytest.raises(UnavailableError):
            await h(h.client().cancel(FIRST_ID))
        assert route.call_count == 1


class TestErrors:
    @pytest.mark.parametrize("status", [401, 403])
    async def test_refused_credentials_are_an_auth_error(
        self, h: Harness, api: respx.MockRouter, status: int
    ) -> None:
        api.get(ENCODED).respond(status, json={"error": "unauthorized"})
        with pytest.raises(AuthError) as caught:
            await h(h.client().get(FIRST_ID))
        assert caught.value.status == status

    async def test_a_state_refusal_is_a_conflict(self, h: Harness, api: respx.MockRouter) -> None:
        api.post(f"{ENCODED}/retry").respond(
            409, json={"ok": False, "reason": "invalid-state", "error": "not allowed in the current state"}
        )
        with pytest.raises(ConflictError) as caught:
            await h(h.client().retry(FIRST_ID))
        assert (caught.value.status, caught.value.reason, caught.value.field) == (409, "invalid-state", None)

    async def test_a_routing_conflict_names_the_field(self, h: Harness, api: respx.MockRouter) -> None:
        api.post("/api/jobs").respond(
            409, json={"error": "shard must be 1", "field": "shard", "rule": "must be 1"}
        )
        with pytest.raises(ConflictError) as caught:
            await h(h.client(bindings={"Hello": {"shards": 1}}).enqueue("Hello", {}))
        assert caught.value.field == "shard"

    async def test_a_swept_job_is_not_found(self, h: Harness, api: respx.MockRouter) -> None:
        api.post(f"{ENCODED}/cancel").respond(410, json={"ok": False, "reason": "gone", "error": "gone"})
        with pytest.raises(JobNotFoundError) as caught:
            await h(h.client().cancel(FIRST_ID))
        assert caught.value.job_id == FIRST_ID

    async def test_an_unknown_job_reads_as_none(self, h: Harness, api: respx.MockRouter) -> None:
        api.get(ENCODED).respond(404, json={"error": "not found"})
        assert await h(h.client().get(FIRST_ID)) is None

    async def test_a_plain_text_404_points_at_auth_and_base_url(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        api.get(ENCODED).respond(404, text="not found")
        with pytest.raises(TsumugiClientError, match="is auth configured"):
            await h(h.client().get(FIRST_ID))

    async def test_a_server_fault_is_a_client_error_with_its_status(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        api.get(ENCODED).respond(500, json={"error": "internal error"})
        with pytest.raises(TsumugiClientError) as caught:
            await h(h.client().get(FIRST_ID))
        assert type(caught.value) is TsumugiClientError
        assert caught.value.status == 500

    async def test_a_malformed_id_is_refused_before_anything_is_sent(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        client = h.client()
        for call in (client.get, client.cancel, client.retry, client.job):
            with pytest.raises(InvalidJobIdError):
                await h(call("no-hash"))

    async def test_an_enqueue_answer_without_an_id_is_a_client_error(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        one_shard_each(api, "Hello")
        api.post("/api/jobs").respond(201, json={"ok": True})
        with pytest.raises(TsumugiClientError, match="without 1 job ids"):
            await h(h.client().enqueue("Hello", {}))


class TestJobCalls:
    async def test_cancel_retry_and_reschedule_post_to_the_jobs_action(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        cancel = api.post(f"{ENCODED}/cancel").respond(200, json={"ok": True, "requested": True})
        retry = api.post(f"{ENCODED}/retry").respond(200, json={"ok": True})
        reschedule = api.post(f"{ENCODED}/reschedule").respond(200, json={"ok": True})
        client = h.client()
        assert await h(client.cancel(FIRST_ID)) == CancelResult(requested=True)
        assert await h(client.retry(FIRST_ID)) is None
        assert await h(client.reschedule(FIRST_ID, delay_ms=5_000, priority=2)) is None
        assert (cancel.called, retry.called) == (True, True)
        assert body_of(reschedule.calls.last.request) == {"delayMs": 5000, "priority": 2}

    async def test_reschedule_needs_exactly_one_time(self, h: Harness, api: respx.MockRouter) -> None:
        with pytest.raises(EnqueueValidationError, match="run_at"):
            await h(h.client().reschedule(FIRST_ID))


class TestWaiting:
    async def test_wait_polls_with_growing_pauses_until_the_job_is_finished(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        states = ["QUEUED", "RUNNING", "RUNNING", "COMPLETED"]
        api.get(ENCODED).mock(
            side_effect=[
                httpx.Response(200, json={"job": detail(state=s, result='"Hello, a!"')}) for s in states
            ]
        )
        job = h.client().job(FIRST_ID, str)
        finished = await h(job.wait(timeout=60))
        assert finished.state is JobState.COMPLETED
        assert h.clock.slept == [0.01, 0.02, 0.04]

    async def test_result_decodes_the_stored_json(self, h: Harness, api: respx.MockRouter) -> None:
        api.get(ENCODED).respond(200, json={"job": detail(result='"Hello, a!"')})
        result = await h(h.client().job(FIRST_ID, str).result())
        assert result == "Hello, a!"
        assert await h(h.client().job(FIRST_ID).state()) is JobState.COMPLETED

    async def test_a_result_that_does_not_fit_its_type_is_a_client_error(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        api.get(ENCODED).respond(200, json={"job": detail(result="null")})
        with pytest.raises(TsumugiClientError, match="does not decode") as caught:
            await h(h.client().job(FIRST_ID, str).result())
        assert caught.value.status is None

    async def test_a_job_that_failed_raises_with_its_last_error(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        log = [{"attempt": 3, "state": "FAILED", "started_at": 1, "finished_at": 2, "error": "boom"}]
        api.get(ENCODED).respond(200, json={"job": detail(state="FAILED", attempts_log=log)})
        with pytest.raises(JobFailedError) as caught:
            await h(h.client().job(FIRST_ID).result())
        assert (caught.value.state, caught.value.error) == ("FAILED", "boom")

    async def test_wait_gives_up_at_its_timeout_and_the_job_goes_on(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        route = api.get(ENCODED).respond(200, json={"job": detail(state="RUNNING")})
        with pytest.raises(WaitTimeoutError) as caught:
            await h(h.client().job(FIRST_ID).wait(timeout=0.5))
        assert caught.value.state == "RUNNING"
        assert sum(h.clock.slept) == pytest.approx(0.5)
        assert route.call_count == len(h.clock.slept) + 1
        assert isinstance(caught.value, TimeoutError)

    async def test_a_wait_of_an_hour_polls_past_a_thousand_looks_without_overflowing(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        api.get(ENCODED).respond(200, json={"job": detail(state="RUNNING")})
        with pytest.raises(WaitTimeoutError):
            await h(h.client().job(FIRST_ID).wait(timeout=3_600))
        assert len(h.clock.slept) > 1_024  # the 1,025th pause was 0.01 * 2.0**1024: OverflowError
        assert sum(h.clock.slept) == pytest.approx(3_600)

    async def test_a_wait_timeout_that_is_not_a_number_is_refused(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        route = api.get(ENCODED).respond(200, json={"job": detail(state="RUNNING")})
        with pytest.raises(ValueError, match="timeout must be a number of seconds"):
            await h(h.client().job(FIRST_ID).wait(timeout=float("nan")))  # it never timed out
        assert not route.called

    async def test_a_job_the_scheduler_no_longer_knows_is_not_found(
        self, h: Harness, api: respx.MockRouter
    ) -> None:
        api.get(ENCODED).respond(404, json={"error": "not found"})
        with pytest.raises(JobNotFoundError):
            await h(h.client().job(FIRST_ID).state())

    async def test_a_negative_timeout_is_refused(self, h: Harness, api: respx.MockRouter) -> None:
        api.get(ENCODED).respond(200, json={"job": detail(state="RUNNING")})
        with pytest.raises(ValueError, match="timeout"):
            await h(h.client().job(FIRST_ID).wait(timeout=-1))


class TestSettings:
    @pytest.mark.parametrize(
        ("settings", "message"),
        [
            ({"token": " "}, "token"),
            ({"on_enqueue": 3}, "on_enqueue"),
            ({"bindings": {"A": {"shards": 0}}}, "shards"),
        ],
    )
    async def test_bad_settings_name_themselves(
        self, h: Harness, settings: dict[str, Any], message: str
    ) -> None:
        with pytest.raises(ValueError, match=message):
            h.client(**settings)

    @pytest.mark.parametrize("client_class", [TsumugiClient, AsyncTsumugiClient])
    def test_base_url_must_be_absolute(self, client_class: type) -> None:
        with pytest.raises(ValueError, match="base_url"):
            client_class("tsumugi.example.com")

    def test_the_blocking_client_refuses_an_async_on_enqueue_hook(self, api: respx.MockRouter) -> None:
        async def hook(item: object) -> dict[str, int]:
            return {"priority": 1}

        with (
            TsumugiClient(BASE, on_enqueue=hook, bindings={"Hello": {}}) as client,
            pytest.raises(EnqueueValidationError) as caught,
        ):
            client.enqueue("Hello", {})
        assert caught.value.field == "on_enqueue"

    async def test_the_async_client_awaits_an_async_on_enqueue_hook(self, api: respx.MockRouter) -> None:
        async def hook(item: object) -> dict[str, int]:
            return {"priority": 4}

        route = api.post("/api/jobs").respond(201, json={"id": FIRST_ID})
        async with AsyncTsumugiClient(BASE, on_enqueue=hook, bindings={"Hello": {}}) as client:
            await client.enqueue("Hello", {})
        assert body_of(route.calls.last.request)["priority"] == 4

    async def test_a_client_closes_the_pool_it_made_but_not_one_it_was_given(self) -> None:
        given = httpx.Client()
        with TsumugiClient(BASE, http_client=given):
            pass
        assert not given.is_closed
        given.close()
        made = TsumugiClient(BASE)
        made.close()
        assert made._http.is_closed  # pyright: ignore[reportPrivateUsage]
        async with AsyncTsumugiClient(BASE) as async_made:
            pass
        assert async_made._http.is_closed  # pyright: ignore[reportPrivateUsage]


class TestSettingsNoRequestCouldCarry:
    @pytest.mark.parametrize("token", ["s3cret\n", " s3cret", "s3 cret", "s3cr\u00e9t"])
    async def test_a_token_no_header_can_carry_is_refused_without_echoing_it(
        self, h: Harness, token: str
    ) -> None:
        # httpx refused it at the first request, with the token in its error's message.
        with pytest.raises(ValueError, match="token must be printable ASCII") as caught:
            h.client(token=token)
        assert token.strip() not in str(caught.value)

    @pytest.mark.parametrize("timeout", [-5, 0, float("nan"), float("inf")])
    async def test_a_request_timeout_that_is_not_a_finite_number_above_zero_is_refused(
        self, h: Harness, timeout: float
    ) -> None:
        with pytest.raises(ValueError, match="timeout must be a finite number of seconds above 0"):
            h.client(timeout=timeout, http_client=None)
