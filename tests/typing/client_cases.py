"""Static typing cases for tsumugi_client's typed enqueue, checked by test_client_types.py (not a test module).

Each ``reveal_type`` line states the expected type in a trailing "revealed" comment; each line that must
be rejected ends in an "error" comment. Nothing here runs. ``Hello`` is imported for type checking only, as a
producer that must not import the performer's Worker at run time would do.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, reveal_type

from tsumugi_client import AsyncTsumugiClient, PerformerRef, TsumugiClient, create_client, performer_ref

if TYPE_CHECKING:
    from typing_performers import Hello, HelloPayload, Plain


def sync_calls(client: TsumugiClient, payload: HelloPayload) -> None:
    reveal_type(client.enqueue(Hello, payload))  # revealed: Job[str]
    reveal_type(client.enqueue(Hello, payload, priority=5, delay_ms=1_000))  # revealed: Job[str]
    client.enqueue(Hello, {"name": "a"})  # error
    client.enqueue(Hello, "a")  # error
    client.enqueue(Hello, payload, priority="high")  # error
    client.enqueue(Hello, payload, colour="red")  # error
    reveal_type(client.enqueue(Plain, 3))  # revealed: Job[list[int]]
    client.enqueue(Plain, payload)  # error
    reveal_type(client.enqueue("Hello", {"name": "a"}))  # revealed: Job[Any]
    reveal_type(client.enqueue(Hello, payload).result())  # revealed: str
    reveal_type(client.job("Hello#0:abc", str).result(timeout=5))  # revealed: str
    reveal_type(client.enqueue_many([{"binding": "Hello", "payload": {}}]))  # revealed: list[Job[Any]]


HELLO = performer_ref("Hello", lambda: Hello)
PLAIN: PerformerRef[int, list[int]] = PerformerRef("Plain")
TYPED_HELLO = performer_ref("Hello", lambda: Hello).returning(str)
performer_ref("Hello", lambda: Hello).returning(int)  # error


def ref_calls(client: TsumugiClient, payload: HelloPayload) -> None:
    reveal_type(HELLO)  # revealed: PerformerRef[HelloPayload, str]
    reveal_type(TYPED_HELLO)  # revealed: PerformerRef[HelloPayload, str]
    reveal_type(client.enqueue(HELLO, payload))  # revealed: Job[str]
    client.enqueue(HELLO, 3)  # error
    reveal_type(client.enqueue(PLAIN, 3))  # revealed: Job[list[int]]
    client.enqueue(PLAIN, "3")  # error


async def async_calls(client: AsyncTsumugiClient, payload: HelloPayload) -> None:
    job = await client.enqueue(Hello, payload)
    reveal_type(job)  # revealed: AsyncJob[str]
    reveal_type(await job.result())  # revealed: str
    await client.enqueue(Hello, 3)  # error
    reveal_type(await client.enqueue(HELLO, payload))  # revealed: AsyncJob[str]


async def worker_calls(env: Any, payload: HelloPayload) -> None:
    client = create_client()
    reveal_type(await client.enqueue(env, Hello, payload))  # revealed: str
    await client.enqueue(env, Hello, 3)  # error
    reveal_type(await client.enqueue(env, binding="Hello", payload={"name": "a"}))  # revealed: str


async def run_and_schedule_calls(env: Any, http: TsumugiClient) -> None:
    """Runs and schedules are the same calls on both kinds of client (ADR-0162); schedule options are typed."""
    client = create_client()
    reveal_type(await client.start_run(env, "greetings", {}))  # revealed: str
    reveal_type(http.start_run("greetings", {}, deadline_ms=timedelta(minutes=5)))  # revealed: str
    http.create_schedule("n", binding="Hello", payload={}, every_ms=timedelta(minutes=10))
    await client.create_schedule(env, "n", binding="Hello", payload={}, evry_ms=60_000)  # error
    http.update_schedule("n", timeout_ms="1s")  # error
    reveal_type(http.trigger_schedule("n"))  # revealed: str
