"""``Request``, ``Response`` and ``fetch`` as the Workers SDK shows them to Python, on plain CPython.

On Cloudflare these wrap JS objects; here they hold the method, URL, headers and body bytes themselves.
Bodies are bytes (not JS streams), so ``body`` returns bytes.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from http import HTTPMethod, HTTPStatus
from typing import Any, TypeAlias, cast

import httpx

from tsumugi_dev.invocation import charge_subrequest

__all__ = [
    "WORKERD_METHODS",
    "FetchResponse",
    "Headers",
    "HeadersMessage",
    "JsRequest",
    "Request",
    "Response",
    "fetch",
]

WORKERD_METHODS: frozenset[str] = frozenset(
    {
        *HTTPMethod.__members__,
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
"""Methods workerd's HTTP server parses (capnproto ``KJ_HTTP_FOR_EACH_METHOD`` in c++/src/kj/compat/http.h,
plus CONNECT); Python's ``HTTPMethod`` knows only nine of them. Any other answers 501 before the Worker runs."""

Headers: TypeAlias = "Mapping[str, str] | Iterable[tuple[str, str]] | HeadersMessage | None"
Body: TypeAlias = "str | bytes | None"


class HeadersMessage(http.client.HTTPMessage):
    """Case-insensitive headers, the type ``request.headers`` has under the SDK (an ``HTTPMessage``)."""


def to_headers(headers: Headers) -> HeadersMessage:
    """Build a ``HeadersMessage`` from a mapping, a list of pairs or another message."""
    result = HeadersMessage()
    if headers is None:
        return result
    pairs: list[tuple[Any, Any]] = []
    if isinstance(headers, http.client.HTTPMessage):
        pairs = list(headers.items())
    elif isinstance(headers, Mapping):
        mapping = cast("Mapping[str, str]", headers)
        pairs = list(mapping.items())
    else:
        pairs = list(headers)
    for key, value in pairs:
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError("headers: names and values must be str")
        result[key] = value.strip()
    return result


def _to_bytes(body: Body, where: str) -> bytes:
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode()
    if isinstance(body, bytes | bytearray | memoryview):  # pyright: ignore[reportUnnecessaryIsInstance]
        return bytes(body)
    raise TypeError(f"Unsupported type in {where}: {type(body).__name__}")


class _BodyReader:
    """The body-reading methods ``Request`` and ``Response`` share: each reads the body once."""

    _body: bytes
    _used: bool

    def _take(self) -> bytes:
        if self._used:
            raise OSError("Body already used")
        self._used = True
        return self._body

    async def bytes(self) -> bytes:
        """The body as bytes."""
        return self._take()

    async def buffer(self) -> bytes:
        """The body as bytes (an ArrayBuffer on Cloudflare)."""
        return self._take()

    async def text(self) -> str:
        """The body decoded as UTF-8."""
        return self._take().decode()

    async def _json(self, **kwargs: Any) -> Any:
        return json.loads(await self.text(), **kwargs)


class Request(_BodyReader):
    """An HTTP request as a Worker's ``fetch`` handler receives it."""

    def __init__(
        self,
        input: Request | str,
        *,
        method: HTTPMethod | str | None = None,
        headers: Headers = None,
        body: Body = None,
        **_options: Any,
    ) -> None:
        if isinstance(input, Request):
            self._url = input.url
            self._method = method or input.method
            self._headers = to_headers(headers) if headers is not None else to_headers(input.headers)
            self._body = _to_bytes(body, "Request") if body is not None else input._body
        else:
            self._url = input
            self._method = method or "GET"
            self._headers = to_headers(headers)
            self._body = _to_bytes(body, "Request")
        self._method = str(
            self._method.value if isinstance(self._method, HTTPMethod) else self._method
        ).upper()
        if self._method not in WORKERD_METHODS:
            raise ValueError(f"method: unknown HTTP method {self._method!r}")
        self._used = False

    def __repr__(self) -> str:
        return f"Request(method={self._method!r}, url={self._url!r})"

    @property
    def js_object(self) -> JsRequest:
        """The underlying JS Request: its ``method`` is the plain string, whatever the method."""
        return JsRequest(self)

    @property
    def url(self) -> str:
        """The full URL."""
        return self._url

    @property
    def method(self) -> HTTPMethod:
        """The HTTP method; ``KeyError`` for one Python's ``HTTPMethod`` lacks (QUERY, PURGE...), as the SDK."""
        return HTTPMethod[self._method]

    @property
    def headers(self) -> HeadersMessage:
        """The request headers (case-insensitive)."""
        return self._headers

    @property
    def body(self) -> bytes:
        """The body bytes (a ReadableStream on Cloudflare)."""
        return self._body

    @property
    def body_used(self) -> bool:
        """Whether the body was read already."""
        return self._used

    @property
    def cf(self) -> None:
        """Cloudflare request properties; there are none locally."""
        return None

    async def json(self, **kwargs: Any) -> Any:
        """The body parsed as JSON."""
        return await self._json(**kwargs)

    def clone(self) -> Request:
        """A copy whose body can be read independently."""
        if self._used:
            raise OSError("Body already used")
        return Request(self)


class JsRequest:
    """``request.js_object``: the JS Request under the SDK's wrapper, whose ``method`` is a plain string."""

    def __init__(self, request: Request) -> None:
        self._request = request

    @property
    def method(self) -> str:
        """The method as sent, e.g. ``"QUERY"``."""
        return self._request._method  # pyright: ignore[reportPrivateUsage]

    @property
    def js_object(self) -> JsRequest:
        """Itself (already the JS object)."""
        return self

    def __getattr__(self, name: str) -> Any:
        return getattr(self._request, name)


class FetchResponse(_BodyReader):
    """The response type ``fetch`` returns; ``Response`` is the one Workers build."""

    def __init__(self, body: Body, status: int, status_text: str, headers: Headers, url: str = "") -> None:
        self._body = _to_bytes(body, "Response")
        self._status = status
        self._status_text = status_text
        self._headers = to_headers(headers)
        self._url = url
        self._used = False

    @property
    def status(self) -> int:
        """The HTTP status code."""
        return self._status

    @property
    def status_text(self) -> str:
        """The status message."""
        return self._status_text

    @property
    def ok(self) -> bool:
        """True for a 2xx status."""
        return 200 <= self._status < 300

    @property
    def url(self) -> str:
        """The URL the response came from (empty for constructed responses)."""
        return self._url

    @property
    def headers(self) -> HeadersMessage:
        """The response headers."""
        return self._headers

    @property
    def body(self) -> bytes:
        """The body bytes."""
        return self._body

    @property
    def body_used(self) -> bool:
        """Whether the body was read already."""
        return self._used

    @property
    def js_object(self) -> FetchResponse:
        """The underlying object (itself here)."""
        return self

    def json(self: Any, *args: Any, **kwargs: Any) -> Any:
        """``await response.json()`` parses the body; ``Response.json(data)`` builds one (as in the SDK)."""
        if isinstance(self, FetchResponse):
            return self._json()
        return Response.from_json(self, *args, **kwargs)

    def clone(self) -> Response:
        """A copy whose body can be read independently."""
        if self._used:
            raise OSError("Body already used")
        return Response(self._body, self._status, self._status_text, self._headers)

    @staticmethod
    def from_json(
        data: Any, status: HTTPStatus | int = HTTPStatus.OK, status_text: str = "", headers: Headers = None
    ) -> Response:
        """A JSON response (``content-type: application/json`` unless given)."""
        merged = to_headers(headers)
        if "content-type" not in merged:
            merged["content-type"] = "application/json"
        return Response(json.dumps(data), status, status_text, merged)

    @staticmethod
    def redirect(url: str, status: HTTPStatus | int = HTTPStatus.FOUND) -> Response:
        """A redirect to ``url``."""
        code = int(status)
        if code not in (301, 302, 303, 307, 308):
            raise ValueError(f"status: {code} is not a redirect status")
        return Response(None, code, headers={"location": url})


class Response(FetchResponse):
    """A response a Worker returns: ``Response(body=None, status=None, status_text="", headers=None)``."""

    def __init__(
        self,
        body: Body = None,
        status: HTTPStatus | int | None = None,
        status_text: str = "",
        headers: Headers = None,
        web_socket: Any = None,
    ) -> None:
        if body is not None and not isinstance(body, str | bytes):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"Unsupported type in Response: {type(body).__name__}")
        if web_socket is not None:
            raise NotImplementedError("web_socket: WebSockets are not emulated by the local runtime")
        code = int(status) if status is not None else 200
        if not 200 <= code <= 599:
            raise ValueError(f"status: must be in 200..599 (got {code})")
        super().__init__(body, code, status_text, headers)

    def __repr__(self) -> str:
        return f"Response(status={self.status})"


Fetcher: TypeAlias = Callable[[Request], Awaitable[FetchResponse]]


async def fetch(resource: Request | str, *, fetcher: Fetcher | None = None, **options: Any) -> Response:
    """Send a request: to a binding when ``fetcher`` is given, else over the network (httpx)."""
    request = resource if isinstance(resource, Request) and not options else Request(resource, **options)
    if fetcher is not None:
        got = await fetcher(request)
        return (
            got if isinstance(got, Response) else Response(got.body, got.status, got.status_text, got.headers)
        )
    charge_subrequest()  # one subrequest of the caller's invocation (tsumugi_dev.invocation)
    async with httpx.AsyncClient() as client:
        answer = await client.request(
            request.method.value, request.url, headers=list(request.headers.items()), content=request.body
        )
    return Response(answer.content, answer.status_code, answer.reason_phrase, list(answer.headers.items()))
