"""The local runtime's counterpart of the workerd record: the recorder's operations run on the runtime's JS side.

`make_runtime_record` starts a `LocalRuntime` with the fixture Workers (``fixtures/shapes``, ``fixtures/peer``)
on a virtual clock and builds a dict with the record's sections and keys, each value described by
`js_describe.describe` from the JS objects the runtime hands Worker code (raw ``ctx``, raw ``env`` bindings,
handler arguments), so it compares with ``workerd-shapes.json`` key for key (ADR-0105).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from jsemu.core import JsException, jsnull

from tests.shapes.js_describe import describe, js_number
from tests.shapes.js_side import call, get, outcome, safe
from tests.shapes.mirror_bindings import (
    AE_CASES,
    record_producer,
    record_service_binding,
    record_stub_rpc,
    write_data_point,
)
from tests.shapes.mirror_d1 import record_d1
from tests.shapes.mirror_sql import record_alarm_calls, record_sql
from tests.support.clock import START_MS
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.runtime import LocalRuntime

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CONFIGS = [FIXTURES / "shapes" / "wrangler.jsonc", FIXTURES / "peer" / "wrangler.jsonc"]
BATCH_VARIES = ("messages.*.id", "messages.*.timestamp", "metadata.metrics.*")
SCHEDULED_TIME = 1_700_000_000_000
CRON = "*/5 * * * *"


async def make_runtime_record(data_dir: Path) -> dict[str, Any]:
    clock = VirtualClock(START_MS)
    runtime = LocalRuntime(CONFIGS, data_dir=data_dir, clock=clock)
    await runtime.start()
    try:
        return await _record(runtime, clock)
    finally:
        await runtime.stop()


def _entry(runtime: LocalRuntime) -> Any:
    return runtime.workers["shapes"].module


async def _state(runtime: LocalRuntime, name: str) -> Any:
    """The raw ``ctx`` the runtime passed the Durable Object named ``name`` (made on first use)."""
    await runtime.env("shapes").RECORDER.getByName(name).touch()
    return _entry(runtime).RAW_STATES[name]


async def _record(runtime: LocalRuntime, clock: VirtualClock) -> dict[str, Any]:
    env = runtime.workers["shapes"].js_env
    entry = _entry(runtime)
    reports: dict[str, Any] = {}
    entry.HOOKS.update(
        queue=_queue_hook(reports), scheduled=_scheduled_hook(reports), alarm=_alarm_hook(reports)
    )
    record: dict[str, Any] = {}
    record["durable_object_sql"] = record_sql(await _state(runtime, "sql"))
    record["durable_object_context"] = {"ctx": describe(await _state(runtime, "context"))}
    record["alarms"] = await record_alarm_calls(
        get(await _state(runtime, "alarm-calls"), "storage"), clock.now_ms
    )
    record["d1"] = await record_d1(get(env, "DB"))
    record["queue_producer"] = await record_producer(
        get(env, "BODIES"), get(env, "CLASSQ"), get(env, "PARKED")
    )
    record["service_binding_rpc"] = await record_service_binding(get(env, "PEER"))
    stub = call(get(env, "RECORDER"), "getByName", "rpc")
    record["durable_object_stub_rpc"] = await record_stub_rpc(stub)
    record["analytics_engine"] = _analytics(runtime, get(env, "AE"))
    host = runtime.workers["shapes"]
    await host.scheduled(CRON, SCHEDULED_TIME)
    alarm_storage = get(await _state(runtime, "alarm-due"), "storage")
    await _settle(call(alarm_storage, "setAlarm", clock.now_ms() - 1000))
    await clock.advance(60_000)  # deliveries, redeliveries and the alarm's retry are all due within a minute
    record["handlers"] = {
        "scheduled": {"class-handlers": {"handler": reports.get("scheduled")}},
        "queue": {
            "object-handlers": {
                "first": reports.get("queue-object-1"),
                "second": reports.get("queue-object-2"),
            },
            "class-handlers": {"first": reports.get("queue-class-1"), "second": reports.get("queue-class-2")},
        },
    }
    record["alarm_handler"] = {"first_run": reports.get("alarm-run-1"), "retry": reports.get("alarm-run-2")}
    return record


async def _settle(value: Any) -> Any:
    from tests.shapes.js_side import settle

    return await settle(value)


Hook = Callable[..., Awaitable[None]]


def _describe_call(args: Sequence[Any], self: Any) -> dict[str, Any]:
    """recorder/queues.js ``describeCall`` for a class handler (``self`` is the entrypoint instance)."""
    env, ctx = (args[1] if len(args) > 1 else None), (args[2] if len(args) > 2 else None)
    return {
        "arguments_length": len(args),
        "batch": describe(args[0], BATCH_VARIES),
        "env": describe(env),
        "ctx": describe(ctx),
        "this_env_keys": sorted(self.env._binding.object_keys()) if hasattr(self.env, "_binding") else None,
        "this_ctx": safe(lambda: describe(_js(self.ctx))),
    }


def _js(value: Any) -> Any:
    """What a handler's Python argument was on the JS side: the SDK reads undefined as None and wraps a
    platform object in a ``_BindingWrapper`` (whose ``_binding`` is the JS object)."""
    from jsemu.core import UNDEFINED

    if value is None:
        return UNDEFINED
    return getattr(value, "_binding", value)


def _queue_hook(reports: dict[str, Any]) -> Hook:
    async def hook(self: Any, *args: Any) -> None:
        args = tuple(_js(a) for a in args)
        batch = args[0]
        seen = _describe_call(args, self)
        messages = get(batch, "messages")
        first = get(messages, "0")
        delivery = get(first, "attempts")
        queue = get(batch, "queue")
        if queue == "shapes-bodies":
            if delivery == 1:
                seen["ack_returns"] = outcome(lambda: call(get(messages, "0"), "ack"))
                seen["retry_returns"] = outcome(
                    lambda: call(get(messages, "1"), "retry", _object(delaySeconds=0))
                )
                seen["retry_without_options_returns"] = outcome(lambda: call(get(messages, "2"), "retry"))
            else:
                seen["ackAll_returns"] = outcome(lambda: call(batch, "ackAll"))
            reports[f"queue-object-{delivery}"] = _without_class_parts(seen)
        else:
            if delivery == 1:
                seen["retryAll_returns"] = outcome(lambda: call(batch, "retryAll", _object(delaySeconds=0)))
            else:
                seen["ackAll_returns"] = outcome(lambda: call(batch, "ackAll"))
            reports[f"queue-class-{delivery}"] = seen

    return hook


def _without_class_parts(seen: dict[str, Any]) -> dict[str, Any]:
    """The bodies queue's consumer is a class here (Python Workers have no default-export object): its batch
    and the calls on it are compared with the record's object consumer; its arguments are not (ADR-0105)."""
    return {
        k: v
        for k, v in seen.items()
        if k not in ("arguments_length", "env", "ctx", "this_env_keys", "this_ctx")
    }


def _object(**props: Any) -> Any:
    from tests.shapes.js_side import js_value

    return js_value(props)


def _scheduled_hook(reports: dict[str, Any]) -> Hook:
    async def hook(self: Any, *args: Any) -> None:
        seen = _describe_call(tuple(_js(a) for a in args), self)
        seen["controller"] = seen.pop("batch")
        reports["scheduled"] = seen

    return hook


def _alarm_hook(reports: dict[str, Any]) -> Hook:
    runs: list[int] = []

    async def hook(self: Any, *args: Any) -> None:
        runs.append(1)
        storage = get(self.raw_ctx, "storage")
        getter = (await _outcome_async(lambda: call(storage, "getAlarm"))).get("returns")
        reports[f"alarm-run-{len(runs)}"] = {
            "arguments_length": len(args),
            "arguments": [describe(_js(a), ("scheduledTime",)) for a in args],
            "getAlarm_inside_handler": getter,
        }
        if len(runs) == 1:
            raise JsException(_error("first alarm run fails on purpose"))

    return hook


async def _outcome_async(fn: Callable[[], Any]) -> dict[str, Any]:
    from tests.shapes.js_side import outcome_async

    return await outcome_async(fn)


def _error(message: str) -> Any:
    from jsemu.objects import make_error

    return make_error("Error", message)


def _analytics(runtime: LocalRuntime, dataset: Any) -> dict[str, Any]:
    """The record's ``analytics_engine`` section: per case what the caller saw and what was stored."""
    cases: dict[str, Any] = {}
    for name in AE_CASES:
        before = _stored(runtime)
        caller = write_data_point(dataset, name)
        after = _stored(runtime)
        case: dict[str, Any] = {"caller": caller}
        thrown = caller.get("throws", {})
        if thrown.get("name") == "TypeError" and str(thrown.get("message", "")).startswith(
            "writeDataPoint()"
        ):
            # workerd's local server refuses a bad point after the call returned (its log says why); the
            # runtime refuses it at the call, with the same TypeError (stricter, ADR-0105): compared as such.
            case = {
                "caller": {"returns": {"typeof": "undefined"}},
                "refused": {"name": "TypeError", "message": thrown["message"]},
            }
        if len(after) > len(before):
            case["delivered"] = after[-1]
        cases[name] = case
    return {"binding": describe(dataset), "cases": cases}


def _stored(runtime: LocalRuntime) -> list[dict[str, Any]]:
    rows = runtime.analytics.query("SELECT * FROM shapes ORDER BY timestamp_ms, rowid")
    return [_event(dict(row)) for row in rows]


def _event(row: dict[str, Any]) -> dict[str, Any]:
    """A stored point in the record's event form (recorder/record.mjs ``eventFields``)."""
    doubles = [js_number(float(row.get(f"double{i}") or 0)) for i in range(1, 21)]
    while doubles and doubles[-1] == 0:
        doubles.pop()
    blobs = {f"blob{i}": _bytes(row[f"blob{i}"]) for i in range(1, 21) if row.get(f"blob{i}") is not None}
    return {
        "schemaVersion": "0",
        "index1": _bytes(row.get("index1") or ""),
        "doubles": doubles,
        "blobs": blobs,
    }


def _bytes(text: Any) -> dict[str, Any]:
    data = text.encode() if isinstance(text, str) else bytes(text)
    if len(data) > 64:
        return {"length": len(data)}
    return {"text": data.decode()}


_ = (jsnull, safe)
