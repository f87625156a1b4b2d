"""Queue consumers: batching, delivery to ``queue(batch, env, ctx)``, ack / retry, redelivery, dead letters.

Per Cloudflare: a batch goes out when ``max_batch_size`` messages are ready or ``max_batch_timeout`` seconds
after messages became ready. When the handler returns, every message not explicitly retried is acked; when it
raises, every message not explicitly acked is retried. A message delivered ``max_retries + 1`` times and
retried again goes to the dead-letter queue (or is dropped without one). A handler still running 15 minutes
(wall time, on the runtime's clock) after its batch was delivered is stopped: the invocation failed, so its
messages not explicitly acked are retried.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from tsumugi_dev.clock import RuntimeClock, Timer
from tsumugi_dev.config import QueueConsumerConfig
from tsumugi_dev.faults import CRASH_CONSUMER, DUPLICATE, FaultInjector, InjectedFault
from tsumugi_dev.invocation import CONSUMER_WALL_TIME_MS
from tsumugi_dev.queues import QueueStore, StoredMessage

__all__ = ["ConsumerWallTimeError", "Message", "MessageBatch", "QueueConsumer"]

_log = logging.getLogger("tsumugi_dev")


def _retry_delay(options: Any, kwargs: dict[str, Any]) -> int | None:
    merged: dict[str, Any] = dict(options) if isinstance(options, dict) else {}  # pyright: ignore[reportUnknownArgumentType]
    merged.update(kwargs)
    delay = merged.get("delaySeconds")
    if delay is None:
        return None
    if isinstance(delay, bool) or not isinstance(delay, int | float) or not 0 <= delay <= 43_200:
        raise ValueError("retry: delaySeconds must be a number between 0 and 43200")
    return int(delay)


class Message:
    """One delivered message: ``id``, ``timestamp``, ``body``, ``attempts``, ``ack()``, ``retry()``."""

    def __init__(self, stored: StoredMessage) -> None:
        self.stored = stored
        self.id = stored.id
        self.timestamp = datetime.datetime.fromtimestamp(stored.created_at / 1000)
        self.body = stored.decoded_body()
        self.attempts = stored.attempts
        self.verdict: str | None = None
        self.retry_delay: int | None = None

    def ack(self) -> None:
        """Mark the message done, whatever the handler does next (the first verdict wins)."""
        if self.verdict is None:
            self.verdict = "ack"

    def retry(self, options: Any = None, **kwargs: Any) -> None:
        """Ask for redelivery, optionally after ``delaySeconds``."""
        if self.verdict is None:
            self.verdict = "retry"
            self.retry_delay = _retry_delay(options, kwargs)


class MessageBatch:
    """The batch a consumer receives: ``queue``, ``messages``, ``ackAll()``, ``retryAll()``."""

    def __init__(self, queue: str, messages: list[Message]) -> None:
        self.queue = queue
        self.messages = messages

    def ackAll(self) -> None:
        """Ack every message without a verdict yet."""
        for message in self.messages:
            message.ack()

    def retryAll(self, options: Any = None, **kwargs: Any) -> None:
        """Retry every message without a verdict yet."""
        for message in self.messages:
            message.retry(options, **kwargs)


Deliver = Callable[[MessageBatch], Awaitable[None]]


class ConsumerWallTimeError(Exception):
    """A queue handler ran longer than Cloudflare lets a consumer invocation run (15 minutes)."""


class QueueConsumer:
    """Delivers one queue's messages to its consumer Worker."""

    def __init__(
        self,
        config: QueueConsumerConfig,
        store: QueueStore,
        clock: RuntimeClock,
        deliver: Deliver,
        faults: FaultInjector | None = None,
    ) -> None:
        self.config = config
        self._store = store
        self._clock = clock
        self._deliver = deliver
        self._faults = faults
        self._in_flight = 0
        self._window_timer: Timer | None = None
        self._window_due = False
        self._visible_timer: Timer | None = None
        self._max_concurrency = config.max_concurrency or 1
        store.listen(config.queue, self.poke)

    def recover(self) -> None:
        """After a restart, treat deliveries that never finished as failed (they count as attempts)."""
        leased = [Message(m) for m in self._store.leased(self.config.queue)]
        if leased:
            _log.info(
                "queue %s: %d message(s) were in flight at the last stop", self.config.queue, len(leased)
            )
            self._settle(leased, failed=True)

    def poke(self) -> None:
        """Look at the queue and deliver, or arm the timers that will."""
        queue, size = self.config.queue, self.config.max_batch_size
        while self._in_flight < self._max_concurrency:
            ready = self._store.ready_count(queue, size)
            if ready == 0:
                self._window_due = False
                break
            if ready < size and not (self._window_due or self.config.max_batch_timeout == 0):
                self._arm_window()
                break
            self._cancel_window()
            self._start_delivery()
        self._arm_visible()

    def _arm_window(self) -> None:
        if self._window_timer is None:
            at = self._clock.now_ms() + round(self.config.max_batch_timeout * 1000)
            self._window_timer = self._clock.call_at(at, self._window_elapsed)

    def _window_elapsed(self) -> None:
        self._window_timer = None
        self._window_due = True
        self.poke()

    def _cancel_window(self) -> None:
        self._window_due = False
        if self._window_timer is not None:
            self._window_timer.cancel()
            self._window_timer = None

    def _arm_visible(self) -> None:
        next_at = self._store.next_visible_at(self.config.queue)
        if self._visible_timer is not None:
            self._visible_timer.cancel()
            self._visible_timer = None
        if next_at is not None and next_at > self._clock.now_ms():
            self._visible_timer = self._clock.call_at(next_at, self.poke)

    def _start_delivery(self) -> None:
        stored = self._store.lease(self.config.queue, self.config.max_batch_size)
        if not stored:
            return
        self._in_flight += 1
        self._clock.spawn(self._run([Message(m) for m in stored]), name=f"queue {self.config.queue}")

    async def _run(self, messages: list[Message]) -> None:
        batch = MessageBatch(self.config.queue, messages)
        failed = False
        try:
            self._maybe_crash(messages)
            await self._deliver_in_time(batch)
        except Exception as exc:
            failed = True
            _log.info(
                "queue %s: consumer raised %r; unacked messages will be retried", self.config.queue, exc
            )
        finally:
            self._in_flight -= 1
        self._settle(messages, failed=failed)
        self.poke()

    async def _deliver_in_time(self, batch: MessageBatch) -> None:
        """Run the handler; stop it when it is still running after Cloudflare's consumer wall time."""
        handler = asyncio.ensure_future(self._deliver(batch))
        stopped: list[bool] = []

        def stop() -> None:
            if not handler.done():
                stopped.append(True)
                handler.cancel()

        timer = self._clock.call_at(self._clock.now_ms() + CONSUMER_WALL_TIME_MS, stop)
        try:
            await handler
        except asyncio.CancelledError:
            if not stopped:
                raise  # the runtime itself is stopping
            raise ConsumerWallTimeError(
                f"queue {self.config.queue}: the consumer ran past the {CONSUMER_WALL_TIME_MS // 60_000}-minute "
                "wall-time limit of a queue consumer invocation and was stopped"
            ) from None
        finally:
            timer.cancel()

    def _maybe_crash(self, messages: list[Message]) -> None:
        faults = self._faults
        if faults is not None and faults.strike(
            CRASH_CONSUMER, self.config.queue, lambda: [m.body for m in messages]
        ):
            raise InjectedFault("injected fault: the consumer crashed before it acked")

    def _ack_is_lost(self, message: Message) -> bool:
        faults = self._faults
        return faults is not None and faults.strike(DUPLICATE, self.config.queue, lambda: [message.body])

    def _settle(self, messages: list[Message], *, failed: bool) -> None:
        acked: list[int] = []
        retried: list[tuple[int, int]] = []
        dead: list[StoredMessage] = []
        for message in messages:
            verdict = message.verdict or ("retry" if failed else "ack")
            if verdict == "ack" and self._ack_is_lost(message):
                retried.append((message.stored.seq, 0))  # delivered again at once, whatever max_retries says
            elif verdict == "ack":
                acked.append(message.stored.seq)
            elif message.attempts > self.config.max_retries:
                dead.append(message.stored)
            else:
                delay = message.retry_delay if message.retry_delay is not None else self.config.retry_delay
                retried.append((message.stored.seq, delay))
        dlq = self.config.dead_letter_queue
        self._store.settle(acked, retried, dead, dlq)
        _log.info(
            "queue %s: %d acked, %d retried, %d %s",
            self.config.queue,
            len(acked),
            len(retried),
            len(dead),
            f"dead-lettered to {dlq}" if dlq else "dropped after max_retries",
        )
