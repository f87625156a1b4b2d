"""tsumugi_dev: the local runtime for Python Workers and the ``tsumugi`` command.

``LocalRuntime`` hosts Workers from their wrangler configs with Durable Objects, Queues, D1, Analytics
Engine, Service Bindings and cron on SQLite; ``VirtualClock`` drives it in tests, ``RealClock`` in
``tsumugi dev``; ``LocalRuntime.faults`` (a ``FaultInjector``) makes it lose, duplicate, reorder and fail on
purpose; ``tsumugi_simulation`` runs whole systems under random faults from a seed and checks invariants.

The names below are loaded on first use (PEP 562), so that importing a small module of this package (a
Worker's test importing ``tsumugi_dev.clock``) does not load the whole runtime and Cloudflare's SDK with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tsumugi_dev.clock import RealClock, RuntimeClock, VirtualClock
    from tsumugi_dev.config import ConfigError, WorkerConfig, load_config
    from tsumugi_dev.faults import Fault, FaultInjector, InjectedFault
    from tsumugi_dev.runtime import LocalRuntime

__all__ = [
    "ConfigError",
    "Fault",
    "FaultInjector",
    "InjectedFault",
    "LocalRuntime",
    "RealClock",
    "RuntimeClock",
    "VirtualClock",
    "WorkerConfig",
    "load_config",
]

_HOMES = {
    "ConfigError": "config",
    "Fault": "faults",
    "FaultInjector": "faults",
    "InjectedFault": "faults",
    "LocalRuntime": "runtime",
    "RealClock": "clock",
    "RuntimeClock": "clock",
    "VirtualClock": "clock",
    "WorkerConfig": "config",
    "load_config": "config",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'tsumugi_dev' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"tsumugi_dev.{home}"), name)
    globals()[name] = value
    return value
