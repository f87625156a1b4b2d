"""tsumugi_scheduler.entrypoints: the classes an entry module mixes into the SDK's base classes."""

from __future__ import annotations

from types import FunctionType

import pytest
from workers import DurableObject, WorkerEntrypoint

from tsumugi_scheduler.definition import define_tsumugi
from tsumugi_scheduler.entrypoints import DefaultMethods, JobShardMethods, RpcMethods, RunMethods

TSUMUGI = define_tsumugi(performers=["Hello"])


def _exported_methods(cls: type) -> set[str]:
    # What workerd exports for a Python class: public plain functions found through the MRO (dir + __dict__),
    # as src/pyodide/internal/introspection.py collect_methods does.
    def lookup(name: str) -> object:
        return next((base.__dict__[name] for base in cls.__mro__ if name in base.__dict__), None)

    return {n for n in dir(cls) if not n.startswith("_") and isinstance(lookup(n), FunctionType)}


def test_the_mixed_in_methods_are_exported_as_the_entry_modules_own() -> None:
    class TsumugiJobShard(JobShardMethods, DurableObject):
        tsumugi = TSUMUGI

    class TsumugiRpc(RpcMethods, WorkerEntrypoint):
        tsumugi = TSUMUGI

    class Default(DefaultMethods, WorkerEntrypoint):
        tsumugi = TSUMUGI

    shard = _exported_methods(TsumugiJobShard)
    assert {
        "enqueue_many",
        "claim",
        "report",
        "report_many",
        "start_many",
        "heartbeat",
        "cancel",
        "alarm",
        "explain",
    } <= shard
    assert _exported_methods(TsumugiRpc) == {
        "enqueue",
        "enqueue_many",
        "get",
        "cancel",
        "retry",
        "reschedule",
        "heartbeat",
        "start_run",
        "get_run",
        "cancel_run",
        "retry_run",
        "send_event",
    }
    assert _exported_methods(Default) == {"fetch", "queue", "scheduled"}

    class TsumugiRun(RunMethods, DurableObject):
        tsumugi = TSUMUGI

    assert _exported_methods(TsumugiRun) == {
        "start",
        "notify",
        "notify_child",
        "cancel",
        "retry",
        "state",
        "alarm",
    }


def test_a_class_without_its_definition_is_refused_when_defined() -> None:
    with pytest.raises(
        TypeError, match=r"class Default must set tsumugi = define_tsumugi\(...\), got NoneType"
    ):

        class Default(DefaultMethods, WorkerEntrypoint):
            pass

    with pytest.raises(TypeError, match=r"class Rpc must set tsumugi = define_tsumugi\(...\), got dict"):

        class Rpc(RpcMethods, WorkerEntrypoint):
            tsumugi = dict(performers=["Hello"])  # type: ignore[assignment]  # noqa: C408, RUF012


def test_the_sdk_class_still_receives_ctx_and_env() -> None:
    class Rpc(RpcMethods, WorkerEntrypoint):
        tsumugi = TSUMUGI

    ctx, env = object(), object()
    made = Rpc(ctx, env)
    # The SDK's own __init__ ran: ctx kept, env wrapped (its _EnvWrapper converts what bindings answer).
    assert made.ctx is ctx
    assert made.env._env is env
