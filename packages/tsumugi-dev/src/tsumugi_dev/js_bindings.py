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

import json
from collections.abc import Awaitable
from typing import Any, ClassVar, cast

from jsemu import json_text
from jsemu.core import UNDEFINED, HostObject, JsBigIntValue, JsException, PyProxy, js_error, jsnull
from jsemu.objects import ArrayBuffer, JsArray, JsDate, JsObject, Uint8Array, make_error
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
            raise d1_error(str(error)) from None
        except (ValueError, TypeError) as error:
            raise js_error("TypeError" if isinstance(error, TypeError) else "Error", str(error)) from None

    return JsPromise.from_awaitable(run())


def d1_error(message: str) -> JsException:
    """A D1 error as workerd's D1 API throws it: ``D1_<KIND>: <reason>`` with the reason as its ``cause``."""
    kind, _, reason = message.partition(": ")
    cause = "Column not found" if kind == "D1_COLUMN_NOTFOUND" else reason  # d1-api.ts's own cause text
    return JsException(make_error("Error", message, {"cause": make_error("Error", cause)}))


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
    if kind is JsBigIntValue:  # d1-api.ts refuses a BigInt (a Python int past 2**53 arrives as one)
        raise d1_error(f"D1_TYPE_ERROR: Type 'bigint' not supported for value '{int(value)}'")
    if value is UNDEFINED:
        raise d1_error("D1_TYPE_ERROR: Type 'undefined' not supported for value 'undefined'")
    if isinstance(value, PyProxy):
        raise d1_error(f"D1_TYPE_ERROR: Type 'object' not supported for value '{value._obj}'")
    raise d1_error(f"D1_TYPE_ERROR: Type 'object' not supported for value '{value}'")


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
            raise d1_error(str(error)) from None

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
            raise d1_error(str(error)) from None

    def js_batch(self, statements: Any) -> Any:
        items = statements._items if isinstance(statements, JsArray) else []
        if not all(isinstance(item, JsD1Statement) for item in items):
            raise js_error(
                "TypeError",
                "Failed to execute 'batch' on 'D1Database': statements must be prepared statements",
            )
        return _promise(self._db.batch([item.statement for item in items]))

    def js_exec(self, query: Any) -> Any:
        return _promise(self._db.exec(str(query)))


def _queue_metadata() -> JsObject:
    """``metadata.metrics`` of a send result and of a batch. The values are the queue service's; the local
    runtime does not imitate them and answers what the local workerd stack does (zeros, no timestamp)."""
    metrics = JsObject({"backlogCount": 0, "backlogBytes": 0, "oldestMessageTimestamp": UNDEFINED})
    return JsObject({"metrics": metrics})


_CONTENT_TYPES = frozenset({"json", "text", "bytes", "v8"})


def _typeof(value: Any) -> str:
    if value is jsnull:
        return "object"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return value.js_typeof if hasattr(value, "js_typeof") else "object"


def _message_body(body: Any, content_type: Any) -> Any:
    """The body to store, as Python: refused as workerd refuses it (``queue.c++``); a JSON body (the default
    since ``queuesJsonMessages``) is what ``JSON.stringify`` makes of it (functions and undefined dropped)."""
    if body is UNDEFINED:
        raise js_error("TypeError", "Message body cannot be undefined")
    kind = "json" if content_type is UNDEFINED else content_type
    if kind not in _CONTENT_TYPES:
        raise js_error("TypeError", f"Unsupported queue message content type: {kind}")
    if kind == "text" and not isinstance(body, str):
        raise js_error(
            "TypeError", f'Content Type "text" requires a value of type string, but received: {_typeof(body)}'
        )
    if kind != "json":
        return platform_py(body)
    text = json_text.stringify(body)  # BigInt and cycles throw TypeError; functions and undefined drop out
    return None if text is UNDEFINED else json.loads(cast(str, text))


def _option(options: Any, name: str) -> Any:
    return options._js_get(name) if isinstance(options, JsObject) and name in options._props else UNDEFINED


class JsQueue(HostObject):
    """A queue producer binding (``WorkerQueue``): ``send`` and ``sendBatch``."""

    __slots__ = ("_queue",)
    _queue: Any
    js_class: ClassVar[str] = "WorkerQueue"

    def __init__(self, queue: QueueBinding) -> None:
        object.__setattr__(self, "_queue", queue)

    def js_send(self, body: Any = UNDEFINED, options: Any = UNDEFINED) -> Any:
        try:
            checked = _message_body(body, _option(options, "contentType"))
        except JsException as error:
            return JsPromise.rejected(error)
        return _sent(self._queue.send(checked, platform_py(options)))

    def js_sendBatch(self, messages: Any = UNDEFINED, options: Any = UNDEFINED) -> Any:
        items = messages._items if isinstance(messages, JsArray) else []
        try:
            if not items:
                raise js_error("TypeError", "sendBatch() requires at least one message")
            checked: list[Any] = []
            for item in items:
                if not isinstance(item, JsObject):
                    raise js_error(
                        "TypeError", "Incorrect type: the provided value is not of type 'MessageSendRequest'."
                    )
                body = _message_body(_option(item, "body"), _option(item, "contentType"))
                others = JsObject({k: v for k, v in item._props.items() if k != "body"})
                checked.append({**platform_py(others), "body": body})
        except JsException as error:
            return JsPromise.rejected(error)
        return _sent(self._queue.sendBatch(checked, platform_py(options)))


def _sent(work: Awaitable[Any]) -> JsPromise:
    """What ``send``/``sendBatch`` resolve to: ``{metadata: {metrics}}`` (tests/shapes records it)."""

    async def run() -> Any:
        await work
        return JsObject({"metadata": _queue_metadata()})

    return _promise(run())


class JsAnalyticsDataset(HostObject):
    """An Analytics Engine dataset binding: ``writeDataPoint`` (and ``query``, local only, for tests)."""

    __slots__ = ("_dataset",)
    _dataset: Any
    js_class: ClassVar[str] = "AnalyticsEngine"

    def __init__(self, dataset: AnalyticsEngineDataset) -> None:
        object.__setattr__(self, "_dataset", dataset)

    def js_writeDataPoint(self, point: Any = UNDEFINED) -> Any:
        if not (point is UNDEFINED or point is jsnull or isinstance(point, JsObject)):
            raise js_error(
                "TypeError",
                "Failed to execute 'writeDataPoint' on 'AnalyticsEngine': parameter 1 is not of type "
                "'AnalyticsEngineEvent'.",
            )
        try:
            self._dataset.writeDataPoint(platform_py(point))
        except (TypeError, ValueError) as error:
            raise js_error("TypeError", str(error)) from None
        return UNDEFINED

    def js_query(self, sql: Any) -> Any:
        return platform_js(self._dataset.query(str(sql)))


class _JsMessage(HostObject):
    """workerd's ``QueueMessage``: ``attempts``, ``body``, ``timestamp``, ``id`` are own data properties (in
    that order), ``ack``/``retry`` its methods (tests/shapes records the shape)."""

    __slots__ = ("_message", "_own")
    _message: Any
    _own: Any
    js_class: ClassVar[str] = "QueueMessage"

    def __init__(self, message: Message) -> None:
        object.__setattr__(self, "_message", message)
        own = {
            "attempts": message.attempts,
            "body": platform_js(message.body),
            "timestamp": JsDate(message.stored.created_at),
            "id": message.id,
        }
        object.__setattr__(self, "_own", own)

    def _js_get(self, name: str) -> Any:
        own = self._own
        return own[name] if name in own else super()._js_get(name)

    def _js_keys(self) -> list[str]:
        return list(self._own)

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
    """The batch a ``queue`` handler receives, workerd's ``QueueController``: own ``metadata``, ``queue`` and
    ``messages``; ``ackAll``/``retryAll`` its methods."""

    __slots__ = ("_batch", "_own")
    _batch: Any
    _own: Any
    js_class: ClassVar[str] = "QueueController"

    def __init__(self, batch: MessageBatch) -> None:
        object.__setattr__(self, "_batch", batch)
        own = {
            "metadata": _queue_metadata(),
            "queue": batch.queue,
            "messages": JsArray([_JsMessage(m) for m in batch.messages]),
        }
        object.__setattr__(self, "_own", own)

    def _js_get(self, name: str) -> Any:
        own = self._own
        return own[name] if name in own else super()._js_get(name)

    def _js_keys(self) -> list[str]:
        return list(self._own)

    def js_ackAll(self) -> Any:
        self._batch.ackAll()
        return UNDEFINED

    def js_retryAll(self, options: Any = UNDEFINED) -> Any:
        try:
            self._batch.retryAll(platform_py(options))
        except ValueError as error:
            raise js_error("TypeError", str(error)) from None
        return UNDEFINED
