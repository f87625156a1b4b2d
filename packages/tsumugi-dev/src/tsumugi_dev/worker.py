# pyright: reportPrivateUsage=false
# (The runtime's half of the JS emulation reads jsemu's object internals; ADR-0097.)
"""One hosted Worker: its entry module, its env, its entrypoints, and Service Bindings that reach it.

Cloudflare makes a fresh entrypoint instance for every event (request, RPC call, batch, cron) with the raw JS
``(ctx, env)``; the Workers SDK's base classes wrap ``env`` (and, for a Durable Object, ``ctx``) themselves.
So does this host: it builds JS-shaped ``ctx``/``env`` objects (`tsumugi_dev.js_rpc`, `js_bindings`) and calls
handlers as workerd does (`tsumugi_dev.js_rpc.invoke`).
"""

from __future__ import annotations

import importlib.util
import inspect
import re
import sys
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import Any, ClassVar

from jsemu.core import UNDEFINED, HostObject, JsCallable
from jsemu.entrypoint_helper import CURRENT_ENV, CURRENT_WAIT_UNTIL
from jsemu.fetch_api import Request as JsRequest
from jsemu.fetch_api import Response as JsResponse
from jsemu.objects import JsObject
from workers import DurableObject, WorkerEntrypoint
from workers.rpc import _EnvWrapper  # what Worker code sees of env

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
from tsumugi_dev.js_bindings import JsMessageBatch
from tsumugi_dev.js_rpc import Call, JsExecutionContext, JsFetcher, invoke, invoke_fetch
from tsumugi_dev.metering import Usage
from tsumugi_dev.queue_consumer import MessageBatch

__all__ = ["JsScheduledController", "WorkerHost", "load_module", "service_binding", "service_stub"]

_MODULE_NAME = re.compile(r"[^A-Za-z0-9_]")
_wrap_env: Any = _EnvWrapper  # the SDK's classes are unannotated


class JsScheduledController(HostObject):
    """The ``controller`` a ``scheduled`` handler receives: own ``cron`` and ``scheduledTime``, ``noRetry()``."""

    __slots__ = ("_own",)
    _own: Any
    js_class: ClassVar[str] = "ScheduledController"

    def __init__(self, cron: str, scheduled_time: int) -> None:
        object.__setattr__(self, "_own", {"cron": cron, "scheduledTime": scheduled_time})

    def _js_get(self, name: str) -> Any:
        own = self._own
        return own[name] if name in own else super()._js_get(name)

    def _js_keys(self) -> list[str]:
        return list(self._own)

    def js_noRetry(self) -> Any:
        return UNDEFINED


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


def _fetch_charged(call: Call) -> Call:
    def charged(*args: Any) -> Awaitable[Any]:
        charge_subrequest()
        return call(*args)

    return charged


def service_binding(
    target: WorkerHost, entrypoint: str | None, faults: FaultInjector | None = None
) -> JsFetcher:
    """A Service Binding to ``target``'s ``entrypoint`` (``Default`` when None): a ``Fetcher``."""

    def wrap(name: str, call: Call) -> Call:
        return subrequest_call(guard_rpc(faults, target.name, entrypoint or "Default", name, call))

    # The callee shares its caller's simultaneous connections (measured from the top-level request, ADR-0102).
    return JsFetcher(lambda run: target.run(entrypoint, run, share_connections=True), wrap, _fetch_charged)


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
        self.usage: Usage | None = None
        """Where this Worker's requests and subrequests are metered (set by the runtime; ADR-0130)."""
        self.module = load_module(config)
        self.js_env = JsObject({})
        self.exports = JsObject({})
        self.wait_until_function = JsCallable(self._wait_until_js, name="waitUntil")
        """The JS ``waitUntil`` of this Worker's invocations (what ``cloudflare:workers`` exports)."""

    def bind_env(self, values: dict[str, Any]) -> None:
        """Set the env (bindings and vars, as JS values) once every binding exists."""
        self.js_env = JsObject(dict(values))
        self.exports = JsObject({name: service_binding(self, name) for name in self.entrypoint_names()})

    @property
    def env(self) -> Any:
        """The env as Worker code sees it through the SDK (``self.env``): to drive bindings from a test."""
        return _wrap_env(self.js_env)

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

    def _spawn(self, work: Awaitable[Any]) -> None:
        async def wait() -> None:
            await work

        self._clock.spawn(wait(), name="waitUntil")

    def _wait_until_js(self, promise: Any) -> Any:
        from tsumugi_dev.js_values import await_js

        self._spawn(await_js(promise))
        return UNDEFINED

    def entrypoint(self, name: str | None) -> Any:
        """A fresh instance of the entrypoint class ``name`` (``Default`` when None), made as workerd does."""
        cls = getattr(self.module, name or "Default", None)
        if not (inspect.isclass(cls) and issubclass(cls, WorkerEntrypoint)):
            what = f"entrypoint {name}" if name else "a Default(WorkerEntrypoint) class"
            raise TypeError(f"Worker {self.name!r} has no {what}")
        make: Any = cls  # the SDK's classes are unannotated
        return make(JsExecutionContext(self._spawn, self.exports), self.js_env)

    async def run(
        self,
        entrypoint: str | None,
        handler: Callable[[Any], Awaitable[Any]],
        *,
        share_connections: bool = False,
    ) -> Any:
        """Run ``handler`` against a fresh entrypoint instance as one invocation of this Worker.

        ``share_connections``: the event is a Service Binding call, whose callee draws on the calling
        invocation's six simultaneous connections (ADR-0102).
        """
        env_token = CURRENT_ENV.set(self.js_env)
        wait_token = CURRENT_WAIT_UNTIL.set(self.wait_until_function)
        usage = self.usage
        if usage is not None:  # a Service Binding's callee is not billed as a request (ADR-0130)
            if share_connections:
                usage.service_binding_calls += 1
            else:
                usage.requests += 1
        budget = enter_invocation(
            self._label,
            self.config.subrequest_limit,
            self._counters,
            share_connections=share_connections,
            usage=usage,
        )
        try:
            return await handler(self.entrypoint(entrypoint))
        finally:
            leave_invocation(budget)
            CURRENT_WAIT_UNTIL.reset(wait_token)
            CURRENT_ENV.reset(env_token)

    def has_handler(self, name: str, entrypoint: str | None = None) -> bool:
        """True when the entrypoint class defines ``name``."""
        cls = getattr(self.module, entrypoint or "Default", None)
        return inspect.isclass(cls) and callable(getattr(cls, name, None))

    async def fetch(self, request: JsRequest, entrypoint: str | None = None) -> JsResponse:
        """Run the ``fetch`` handler with a JS Request; answers the JS Response."""
        return await self.run(entrypoint, lambda instance: invoke_fetch(instance, request))

    async def queue(self, batch: MessageBatch) -> None:
        """Run ``queue``: workerd passes the batch and two undefined arguments to a class handler."""
        js_batch = JsMessageBatch(batch)
        await self.run(None, lambda instance: invoke(instance, "queue", [js_batch, UNDEFINED, UNDEFINED]))

    async def scheduled(self, cron: str, scheduled_time: int) -> None:
        """Run ``scheduled``: the controller and two undefined arguments, as workerd passes them."""
        controller = JsScheduledController(cron, scheduled_time)
        await self.run(
            None, lambda instance: invoke(instance, "scheduled", [controller, UNDEFINED, UNDEFINED])
        )


def service_stub(target: WorkerHost, entrypoint: str | None = None) -> Any:
    """A Service Binding to ``target`` as Worker code holds one through the SDK (for tests to call)."""
    return _wrap_env(JsObject({"SERVICE": service_binding(target, entrypoint)})).SERVICE
