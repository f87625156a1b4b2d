"""The dict that Python Workers hand back for plain JS objects.

On Cloudflare, ``python_from_rpc`` turns a plain JS object into a ``JsDict``: a ``dict`` that also allows
attribute access (``res.results``, ``row.id``). The local runtime returns the same shape so that code written
against one runs on the other.
"""

from __future__ import annotations

from typing import Any


class JsDict(dict[str, Any]):
    """A ``dict`` whose keys can also be read as attributes, like the Workers SDK's ``JsDict``."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def __delattr__(self, name: str) -> None:
        try:
            del self[name]
        except KeyError:
            raise AttributeError(name) from None
