"""Queues: durable message storage and the producer binding (``send`` / ``sendBatch``).

Messages live in the runtime's state database and are committed before ``send`` returns, so a killed process
loses nothing that a producer saw accepted. Bodies arrive as Python values read from the producer's JS value
(`tsumugi_dev.js_bindings.JsQueue`), fresh objects already, and are stored as msgpack; their size is counted as
Cloudflare counts it: UTF-8 JSON (`tsumugi_dev.json_size`, ADR-0106), or a ``"text"`` body's UTF-8 bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import sqlite3
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import Any

import msgspec

from tsumugi_dev.clock import RuntimeClock
from tsumugi_dev.faults import DROP, REORDER, FaultInjector
from tsumugi_dev.invocation import charge_subrequest, current_connections
from tsumugi_dev.jsdict import JsDict
from tsumugi_dev.json_size import JSON_TO_MSGPACK_MAX_RATIO, json_size
from tsumugi_dev.queue_meter import QueueMeter

__all__ = [
    "MAX_BATCH_BYTES",
    "MAX_BATCH_MESSAGES",
    "MAX_MESSAGE_BYTES",
    "QueueBinding",
    "QueueSendError",
    "QueueStore",
    "StoredMessage",
]

MAX_MESSAGE_BYTES = 128_000
"""Cloudflare's limit for one message body as UTF-8 JSON ("128 KB", 1 KB = 1000 bytes:
developers.cloudflare.com/queues/platform/limits/)."""
MAX_BATCH_MESSAGES = 100
"""Cloudflare's limit for one ``sendBatch`` (the same page)."""
MAX_BATCH_BYTES = 256_000
"""Cloudflare's limit for the JSON bodies of one ``sendBatch`` together ("256KB in total")."""
MAX_DELAY_SECONDS = 43_200


class QueueSendError(Exception):
    """A ``send`` / ``sendBatch`` the Queues service refuses; the message starts as workerd's does."""


class StoredMessage(msgspec.Struct, frozen=True, kw_only=True):
    """A message as stored: ``attempts`` counts deliveries started so far."""

    seq: int
    id: str
    queue: str
    body: bytes
    attempts: int
    created_at: int

    def decoded_body(self) -> Any:
        """The body as stored (Python values)."""
        return msgspec.msgpack.decode(self.body)


def _as_received(value: Any) -> Any:
    """A body as the consumer's SDK shows it: objects as ``JsDict``."""
    if isinstance(value, dict):
        return JsDict({str(k): _as_received(v) for k, v in value.items()})  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    if isinstance(value, list):
        return [_as_received(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def _subjects(body: bytes) -> Callable[[], list[Any]]:
    """The body as a fault's matcher sees it (as the consumer would), decoded only when asked."""
    return lambda: [_as_received(msgspec.msgpack.decode(body))]


_ROWS_PER_INSERT = 100
"""Messages stored by one INSERT statement (600 bound values): one statement for a whole ``sendBatch``."""
_SEQS = "(SELECT value FROM json_each(?))"
"""The messages named by a JSON array of seqs: one statement for a delivery's messages, not one per message."""


def _insert_sql(rows: int) -> str:
    values = ", ".join(["(?, ?, ?, ?, ?, ?)"] * rows)
    return f"INSERT INTO queue_message (id, queue, body, attempts, visible_at, created_at) VALUES {values}"


def _seq_list(seqs: Iterable[int]) -> str:
    return "[" + ",".join(map(str, seqs)) + "]"


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection) -> Generator[None]:
    """One explicit transaction around a group of statements.

    The connection is in autocommit mode, where ``with conn:`` opens no transaction and ``executemany``
    commits every row on its own: not atomic, and one WAL commit per message.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _delay_seconds(value: Any, where: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= MAX_DELAY_SECONDS:
        raise ValueError(f"{where}: delaySeconds must be a number between 0 and {MAX_DELAY_SECONDS}")
    return int(value)


def _upper_bound(data: bytes) -> int:
    """At least the JSON size of a body whose msgpack encoding is ``data`` (see `tsumugi_dev.json_size`)."""
    return len(data) * JSON_TO_MSGPACK_MAX_RATIO


def encode_body(
    body: Any, where: str, method: str = "send", content_type: Any = None
) -> tuple[bytes, Any, int]:
    """Copy and serialise a message body, refusing what Cloudflare refuses.

    Answers the stored bytes, the copied value and its size as the limits count it: a ``"text"`` body is its
    UTF-8 bytes (workerd sends the string as they are, ``api/queue.c++``, ``serialize``), exact; any other
    body is measured as UTF-8 JSON, exact when the cheap bound could be over the message limit, else the bound.
    """
    copied = body
    try:
        data = msgspec.msgpack.encode(copied)
    except TypeError as exc:
        raise TypeError(f"{where}: cannot be serialised for a queue: {exc}") from exc
    if content_type == "text" and type(body) is str:
        size = len(body.encode())
        unit = "UTF-8 text"
    else:
        size = _upper_bound(data)
        unit = "UTF-8 JSON"
        if size > MAX_MESSAGE_BYTES:
            size = json_size(copied)
    if size > MAX_MESSAGE_BYTES:
        raise QueueSendError(
            f"Queue {method} failed: Payload Too Large ({where}: message length of {size} bytes as {unit} "
            f"exceeds limit of {MAX_MESSAGE_BYTES})"
        )
    return data, copied, size


class QueueStore:
    """Every queue's messages in one SQLite table."""

    def __init__(
        self, conn: sqlite3.Connection, clock: RuntimeClock, faults: FaultInjector | None = None
    ) -> None:
        self._conn = conn
        self._clock = clock
        self._faults = faults
        self._listeners: dict[str, Callable[[], None]] = {}
        self.meter: QueueMeter | None = None
        """Where queue operations are metered (set by the runtime; ADR-0130); None: nowhere."""
        conn.execute(
            # seq orders deliveries and names a row to lease and settle; a leased row is never deleted before it
            # is settled, so a reused rowid can never be confused with it (no AUTOINCREMENT bookkeeping). The
            # message id is 128 random bits, only shown to consumers: no index of its own.
            "CREATE TABLE IF NOT EXISTS queue_message (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, "
            "queue TEXT NOT NULL, body BLOB NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, "
            "visible_at INTEGER NOT NULL, leased INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL)"
        )
        conn.execute(
            "CREATE INDEX IF NOT EXISTS queue_message_ready ON queue_message (queue, leased, visible_at, seq)"
        )

    def listen(self, queue: str, wake: Callable[[], None]) -> None:
        """Call ``wake`` after messages are added to ``queue``."""
        self._listeners[queue] = wake

    def add(self, queue: str, bodies: Sequence[tuple[bytes, int]], attempts: int = 0) -> list[str]:
        """Store ``(body, delay_seconds)`` pairs atomically; returns the new message ids.

        A ``drop`` fault armed on ``queue`` loses matching messages here: accepted, never stored; a ``reorder``
        fault stores one later than asked, so messages sent after it overtake it.
        """
        kept = self._survivors(queue, bodies)
        now = self._clock.now_ms()
        entropy = secrets.token_bytes(16 * len(kept)).hex()  # one read of the OS's entropy for the batch
        ids = [entropy[i : i + 32] for i in range(0, len(entropy), 32)]
        rows = [
            (mid, queue, body, attempts, now + delay_ms, now)
            for mid, (body, delay_ms) in zip(ids, kept, strict=True)
        ]
        with _transaction(self._conn):
            for first in range(0, len(rows), _ROWS_PER_INSERT):
                chunk = rows[first : first + _ROWS_PER_INSERT]
                self._conn.execute(_insert_sql(len(chunk)), [value for row in chunk for value in row])
        if self.meter is not None:
            self.meter.written(queue, [body for body, _ in kept])
        wake = self._listeners.get(queue)
        if wake is not None:
            wake()
        return ids

    def _survivors(self, queue: str, bodies: Sequence[tuple[bytes, int]]) -> list[tuple[bytes, int]]:
        """``(body, delay_ms)`` of the messages to store, after the faults armed on ``queue``."""
        faults = self._faults
        if faults is None or not faults.armed():
            return [(body, delay * 1000) for body, delay in bodies]
        kept: list[tuple[bytes, int]] = []
        for item in bodies:
            decoded = _subjects(item[0])
            if faults.strike(DROP, queue, decoded):
                continue
            held = faults.take(REORDER, queue, decoded)
            kept.append((item[0], item[1] * 1000 + (0 if held is None else held.hold_ms)))
        return kept

    def ready_count(self, queue: str, limit: int) -> int:
        """How many messages of ``queue`` could be delivered now (at most ``limit``)."""
        row = self._conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM queue_message WHERE queue = ? AND leased = 0 AND visible_at <= ? "
            "LIMIT ?)",
            (queue, self._clock.now_ms(), limit),
        ).fetchone()
        return int(row[0])

    def next_visible_at(self, queue: str) -> int | None:
        """The earliest instant an unleased message of ``queue`` becomes visible."""
        row = self._conn.execute(
            "SELECT min(visible_at) FROM queue_message WHERE queue = ? AND leased = 0", (queue,)
        ).fetchone()
        return None if row[0] is None else int(row[0])

    def lease(self, queue: str, limit: int) -> list[StoredMessage]:
        """Take up to ``limit`` visible messages for one delivery (their ``attempts`` go up by one)."""
        with _transaction(self._conn):
            rows = self._conn.execute(
                "SELECT seq, id, queue, body, attempts, created_at FROM queue_message WHERE queue = ? AND leased = 0 "
                "AND visible_at <= ? ORDER BY visible_at, seq LIMIT ?",
                (queue, self._clock.now_ms(), limit),
            ).fetchall()
            self._conn.execute(
                f"UPDATE queue_message SET leased = 1, attempts = attempts + 1 WHERE seq IN {_SEQS}",
                (_seq_list(r[0] for r in rows),),
            )
        if self.meter is not None:
            self.meter.read(queue, [(r[0], r[3]) for r in rows])
        return [
            StoredMessage(seq=r[0], id=r[1], queue=r[2], body=r[3], attempts=r[4] + 1, created_at=r[5])
            for r in rows
        ]

    def leased(self, queue: str) -> list[StoredMessage]:
        """Messages of ``queue`` leased to a delivery (after a crash: deliveries that never finished)."""
        rows = self._conn.execute(
            "SELECT seq, id, queue, body, attempts, created_at FROM queue_message WHERE queue = ? AND leased = 1 "
            "ORDER BY seq",
            (queue,),
        ).fetchall()
        return [
            StoredMessage(seq=r[0], id=r[1], queue=r[2], body=r[3], attempts=r[4], created_at=r[5])
            for r in rows
        ]

    def settle(
        self,
        acked: Sequence[int],
        retried: Sequence[tuple[int, int]],
        dead: Sequence[StoredMessage],
        dlq: str | None,
    ) -> None:
        """Apply one delivery's outcome atomically: delete acked, release retried at their instant, move dead."""
        now = self._clock.now_ms()
        with _transaction(self._conn):
            gone = [*acked, *(m.seq for m in dead)]
            if gone:
                self._conn.execute(f"DELETE FROM queue_message WHERE seq IN {_SEQS}", (_seq_list(gone),))
            self._conn.executemany(
                "UPDATE queue_message SET leased = 0, visible_at = ? WHERE seq = ?",
                [(now + delay * 1000, seq) for seq, delay in retried],
            )
            if dlq is not None and dead:
                self._conn.executemany(
                    "INSERT INTO queue_message (id, queue, body, attempts, visible_at, created_at) VALUES (?, ?, ?, 0, ?, ?)",
                    [(m.id, dlq, m.body, now, m.created_at) for m in dead],
                )
        if self.meter is not None:
            self.meter.settled(acked, retried, dead, dlq)
        if dlq is not None and dead and (wake := self._listeners.get(dlq)) is not None:
            wake()

    def pending(self, queue: str) -> list[StoredMessage]:
        """Every stored message of ``queue`` (a read for tests and tools)."""
        rows = self._conn.execute(
            "SELECT seq, id, queue, body, attempts, created_at FROM queue_message WHERE queue = ? ORDER BY seq",
            (queue,),
        ).fetchall()
        return [
            StoredMessage(seq=r[0], id=r[1], queue=r[2], body=r[3], attempts=r[4], created_at=r[5])
            for r in rows
        ]


def _options(options: Any, kwargs: dict[str, Any], where: str) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    if options is not None:
        if not isinstance(options, dict):
            raise TypeError(f"{where}: options must be a dict, got {type(options).__name__}")
        merged.update(options)  # pyright: ignore[reportUnknownArgumentType]
    merged.update(kwargs)
    unknown = set(merged) - {"delaySeconds", "contentType"}
    if unknown:
        raise TypeError(f"{where}: unknown option(s) {sorted(unknown)} (allowed: contentType, delaySeconds)")
    return merged


def _check_batch_bytes(measured: list[tuple[Any, int, bool]]) -> None:
    """Refuse a batch whose bodies take more than 256 KB together (``(body, size, exact)`` each: a size not
    exact is an upper bound, replaced by the JSON size only when needed)."""
    if sum(size for _, size, _ in measured) <= MAX_BATCH_BYTES:
        return  # every size is exact or an upper bound: under the limit either way
    total = sum(size if exact else json_size(copied) for copied, size, exact in measured)
    if total > MAX_BATCH_BYTES:
        raise QueueSendError(
            f"Queue sendBatch failed: Payload Too Large (batch size of {total} bytes as UTF-8 JSON exceeds "
            f"limit of {MAX_BATCH_BYTES})"
        )


class QueueBinding:
    """The producer binding ``env.QUEUE``: ``await send(body, delaySeconds=...)`` and ``sendBatch``."""

    def __init__(self, store: QueueStore, queue: str, delivery_delay: int = 0) -> None:
        self._store = store
        self._queue = queue
        self._default_delay = delivery_delay

    async def send(self, body: Any, options: Any = None, **kwargs: Any) -> None:
        """Store one message (durable when this returns)."""
        opts = _options(options, kwargs, "send")
        delay = _delay_seconds(opts.get("delaySeconds", self._default_delay), "send")
        data, _, _ = encode_body(body, "send body", content_type=opts.get("contentType"))
        charge_subrequest()
        await self._stored([(data, delay)])

    async def sendBatch(self, messages: Sequence[Any], options: Any = None, **kwargs: Any) -> None:
        """Store up to 100 messages (256 KB together) atomically; items are ``{"body": ..., "delaySeconds": ...}``."""
        opts = _options(options, kwargs, "sendBatch")
        batch_delay = _delay_seconds(opts.get("delaySeconds", self._default_delay), "sendBatch")
        if not 0 < len(messages) <= MAX_BATCH_MESSAGES:
            raise ValueError(
                f"sendBatch: messages must hold 1 to {MAX_BATCH_MESSAGES} items (got {len(messages)})"
            )
        items: list[tuple[bytes, int]] = []
        measured: list[tuple[Any, int, bool]] = []
        for i, message in enumerate(messages):
            if not isinstance(message, dict) or "body" not in message:
                raise TypeError(f"sendBatch: messages[{i}] must be a dict with a 'body' key")
            entry: dict[str, Any] = message  # pyright: ignore[reportUnknownVariableType]
            delay = _delay_seconds(entry.get("delaySeconds", batch_delay), f"sendBatch: messages[{i}]")
            kind = entry.get("contentType")
            where = f"sendBatch: messages[{i}].body"
            data, copied, size = encode_body(entry["body"], where, "sendBatch", kind)
            items.append((data, delay))
            measured.append((copied, size, kind == "text"))
        _check_batch_bytes(measured)
        charge_subrequest()
        await self._stored(items)

    async def _stored(self, items: list[tuple[bytes, int]]) -> None:
        # One of the invocation's six simultaneous connections until the queue has answered (ADR-0102).
        connections = current_connections()
        if connections is None:
            await asyncio.sleep(0)  # outside I/O: the sender's input gate opens
            self._store.add(self._queue, items)
            return
        await connections.acquire()
        try:
            await asyncio.sleep(0)
            self._store.add(self._queue, items)
        finally:
            connections.release()
