"""The local runtime: hosts Workers from their wrangler configs, with every binding wired and state on disk.

Example:
    clock = VirtualClock()
    async with LocalRuntime(["worker/wrangler.jsonc"], data_dir=tmp_path, clock=clock) as runtime:
        response = await runtime.fetch("my-worker", "http://local/path")
        await clock.advance(60_000)   # alarms, queue deliveries and crons due in that minute run, in order

Layout of the data folder: ``runtime.sqlite`` (queues, alarm index), ``analytics.sqlite``,
``d1/<database_name>.sqlite`` and ``do/<script>/<class>/<id>.sqlite``. Starting again on the same folder
resumes: queued and in-flight messages are delivered (again), alarms fire, objects keep their data.
"""

from __future__ import annotations

import logging
import urllib.parse
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType
from typing import Any

from workers import Request, Response

from tsumugi_dev.alarms import AlarmScheduler
from tsumugi_dev.analytics import AnalyticsEngineDataset, AnalyticsStore
from tsumugi_dev.clock import RealClock, RuntimeClock
from tsumugi_dev.config import ConfigError, WorkerConfig, load_config
from tsumugi_dev.cron_triggers import CronTrigger
from tsumugi_dev.d1 import D1Database, apply_d1_migrations
from tsumugi_dev.durable_objects import (
    DurableObjectId,
    JsDurableObjectNamespace,
    NamespaceHost,
    object_id_for_name,
)
from tsumugi_dev.faults import FaultInjector
from tsumugi_dev.invocation import LimitCounters
from tsumugi_dev.js_bindings import JsAnalyticsDataset, JsD1Database, JsQueue
from tsumugi_dev.js_fetch import install_fetch
from tsumugi_dev.js_values import platform_js
from tsumugi_dev.metering import Meter
from tsumugi_dev.private_files import private_dir
from tsumugi_dev.queue_consumer import QueueConsumer
from tsumugi_dev.queue_meter import QueueMeter
from tsumugi_dev.queues import QueueBinding, QueueStore
from tsumugi_dev.state_db import open_state_db
from tsumugi_dev.worker import WorkerHost, service_binding

__all__ = ["SCHEDULED_PATH", "LocalRuntime"]

install_fetch()  # Workers' global fetch (idempotent)

SCHEDULED_PATH = "/cdn-cgi/handler/scheduled"
"""The URL path that runs a Worker's ``scheduled`` handler, as under ``wrangler dev``."""

_log = logging.getLogger("tsumugi_dev")


def _load_config(path: Path | str) -> WorkerConfig:
    """A config the runtime reads itself: its warnings (fields wrangler does not know) are logged."""
    config = load_config(path)
    for warning in config.warnings:
        _log.warning("%s", warning)
    return config


class LocalRuntime:
    """Every Worker of a set of wrangler configs, in one process and one event loop."""

    def __init__(
        self,
        configs: Sequence[WorkerConfig | Path | str],
        *,
        data_dir: Path | str,
        clock: RuntimeClock | None = None,
    ) -> None:
        self.configs = [c if isinstance(c, WorkerConfig) else _load_config(c) for c in configs]
        names = [c.name for c in self.configs]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ConfigError(
                f"name: Worker names must be unique across configs (repeated: {', '.join(duplicates)})"
            )
        self.data_dir = Path(data_dir)
        self.clock: RuntimeClock = clock or RealClock()
        self.workers: dict[str, WorkerHost] = {}
        self._namespaces: dict[str, NamespaceHost] = {}
        self._d1: dict[str, D1Database] = {}
        self._consumers: dict[str, QueueConsumer] = {}
        self._crons: list[CronTrigger] = []
        self._running = False
        self.limits = LimitCounters()
        """What platform limits dropped (Analytics Engine points beyond 250 per invocation), for tests."""
        self.faults = FaultInjector(self)
        self.meter = Meter()
        """Every billable unit used so far, per Worker, Durable Object class, queue and database (ADR-0130)."""
        """Fault injection for tests (``tsumugi_dev.faults``); faults stay armed across a restart."""

    async def __aenter__(self) -> LocalRuntime:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        """Load every Worker, wire bindings, apply D1 migrations, and resume queues, alarms and crons."""
        if self._running:
            raise RuntimeError("the runtime is already running")
        self._running = True
        self.workers, self._namespaces, self._d1, self._consumers, self._crons = {}, {}, {}, {}, []
        private_dir(self.data_dir)
        self._state = open_state_db(self.data_dir / "runtime.sqlite")
        # SQLite work off the loop's thread only under the real clock: virtual time needs all of it on the loop.
        offload = self._offload()
        self.queues = QueueStore(self._state, self.clock, self.faults)
        self.alarms = AlarmScheduler(self._state, self.clock, self._fire_alarm)
        try:
            self.analytics = AnalyticsStore(self.data_dir / "analytics.sqlite", self.clock, offload=offload)
        except BaseException:
            self._running = False
            self._state.close()
            raise
        try:
            self._wire()
        except BaseException:  # a bad config found while wiring: close what was opened, then report it
            await self.stop()
            raise

    def _wire(self) -> None:
        for config in self.configs:
            self.workers[config.name] = WorkerHost(config, self.clock, self.limits)
        for config in self.configs:
            self.workers[config.name].bind_env(self._env_values(config))
        self._attach_meter()
        for namespace in self._namespaces.values():
            host = self._worker_for(namespace.script, f"durable_objects class {namespace.class_name}")
            cls = host.durable_object_class(namespace.class_name)
            namespace.bind(
                cls, host.js_env, host.config.subrequest_limit, host.wait_until_function, host.exports
            )
        for config in self.configs:
            self._start_consumers(config)
        self._restore_alarms()
        for config in self.configs:
            self._start_crons(config)

    async def stop(self) -> None:
        """Stop timers and background work and close every file (state stays on disk); idempotent."""
        if not self._running:
            return
        self._running = False
        with ExitStack() as files:  # closed last to first, each even when one before it raised
            files.callback(self._state.close)
            files.callback(self.analytics.close)
            for db in self._d1.values():
                files.callback(db.close)
            for namespace in self._namespaces.values():
                files.callback(namespace.evict_all)
            for trigger in self._crons:
                trigger.cancel()
            self.alarms.cancel_all()
            await self.clock.aclose()

    # -- wiring -------------------------------------------------------------------------------------------

    def _attach_meter(self) -> None:
        """Give every facade its account in `meter` (ADR-0130), before any event runs."""
        meter = self.meter
        for host in self.workers.values():
            host.usage = meter.usage(f"Worker {host.name}")
        for namespace in self._namespaces.values():
            namespace.usage = meter.usage(namespace.label)
        for name, db in self._d1.items():
            db.usage = meter.usage(f"D1 {name}")
        self.queues.meter = QueueMeter(meter)

    def _worker_for(self, name: str, what: str) -> WorkerHost:
        host = self.workers.get(name)
        if host is None:
            raise ConfigError(
                f"{what}: Worker {name!r} is not part of this runtime (add its wrangler config)"
            )
        return host

    def _namespace(self, script: str, class_name: str) -> NamespaceHost:
        key = f"{script}:{class_name}"
        if key not in self._namespaces:
            self._namespaces[key] = NamespaceHost(
                script=script,
                class_name=class_name,
                data_dir=self.data_dir,
                clock=self.clock,
                alarms=self.alarms,
                faults=self.faults,
                counters=self.limits,
            )
        return self._namespaces[key]

    def _offload(self) -> bool:
        """Whether D1 and Analytics Engine work on threads of their own (ADR-0035, ADR-0036)."""
        return isinstance(self.clock, RealClock)

    def _database(self, name: str, migrations_dir: Path) -> D1Database:
        if name not in self._d1:
            db = D1Database(
                self.data_dir / "d1" / f"{name}.sqlite",
                name=name,
                offload=self._offload(),
                faults=self.faults,
            )
            try:
                applied = apply_d1_migrations(db, migrations_dir)
            except BaseException:
                db.close()
                raise
            if applied:
                _log.info("d1 %s: applied %s", name, ", ".join(applied))
            self._d1[name] = db
        return self._d1[name]

    def _env_values(self, config: WorkerConfig) -> dict[str, Any]:
        """The Worker's env as JS values: vars (JSON values), secrets (strings) and binding objects."""
        values: dict[str, Any] = {name: platform_js(value) for name, value in config.vars.items()}
        for do in config.durable_objects:
            values[do.name] = JsDurableObjectNamespace(
                self._namespace(do.script_name or config.name, do.class_name)
            )
        for producer in config.queue_producers:
            values[producer.binding] = JsQueue(
                QueueBinding(self.queues, producer.queue, producer.delivery_delay)
            )
        for d1 in config.d1_databases:
            values[d1.binding] = JsD1Database(
                self._database(d1.database_name, config.directory / d1.migrations_dir)
            )
        for dataset in config.analytics_datasets:
            binding = AnalyticsEngineDataset(self.analytics, dataset.dataset or dataset.binding)
            binding.usage = self.meter.usage(f"Analytics Engine {binding.dataset}")
            values[dataset.binding] = JsAnalyticsDataset(binding)
        for service in config.services:
            target = self._worker_for(service.service, f"services binding {service.binding}")
            values[service.binding] = service_binding(target, service.entrypoint, self.faults)
        return values

    def _start_consumers(self, config: WorkerConfig) -> None:
        host = self.workers[config.name]
        for consumer in config.queue_consumers:
            if consumer.queue in self._consumers:
                raise ConfigError(
                    f"{config.path}: queues.consumers: queue {consumer.queue!r} already has a consumer"
                )
            if not host.has_handler("queue"):
                raise ConfigError(
                    f"{config.path}: queues.consumers: Worker {config.name!r} has no Default.queue()"
                )
            runner = QueueConsumer(consumer, self.queues, self.clock, host.queue, self.faults)
            self._consumers[consumer.queue] = runner
            runner.recover()
            runner.poke()

    def _start_crons(self, config: WorkerConfig) -> None:
        if config.crons and not self.workers[config.name].has_handler("scheduled"):
            raise ConfigError(
                f"{config.path}: triggers.crons: Worker {config.name!r} has no Default.scheduled()"
            )
        for expression in config.crons:
            trigger = CronTrigger(expression, self.clock, self.workers[config.name].scheduled)
            trigger.arm()
            self._crons.append(trigger)

    def _restore_alarms(self) -> None:
        for namespace_key, object_id, name in self.alarms.indexed():
            namespace = self._namespaces.get(namespace_key)
            if namespace is None:
                _log.warning(
                    "alarm of %s %s skipped: that class is not hosted now", namespace_key, object_id[:12]
                )
                continue
            host = namespace.host(DurableObjectId(object_id, name))
            stored = host.storage().stored_alarm()
            host.alarm_committed(stored[0] if stored else None)

    async def _fire_alarm(self, namespace_key: str, object_id: str) -> None:
        namespace = self._namespaces[namespace_key]
        await namespace.host(DurableObjectId(object_id)).run_alarm()

    # -- what tests and the HTTP server use ---------------------------------------------------------------

    def env(self, worker: str) -> Any:
        """The env of ``worker`` (its bindings, to drive them from a test)."""
        return self._worker_for(worker, "env").env

    def d1(self, database_name: str) -> D1Database:
        """The D1 database ``database_name``."""
        return self._d1[database_name]

    def namespace(self, worker: str, class_name: str) -> NamespaceHost:
        """The host of every object of ``class_name`` in ``worker``."""
        return self._namespaces[f"{worker}:{class_name}"]

    def evict_durable_objects(self) -> None:
        """Drop every live Durable Object instance (storage and alarms stay), as an eviction does."""
        for namespace in self._namespaces.values():
            namespace.evict_all()

    # -- what fault injection checks its targets against (FaultTargets) --------------------------------------

    def queue_names(self) -> set[str]:
        """Every queue a Worker of this runtime produces to or consumes (dead-letter queues included)."""
        names: set[str] = set()
        for config in self.configs:
            names.update(p.queue for p in config.queue_producers)
            for consumer in config.queue_consumers:
                names.add(consumer.queue)
                if consumer.dead_letter_queue is not None:
                    names.add(consumer.dead_letter_queue)
        return names

    def worker_names(self) -> list[str]:
        """Every Worker of this runtime."""
        return [config.name for config in self.configs]

    def database_names(self) -> set[str]:
        """Every D1 database a Worker of this runtime binds (its ``database_name``)."""
        return {d1.database_name for config in self.configs for d1 in config.d1_databases}

    def namespace_key(self, worker: str, class_name: str) -> str:
        """The key of the Durable Object class ``class_name`` of ``worker`` (``ValueError`` when not hosted)."""
        hosted = {
            f"{do.script_name or config.name}:{do.class_name}"
            for config in self.configs
            for do in config.durable_objects
        }
        key = f"{worker}:{class_name}"
        if key not in hosted:
            listed = ", ".join(sorted(hosted)) or "none"
            raise ValueError(
                f"worker, class_name: {key} is not a Durable Object class of this runtime (known: {listed})"
            )
        return key

    def object_id_for_name(self, namespace_key: str, name: str) -> str:
        """The hex id ``idFromName(name)`` gives in ``namespace_key``."""
        return object_id_for_name(namespace_key, name)

    async def fetch(self, worker: str, resource: Request | str, **options: Any) -> Response:
        """Send a request to ``worker`` as its HTTP server would (``/cdn-cgi/handler/scheduled`` included).

        ``resource`` and ``options`` are those of the SDK's ``Request``; the answer is the SDK's ``Response``.
        """
        request = resource if isinstance(resource, Request) and not options else Request(resource, **options)
        return Response(await self.fetch_js(worker, request.js_object))

    async def fetch_js(self, worker: str, request: Any) -> Any:
        """``fetch`` with a JS Request; answers the JS Response (what the HTTP server writes)."""
        host = self._worker_for(worker, "fetch")
        url = urllib.parse.urlsplit(str(request.url))
        if url.path == SCHEDULED_PATH:
            if not host.has_handler("scheduled"):
                # Not a 500 with a traceback: this Worker simply has no cron handler to run.
                return Response(f"{host.name} has no scheduled handler", status=404).js_object
            query = urllib.parse.parse_qs(url.query)
            cron = query.get("cron", [""])[0]
            at = int(query.get("time", [str(self.clock.now_ms())])[0])
            await host.scheduled(cron, at)
            return Response("ok").js_object
        return await host.fetch(request)

    async def trigger_scheduled(self, worker: str, cron: str = "") -> None:
        """Run ``worker``'s ``scheduled`` handler now, as the manual trigger URL does."""
        await self._worker_for(worker, "scheduled").scheduled(cron, self.clock.now_ms())
