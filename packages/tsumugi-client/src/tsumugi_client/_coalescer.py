"""The async client's single enqueues of one event-loop turn, sent as one call per shard (ADR-0164).

Sixteen tasks that each ``await client.enqueue(...)`` at once would make sixteen HTTP requests, each a REST
call, an RPC to the same JobShard and a transaction of one row; the Durable Object serialises them anyway.
`EnqueueCoalescer` gathers the items added during one turn of the event loop, per destination shard, and sends
each shard's (up to 500 at a time) as one call through the client's own many-item path, then hands each caller
its own id. One call per batch means a failed call failed for every caller in it, and no caller's stored job
is reported as failed because another shard's call failed. Guarantees kept:

- a caller's ``enqueue`` returns only once the call holding its item has answered (its job is stored);
- dedup by ``unique_key`` or ``id`` is the shard's, item by item in the order the callers came;
- errors stay per caller: when the batch is refused because of an item (a validation error or a conflict),
  every item is sent again on its own, under the same client-made id, so each caller gets exactly the
  answer it would have got alone; any other failure (auth, unavailable, a fault) is every caller's.

A lone enqueue is a batch of one: the same ``POST /api/jobs`` as before, one loop turn later.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from tsumugi_client._errors import ConflictError
from tsumugi_client._routing import MAX_BATCH_ITEMS, Destination
from tsumugi_core.options import EnqueueItem, EnqueueValidationError

__all__ = ["EnqueueCoalescer"]

_Pending = tuple[EnqueueItem, "asyncio.Future[str]"]


class EnqueueCoalescer:
    """Batches of single enqueues, one per event-loop turn, sent with ``send`` (items in, ids out)."""

    def __init__(self, send: Callable[[list[EnqueueItem]], Awaitable[list[str]]]) -> None:
        """Send each batch with ``send``, which raises as the client's many-item enqueue does."""
        self._send = send
        self._gathering: dict[Destination, list[_Pending]] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def add(self, item: EnqueueItem, destination: Destination, waiter: asyncio.Future[str]) -> None:
        """Put ``item`` (with its client-made id) in this turn's batch for ``destination``.

        ``waiter`` gets the item's id, or its error.
        """
        if self._gathering is None:
            self._gathering = {}
            # call_soon runs after every callback already ready in this turn: the tasks started together
            # (a gather, a semaphore's released waiters) have all added their items by then.
            asyncio.get_running_loop().call_soon(self._close_batches)
        self._gathering.setdefault(destination, []).append((item, waiter))

    def _close_batches(self) -> None:
        gathered, self._gathering = self._gathering or {}, None
        loop = asyncio.get_running_loop()
        for pending in gathered.values():
            for start in range(0, len(pending), MAX_BATCH_ITEMS):  # one call each
                task = loop.create_task(self._run(pending[start : start + MAX_BATCH_ITEMS]))
                self._tasks.add(task)  # held until done: the loop keeps only a weak reference
                task.add_done_callback(self._tasks.discard)

    async def _run(self, batch: list[_Pending]) -> None:
        live = [(item, waiter) for item, waiter in batch if not waiter.done()]  # a cancelled caller's item
        if not live:
            return
        try:
            ids = await self._send([item for item, _ in live])
        except (EnqueueValidationError, ConflictError) as exc:
            if len(live) == 1:
                _settle(live[0][1], exc)
                return
            # One item refused the call: each item on its own, so each caller gets its own answer.
            await asyncio.gather(*(self._alone(item, waiter) for item, waiter in live))
            return
        except BaseException as exc:  # everyone's: auth, unavailable, a fault, a cancellation
            for _, waiter in live:
                _settle(waiter, exc)
            if not isinstance(exc, Exception):
                raise
            return
        for (_, waiter), job_id in zip(live, ids, strict=True):
            if not waiter.done():
                waiter.set_result(job_id)

    async def _alone(self, item: EnqueueItem, waiter: asyncio.Future[str]) -> None:
        try:
            (job_id,) = await self._send([item])
        except BaseException as exc:
            _settle(waiter, exc)
            if not isinstance(exc, Exception):
                raise
            return
        if not waiter.done():
            waiter.set_result(job_id)


def _settle(waiter: asyncio.Future[str], exc: BaseException) -> None:
    if waiter.done():
        return
    if isinstance(exc, asyncio.CancelledError):
        waiter.cancel()
    else:
        waiter.set_exception(exc)
