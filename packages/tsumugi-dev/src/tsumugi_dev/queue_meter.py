"""Queue operations as Cloudflare Queues bills them, per queue (ADR-0130).

Each message costs one operation per 64 KB when it is written (sent, or moved to a dead-letter queue), each
time it is read (every delivery, so every retry), and when it is deleted (acked, or dropped after its last
retry). `QueueStore` calls this at its three points (add, lease, settle).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from tsumugi_dev.metering import Meter, queue_operations

__all__ = ["QueueMeter"]


class _Dead(Protocol):
    @property
    def seq(self) -> int: ...

    @property
    def queue(self) -> str: ...


class QueueMeter:
    """Counts the operations of every queue of one store into ``meter``'s ``Queue <name>`` accounts."""

    def __init__(self, meter: Meter) -> None:
        self._meter = meter
        self._leased: dict[int, tuple[str, int]] = {}
        """Messages out for delivery: seq -> (queue, operations a delete of it costs)."""

    def written(self, queue: str, bodies: Sequence[bytes]) -> None:
        """``bodies`` were stored in ``queue``."""
        self._meter.usage(f"Queue {queue}").queue_writes += sum(queue_operations(len(b)) for b in bodies)

    def read(self, queue: str, leased: Sequence[tuple[int, bytes]]) -> None:
        """``(seq, body)`` of the messages of ``queue`` leased to one delivery."""
        usage = self._meter.usage(f"Queue {queue}")
        for seq, body in leased:
            ops = queue_operations(len(body))
            usage.queue_reads += ops
            self._leased[seq] = (queue, ops)

    def settled(
        self,
        acked: Sequence[int],
        retried: Sequence[tuple[int, int]],
        dead: Sequence[_Dead],
        dlq: str | None,
    ) -> None:
        """A delivery's outcome: acked and dead messages are deleted (dead ones written to ``dlq``)."""
        for seq in acked:
            self._deleted(seq)
        for seq, _ in retried:
            self._leased.pop(seq, None)  # read again at its next delivery
        for message in dead:
            ops = self._deleted(message.seq)
            if dlq is not None:
                self._meter.usage(f"Queue {dlq}").queue_writes += ops

    def _deleted(self, seq: int) -> int:
        found = self._leased.pop(seq, None)
        if found is None:  # leased before this meter existed (a restart): one operation
            return 1
        queue, ops = found
        self._meter.usage(f"Queue {queue}").queue_deletes += ops
        return ops
