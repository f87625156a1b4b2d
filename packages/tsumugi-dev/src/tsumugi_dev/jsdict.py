"""The dict that Python Workers hand back for plain JS objects (``JsDict``), for the runtime's modules.

On Cloudflare, ``python_from_rpc`` turns a plain JS object into a ``JsDict``: a ``dict`` that also allows
attribute access (``res.results``, ``row.id``). The class is the SDK's own (``workers.rpc``); the runtime's
modules import it from here.
"""

from __future__ import annotations

from workers.rpc import JsDict

__all__ = ["JsDict"]
