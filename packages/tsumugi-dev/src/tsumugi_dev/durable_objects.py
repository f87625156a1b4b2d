# pyright: reportPrivateUsage=false
# (The runtime's half of the JS emulation reads jsemu's object internals; ADR-0097.)
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

from jsemu.core import UNDEFINED, HostObject, js_error
from jsemu.entrypoint_helper import CURRENT_ENV, CURRENT_WAIT_UNTIL
from workers.entrypoints import DurableObjectAbort

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
    enter_invocation,
    leave_invocation,
    subrequest_call,
)
from tsumugi_dev.js_rpc import Call, RpcStub, invoke_raw
from tsumugi_dev.js_storage import JsAlarmInvocationInfo, JsDurableObjectId, JsDurableObjectState
from tsumugi_dev.metering import ActiveSpan, Usage

__all__ = [
    "DurableObjectId",
    "JsDurableObjectNamespace",
    "JsDurableObjectStub",
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
        usage = namespace.usage
        self._active = None if usage is None else ActiveSpan(usage)

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
            self._storage.sql.usage = self.namespace.usage
        return self._storage

    def now_ms(self) -> int:
        """The namespace clock's now (``AlarmListener``)."""
        return self.namespace.clock.now_ms()

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
            js_state = JsDurableObjectState(state, JsDurableObjectId(self.id), self.namespace.exports)
            token = CURRENT_ENV.set(self.namespace.env)
            try:
                self._instance = self.namespace.cls(js_state, self.namespace.env)
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
        wait_token = CURRENT_WAIT_UNTIL.set(namespace.wait_until)
        budget = enter_invocation(
            namespace.label, namespace.subrequest_limit, namespace.counters, usage=namespace.usage
        )
        active = self._active
        if active is not None:  # one billed request, and the object's wall clock while any event runs
            active.enter()
        try:
            return await run(instance)
        finally:
            if active is not None:
                active.leave()
            leave_invocation(budget)
            CURRENT_WAIT_UNTIL.reset(wait_token)
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
        ok = await self._invoke_alarm(retry_count, stored[0])
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

    async def _invoke_alarm(self, retry_count: int, scheduled_at: int) -> bool:
        info = JsAlarmInvocationInfo(scheduled_at, retry_count)
        restart = self._restart_mid_alarm()
        try:
            self._maybe_fail_alarm()
            if self.namespace.usage is not None:
                self.namespace.usage.alarms += 1
            await self.event(lambda instance: invoke_raw(instance, "alarm", [info]))
        except (Exception, DurableObjectAbortError, DurableObjectAbort) as exc:
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
        self.usage: Usage | None = None
        """Where this class's requests, duration, SQL rows and subrequests are metered (ADR-0130)."""
        self.faults = faults
        self.class_name = class_name
        self.key = f"{script}:{class_name}"
        self.label = f"Durable Object {self.key}"
        self.directory = data_dir / "do" / script / class_name
        self.clock = clock
        self.alarms = alarms
        self.cls: Any = None
        self.env: Any = None
        """The hosting Worker's raw (JS) env."""
        self.wait_until: Any = None
        self.exports: Any = None
        """The hosting Worker's ``ctx.exports`` (its entrypoints as loopback stubs), on each instance's ``ctx``."""
        self._objects: dict[str, ObjectHost] = {}
        self._hex_by_name: dict[str, str] = {}

    def bind(
        self,
        cls: type,
        env: Any,
        subrequest_limit: int = SUBREQUESTS_PER_INVOCATION,
        wait_until: Any = None,
        exports: Any = None,
    ) -> None:
        """Attach the class (once the Worker module is loaded), the raw env its instances get, their limit and
        the Worker's ``ctx.exports``."""
        self.cls = cls
        self.env = env
        self.subrequest_limit = subrequest_limit
        self.wait_until = wait_until
        self.exports = exports

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


def _fetch_charged(call: Call) -> Call:
    from tsumugi_dev.invocation import charge_subrequest

    def charged(*args: Any) -> Awaitable[Any]:
        charge_subrequest()
        return call(*args)

    return charged


class JsDurableObjectStub(RpcStub):
    """A Durable Object stub: any property is an RPC method, ``fetch`` sends an HTTP request; ``id``, ``name``."""

    __slots__ = ("_host",)
    _host: Any
    js_class = "DurableObject"

    def __init__(self, host: ObjectHost) -> None:
        namespace = host.namespace

        def wrap(name: str, call: Call) -> Call:
            return subrequest_call(
                guard_rpc(namespace.faults, namespace.script, namespace.class_name, name, call)
            )

        super().__init__(host.event, wrap, _fetch_charged)
        object.__setattr__(self, "_host", host)

    @property
    def js_id(self) -> Any:
        return JsDurableObjectId(self._host.id)

    @property
    def js_name(self) -> Any:
        name = self._host.id.name
        return UNDEFINED if name is None else name


class JsDurableObjectNamespace(HostObject):
    """The ``env.NS`` binding: ``idFromName``, ``idFromString``, ``newUniqueId``, ``get``, ``getByName``."""

    __slots__ = ("_host",)
    _host: Any
    js_class = "DurableObjectNamespace"

    def __init__(self, host: NamespaceHost) -> None:
        object.__setattr__(self, "_host", host)

    def js_idFromName(self, name: Any) -> Any:
        if not isinstance(name, str):
            raise js_error(
                "TypeError",
                "Failed to execute 'idFromName' on 'DurableObjectNamespace': parameter 1 is not of type 'string'.",
            )
        return JsDurableObjectId(self._host.id_from_name(name))

    def js_idFromString(self, hex_id: Any) -> Any:
        if not isinstance(hex_id, str) or not _HEX_ID.match(hex_id):
            raise js_error("TypeError", "Invalid Durable Object ID: must be 64 hex digits")
        return JsDurableObjectId(DurableObjectId(hex_id))

    def js_newUniqueId(self, options: Any = UNDEFINED) -> Any:
        return JsDurableObjectId(DurableObjectId(secrets.token_hex(32)))

    def js_get(self, object_id: Any, options: Any = UNDEFINED) -> Any:
        if not isinstance(object_id, JsDurableObjectId):
            raise js_error(
                "TypeError",
                "Failed to execute 'get' on 'DurableObjectNamespace': parameter 1 is not of type 'DurableObjectId'.",
            )
        return JsDurableObjectStub(self._host.host(object_id.local_id))

    def js_getByName(self, name: Any, options: Any = UNDEFINED) -> Any:
        return self.js_get(self.js_idFromName(name))

    def js_jurisdiction(self, name: Any) -> Any:
        return self
