# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""``pyodide.http``: ``pyfetch`` and its ``FetchResponse``, over the emulated ``fetch`` global.

The Workers SDK's ``Response`` derives from ``FetchResponse`` and inherits its body readers; ``pyfetch``
sends through ``js.fetch`` (the runtime's), or through a binding's ``fetch`` given as ``fetcher``.
"""

import json
from typing import Any

import jsemu.network  # noqa: F401 - registers fetch
from jsemu.builtins import GLOBALS, OBJECT_FROM_ENTRIES
from jsemu.convert import to_js
from jsemu.core import JsException, JsProxy

__all__ = ["FetchResponse", "pyfetch"]


class FetchResponse:
    """A JS Response with Python readers: ``status``, ``ok``, ``headers``, ``text()``, ``json()``, ``bytes()``."""

    def __init__(
        self, url: str, js_response: JsProxy, abort_controller: Any = None, abort_signal: Any = None
    ) -> None:
        self._url = url
        self.js_response = js_response
        self.abort_controller = abort_controller
        self.abort_signal = abort_signal

    @property
    def body_used(self) -> bool:
        """Whether the body was read already."""
        return bool(self.js_response.bodyUsed)

    @property
    def headers(self) -> dict[str, str]:
        """The headers as a dict."""
        return dict(self.js_response.headers)

    @property
    def ok(self) -> bool:
        """True for a 2xx status."""
        return bool(self.js_response.ok)

    @property
    def redirected(self) -> bool:
        """Whether a redirect was followed."""
        return bool(self.js_response.redirected)

    @property
    def status(self) -> int:
        """The status code."""
        return int(self.js_response.status)

    @property
    def status_text(self) -> str:
        """The status message."""
        return str(self.js_response.statusText)

    @property
    def type(self) -> str:
        """The response type."""
        return str(self.js_response.type)

    @property
    def url(self) -> str:
        """The URL the response came from."""
        return str(self.js_response.url)

    def _raise_if_failed(self) -> None:
        if self.js_response.bodyUsed:
            raise OSError("Response body is already used")

    def raise_for_status(self) -> None:
        """Raise ``OSError`` for a 4xx or 5xx status."""
        if 400 <= self.status < 600:
            kind = "Client" if self.status < 500 else "Server"
            raise OSError(f"{self.status} {kind} Error: {self.status_text} for url: {self.url}")

    def clone(self) -> "FetchResponse":
        """A copy whose body can be read independently."""
        self._raise_if_failed()
        return type(self)(self._url, self.js_response.clone())

    async def buffer(self) -> Any:
        """The body as an ArrayBuffer (a ``JsBuffer``)."""
        self._raise_if_failed()
        return await self.js_response.arrayBuffer()

    async def text(self) -> str:
        """The body decoded as UTF-8."""
        self._raise_if_failed()
        return await self.js_response.text()

    async def string(self) -> str:
        """The body as a string."""
        return await self.text()

    async def json(self, **kwargs: Any) -> Any:
        """The body parsed as JSON (``json.loads`` with ``kwargs``)."""
        return json.loads(await self.string(), **kwargs)

    async def memoryview(self) -> memoryview:
        """The body as a ``memoryview``."""
        return (await self.buffer()).to_memoryview()

    async def bytes(self) -> bytes:
        """The body as ``bytes``."""
        return (await self.buffer()).to_bytes()


async def pyfetch(url: Any, **kwargs: Any) -> FetchResponse:
    """``fetch(url, options)``; ``fetcher`` (keyword) sends through a binding instead of the network."""
    fetcher = kwargs.pop("fetcher", None) or GLOBALS.get("fetch")
    if fetcher is None:
        raise OSError("fetch is not available")
    options = to_js(kwargs, dict_converter=OBJECT_FROM_ENTRIES)
    try:
        js_response = await fetcher(url, options)
    except JsException as error:
        raise OSError(error.message) from None
    return FetchResponse(str(url), js_response)
