# pyright: reportPrivateUsage=false
# (The runtime's half of the JS emulation reads jsemu's object internals; ADR-0097.)
"""The JS objects behind ``env`` for D1, Queues and Analytics Engine, over the runtime's implementations.

Each facade takes JS values, calls the Python implementation with Python values (`platform_py`) and answers
JS values (`platform_js`) or promises of them, as workerd's bindings do; the Workers SDK's wrappers on the
Python side (``_BindingWrapper``) convert both ways. The consumer's ``MessageBatch`` and its messages are here
too: what a ``queue`` handler receives. Sources: developers.cloudflare.com (D1 Worker API, Queues JavaScript
APIs, Workers Analytics Engine), workerd ``src/workerd/api/queue.c++`` (``queuesJsonMessages``).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, ClassVar, cast

from jsemu.core import UNDEFINED, HostObject, JsBigIntValue, PyProxy, js_error, jsnull
from jsemu.objects import ArrayBuffer, JsArray, JsDate, JsObject, Uint8Array
from jsemu.promise import JsPromise

from tsumugi_dev.analytics import AnalyticsEngineDataset
from tsumugi_dev.d1 import D1Database, D1Error, D1PreparedStatement
from tsumugi_dev.js_values import platform_js, platform_py
from tsumugi_dev.queue_consumer import Message, MessageBatch
from tsumugi_dev.queues import QueueBinding

__all__ = ["JsAnalyticsDataset", "JsD1Database", "JsMessageBatch", "JsQueue"]


def _promise(work: Awaitable[Any], *, d1: bool = False) -> JsPromise:
    async def run() -> Any:
        try:
            return platform_js(await work)
        except D1Error as error:
            raise js_error("Error", str(error)) from None
        except (ValueError, TypeError) as error:
            raise js_error("TypeError" if isinstance(error, TypeError) else "Error", str(error)) from None

    return JsPromise.from_awaitable(run())


def _d1_param(value: Any, index: int) -> Any:
    kind = cast(Any, type(value))
    if kind is str or kind is int or kind is float:
        return value
    if value is jsnull:
        return None
    if kind is bool:
        return int(value)
    if isinstance(value, Uint8Array | ArrayBuffer):
        return value.to_bytes()
    if kind is JsBigIntValue:
        return int(value)
    if value is UNDEFINED:
        raise js_error("Error", "D1_TYPE_ERROR: Type 'undefined' not supported for value 'undefined'")
    if isinstance(value, PyProxy):
        raise js_error("Error", f"D1_TYPE_ERROR: Type 'object' not supported for value '{value._obj}'")
    raise js_error("Error", f"D1_TYPE_ERROR: Type 'object' not supported for value '{value}'")


class JsD1Statement(HostObject):
    """``D1PreparedStatement``: ``bind``, ``all``, ``first``, ``raw``, ``run``."""

    __slots__ = ("_statement",)
    _statement: Any
    js_class: ClassVar[str] = "D1PreparedStatement"

    def __init__(self, statement: D1PreparedStatement) -> None:
        object.__setattr__(self, "_statement", statement)

    @property
    def statement(self) -> D1PreparedStatement:
        """The runtime's statement."""
        return self._statement

    def js_bind(self, *values: Any) -> Any:
        try:
            return JsD1Statement(self._statement.bind(*[_d1_param(v, i) for i, v in enumerate(values)]))
        except D1Error as error:
            raise js_error("Error", str(error)) from None

    def js_all(self) -> Any:
        return _promise(self._statement.all())

    def js_run(self) -> Any:
        return _promise(self._statement.run())

    def js_first(self, column: Any = UNDEFINED) -> Any:
        return _promise(self._statement.first(None if column is UNDEFINED else str(column)))

    def js_raw(self, options: Any = UNDEFINED) -> Any:
        names = isinstance(options, JsObject) and options._props.get("columnNames") is True
        return _promise(self._statement.raw(columnNames=True) if names else self._statement.raw())


class JsD1Database(HostObject):
    """``D1Database``: ``prepare``, ``batch``, ``exec``."""

    __slots__ = ("_db",)
    _db: Any
    js_class: ClassVar[str] = "D1Database"

    def __init__(self, db: D1Database) -> None:
        object.__setattr__(self, "_db", db)

    @property
    def database(self) -> D1Database:
        """The runtime's database."""
        return self._db

    def js_prepare(self, sql: Any) -> Any:
        try:
            return JsD1Statement(self._db.prepare(str(sql)))
        except D1Error as error:
            raise js_error("Error", str(error)) from None

    def js_batch(self, statements: Any) -> Any:
        items = statements._items if isinstance(statements, JsArray) else []
        if not all(isinstance(item, JsD1Statement) for item in items):
            raise js_error("TypeError", "Failed to execute 'batch' on 'D1Database': statements must be prepared statements")
        return _promise(self._db.batch([item.statement for item in items]))

    def js_exec(self, query: Any) -> Any:
        return _promise(self._db.exec(str(query)))


class JsQueue(HostObject):
    """A queue producer binding (``WorkerQueue``): ``send`` and ``sendBatch``."""

    __slots__ = ("_queue",)
    _queue: Any
    js_class: ClassVar[str] = "WorkerQueue"

    def __init__(self, queue: QueueBinding) -> None:
        object.__setattr__(self, "_queue", queue)

    def js_send(self, body: Any, options: Any = UNDEFINED) -> Any:
        return _promise(self._queue.send(platform_py(body), platform_py(options)))

    def js_sendBatch(self, messages: Any, options: Any = UNDEFINED) -> Any:
        return _promise(self._queue.sendBatch(platform_py(messages), platform_py(options)))


class JsAnalyticsDataset(HostObject):
    """An Analytics Engine dataset binding: ``writeDataPoint`` (and ``query``, local only, for tests)."""

    __slots__ = ("_dataset",)
    _dataset: Any
    js_class: ClassVar[str] = "AnalyticsEngineDataset"

    def __init__(self, dataset: AnalyticsEngineDataset) -> None:
        object.__setattr__(self, "_dataset", dataset)

    def js_writeDataPoint(self, point: Any = UNDEFINED) -> Any:
        try:
            self._dataset.writeDataPoint(platform_py(point))
        except (TypeError, ValueError) as error:
            raise js_error("TypeError", str(error)) from None
        return UNDEFINED

    def js_query(self, sql: Any) -> Any:
        return platform_js(self._dataset.query(str(sql)))


class _JsMessage(HostObject):
    __slots__ = ("_body", "_message")
    _body: Any
    _message: Any
    js_class: ClassVar[str] = "Message"

    def __init__(self, message: Message) -> None:
        object.__setattr__(self, "_message", message)
        object.__setattr__(self, "_body", platform_js(message.body))

    @property
    def js_id(self) -> Any:
        return self._message.id

    @property
    def js_timestamp(self) -> Any:
        return JsDate(self._message.stored.created_at)

    @property
    def js_body(self) -> Any:
        return self._body

    @property
    def js_attempts(self) -> Any:
        return self._message.attempts

    def js_ack(self) -> Any:
        self._message.ack()
        return UNDEFINED

    def js_retry(self, options: Any = UNDEFINED) -> Any:
        try:
            self._message.retry(platform_py(options))
        except ValueError as error:
            raise js_error("TypeError", str(error)) from None
        return UNDEFINED


class JsMessageBatch(HostObject):
    """The ``MessageBatch`` a ``queue`` handler receives: ``queue``, ``messages``, ``ackAll``, ``retryAll``."""

    __slots__ = ("_batch", "_messages")
    _batch: Any
    _messages: Any
    js_class: ClassVar[str] = "MessageBatch"

    def __init__(self, batch: MessageBatch) -> None:
        object.__setattr__(self, "_batch", batch)
        object.__setattr__(self, "_messages", JsArray([_JsMessage(m) for m in batch.messages]))

    @property
    def js_queue(self) -> Any:
        return self._batch.queue

    @property
    def js_messages(self) -> Any:
        return self._messages

    def js_ackAll(self) -> Any:
        self._batch.ackAll()
        return UNDEFINED

    def js_retryAll(self, options: Any = UNDEFINED) -> Any:
        try:
            self._batch.retryAll(platform_py(options))
        except ValueError as error:
            raise js_error("TypeError", str(error)) from None
        return UNDEFINED
