"""The Worker client (`create_client`) takes typed targets too, keeping the original's ``enqueue(env, ...)``."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from tests.unit.client.client_fakes import FakeScheduler, sent_items
from tsumugi_client import EnqueueValidationError, PerformerRef, create_client
from tsumugi_performer import JobContext, Performer


class Mail(msgspec.Struct, frozen=True):
    to: str


class SendMail(Performer[Mail, bool]):
    async def perform(self, payload: Mail, ctx: JobContext) -> bool:
        return True


async def test_a_performer_class_names_the_binding_and_its_struct_payload_goes_as_json(
    scheduler: FakeScheduler, env: Any
) -> None:
    job_id = await create_client().enqueue(env, SendMail, Mail(to="a"), priority=5)
    assert job_id == "SendMail#0:j1"
    assert sent_items(scheduler) == [[{"binding": "SendMail", "payload": {"to": "a"}, "priority": 5}]]


async def test_a_ref_or_a_name_goes_positionally_like_a_class(scheduler: FakeScheduler, env: Any) -> None:
    client = create_client()
    await client.enqueue(env, PerformerRef[Mail, bool]("SendMail"), Mail(to="b"))
    await client.enqueue(env, "SendMail", {"to": "c"})
    assert [items[0]["payload"] for items in sent_items(scheduler)] == [{"to": "b"}, {"to": "c"}]


async def test_the_originals_keywords_still_work(scheduler: FakeScheduler, env: Any) -> None:
    await create_client().enqueue(env, binding="SendMail", payload={"to": "d"})
    assert sent_items(scheduler)[0][0]["binding"] == "SendMail"


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [(("SendMail",), {}), (("SendMail", {}), {"binding": "SendMail"}), (("SendMail", {}, 3), {})],
)
async def test_mixing_the_two_shapes_is_a_type_error(
    env: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    with pytest.raises(TypeError, match="enqueue takes"):
        await create_client().enqueue(env, *args, **kwargs)


async def test_a_target_of_another_kind_names_the_binding_field(env: Any) -> None:
    with pytest.raises(EnqueueValidationError) as caught:
        await create_client().enqueue(env, 42, {})  # pyright: ignore[reportCallIssue, reportArgumentType]
    assert caught.value.field == "binding"
