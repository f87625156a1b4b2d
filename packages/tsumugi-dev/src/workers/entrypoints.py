"""The base classes Worker modules derive from, as the Workers SDK defines them.

The runtime constructs them with ``(ctx, env)`` exactly as Cloudflare does; subclasses keep their own
``__init__`` as long as they call ``super().__init__(ctx, env)``.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar

__all__ = ["CURRENT_ENV", "DurableObject", "WorkerEntrypoint", "WorkflowEntrypoint", "handler"]

F = TypeVar("F", bound=Callable[..., Any])

CURRENT_ENV: ContextVar[Any] = ContextVar("workers_env")
"""The env of the Worker whose handler is running (what ``workers.env`` returns)."""


class WorkerEntrypoint:
    """Base class of a Worker entrypoint: ``fetch``, ``queue``, ``scheduled`` and RPC methods."""

    ctx: Any
    env: Any

    def __init__(self, ctx: Any, env: Any) -> None:
        self.ctx = ctx
        self.env = env


class DurableObject:
    """Base class of a Durable Object: RPC methods, ``fetch`` and ``alarm``."""

    ctx: Any
    env: Any

    def __init__(self, ctx: Any, env: Any) -> None:
        self.ctx = ctx
        self.env = env


class WorkflowEntrypoint:
    """Base class of a Workflow (importable; Workflows are not emulated by the local runtime)."""

    ctx: Any
    env: Any

    def __init__(self, ctx: Any, env: Any) -> None:
        self.ctx = ctx
        self.env = env


def handler(func: F) -> F:
    """The SDK's legacy handler decorator; arguments are already Python objects here."""
    return func
