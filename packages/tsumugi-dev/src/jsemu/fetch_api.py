# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""The Fetch API objects workerd gives a Worker: Headers, Request, Response, URL and streams.

What the Workers SDK's ``Request``/``Response``/``asgi`` touch, with workerd's rules where they differ from
a browser: a Response status must be 200-599 (101 only with a WebSocket), a null-body status has no body,
a body is read once. Bodies are ``bytes`` or a `ReadableStream` of Uint8Array chunks.
Sources: WHATWG Fetch (Headers sorting and combining, null body statuses); workerd
``src/workerd/api/http.c++`` (status range, methods).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any, ClassVar
from urllib.parse import urlsplit

from jsemu.builtins import define_global
from jsemu.core import (
    MISSING,
    UNDEFINED,
    HostObject,
    JsCallable,
    JsProxy,
    PyProxy,
    js_error,
    jsnull,
    to_js_implicit,
)
from jsemu.json_text import parse as json_parse
from jsemu.objects import ArrayBuffer, JsArray, JsObject, Uint8Array
from jsemu.promise import JsPromise

__all__ = ["URL", "Headers", "ReadableStream", "Request", "Response", "TransformStream", "body_bytes"]

NULL_BODY_STATUSES = frozenset({101, 103, 204, 205, 304})
WORKERD_METHODS = frozenset(
    {
        "GET",
        "HEAD",
        "POST",
        "PUT",
        "DELETE",
        "CONNECT",
        "OPTIONS",
        "TRACE",
        "PATCH",
        "PURGE",
        "COPY",
        "LOCK",
        "MKCOL",
        "MOVE",
        "PROPFIND",
        "PROPPATCH",
        "SEARCH",
        "UNLOCK",
        "ACL",
        "REPORT",
        "MKACTIVITY",
        "CHECKOUT",
        "MERGE",
        "MSEARCH",
        "NOTIFY",
        "SUBSCRIBE",
        "UNSUBSCRIBE",
        "QUERY",
        "BAN",
    }
)
"""Methods workerd knows (kj ``KJ_HTTP_FOR_EACH_METHOD`` plus CONNECT); a Request with another one throws."""


def _pairs(init: Any) -> list[tuple[str, str]]:
    """Header pairs from a Headers, an object, an array of pairs, or a PyProxy of an iterable of pairs."""
    if init is UNDEFINED or init is jsnull:
        return []
    if isinstance(init, Headers):
        return list(init._pairs)
    if isinstance(init, PyProxy):
        pairs = []
        for pair in init._obj:
            items = pair._items if isinstance(pair, JsArray) else list(pair)
            if len(items) != 2:
                raise js_error("TypeError", "Each header pair must be an iterable [name, value] tuple")
            pairs.append((_text(items[0]), _text(items[1])))
        return pairs
    if isinstance(init, JsArray):
        pairs = []
        for pair in init._items:
            items = pair._items if isinstance(pair, JsArray) else []
            if len(items) != 2:
                raise js_error("TypeError", "Each header pair must be an iterable [name, value] tuple")
            pairs.append((_text(items[0]), _text(items[1])))
        return pairs
    if isinstance(init, JsObject):
        return [(key, _text(value)) for key, value in init._props.items()]
    raise js_error("TypeError", "Failed to construct 'Headers': invalid init")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, JsProxy):
        return value.to_string()
    if isinstance(value, PyProxy):
        return str(value._obj)
    from jsemu.objects import _string_of

    return _string_of(value)


class Headers(HostObject):
    """Case-insensitive headers; iteration yields ``[name, value]`` sorted by name, duplicates combined."""

    __slots__ = ("_guard", "_pairs")
    _guard: Any
    _pairs: Any
    js_class: ClassVar[str] = "Headers"

    def __init__(self, pairs: list[tuple[str, str]] | None = None, *, immutable: bool = False) -> None:
        object.__setattr__(self, "_pairs", [])
        object.__setattr__(self, "_guard", False)
        for name, value in pairs or []:
            self.js_append(name, value)
        object.__setattr__(self, "_guard", immutable)

    def _check_mutable(self) -> None:
        if self._guard:
            raise js_error("TypeError", "Can't modify immutable headers.")

    @staticmethod
    def _name(name: Any) -> str:
        text = _text(name)
        if not text or any(c in text for c in ' \t\r\n:"(),/;<=>?@[\\]{}') or not text.isascii():
            raise js_error("TypeError", f"Invalid header name '{text}'")
        return text.lower()

    def js_append(self, name: Any, value: Any) -> Any:
        self._check_mutable()
        text = _text(value).strip(" \t\r\n")
        if "\n" in text or "\r" in text or "\0" in text:
            raise js_error("TypeError", f"Invalid header value for '{_text(name)}'")
        self._pairs.append((self._name(name), text))
        return UNDEFINED

    def js_set(self, name: Any, value: Any) -> Any:
        self._check_mutable()
        key = self._name(name)
        self._pairs[:] = [pair for pair in self._pairs if pair[0] != key]
        return self.js_append(key, value)

    def js_delete(self, name: Any) -> Any:
        self._check_mutable()
        key = self._name(name)
        self._pairs[:] = [pair for pair in self._pairs if pair[0] != key]
        return UNDEFINED

    def js_get(self, name: Any) -> Any:
        key = _text(name).lower()
        values = [value for pair_name, value in self._pairs if pair_name == key]
        return ", ".join(values) if values else jsnull

    def js_has(self, name: Any) -> Any:
        key = _text(name).lower()
        return any(pair_name == key for pair_name, _ in self._pairs)

    def js_getSetCookie(self) -> Any:
        return JsArray([value for name, value in self._pairs if name == "set-cookie"])

    def sorted_pairs(self) -> list[tuple[str, str]]:
        """The pairs as iteration yields them: sorted, combined except ``set-cookie``."""
        combined: dict[str, list[str]] = {}
        cookies: list[str] = []
        for name, value in self._pairs:
            if name == "set-cookie":
                cookies.append(value)
            else:
                combined.setdefault(name, []).append(value)
        out = [(name, ", ".join(values)) for name, values in combined.items()]
        out += [("set-cookie", value) for value in cookies]
        return sorted(out, key=lambda pair: pair[0])

    def js_entries(self) -> Any:
        from jsemu.objects import JsIterator

        return JsIterator(iter([JsArray([name, value]) for name, value in self.sorted_pairs()]))

    def js_keys(self) -> Any:
        from jsemu.objects import JsIterator

        return JsIterator(iter([name for name, _ in self.sorted_pairs()]))

    def js_forEach(self, callback: Any) -> Any:
        from jsemu.objects import _call_js

        for name, value in self.sorted_pairs():
            _call_js(callback, value, name, self)
        return UNDEFINED

    def __iter__(self) -> Any:
        return iter([JsArray([name, value]) for name, value in self.sorted_pairs()])


def _headers_new(init: Any = UNDEFINED) -> Headers:
    return Headers(_pairs(init))


define_global("Headers", JsCallable(_headers_new, name="Headers", construct=_headers_new))


class ReadableStream(HostObject):
    """A byte stream of Uint8Array chunks; ``async for`` from Python, ``getReader()`` from JS."""

    __slots__ = ("_chunks", "_closed", "_error", "_locked", "_waiter")
    _chunks: Any
    _closed: Any
    _error: Any
    _locked: Any
    _waiter: Any
    js_class: ClassVar[str] = "ReadableStream"

    def __init__(self, chunks: list[bytes] | None = None, *, closed: bool = True) -> None:
        object.__setattr__(self, "_chunks", list(chunks or []))
        object.__setattr__(self, "_closed", closed)
        object.__setattr__(self, "_waiter", None)
        object.__setattr__(self, "_locked", False)
        object.__setattr__(self, "_error", None)

    def push(self, chunk: bytes) -> None:
        """Enqueue a chunk (the writable side of a TransformStream)."""
        self._chunks.append(chunk)
        self._wake()

    def close(self) -> None:
        """No more chunks."""
        object.__setattr__(self, "_closed", True)
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def next_chunk(self) -> bytes | None:
        """The next chunk, or None at the end."""
        while not self._chunks and not self._closed:
            waiter = asyncio.get_running_loop().create_future()
            object.__setattr__(self, "_waiter", waiter)
            await waiter
        if self._chunks:
            return self._chunks.pop(0)
        return None

    async def read_all(self) -> bytes:
        """Every chunk, joined."""
        if self._locked:
            raise js_error("TypeError", "This ReadableStream is currently locked to a reader.")
        object.__setattr__(self, "_locked", True)
        parts: list[bytes] = []
        while (chunk := await self.next_chunk()) is not None:
            parts.append(chunk)
        return b"".join(parts)

    @property
    def js_locked(self) -> Any:
        return self._locked

    def js_getReader(self, *_: Any) -> Any:
        if self._locked:
            raise js_error("TypeError", "This ReadableStream is currently locked to a reader.")
        object.__setattr__(self, "_locked", True)

        async def read() -> Any:
            chunk = await self.next_chunk()
            if chunk is None:
                return JsObject({"value": UNDEFINED, "done": True})
            return JsObject({"value": Uint8Array.copy_of(chunk), "done": False})

        return JsObject(
            {
                "read": JsCallable(lambda: JsPromise.from_awaitable(read()), name="read"),
                "releaseLock": JsCallable(
                    lambda: object.__setattr__(self, "_locked", False) or UNDEFINED, name="releaseLock"
                ),
                "cancel": JsCallable(
                    lambda *_: (self._chunks.clear(), self.close(), JsPromise.resolved(UNDEFINED))[2],
                    name="cancel",
                ),
            }
        )

    def __aiter__(self) -> AsyncIterator[Any]:
        if self._locked:
            raise js_error("TypeError", "This ReadableStream is currently locked to a reader.")
        object.__setattr__(self, "_locked", True)

        async def chunks() -> AsyncIterator[Any]:
            while (chunk := await self.next_chunk()) is not None:
                yield Uint8Array.copy_of(chunk)

        return chunks()


class _Writer(HostObject):
    __slots__ = ("_stream",)
    _stream: Any
    js_class: ClassVar[str] = "WritableStreamDefaultWriter"

    def __init__(self, stream: ReadableStream) -> None:
        object.__setattr__(self, "_stream", stream)

    def js_write(self, chunk: Any) -> Any:
        if self._stream._closed:
            return JsPromise.rejected(js_error("TypeError", "This WritableStream has been closed."))
        self._stream.push(chunk_bytes(chunk))
        return JsPromise.resolved(UNDEFINED)

    def js_close(self) -> Any:
        self._stream.close()
        return JsPromise.resolved(UNDEFINED)

    def js_releaseLock(self) -> Any:
        return UNDEFINED


class TransformStream(HostObject):
    """An identity TransformStream: bytes written to ``writable`` come out of ``readable``."""

    __slots__ = ("_readable",)
    _readable: Any
    js_class: ClassVar[str] = "TransformStream"

    def __init__(self) -> None:
        object.__setattr__(self, "_readable", ReadableStream(closed=False))

    @property
    def js_readable(self) -> Any:
        return self._readable

    @property
    def js_writable(self) -> Any:
        readable = self._readable
        return JsObject({"getWriter": JsCallable(lambda: _Writer(readable), name="getWriter")})


define_global(
    "TransformStream",
    JsCallable(lambda: TransformStream(), name="TransformStream", construct=lambda *_: TransformStream()),
)
define_global(
    "ReadableStream",
    JsCallable(lambda *_: ReadableStream(), name="ReadableStream", construct=lambda *_: ReadableStream()),
)


def chunk_bytes(chunk: Any) -> bytes:
    """The bytes of a chunk or body value (Uint8Array, ArrayBuffer, string)."""
    if isinstance(chunk, Uint8Array | ArrayBuffer):
        return chunk.to_bytes()
    if isinstance(chunk, str):
        return chunk.encode()
    if isinstance(chunk, PyProxy) and isinstance(chunk._obj, bytes | bytearray | memoryview):
        return bytes(chunk._obj)
    raise js_error(
        "TypeError",
        "This TransformStream is being used as a byte stream, but received an object of non-ArrayBuffer/ArrayBufferView type on its writable side.",
    )


def _body_of(body: Any) -> bytes | ReadableStream | None:
    if body is UNDEFINED or body is jsnull:
        return None
    if isinstance(body, ReadableStream):
        return body
    if isinstance(body, str):
        return body.encode()
    if isinstance(body, Uint8Array | ArrayBuffer):
        return body.to_bytes()
    if isinstance(body, JsProxy) and body.js_class == "URLSearchParams":
        return body.to_string().encode()
    raise js_error("TypeError", "Failed to construct: body must be a string, a buffer or a ReadableStream")


class _Body(HostObject):
    """What Request and Response share: a body read once."""

    __slots__ = ("_body", "_headers", "_used")
    _body: Any
    _headers: Any
    _used: Any

    def _stream(self) -> Any:
        body = self._body
        if body is None:
            return jsnull
        if isinstance(body, ReadableStream):
            return body
        stream = ReadableStream([body] if body else [])
        object.__setattr__(self, "_body", stream)
        return stream

    @property
    def js_body(self) -> Any:
        return self._stream()

    @property
    def js_bodyUsed(self) -> Any:
        return self._used

    @property
    def js_headers(self) -> Any:
        return self._headers

    async def read_bytes(self) -> bytes:
        """Consume the body."""
        if self._used:
            raise js_error(
                "TypeError",
                "Body has already been used. It can only be used once. Use tee() first if you need to read it twice.",
            )
        object.__setattr__(self, "_used", True)
        body = self._body
        if body is None:
            return b""
        if isinstance(body, ReadableStream):
            return await body.read_all()
        return body

    def peek_bytes(self) -> bytes | None:
        """The body without consuming it, when it is not a stream (the runtime's own use)."""
        return self._body if isinstance(self._body, bytes) else None

    def js_text(self) -> Any:
        async def text() -> Any:
            return (await self.read_bytes()).decode("utf-8", errors="replace")

        return JsPromise.from_awaitable(text())

    def js_arrayBuffer(self) -> Any:
        async def buffer() -> Any:
            return ArrayBuffer(bytearray(await self.read_bytes()))

        return JsPromise.from_awaitable(buffer())

    def js_bytes(self) -> Any:
        async def data() -> Any:
            return Uint8Array.copy_of(await self.read_bytes())

        return JsPromise.from_awaitable(data())

    def js_json(self) -> Any:
        async def parsed() -> Any:
            return json_parse((await self.read_bytes()).decode("utf-8", errors="replace"))

        return JsPromise.from_awaitable(parsed())

    def js_formData(self) -> Any:
        return JsPromise.rejected(
            js_error("TypeError", "FormData bodies are not emulated by the local runtime")
        )

    def js_blob(self) -> Any:
        return JsPromise.rejected(js_error("TypeError", "Blob bodies are not emulated by the local runtime"))


def _init_get(init: Any, name: str) -> Any:
    if isinstance(init, JsObject):
        return init._props.get(name, UNDEFINED)
    if isinstance(init, JsProxy) and init is not jsnull:
        value = init._js_get(name)
        return UNDEFINED if value is MISSING else value
    return UNDEFINED


class Request(_Body):
    """A Request: ``url``, ``method``, ``headers``, ``body``, ``cf``, body readers, ``clone()``."""

    __slots__ = ("_cf", "_method", "_url")
    _cf: Any
    _method: Any
    _url: Any
    js_class: ClassVar[str] = "Request"

    def __init__(
        self,
        url: str,
        method: str,
        headers: Headers,
        body: bytes | ReadableStream | None,
        cf: Any = UNDEFINED,
    ) -> None:
        object.__setattr__(self, "_url", url)
        object.__setattr__(self, "_method", method)
        object.__setattr__(self, "_headers", headers)
        object.__setattr__(self, "_body", body)
        object.__setattr__(self, "_used", False)
        object.__setattr__(self, "_cf", cf)

    @property
    def js_url(self) -> Any:
        return self._url

    @property
    def js_method(self) -> Any:
        return self._method

    @property
    def js_cf(self) -> Any:
        return self._cf

    @property
    def js_redirect(self) -> Any:
        return "follow"

    @property
    def js_signal(self) -> Any:
        return jsnull

    def js_clone(self) -> Any:
        if self._used:
            raise js_error("TypeError", "Body has already been used.")
        return Request(
            self._url, self._method, Headers(list(self._headers._pairs)), self._copy_body(), self._cf
        )

    def _copy_body(self) -> bytes | ReadableStream | None:
        body = self._body
        if isinstance(body, ReadableStream):
            if body._closed:
                data = b"".join(body._chunks)
                object.__setattr__(self, "_body", data)
                return data
            raise js_error("TypeError", "Cannot clone a request whose body is still streaming")
        return body


_METHODS_NORMALISED = frozenset({"DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"})


def _request_new(input: Any, init: Any = UNDEFINED) -> Request:
    if isinstance(input, Request):
        base = input
        url, method, headers, body = (
            base._url,
            base._method,
            Headers(list(base._headers._pairs)),
            base._copy_body(),
        )
    else:
        url, method, headers, body = _text(input), "GET", Headers(), None
        parts = urlsplit(url)
        if not parts.scheme or not parts.netloc:
            raise js_error("TypeError", f"Invalid URL: {url}")
    given_method = _init_get(init, "method")
    if given_method is not UNDEFINED:
        method = _text(given_method)
        if method.upper() in _METHODS_NORMALISED:
            method = method.upper()
        if method.upper() not in WORKERD_METHODS:
            raise js_error("TypeError", f"Invalid HTTP method string: {method}")
    given_headers = _init_get(init, "headers")
    if given_headers is not UNDEFINED:
        headers = Headers(_pairs(given_headers))
    given_body = _init_get(init, "body")
    if given_body is not UNDEFINED:
        body = _body_of(given_body)
        if body is not None and method in ("GET", "HEAD"):
            raise js_error("TypeError", "Request with a GET or HEAD method cannot have a body.")
    return Request(url, method, headers, body)


define_global("Request", JsCallable(_request_new, name="Request", construct=_request_new))


class Response(_Body):
    """A Response: ``status``, ``statusText``, ``ok``, ``headers``, ``body``, body readers, ``clone()``."""

    __slots__ = ("_status", "_status_text", "_url", "_web_socket")
    _status: Any
    _status_text: Any
    _url: Any
    _web_socket: Any
    js_class: ClassVar[str] = "Response"

    def __init__(
        self,
        body: bytes | ReadableStream | None,
        status: int,
        status_text: str,
        headers: Headers,
        url: str = "",
        web_socket: Any = jsnull,
    ) -> None:
        object.__setattr__(self, "_body", body)
        object.__setattr__(self, "_used", False)
        object.__setattr__(self, "_status", status)
        object.__setattr__(self, "_status_text", status_text)
        object.__setattr__(self, "_headers", headers)
        object.__setattr__(self, "_url", url)
        object.__setattr__(self, "_web_socket", web_socket)

    @property
    def js_status(self) -> Any:
        return self._status

    @property
    def js_statusText(self) -> Any:
        return self._status_text

    @property
    def js_ok(self) -> Any:
        return 200 <= self._status < 300

    @property
    def js_url(self) -> Any:
        return self._url

    @property
    def js_redirected(self) -> Any:
        return False

    @property
    def js_type(self) -> Any:
        return "default"

    @property
    def js_webSocket(self) -> Any:
        return self._web_socket

    @property
    def status(self) -> int:
        """The status (for the runtime's server)."""
        return self._status

    def headers_sorted(self) -> list[tuple[str, str]]:
        """The headers as a server writes them (for the runtime's server)."""
        return self._headers.sorted_pairs()

    def js_clone(self) -> Any:
        if self._used:
            raise js_error("TypeError", "Body has already been used.")
        body = self._body
        if isinstance(body, ReadableStream):
            if not body._closed:
                raise js_error("TypeError", "Cannot clone a response whose body is still streaming")
            body = b"".join(body._chunks)
            object.__setattr__(self, "_body", body)
        return Response(body, self._status, self._status_text, Headers(list(self._headers._pairs)), self._url)


def _response_new(body: Any = UNDEFINED, init: Any = UNDEFINED) -> Response:
    status_value = _init_get(init, "status")
    status = 200 if status_value is UNDEFINED else int(status_value)
    web_socket = _init_get(init, "webSocket")
    if status == 101 and web_socket in (UNDEFINED, jsnull):
        raise js_error(
            "RangeError",
            "Responses may only be constructed with status codes in the range 200 to 599, inclusive.",
        )
    if not (200 <= status <= 599 or status == 101):
        raise js_error(
            "RangeError",
            "Responses may only be constructed with status codes in the range 200 to 599, inclusive.",
        )
    content = _body_of(body)
    if content is not None and status in NULL_BODY_STATUSES:
        raise js_error(
            "TypeError", "Response with null body status (101, 204, 205, or 304) cannot have a body."
        )
    headers_value = _init_get(init, "headers")
    headers = Headers(_pairs(headers_value)) if headers_value is not UNDEFINED else Headers()
    if isinstance(body, str) and not any(name == "content-type" for name, _ in headers._pairs):
        headers.js_append("content-type", "text/plain;charset=UTF-8")
    status_text = _init_get(init, "statusText")
    return Response(
        content,
        status,
        "" if status_text is UNDEFINED else _text(status_text),
        headers,
        web_socket=jsnull if web_socket is UNDEFINED else web_socket,
    )


def _response_json(data: Any, init: Any = UNDEFINED) -> Response:
    from jsemu.json_text import stringify

    text = stringify(data)
    if text is UNDEFINED:
        raise js_error("TypeError", "Value is not JSON serializable")
    response = _response_new(text, init)
    response._headers.js_set("content-type", "application/json")
    return response


def _response_redirect(url: Any, status: Any = 302) -> Response:
    code = int(status)
    if code not in (301, 302, 303, 307, 308):
        raise js_error(
            "RangeError", f"Failed to execute 'redirect' on 'Response': Invalid status code {code}"
        )
    return Response(None, code, "", Headers([("location", _text(url))]))


define_global(
    "Response",
    JsCallable(
        _response_new,
        name="Response",
        construct=_response_new,
        static={
            "json": JsCallable(_response_json, name="json"),
            "redirect": JsCallable(_response_redirect, name="redirect"),
        },
    ),
)


class URL(HostObject):
    """A parsed URL (``href``, ``protocol``, ``host``, ``hostname``, ``port``, ``pathname``, ``search``, ``hash``)."""

    __slots__ = ("_href", "_parts")
    _href: Any
    _parts: Any
    js_class: ClassVar[str] = "URL"

    def __init__(self, href: str) -> None:
        try:
            parts = urlsplit(href)
            _ = parts.port
        except ValueError:
            raise js_error("TypeError", f"Invalid URL string: {href}") from None
        if not parts.scheme:
            raise js_error("TypeError", f"Invalid URL string: {href}")
        object.__setattr__(self, "_parts", parts)
        object.__setattr__(self, "_href", href)

    @property
    def js_href(self) -> Any:
        return self._href

    @property
    def js_protocol(self) -> Any:
        return self._parts.scheme + ":"

    @property
    def js_host(self) -> Any:
        return self._parts.netloc.rpartition("@")[2]

    @property
    def js_hostname(self) -> Any:
        return self._parts.hostname or ""

    @property
    def js_port(self) -> Any:
        port = self._parts.port
        return "" if port is None else str(port)

    @property
    def js_pathname(self) -> Any:
        return self._parts.path or "/"

    @property
    def js_search(self) -> Any:
        return "?" + self._parts.query if self._parts.query else ""

    @property
    def js_hash(self) -> Any:
        return "#" + self._parts.fragment if self._parts.fragment else ""

    @property
    def js_origin(self) -> Any:
        return f"{self._parts.scheme}://{self.js_host}"

    def _js_to_string(self) -> str:
        return self._href


def _url_new(href: Any, base: Any = UNDEFINED) -> URL:
    text = _text(href)
    if base is not UNDEFINED:
        from urllib.parse import urljoin

        text = urljoin(_text(base), text)
    return URL(text)


define_global("URL", JsCallable(_url_new, name="URL", construct=_url_new))


def body_bytes(message: Request | Response) -> bytes | None:
    """The body of a request or response the runtime built (not a stream), or None."""
    return message.peek_bytes()


def make_request(url: str, method: str, headers: list[tuple[str, str]], body: bytes | None) -> Request:
    """A JS Request as workerd hands an incoming HTTP request to a Worker (headers immutable)."""
    return Request(url, method, Headers(headers, immutable=True), body if body else None)


def response_json_text(response: Response) -> str:
    """Debug helper: a short description of a response."""
    return json.dumps({"status": response._status, "headers": response._headers.sorted_pairs()})


_ = to_js_implicit
