"""tsumugi_dev: the local runtime for Python Workers and the ``tsumugi`` command.

``LocalRuntime`` hosts Workers from their wrangler configs with Durable Objects, Queues, D1, Analytics
Engine, Service Bindings and cron on SQLite; ``VirtualClock`` drives it in tests, ``RealClock`` in
``tsumugi dev``; ``LocalRuntime.faults`` (a ``FaultInjector``) makes it lose, duplicate and fail on purpose.
"""

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
