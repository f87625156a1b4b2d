"""httpx for the HTTP transports, loaded on first use: a Worker's upload carries none (ADR-0107).

Inside a Worker the clients go through the Service Binding; a program that asks for HTTP there gets an error
that says so instead of ``ModuleNotFoundError``. The import sits under ``except ImportError``, which is what
the deploy's upload check reads as optional (ADR-0113).
"""

from __future__ import annotations

from typing import Any

from tsumugi_core.exceptions import NotConfiguredError

__all__ = ["load_httpx"]


def load_httpx() -> Any:
    """The ``httpx`` module, or a ``RuntimeError`` saying the HTTP transport is not available here."""
    try:
        import httpx
    except ImportError as error:
        raise NotConfiguredError(
            "the HTTP transport needs httpx, which this environment lacks (inside a Worker, use the Service "
            "Binding: create_client(service=...) / the runs and schedules clients' binding)"
        ) from error
    return httpx
