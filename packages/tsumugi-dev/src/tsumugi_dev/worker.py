"""One hosted Worker: its entry module, its env, its entrypoints, and Service Bindings that reach it.

Cloudflare makes a fresh entrypoint instance for every event (request, RPC call, batch, cron) with
``(ctx, env)``; so does this host. Calls through a Service Binding copy their arguments and results.
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import re
import sys
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import Any

from workers.entrypoints import CURRENT_ENV, DurableObject, WorkerEntrypoint
from workers.http import FetchResponse, Request, Response
from workers.rpc import remote_error

from tsumugi_dev.clock import RuntimeClock
from tsumugi_dev.config import WorkerConfig
from tsumugi_dev.faults import FaultInjector, guard_rpc
from tsumugi_dev.invocation import (
    LimitCounters,
    charge_subrequest,
    enter_invocation,
    leave_invocation,
    subrequest_call,
)
from tsumugi_dev.jsdict import JsDict
from tsumugi_dev.rpc_calls import call_method, rpc_call

__all__ = [
    "Env",
    "ExecutionContext",
    "Exports",
    "ScheduledController",
    "ServiceBinding",
    "WorkerHost",
    "load_module",
]

_MODULE_NAME = re.compile(r"[^A-Za-z0-9_]")


class Env:
    """A Worker's ``env``: its bindings and vars as attributes."""

    def __init__(self, worker: str, values: dict[str, Any]) -> None:
        self.__dict__["_worker"] = worker
        self.__dict__.update(values)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"env of Worker {self.__dict__['_worker']!r} has no binding or var named {name!r}"
        )

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("env is read-only")


class ExecutionContext:
    """``ctx`` of an entrypoint: ``waitUntil``, ``passThroughOnException``, ``props`` and ``exports``."""

    def __init__(self, clock: RuntimeClock, exports: Any) -> None:
        self._clock = clock
        self.props = JsDict()
        self.exports = exports

    def waitUntil(self, awaitable: Awaitable[Any]) -> None:
        """Let ``awaitable`` finish after the response."""

        async def wait() -> None:
            await awaitable

        self._clock.spawn(wait(), name="waitUntil")

    wait_until = waitUntil

    def passThroughOnException(self) -> None:
        """No origin exists locally; nothing to do."""


class Exports:
    """``ctx.exports``: a raw JS object, since the SDK wraps ``env`` but not ``ctx`` (ADR-0042).

    Each entrypoint of the Worker is an attribute holding an unwrapped stub: its RPC arguments and results are
    not converted. It is not a mapping (a JsProxy of a plain object is not subscriptable).
    """

    def __init__(self, stubs: dict[str, ServiceBinding]) -> None:
        self.__dict__["_stubs"] = stubs

    def __getattr__(self, name: str) -> ServiceBinding:
        try:
            return self.__dict__["_stubs"][name]
        except KeyError:
            raise AttributeError(name) from None


class ScheduledController:
    """The ``controller`` a ``scheduled`` handler receives."""

    def __init__(self, cron: str, scheduled_time: int) -> None:
        self.cron = cron
        self.scheduledTime = scheduled_time

    def noRetry(self) -> None:
        """Cron events are not retried locally."""


def load_module(config: WorkerConfig) -> ModuleType:
    """Import a Worker's ``main`` module under a name of its own (its folder goes on ``sys.path``)."""
    folder = str(config.main.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = "_tsumugi_worker_" + _MODULE_NAME.sub("_", config.name)
    spec = importlib.util.spec_from_file_location(name, config.main)
    if spec is None or spec.loader is None:
        raise ImportError(f"{config.path}: main {config.main} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class WorkerHost:
    """A loaded Worker: makes entrypoint instances and runs their handlers."""

    def __init__(
        self, config: WorkerConfig, clock: RuntimeClock, counters: LimitCounters | None = None
    ) -> None:
        self.config = config
        self.name = config.name
        self._clock = clock
        self._counters = counters
        self._label = f"Worker {config.name}"
        self.module = load_module(config)
        self.env: Env = Env(config.name, {})
        self.exports = Exports({})

    def bind_env(self, values: dict[str, Any]) -> None:
        """Set the env (bindings and vars) once every binding exists."""
        self.env = Env(self.name, values)
        self.exports = Exports(
            {name: ServiceBinding(self, name, raw=True) for name in self.entrypoint_names()}
        )

    def entrypoint_names(self) -> list[str]:
        """Names of the module's ``WorkerEntrypoint`` classes."""
        return [
            name
            for name, value in vars(self.module).items()
            if inspect.isclass(value)
            and issubclass(value, WorkerEntrypoint)
            and value is not WorkerEntrypoint
        ]

    def durable_object_class(self, class_name: str) -> type:
        """The Durable Object class ``class_name`` of this Worker."""
        cls = getattr(self.module, class_name, None)
        if not (inspect.isclass(cls) and issubclass(cls, DurableObject)):
            raise ImportError(
                f"{self.config.path}: {self.config.main.name} has no DurableObject class {class_name}"
            )
        return cls

    def entrypoint(self, name: str | None) -> Any:
        """A fresh instance of the entrypoint class ``name`` (``Default`` when None)."""
        cls = getattr(self.module, name or "Default", None)
        if not (inspect.isclass(cls) and issubclass(cls, WorkerEntrypoint)):
            what = f"entrypoint {name}" if name else "a Default(WorkerEntrypoint) class"
            raise TypeError(f"Worker {self.name!r} has no {what}")
        return cls(ExecutionContext(self._clock, self.exports), self.env)

    async def run(self, entrypoint: str | None, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        """Run ``handler`` against a fresh entrypoint instance as one invocation, this Worker's env current."""
        token = CURRENT_ENV.set(self.env)
        budget = enter_invocation(self._label, self.config.subrequest_limit, self._counters)
        try:
            return await handler(self.entrypoint(entrypoint))
        finally:
            leave_invocation(budget)
            CURRENT_ENV.reset(token)

    def has_handler(self, name: str, entrypoint: str | None = None) -> bool:
        """True when the entrypoint class defines ``name``."""
        cls = getattr(self.module, entrypoint or "Default", None)
        return inspect.isclass(cls) and callable(getattr(cls, name, None))

    async def fetch(self, request: Request, entrypoint: str | None = None) -> Response:
        """Run the ``fetch`` handler."""

        async def run(instance: Any) -> Any:
            handler = getattr(instance, "fetch", None)
            if handler is None:
                raise TypeError(f"Worker {self.name!r} does not export a fetch() handler")
            return await call_method(handler, request)

        response = await self.run(entrypoint, run)
        if not isinstance(response, FetchResponse):
            raise TypeError(
                f"fetch() of Worker {self.name!r} must return a Response, got {type(response).__name__}"
            )
        return response if isinstance(response, Response) else response.clone()

    async def queue(self, batch: Any) -> None:
        """Run ``queue(batch, env, ctx)`` (three arguments, as Cloudflare passes them)."""
        await self.run(None, lambda instance: call_method(instance.queue, batch, instance.env, instance.ctx))

    async def scheduled(self, cron: str, scheduled_time: int) -> None:
        """Run ``scheduled(controller, env, ctx)``."""
        controller = ScheduledController(cron, scheduled_time)
        await self.run(
            None, lambda instance: call_method(instance.scheduled, controller, instance.env, instance.ctx)
        )


class ServiceBinding:
    """A Service Binding (``Fetcher``): ``await binding.method(*args)`` is RPC, ``fetch`` is HTTP.

    ``raw``: the stub as ``ctx.exports`` holds it, with no conversion of RPC arguments and results.
    ``faults``: the runtime's fault injector, whose ``rpc`` faults make calls through this binding fail.
    """

    def __init__(
        self,
        target: WorkerHost,
        entrypoint: str | None,
        *,
        raw: bool = False,
        faults: FaultInjector | None = None,
    ) -> None:
        self._target = target
        self._entrypoint = entrypoint
        self._raw = raw
        self._faults = faults

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        if name.startswith("_"):
            raise AttributeError(name)
        target, entrypoint = self._target, self._entrypoint
        call = rpc_call(name, lambda run: target.run(entrypoint, run), raw=self._raw)
        call = guard_rpc(self._faults, target.name, entrypoint or "Default", name, call)
        return subrequest_call(call)

    async def fetch(self, resource: Request | str, **options: Any) -> Response:
        """Send an HTTP request to the target entrypoint's ``fetch`` (one subrequest)."""
        charge_subrequest()
        request = (
            Request(resource, **options) if options or not isinstance(resource, Request) else resource.clone()
        )
        await asyncio.sleep(0)
        try:
            response = await self._target.fetch(request, self._entrypoint)
        except Exception as exc:
            raise remote_error(exc) from None
        return Response(response.body, response.status, response.status_text, response.headers)
