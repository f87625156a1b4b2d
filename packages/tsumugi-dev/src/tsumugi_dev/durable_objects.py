"""Durable Objects: namespaces, ids, stubs (RPC and ``fetch``), one live instance per id, alarms, eviction.

Each object has its own SQLite file under ``<data-dir>/do/<script>/<class>/<id>.sqlite``. Calls through a stub
copy their arguments and result (see ``workers.rpc.transfer``) and yield to the event loop on the way in and
out, because for the caller a call to another object is outside I/O: other events may run meanwhile, on
the caller's object and on the callee's.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from workers.entrypoints import CURRENT_ENV
from workers.http import FetchResponse, Request, Response
from workers.rpc import remote_error

from tsumugi_dev.alarms import AlarmScheduler, alarm_retry_at
from tsumugi_dev.clock import RuntimeClock
from tsumugi_dev.do_storage import (
    DurableObjectAbortError,
    DurableObjectState,
    DurableObjectStorage,
    InputGate,
)
from tsumugi_dev.faults import ALARM, RESTART_MID_ALARM, FaultInjector, InjectedFault, guard_rpc
from tsumugi_dev.invocation import (
    SUBREQUESTS_PER_INVOCATION,
    LimitCounters,
    charge_subrequest,
    enter_invocation,
    leave_invocation,
    subrequest_call,
)
from tsumugi_dev.jsdict import JsDict
from tsumugi_dev.rpc_calls import call_method, rpc_call

__all__ = [
    "DurableObjectId",
    "DurableObjectNamespace",
    "DurableObjectStub",
    "NamespaceHost",
    "ObjectHost",
    "object_id_for_name",
]

_log = logging.getLogger("tsumugi_dev")
_HEX_ID = re.compile(r"^[0-9a-f]{64}$")


def object_id_for_name(namespace_key: str, name: str) -> str:
    """The hex id of ``idFromName(name)`` in the namespace ``<script>:<class>``."""
    return hashlib.sha256(f"{namespace_key}\x00{name}".encode()).hexdigest()


class DurableObjectId:
    """An object's id: 64 hex characters; ``name`` is set for ids made by ``idFromName``."""

    def __init__(self, hex_id: str, name: str | None = None) -> None:
        self._hex = hex_id
        self.name = name

    def toString(self) -> str:
        """The id as 64 hex characters."""
        return self._hex

    def equals(self, other: DurableObjectId) -> bool:
        """True when both ids name the same object."""
        return self._hex == other.toString()

    def __str__(self) -> str:
        return self._hex

    def __repr__(self) -> str:
        return f"DurableObjectId({self._hex[:12]}..., name={self.name!r})"


class ObjectHost:
    """One object: its storage (opened on demand), its live instance (made on demand) and its input gate."""

    def __init__(self, namespace: NamespaceHost, object_id: DurableObjectId) -> None:
        self.namespace = namespace
        self.id = object_id
        self.gate = InputGate()
        self._storage: DurableObjectStorage | None = None
        self._instance: Any = None
        self._alarm_busy = False
        self._alarm_again = False
        self._restarts = 0
        """How many times the object was evicted: an ``alarm()`` that spans one was interrupted."""

    @property
    def key(self) -> str:
        """The object id as hex."""
        return self.id.toString()

    @property
    def is_live(self) -> bool:
        """True while an instance exists (False after eviction until the next event)."""
        return self._instance is not None

    def storage(self) -> DurableObjectStorage:
        """The object's storage, opening its SQLite file when needed."""
        if self._storage is None:
            path = self.namespace.directory / f"{self.key}.sqlite"
            self._storage = DurableObjectStorage(path, self)
        return self._storage

    def alarm_may_be_set(self, alarm_at: int) -> None:
        """Index the object before its file commits an alarm (``AlarmListener``)."""
        self.namespace.alarms.may_be_set(self.namespace.key, self.key, self.id.name, alarm_at)

    def alarm_committed(self, alarm_at: int | None) -> None:
        """Forward the committed alarm to the scheduler (``AlarmListener``)."""
        self.namespace.alarms.committed(self.namespace.key, self.key, self.id.name, alarm_at)

    def instance(self) -> Any:
        """The live instance, constructed with ``(ctx, env)`` on first use after start or eviction."""
        if self._instance is None:
            state = DurableObjectState(
                self.id,
                self.storage(),
                self.gate,
                lambda c, n: self.namespace.clock.spawn(c, name=n),
                self._abort,
            )
            token = CURRENT_ENV.set(self.namespace.env)
            try:
                self._instance = self.namespace.cls(state, self.namespace.env)
            finally:
                CURRENT_ENV.reset(token)
        return self._instance

    def _abort(self, reason: str | None) -> None:
        _log.info("durable object %s %s reset: %s", self.namespace.key, self.key[:12], reason)
        self._instance = None

    def evict(self) -> None:
        """Drop the instance and close its file; storage and alarm stay."""
        self._instance = None
        self._restarts += 1
        if self._storage is not None:
            self._storage.close()
            self._storage = None

    async def event(self, run: Callable[[Any], Awaitable[Any]]) -> Any:
        """Deliver one event: make the instance, wait for the input gate, then run the event against it.

        The instance comes first because a ``blockConcurrencyWhile`` in its constructor must hold back this
        event too, as on Cloudflare. An instance replaced while waiting (eviction, abort) is made again and
        its own constructor's gate is waited for.
        """
        instance = self.instance()
        await self.gate.wait_open()
        while instance is not self.instance():
            instance = self.instance()
            await self.gate.wait_open()
        namespace = self.namespace
        token = CURRENT_ENV.set(namespace.env)
        budget = enter_invocation(namespace.label, namespace.subrequest_limit, namespace.counters)
        try:
            return await run(instance)
        finally:
            leave_invocation(budget)
            CURRENT_ENV.reset(token)

    async def run_alarm(self) -> None:
        """Fire the stored alarm if due; retry on failure as Cloudflare does.

        One ``alarm()`` at a time per object, as on Cloudflare: an alarm that comes due while ``alarm()`` runs
        (set by the handler or by an interleaved event) fires once the running handler has returned.
        """
        if self._alarm_busy:
            self._alarm_again = True
            return
        self._alarm_busy = True
        try:
            again = True
            while again:
                self._alarm_again = False
                await self._run_alarm_once()
                again = self._alarm_again
        finally:
            self._alarm_busy = False

    async def _run_alarm_once(self) -> None:
        storage = self.storage()
        stored = storage.stored_alarm()
        now = self.namespace.clock.now_ms()
        if stored is None or stored[0] > now:
            self.alarm_committed(None if stored is None else stored[0])
            return
        retry_count = stored[1]
        storage.alarm_running, storage.alarm_replaced = True, False
        restarts = self._restarts
        ok = await self._invoke_alarm(retry_count)
        storage.alarm_running = False
        if storage.alarm_replaced:
            return
        if self._restarts != restarts:
            # The object restarted under alarm(): its file was closed and reopened. Cloudflare counts the
            # run as failed and retries it, unless an event of the new instance replaced the alarm.
            storage = self.storage()
            if storage.stored_alarm() != stored:
                return
            ok = False
            _log.info("alarm of %s %s interrupted by a restart", self.namespace.key, self.key[:12])
        if ok:
            storage.store_alarm(None)
            return
        retry_at = alarm_retry_at(self.namespace.clock.now_ms(), retry_count)
        storage.store_alarm(retry_at, retry_count + 1)
        if retry_at is None:
            _log.warning(
                "alarm of %s %s dropped after %d retries", self.namespace.key, self.key[:12], retry_count
            )

    def _maybe_fail_alarm(self) -> None:
        faults = self.namespace.faults
        if faults is not None and faults.strike(ALARM, self.namespace.key, lambda: [self.key]):
            raise InjectedFault("injected fault: alarm() failed")

    async def _invoke_alarm(self, retry_count: int) -> bool:
        info = JsDict(retryCount=retry_count, isRetry=retry_count > 0)
        restart = self._restart_mid_alarm()
        try:
            self._maybe_fail_alarm()
            await self.event(lambda instance: call_method(instance.alarm, info))
        except (Exception, DurableObjectAbortError) as exc:
            _log.info(
                "alarm of %s %s failed (retry %d): %r", self.namespace.key, self.key[:12], retry_count, exc
            )
            return False
        finally:
            if restart is not None:
                restart()
        _log.info("alarm of %s %s ran (retry %d)", self.namespace.key, self.key[:12], retry_count)
        return True

    def _restart_mid_alarm(self) -> Callable[[], None] | None:
        """With a ``restart_mid_alarm`` fault: evict at the handler's first await (or, for a handler that never
        awaits, as it returns, before its run is judged); answers what finishes the job after the handler."""
        faults = self.namespace.faults
        if faults is None or not faults.strike(RESTART_MID_ALARM, self.namespace.key, lambda: [self.key]):
            return None
        done: list[bool] = []

        def restart() -> None:
            if not done:
                done.append(True)
                self.evict()

        asyncio.get_running_loop().call_soon(restart)
        return restart


class NamespaceHost:
    """Every object of one Durable Object class of one Worker."""

    def __init__(
        self,
        *,
        script: str,
        class_name: str,
        data_dir: Path,
        clock: RuntimeClock,
        alarms: AlarmScheduler,
        faults: FaultInjector | None = None,
        counters: LimitCounters | None = None,
    ) -> None:
        self.script = script
        self.counters = counters
        self.subrequest_limit = SUBREQUESTS_PER_INVOCATION
        """The hosting Worker's ``limits.subrequests`` (set by `bind`)."""
        self.faults = faults
        self.class_name = class_name
        self.key = f"{script}:{class_name}"
        self.label = f"Durable Object {self.key}"
        self.directory = data_dir / "do" / script / class_name
        self.clock = clock
        self.alarms = alarms
        self.cls: Any = None
        self.env: Any = None
        self._objects: dict[str, ObjectHost] = {}
        self._hex_by_name: dict[str, str] = {}

    def bind(self, cls: type, env: Any, subrequest_limit: int = SUBREQUESTS_PER_INVOCATION) -> None:
        """Attach the class (once the Worker module is loaded), the env its instances get and their limit."""
        self.cls = cls
        self.env = env
        self.subrequest_limit = subrequest_limit

    def host(self, object_id: DurableObjectId) -> ObjectHost:
        """The host of ``object_id`` (one per id, for the life of the runtime)."""
        found = self._objects.get(object_id.toString())
        if found is None:
            found = ObjectHost(self, object_id)
            self._objects[object_id.toString()] = found
        elif found.id.name is None and object_id.name is not None:
            found.id.name = object_id.name
        return found

    def id_from_name(self, name: str) -> DurableObjectId:
        """The id ``idFromName(name)`` gives: stable for one namespace and name."""
        hex_id = self._hex_by_name.get(name)
        if hex_id is None:  # hashed once per name: every RPC through getByName asks again
            hex_id = self._hex_by_name[name] = object_id_for_name(self.key, name)
        return DurableObjectId(hex_id, name)

    def evict_all(self) -> None:
        """Evict every live object of the namespace."""
        for host in self._objects.values():
            host.evict()

    def objects(self) -> list[ObjectHost]:
        """The hosts made so far."""
        return list(self._objects.values())


class DurableObjectStub:
    """A stub: ``await stub.method(*args)`` is RPC, ``await stub.fetch(url_or_request, ...)`` is HTTP."""

    def __init__(self, host: ObjectHost) -> None:
        self._host = host
        self.id = host.id
        self.name = host.id.name

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        if name.startswith("_"):
            raise AttributeError(name)
        namespace = self._host.namespace
        call = guard_rpc(
            namespace.faults, namespace.script, namespace.class_name, name, rpc_call(name, self._host.event)
        )
        return subrequest_call(call)

    async def fetch(self, resource: Request | str, **options: Any) -> Response:
        """Send an HTTP request to the object's ``fetch`` handler (one subrequest)."""
        charge_subrequest()
        request = (
            Request(resource, **options) if options or not isinstance(resource, Request) else resource.clone()
        )
        await asyncio.sleep(0)

        async def run(instance: Any) -> Any:
            handler = getattr(instance, "fetch", None)
            if handler is None:
                raise TypeError("Handler does not export a fetch() function.")
            return await call_method(handler, request)

        try:
            response = await self._host.event(run)
        except Exception as exc:
            raise remote_error(exc) from None
        if not isinstance(response, FetchResponse):
            raise TypeError(
                f"fetch() of a Durable Object must return a Response, got {type(response).__name__}"
            )
        return Response(response.body, response.status, response.status_text, response.headers)


class DurableObjectNamespace:
    """The ``env.NS`` binding: ``idFromName``, ``idFromString``, ``newUniqueId``, ``get``, ``getByName``."""

    def __init__(self, host: NamespaceHost) -> None:
        self._host = host

    def idFromName(self, name: str) -> DurableObjectId:
        """The id for ``name`` (the same name always gives the same object)."""
        if not isinstance(name, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"idFromName: name must be a str, got {type(name).__name__}")
        return self._host.id_from_name(name)

    def idFromString(self, hex_id: str) -> DurableObjectId:
        """The id whose ``toString()`` is ``hex_id``."""
        if not _HEX_ID.match(hex_id):
            raise TypeError("Invalid Durable Object ID: must be 64 hex digits")
        return DurableObjectId(hex_id)

    def newUniqueId(self, options: Any = None) -> DurableObjectId:
        """A fresh random id."""
        return DurableObjectId(secrets.token_hex(32))

    def get(self, object_id: DurableObjectId, options: Any = None) -> DurableObjectStub:
        """The stub of ``object_id``."""
        if not isinstance(object_id, DurableObjectId):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"get: expected a DurableObjectId, got {type(object_id).__name__}")
        return DurableObjectStub(self._host.host(object_id))

    def getByName(self, name: str, options: Any = None) -> DurableObjectStub:
        """The stub of the object named ``name``."""
        return self.get(self.idFromName(name))

    def jurisdiction(self, name: str) -> DurableObjectNamespace:
        """Jurisdictions do not exist locally: the same namespace."""
        return self
