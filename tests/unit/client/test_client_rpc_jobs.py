"""Reads, mutations and the scheduler's errors over the Service Binding transport."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.unit.client.client_fakes import FakeScheduler, job_detail
from tsumugi_client import (
    EnqueueValidationError,
    InvalidJobIdError,
    JobNotFoundError,
    TsumugiClientError,
    create_client,
)


class TestSchedulerErrors:
    @pytest.mark.parametrize(
        "error",
        [
            # The local runtime's RemoteError text, and a traceback as Cloudflare wraps a Python exception.
            Exception("EnqueueValidationError: items[1].binding is not a registered binding: NOPE"),
            Exception(
                'Error: Traceback (most recent call last):\n  File "entry.py", line 3\n'
                "tsumugi_core.options.EnqueueValidationError: items[1].binding is not a registered binding: NOPE\n"
            ),
        ],
    )
    async def test_a_remote_validation_error_comes_back_as_one_naming_the_callers_item(
        self, scheduler: FakeScheduler, env: Any, error: Exception
    ) -> None:
        scheduler.raises["enqueue_many"] = error
        client = create_client(bindings={"NOPE": {"shards": 1}})
        items: list[Any] = [
            {"binding": "MAIL", "payload": 0},
            {"binding": "NOPE", "payload": 1},
            {"binding": "MAIL", "payload": 2},
            {"binding": "MAIL", "payload": 3},
        ]
        with pytest.raises(EnqueueValidationError) as caught:
            await client.enqueue_many(env, items)
        # The first call carries items 0, 2, 3 (MAIL); its items[1] is the caller's items[2].
        assert caught.value.field == "items[2].binding"
        assert caught.value.rule == "is not a registered binding: NOPE"

    async def test_single_enqueue_names_the_bare_field(self, scheduler: FakeScheduler, env: Any) -> None:
        scheduler.raises["enqueue_many"] = Exception(
            "EnqueueValidationError: items[0].shard must be 1, the scheduler's shard"
        )
        with pytest.raises(EnqueueValidationError) as caught:
            await create_client().enqueue(env, binding="MAIL", payload=1)
        assert (caught.value.field, caught.value.rule) == ("shard", "must be 1, the scheduler's shard")

    async def test_any_other_exception_is_a_client_error_without_status(
        self, scheduler: FakeScheduler, env: Any
    ) -> None:
        scheduler.raises["enqueue_many"] = RuntimeError("D1 exploded")
        with pytest.raises(TsumugiClientError) as caught:
            await create_client().enqueue(env, binding="MAIL", payload=1)
        assert caught.value.status is None
        assert "scheduler RPC enqueue_many failed: RuntimeError: D1 exploded" in caught.value.message

    @pytest.mark.parametrize("answer", [["only-one"], [1, 2], {"ids": []}, "nope"])
    async def test_a_malformed_enqueue_answer_is_a_client_error(
        self, scheduler: FakeScheduler, env: Any, answer: Any
    ) -> None:
        scheduler.answers["enqueue_many"] = answer
        with pytest.raises(TsumugiClientError):
            await create_client().enqueue_many(
                env, [{"binding": "MAIL", "payload": 1}, {"binding": "MAIL", "payload": 2}]
            )

    async def test_a_missing_binding_says_how_to_fix_it(self) -> None:
        with pytest.raises(TsumugiClientError, match="env has no TSUMUGI binding"):
            await create_client().enqueue(SimpleNamespace(), binding="MAIL", payload=1)
        with pytest.raises(TsumugiClientError, match="env is None"):
            await create_client().enqueue(None, binding="MAIL", payload=1)


class TestReadsAndMutations:
    async def test_get_decodes_the_detail(self, scheduler: FakeScheduler, env: Any) -> None:
        scheduler.answers["get"] = job_detail(cancel_requested=True, run_id="flow:r1", node_id="n1")
        job = await create_client().get(env, "MAIL#0:abc")
        assert job is not None
        assert (job.id, job.state, job.attempts, job.progress, job.cancel_requested, job.run_id) == (
            "MAIL#0:abc",
            "FAILED",
            3,
            1.0,
            True,
            "flow:r1",
        )
        assert job.payload_value() == {"to": "a"}
        assert job.attempts_log[0].error == "boom"
        assert scheduler.calls == [("get", ("MAIL#0:abc",))]

    async def test_get_of_an_unknown_job_is_none(self, scheduler: FakeScheduler, env: Any) -> None:
        assert await create_client().get(env, "MAIL#0:nope") is None

    async def test_get_ignores_keys_it_does_not_know(self, scheduler: FakeScheduler, env: Any) -> None:
        scheduler.answers["get"] = job_detail(something_new=1)
        assert await create_client().get(env, "MAIL#0:abc") is not None

    async def test_a_malformed_detail_is_a_client_error(self, scheduler: FakeScheduler, env: Any) -> None:
        scheduler.answers["get"] = {"id": "MAIL#0:abc"}
        with pytest.raises(TsumugiClientError, match="malformed job detail"):
            await create_client().get(env, "MAIL#0:abc")

    @pytest.mark.parametrize("job_id", ["MAIL:abc", "MAIL#0", "MAIL#x:abc", "MAIL#0:a:b"])
    async def test_a_malformed_id_is_refused_before_sending(
        self, scheduler: FakeScheduler, env: Any, job_id: str
    ) -> None:
        client = create_client()
        for call in (client.get, client.cancel, client.retry):
            with pytest.raises(InvalidJobIdError):
                await call(env, job_id)
        with pytest.raises(InvalidJobIdError):
            await client.reschedule(env, job_id, delay_ms=5)
        assert scheduler.calls == []

    async def test_cancel_reports_whether_a_running_job_was_asked_to_stop(
        self, scheduler: FakeScheduler, env: Any
    ) -> None:
        client = create_client()
        assert (await client.cancel(env, "MAIL#0:abc")).requested is False
        scheduler.answers["cancel"] = {"ok": True, "requested": True}
        assert (await client.cancel(env, "MAIL#0:abc")).requested is True

    async def test_retry_and_reschedule_send_their_arguments(
        self, scheduler: FakeScheduler, env: Any
    ) -> None:
        client = create_client()
        await client.retry(env, "MAIL#0:abc")
        await client.reschedule(env, "MAIL#0:abc", run_at=5000, priority=2)
        await client.reschedule(env, "MAIL#0:abc", delay_ms=0)
        assert scheduler.calls == [
            ("retry", ("MAIL#0:abc",)),
            ("reschedule", ("MAIL#0:abc", {"runAt": 5000, "priority": 2})),
            ("reschedule", ("MAIL#0:abc", {"delayMs": 0})),
        ]

    @pytest.mark.parametrize(
        ("kwargs", "field", "rule"),
        [
            ({}, "run_at", "or delay_ms is required"),
            ({"run_at": 1, "delay_ms": 1}, "run_at", "and delay_ms are mutually exclusive"),
            ({"delay_ms": -1}, "delay_ms", "must not be negative"),
            ({"run_at": 1.5}, "run_at", "must be an integer, got 1.5"),
            ({"delay_ms": 1, "priority": True}, "priority", "must be an integer, got True"),
            ({"run_at": 2**53}, "run_at", "must be between"),
        ],
    )
    async def test_bad_reschedule_arguments_are_refused_before_sending(
        self, scheduler: FakeScheduler, env: Any, kwargs: dict[str, Any], field: str, rule: str
    ) -> None:
        with pytest.raises(EnqueueValidationError) as caught:
            await create_client().reschedule(env, "MAIL#0:abc", **kwargs)
        assert caught.value.field == field
        assert caught.value.rule.startswith(rule)
        assert scheduler.calls == []

    @pytest.mark.parametrize("method", ["cancel", "retry"])
    async def test_refusals_map_to_the_rest_statuses(
        self, scheduler: FakeScheduler, env: Any, method: str
    ) -> None:
        client = create_client()
        scheduler.answers[method] = {"ok": False, "reason": "invalid-state"}
        with pytest.raises(TsumugiClientError) as invalid:
            await getattr(client, method)(env, "MAIL#0:abc")
        assert (invalid.value.status, invalid.value.reason) == (409, "invalid-state")
        assert not isinstance(invalid.value, JobNotFoundError)
        scheduler.answers[method] = {"ok": False, "reason": "gone"}
        with pytest.raises(JobNotFoundError) as gone:
            await getattr(client, method)(env, "MAIL#0:abc")
        assert (gone.value.status, gone.value.job_id) == (410, "MAIL#0:abc")

    async def test_reschedule_refusal_and_malformed_answers(self, scheduler: FakeScheduler, env: Any) -> None:
        client = create_client()
        scheduler.answers["reschedule"] = {"ok": False, "reason": "gone"}
        with pytest.raises(JobNotFoundError):
            await client.reschedule(env, "MAIL#0:abc", delay_ms=1)
        scheduler.answers["retry"] = {"ok": False, "reason": "weird"}
        with pytest.raises(TsumugiClientError, match="unknown reason: 'weird'"):
            await client.retry(env, "MAIL#0:abc")
        scheduler.answers["retry"] = ["ok"]
        with pytest.raises(TsumugiClientError, match="malformed value"):
            await client.retry(env, "MAIL#0:abc")


def test_a_run_controls_refusal_keeps_the_schedulers_reason_when_it_gives_one() -> None:
    from tsumugi_client._runs import run_control

    why = "run leafy:c is the subflow of node sub of run shape:r: resume that run to run it again"
    with pytest.raises(TsumugiClientError) as told:
        run_control({"ok": False, "reason": "invalid-state", "error": why}, "leafy:c")
    assert (told.value.status, told.value.reason) == (409, "invalid-state")
    assert why in str(told.value)
    with pytest.raises(TsumugiClientError) as plain:
        run_control({"ok": False, "reason": "invalid-state"}, "leafy:c")
    assert "resume that run" not in str(plain.value)
