"""The dict that Python Workers hand back for plain JS objects (``JsDict``), for the runtime's modules.

On Cloudflare, ``python_from_rpc`` turns a plain JS object into a ``JsDict``: a ``dict`` that also allows
attribute access (``res.results``, ``row.id``). The class is the SDK's own (``workers.rpc``); the runtime's
modules import it from here, with a typed declaration for the checker (the SDK's class is unannotated).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["JsDict"]

if TYPE_CHECKING:

    class JsDict(dict[str, Any]):
        """``workers.rpc.JsDict`` as the checker sees it."""

        def __getattr__(self, name: str) -> Any: ...

else:
    from workers.rpc import JsDict
