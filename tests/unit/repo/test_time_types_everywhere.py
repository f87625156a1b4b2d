"""Every public duration takes a `timedelta` and every instant an aware `datetime` (ADR-0161, issue 28).

The inventory is generated: every public struct field, TypedDict key and callable parameter of the packages'
public modules whose name is a time (``*_ms``, ``*_at``, ``*_s``, ``timeout``, ``at``, ``duration``). Each entry
must be one of

- an input with a driver below, which sends it once as an integer and once as the Python type and shows the
  same wire value (or the same stored integer) comes out;
- an input that takes only the Python type (``ctx.sleep(timedelta)``): its annotation must admit it;
- an output or a clock reading the library hands over, listed in `NOT_INPUTS` with the reason.

A new field or parameter with a time name fails `test_every_time_input_is_in_the_inventory` until it is given
a driver (and the conversion), so a millisecond-only option cannot come back unnoticed.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import importlib
import inspect
import json
import re
import typing
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import httpx
import msgspec
import pytest

from tsumugi_client import (
    AsyncTsumugiClient,
    EnqueueKwargs,
    PollSchedule,
    RetryPolicy,
    ScheduleFields,
    TsumugiClient,
    WaitTimeoutError,
    create_client,
)
from tsumugi_core.exceptions import TsumugiError
from tsumugi_core.options import (
    EnqueueItem,
    EnqueueOptions,
    ExponentialBackoff,
    FixedBackoff,
    RateLimit,
)
from tsumugi_performer import JobContext, Performer, RetryAfterError
from tsumugi_performer.flow import FlowBuilder, flow
from tsumugi_performer.testing import RecordingContext, create_test_context
from tsumugi_scheduler.definition import define_tsumugi
from tsumugi_scheduler.sign_in import bearer_tokens, cloudflare_access

PUBLIC_MODULES = (
    "tsumugi_core.options",
    "tsumugi_core.enqueue_defaults",
    "tsumugi_client",
    "tsumugi_performer",
    "tsumugi_performer.flow",
    "tsumugi_performer.testing",
    "tsumugi_scheduler.definition",
    "tsumugi_scheduler.definition_types",
    "tsumugi_scheduler.sign_in",
)
TIME_NAME = re.compile(r"(_ms|_at|_s)$|^(timeout|at|duration)$")
INSTANT_NAME = re.compile(r"(_at|\.at)$")

NOT_INPUTS: dict[str, str] = {
    # Views the library reads back: they hold what the wire holds.
    **{
        f"{view}.{field}": "a value read back from the scheduler (a view), not an input"
        for view, fields in {
            "JobDetail": ("created_at", "updated_at", "dispatched_at", "timeout_ms", "expires_at"),
            "AttemptLogEntry": ("started_at", "finished_at"),
            "StepEntry": ("started_at", "finished_at"),
            "RunView": ("created_at", "updated_at"),
            "RunNodeView": ("created_at", "updated_at", "scheduled_at", "finished_at"),
            "NewJob": ("timeout_ms", "unique_for_ms", "expires_at", "created_at"),
            "EnqueueDefaults": ("timeout_ms", "unique_for_ms"),
            "SweepOptions": ("older_than_ms",),
        }.items()
        for field in fields
    },
    **{
        f"CheckedJob.{field}": "built by check_enqueue from an EnqueueItem whose times are converted already"
        for field in ("timeout_ms", "unique_for_ms", "run_at", "delay_ms", "expires_at", "expires_in_ms")
    },
    "later_instant.wait_ms": "core arithmetic on milliseconds already converted",
    "WaitTimeoutError.__init__.timeout_s": "raised by the client with the seconds it waited",
    "RetryAfterError.retry_at.now_ms": "the runtime passes its clock reading",
    "AnyOf.admit.now_ms": "the runtime passes its clock reading",
    "AuthScheme.admit.now_ms": "the runtime passes its clock reading",
    "CustomAuth.admit.now_ms": "the runtime passes its clock reading",
}

PYTHON_ONLY = {
    "JobContext.sleep.duration": dt.timedelta,
    "JobContext.sleep_until.at": dt.datetime,
    "JobContext.wait_for_event.timeout": dt.timedelta,
}
"""Inputs that take only the Python type (no integer form): the annotation must be that type."""


def _time_inputs() -> Iterator[tuple[str, Any]]:
    """(name, annotation or None) of every public time-named field, key and parameter (owners deduplicated)."""
    seen: set[str] = set()
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for export in getattr(module, "__all__", ()):
            value = getattr(module, export)
            if inspect.isclass(value) and issubclass(value, msgspec.Struct):
                for field in msgspec.structs.fields(value):
                    if TIME_NAME.search(field.name):
                        yield from _once(seen, f"{value.__name__}.{field.name}", None)
            elif inspect.isclass(value) and typing.is_typeddict(value):
                for key, annotation in typing.get_type_hints(value).items():
                    if TIME_NAME.search(key):
                        yield from _once(seen, f"{value.__name__}.{key}", annotation)
            elif inspect.isclass(value):
                for name, method in inspect.getmembers(value, inspect.isfunction):
                    if name.startswith("_") and name != "__init__":
                        continue
                    owner = method.__qualname__.split(".")[0]
                    yield from _parameters(seen, f"{owner}.{name}", method)
            elif inspect.isfunction(value):
                yield from _parameters(seen, value.__name__, value)


def _parameters(seen: set[str], where: str, function: Callable[..., Any]) -> Iterator[tuple[str, Any]]:
    hints = typing.get_type_hints(function, localns={"httpx": httpx})  # some import httpx for pyright only
    for parameter in inspect.signature(function).parameters:
        if TIME_NAME.search(parameter):
            yield from _once(seen, f"{where}.{parameter}", hints.get(parameter))


def _once(seen: set[str], name: str, annotation: Any) -> Iterator[tuple[str, Any]]:
    if name not in seen:
        seen.add(name)
        yield name, annotation


def _admits(annotation: Any, python_type: type) -> bool:
    """Whether ``annotation`` (a type, a union, an Optional) includes ``python_type``."""
    if annotation is python_type:
        return True
    return any(_admits(member, python_type) for member in typing.get_args(annotation))


# -- drivers: value -> what goes on the wire (or is stored) ----------------------------------------------------

UTC = dt.UTC
AT = dt.datetime(2026, 3, 1, 9, 30, tzinfo=dt.timezone(dt.timedelta(hours=9)))
AT_MS = 1_772_325_000_000
Driver = Callable[[Any], Any]
DRIVERS: dict[str, Driver] = {}


def _struct_wire(cls: type[msgspec.Struct], field: str, **required: Any) -> Driver:
    return lambda value: msgspec.to_builtins(cls(**required, **{field: value}))


for _cls, _fields, _required in (
    (FixedBackoff, ("delay_ms",), {}),
    (ExponentialBackoff, ("base_ms", "max_ms"), {}),
    (RateLimit, ("interval_ms",), {"tokens": 1}),
    (
        EnqueueOptions,
        ("timeout_ms", "delay_ms", "run_at", "unique_for_ms", "expires_at", "expires_in_ms"),
        {},
    ),
    (
        EnqueueItem,
        ("timeout_ms", "delay_ms", "run_at", "unique_for_ms", "expires_at", "expires_in_ms"),
        {"binding": "MAIL", "payload": None},
    ),
    (RetryPolicy, ("base_s", "max_s"), {}),
    (PollSchedule, ("first_s", "max_s"), {}),
):
    for _field in _fields:
        DRIVERS[f"{_cls.__name__}.{_field}"] = _struct_wire(_cls, _field, **_required)


class _Rpc:
    """The scheduler's RPC entrypoint as a Service Binding shows it: records each call's arguments."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, method: str) -> Callable[..., Any]:
        async def call(*args: Any) -> Any:
            if method == "enqueue_json":  # items and ids as JSON text (ADR-0166): recorded as the items
                items = json.loads(args[0])
                self.calls.append(("enqueue_many", (items,)))
                return json.dumps([f"MAIL#0:{i}" for i in range(len(items))])
            self.calls.append((method, args))
            if method == "enqueue_many":
                return [f"MAIL#0:{i}" for i in range(len(args[0]))]
            return "f:1" if method == "start_run" else {"ok": True, "schedule": {}}

        return call


def _over_rpc(act: Callable[[Any, SimpleNamespace], Any]) -> Any:
    rpc = _Rpc()
    asyncio.run(act(create_client(bindings={"MAIL": {"shards": 1}}), SimpleNamespace(TSUMUGI=rpc)))
    return rpc.calls[-1][1]


def _worker_enqueue(option: str) -> Driver:
    def drive(value: Any) -> Any:
        async def act(client: Any, env: SimpleNamespace) -> None:
            await client.enqueue(env, "MAIL", None, **{option: value})

        (items,) = _over_rpc(act)
        return {k: v for k, v in items[0].items() if k != "id"}  # the id is made per call

    return drive


def _worker_enqueue_many(option: str) -> Driver:
    def drive(value: Any) -> Any:
        async def act(client: Any, env: SimpleNamespace) -> None:
            await client.enqueue_many(env, [{"binding": "MAIL", "payload": None, option: value}])

        (items,) = _over_rpc(act)
        return {k: v for k, v in items[0].items() if k != "id"}

    return drive


for _option in typing.get_type_hints(EnqueueKwargs):
    if TIME_NAME.search(_option):
        DRIVERS[f"EnqueueKwargs.{_option}"] = _worker_enqueue(_option)
        DRIVERS[f"EnqueueItemDict.{_option}"] = _worker_enqueue_many(_option)


def _worker_call(method: str, *args: Any, option: str) -> Driver:
    def drive(value: Any) -> Any:
        async def act(client: Any, env: SimpleNamespace) -> None:
            await getattr(client, method)(env, *args, **{option: value})

        return _over_rpc(act)

    return drive


def _http_requests(send: Callable[[httpx.MockTransport], object]) -> list[bytes]:
    seen: list[bytes] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.content)
        return httpx.Response(200, json={"ok": True, "id": "f:1", "schedule": {}})

    send(httpx.MockTransport(answer))
    return seen


def _sync_call(method: str, *args: Any, option: str) -> Driver:
    def drive(value: Any) -> Any:
        def send(transport: httpx.MockTransport) -> None:
            with TsumugiClient("http://s.test", http_client=httpx.Client(transport=transport)) as client:
                getattr(client, method)(*args, **{option: value})

        return _http_requests(send)

    return drive


def _async_call(method: str, *args: Any, option: str) -> Driver:
    def drive(value: Any) -> Any:
        async def act(transport: httpx.MockTransport) -> None:
            http = httpx.AsyncClient(transport=transport)
            async with AsyncTsumugiClient("http://s.test", http_client=http) as client:
                await getattr(client, method)(*args, **{option: value})

        return _http_requests(lambda transport: asyncio.run(act(transport)))

    return drive


CALLS = {
    "reschedule": (("MAIL#0:abc",), ("run_at", "delay_ms")),
    "start_run": (("f", None), ("deadline_ms",)),
}
"""The clients' calls with time parameters: their leading arguments and the time options."""
for _method, (_args, _options) in CALLS.items():
    for _option in _options:
        DRIVERS[f"WorkerClient.{_method}.{_option}"] = _worker_call(_method, *_args, option=_option)
        DRIVERS[f"TsumugiClient.{_method}.{_option}"] = _sync_call(_method, *_args, option=_option)
        DRIVERS[f"AsyncTsumugiClient.{_method}.{_option}"] = _async_call(_method, *_args, option=_option)


def _schedule_option(option: str) -> Driver:
    """A schedule option as the Worker client and the HTTP client send it."""
    over_rpc = _worker_call("create_schedule", "s", option=option)
    over_http = _sync_call("create_schedule", "s", option=option)
    return lambda value: (over_rpc(value), over_http(value))


for _option in typing.get_type_hints(ScheduleFields):
    if TIME_NAME.search(_option):
        DRIVERS[f"ScheduleFields.{_option}"] = _schedule_option(_option)
DRIVERS["TsumugiClient.__init__.timeout"] = lambda value: (
    TsumugiClient("http://s.test", timeout=value)._http.timeout
)  # pyright: ignore[reportPrivateUsage]
DRIVERS["AsyncTsumugiClient.__init__.timeout"] = lambda value: (
    AsyncTsumugiClient(  # pyright: ignore[reportPrivateUsage]
        "http://s.test", timeout=value
    )._http.timeout
)


def _queued_forever() -> httpx.MockTransport:
    detail = {
        "id": "MAIL#0:abc",
        "binding": "MAIL",
        "state": "QUEUED",
        "priority": 0,
        "attempts": 0,
        "max_attempts": 3,
        "concurrency_key": None,
        "unique_key": None,
        "guarantee": "at-least-once",
        "created_at": 1000,
        "updated_at": 1000,
        "dispatched_at": None,
        "run_after": 1000,
        "progress": None,
        "payload": "null",
        "result": None,
        "retryable": False,
        "attempts_log": [],
    }
    return httpx.MockTransport(lambda request: httpx.Response(200, json={"job": detail}))


def _sync_wait(method: str) -> Driver:
    def drive(value: Any) -> Any:
        clock = SimpleNamespace(now=0.0)

        def sleep(seconds: float) -> None:
            clock.now += seconds

        http = httpx.Client(transport=_queued_forever())
        client = TsumugiClient("http://s.test", http_client=http, clock=lambda: clock.now, sleep=sleep)
        with pytest.raises(WaitTimeoutError):
            getattr(client.job("MAIL#0:abc"), method)(timeout=value)
        return clock.now

    return drive


def _async_wait(method: str) -> Driver:
    def drive(value: Any) -> Any:
        clock = SimpleNamespace(now=0.0)

        async def sleep(seconds: float) -> None:
            clock.now += seconds

        async def act() -> None:
            http = httpx.AsyncClient(transport=_queued_forever())
            client = AsyncTsumugiClient(
                "http://s.test", http_client=http, clock=lambda: clock.now, sleep=sleep
            )
            with pytest.raises(WaitTimeoutError):
                await getattr(client.job("MAIL#0:abc"), method)(timeout=value)

        asyncio.run(act())
        return clock.now

    return drive


for _method in ("wait", "result"):
    DRIVERS[f"Job.{_method}.timeout"] = _sync_wait(_method)
    DRIVERS[f"AsyncJob.{_method}.timeout"] = _async_wait(_method)


async def _no_heartbeat(progress: float | None) -> Any:
    raise AssertionError("not called")


def _context(**times: Any) -> JobContext:
    fields = {"deadline_at": 5_000, **times}
    return JobContext(job_id="MAIL#0:abc", attempt=1, max_attempts=3, heartbeat=_no_heartbeat, **fields)


DRIVERS["JobContext.__init__.deadline_at"] = lambda value: _context(deadline_at=value).deadline_at
DRIVERS["JobContext.__init__.heartbeat_interval_ms"] = lambda value: vars(
    _context(heartbeat_interval_ms=value)
)["_interval_ms"]
DRIVERS["JobContext.__init__.invocation_ends_at"] = lambda value: vars(
    vars(_context(invocation_ends_at=value))["_journal"]
)["_ends_at"]
DRIVERS["RecordingContext.__init__.deadline_at"] = lambda value: (
    RecordingContext(
        job_id="MAIL#0:abc",
        attempt=1,
        max_attempts=3,
        deadline_at=value,
        traceparent=None,
        cancel_requested=False,
    ).deadline_at
)
DRIVERS["create_test_context.deadline_at"] = lambda value: create_test_context(deadline_at=value).deadline_at
DRIVERS["RetryAfterError.__init__.delay_ms"] = lambda value: RetryAfterError(delay_ms=value).delay_ms
DRIVERS["RetryAfterError.__init__.at"] = lambda value: RetryAfterError(at=value).at


class Greet(Performer[str, str]):
    async def perform(self, payload: str, ctx: JobContext) -> str:
        return payload


def _node_option(method: str, option: str) -> Driver:
    def drive(value: Any) -> Any:
        def body(f: FlowBuilder[str]) -> None:
            if method == "node":
                f.node("n", Greet, input=lambda run, deps: run, **{option: value})
            else:
                f.fan_out(
                    "n", Greet, over=lambda run, deps: [run], input=lambda i, r, n: i, **{option: value}
                )

        return flow("f", str)(body).spec.nodes[0].options

    return drive


for _method in ("node", "fan_out"):
    for _option in ("delay_ms", "run_at", "timeout_ms"):
        DRIVERS[f"FlowBuilder.{_method}.{_option}"] = _node_option(_method, _option)
DRIVERS["flow.deadline_ms"] = lambda value: (
    flow("f", str, deadline_ms=value)(
        lambda f: f.node("n", Greet, input=lambda run, deps: run)
    ).spec.deadline_ms
)


def _build_deadline(value: Any) -> Any:
    builder = FlowBuilder[str]("f", str)
    builder.node("n", Greet, input=lambda run, deps: run)
    return builder.build(value).spec.deadline_ms


DRIVERS["FlowBuilder.build.deadline_ms"] = _build_deadline
DRIVERS["bearer_tokens.session_ttl_ms"] = lambda value: bearer_tokens(session_ttl_ms=value).session_ttl_ms
DRIVERS["cloudflare_access.cache_ttl_ms"] = lambda value: (
    cloudflare_access("acme", "aud", cache_ttl_ms=value).cache_ttl_ms
)


def _definition(**options: Any) -> Any:
    """What a definition resolves to, as plain values (the settings the shards, sweep and runs receive)."""
    definition = define_tsumugi(performers=["MAIL", "Greet"], **options)
    return msgspec.to_builtins(
        {
            "settings": definition.settings_of("MAIL"),
            "schedules": definition.schedules.specs,
            "sweep": definition.sweep,
            "runs": definition.runs,
        }
    )


_DEFINITION_PLACES: dict[str, Callable[[str, Any], dict[str, Any]]] = {
    "BindingOptions": lambda key, value: {"bindings": {"MAIL": {key: value}}},
    "PolicyOptions": lambda key, value: {"bindings": {"MAIL": {"policy": {key: value}}}},
    "RateOptions": lambda key, value: {"bindings": {"MAIL": {"policy": {"rate": {"tokens": 1, key: value}}}}},
    "RetentionOptions": lambda key, value: {"retention": {key: value}},
    "RunOptions": lambda key, value: {"runs": {key: value}},
    "JobSchedule": lambda key, value: {
        "schedules": {"s": {"binding": "MAIL", "payload": None, "every_ms": 60_000, key: value}}
    },
}


def _definition_driver(owner: str, key: str) -> Driver:
    return lambda value: _definition(**_DEFINITION_PLACES[owner](key, value))


for _owner in _DEFINITION_PLACES:
    module = importlib.import_module("tsumugi_scheduler.definition_types")
    for _key in typing.get_type_hints(getattr(module, _owner)):
        if TIME_NAME.search(_key):
            DRIVERS[f"{_owner}.{_key}"] = _definition_driver(_owner, _key)


def _flow_schedule(key: str) -> Driver:
    def drive(value: Any) -> Any:
        greetings = flow("greetings", str)(lambda f: f.node("n", Greet, input=lambda run, deps: run))
        schedule = {"flow": "greetings", "input": "a", "every_ms": 60_000, key: value}
        return _definition(flows=[greetings], schedules={"s": schedule})

    return drive


for _key in ("every_ms", "deadline_ms"):
    DRIVERS[f"FlowSchedule.{_key}"] = _flow_schedule(_key)


# -- the tests ------------------------------------------------------------------------------------------------

INVENTORY = dict(_time_inputs())
INPUTS = sorted(name for name in INVENTORY if name not in NOT_INPUTS and name not in PYTHON_ONLY)


def test_the_inventory_finds_the_known_inputs() -> None:
    """The walk is not vacuous: it sees the backoffs, the enqueue keywords, the flows and the definitions."""
    for known in (
        "FixedBackoff.delay_ms",
        "EnqueueKwargs.run_at",
        "FlowBuilder.node.timeout_ms",
        "PolicyOptions.aging_interval_ms",
        "JobContext.sleep.duration",
        "TsumugiClient.reschedule.run_at",
    ):
        assert known in INVENTORY
    assert len(INPUTS) > 60


def test_every_time_input_is_in_the_inventory() -> None:
    missing = [name for name in INPUTS if name not in DRIVERS]
    assert not missing, (
        f"time inputs without a timedelta/datetime driver (add the conversion and one): {missing}"
    )
    stale = sorted(set(DRIVERS) - set(INPUTS))
    assert not stale, f"drivers for inputs that no longer exist: {stale}"


@pytest.mark.parametrize(
    "name", sorted(n for n, hint in INVENTORY.items() if hint is not None and n not in NOT_INPUTS)
)
def test_annotations_admit_the_python_type(name: str) -> None:
    """pyright lets a caller pass the Python type wherever the inventory found a typed time input."""
    expected = PYTHON_ONLY.get(name) or (dt.datetime if INSTANT_NAME.search(name) else dt.timedelta)
    assert _admits(INVENTORY[name], expected), f"{name}: {INVENTORY[name]} does not admit {expected.__name__}"


def _pair(name: str) -> tuple[Any, Any]:
    if INSTANT_NAME.search(name):
        return AT_MS, AT
    if name.endswith("_s") or name.endswith(".timeout"):
        return 1.5, dt.timedelta(seconds=1.5)
    return 90_000, dt.timedelta(seconds=90)


@pytest.mark.parametrize("name", INPUTS)
def test_the_python_type_gives_the_same_wire_value_as_the_integer(name: str) -> None:
    number, python_value = _pair(name)
    drive = DRIVERS[name]
    assert drive(python_value) == drive(number)


@pytest.mark.parametrize("name", [name for name in INPUTS if INSTANT_NAME.search(name)])
def test_a_naive_datetime_is_refused_naming_the_field(name: str) -> None:
    with pytest.raises(TsumugiError) as refused:  # InvalidFieldError, or the flow's InvalidFlowError
        DRIVERS[name](AT.replace(tzinfo=None))
    field = name.rsplit(".", 1)[1]
    assert field in str(refused.value)
    assert "timezone-aware" in str(refused.value)


def test_on_enqueue_defaults_may_be_python_time_values() -> None:
    """A hook's answer is a mapping the walk cannot see; its durations and instants convert too."""
    from tsumugi_core.enqueue_defaults import apply_defaults

    item = EnqueueItem(binding="MAIL", payload=None)
    merged = apply_defaults(item, {"timeout_ms": dt.timedelta(seconds=90), "run_at": AT})
    assert (merged.timeout_ms, merged.run_at) == (90_000, AT_MS)


def test_spawn_options_may_be_python_time_values() -> None:
    """``ctx.spawn(**options)`` is untyped keywords; a timedelta there is sent as milliseconds, not ISO text."""
    ctx = create_test_context()
    ctx.spawn("a", "MAIL", None, delay_ms=dt.timedelta(seconds=90), run_at=AT)
    ctx.spawn("b", "MAIL", None, delay_ms=90_000, run_at=AT_MS)
    first, second = ctx.spawns
    assert first["options"] == second["options"] == {"delay_ms": 90_000, "run_at": AT_MS}
