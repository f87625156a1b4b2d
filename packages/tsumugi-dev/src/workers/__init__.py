"""The Python Workers SDK surface (``from workers import ...``) for the local runtime.

On Cloudflare the real SDK provides this module. Here it imitates the Python-visible API so that the same
entry modules import and run unchanged under ``tsumugi dev`` and in tests. It exports only names the real
SDK exports (``JsDict`` is in ``workers.rpc`` there and here); tests/contract/test_sdk_*.py check the names,
signatures and conversion rules against the pinned real SDK (ADR-0041).
"""

from __future__ import annotations

from typing import Any

from workers.entrypoints import DurableObject, WorkerEntrypoint, WorkflowEntrypoint, handler
from workers.http import FetchResponse, Headers, Request, Response, fetch
from workers.rpc import python_from_rpc, python_to_rpc

__all__ = [
    "DurableObject",
    "FetchResponse",
    "Headers",
    "Request",
    "Response",
    "WorkerEntrypoint",
    "WorkflowEntrypoint",
    "env",
    "fetch",
    "handler",
    "import_from_javascript",
    "python_from_rpc",
    "python_to_rpc",
]

env: Any
"""The running Worker's env (resolved per handler call by ``__getattr__``)."""


def import_from_javascript(module_name: str) -> Any:
    """Not available locally: there is no JavaScript here."""
    raise ImportError(
        f"Failed to import '{module_name}': JavaScript modules do not exist in the local runtime"
    )


def __getattr__(key: str) -> Any:
    if key == "env":
        from workers.entrypoints import CURRENT_ENV

        try:
            return CURRENT_ENV.get()
        except LookupError:
            raise AttributeError("workers.env is only available while a Worker handler runs") from None
    raise AttributeError(f"module {__name__!r} has no attribute {key!r}")
