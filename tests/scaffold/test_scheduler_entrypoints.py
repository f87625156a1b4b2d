"""tsumugi_scheduler.entrypoints and entry_classes: the classes an entry module mixes into the SDK classes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import FunctionType, ModuleType

import pytest
from workers import DurableObject, WorkerEntrypoint

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_scheduler.definition import define_tsumugi
from tsumugi_scheduler.entry_classes import ENTRY_CLASS_NAMES, entry_classes
from tsumugi_scheduler.entrypoints import DefaultMethods, JobShardMethods, RpcMethods, RunMethods
from tsumugi_scheduler.schedule_entrypoints import SchedulerMethods, ScheduleRpcMethods

ROOT = Path(__file__).resolve().parents[2]
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
        "enqueue_json",
        "claim",
        "report",
        "report_many",
        "report_json",
        "start_many",
        "heartbeat",
        "cancel",
        "alarm",
        "explain",
    } <= shard
    assert _exported_methods(TsumugiRpc) == {
        "enqueue",
        "enqueue_many",
        "enqueue_json",
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


def test_entry_classes_builds_the_five_classes_an_entry_module_used_to_write() -> None:
    # tsumugi_scheduler.entry_classes (ADR-0155): each class named as bound, mixin before the SDK class.
    built = entry_classes(TSUMUGI, DurableObject, WorkerEntrypoint, module="my_entry")
    expected = {
        "TsumugiJobShard": (JobShardMethods, DurableObject),
        "TsumugiScheduler": (SchedulerMethods, DurableObject),
        "TsumugiRun": (RunMethods, DurableObject),
        "TsumugiRpc": (ScheduleRpcMethods, RpcMethods, WorkerEntrypoint),
        "Default": (DefaultMethods, WorkerEntrypoint),
    }
    assert [cls.__name__ for cls in built] == list(ENTRY_CLASS_NAMES) == list(expected)
    for cls in built:
        assert cls.__qualname__ == cls.__name__
        assert cls.__module__ == "my_entry"
        assert cls.__bases__ == expected[cls.__name__]
        assert cls.tsumugi is TSUMUGI
    assert {"create_schedule", "enqueue", "start_run"} <= _exported_methods(built.rpc)
    assert _exported_methods(built.default) == {"fetch", "queue", "scheduled"}


def test_a_built_class_hands_ctx_and_env_to_the_sdk_class() -> None:
    built = entry_classes(TSUMUGI, DurableObject, WorkerEntrypoint, module="my_entry")
    ctx, env = object(), object()
    made = built.rpc(ctx, env)
    assert made.ctx is ctx
    assert made.env._env is env  # the SDK's own __init__ ran and wrapped env


@pytest.mark.parametrize(
    ("arguments", "field", "rule"),
    [
        (({"performers": ["Hello"]}, DurableObject, WorkerEntrypoint), "definition", "got dict"),
        ((TSUMUGI, TSUMUGI, WorkerEntrypoint), "durable_object", "from workers import DurableObject"),
        ((TSUMUGI, DurableObject, "WorkerEntrypoint"), "worker_entrypoint", "got str"),
    ],
)
def test_a_wrong_argument_is_named(arguments: tuple[object, object, object], field: str, rule: str) -> None:
    with pytest.raises(InvalidFieldError) as raised:
        entry_classes(*arguments, module="my_entry")  # type: ignore[arg-type]
    assert raised.value.field == field
    assert rule in raised.value.rule


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "entry", ["services/scheduler/src/entry.py", "bench/platform_scheduler.py"], ids=["services", "bench"]
)
def test_an_entry_module_binds_each_class_under_its_own_name(
    entry: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "bench"))  # the bench entry imports e2e_scheduler by bare name
    module = _load(ROOT / entry, "_entry_under_test")
    monkeypatch.delitem(sys.modules, "e2e_scheduler", raising=False)
    for name in ENTRY_CLASS_NAMES:
        cls = getattr(module, name)
        assert cls.__name__ == name
        assert cls.__module__ == "_entry_under_test"
        assert cls.tsumugi is module.TSUMUGI
    assert issubclass(module.TsumugiJobShard, DurableObject)
    assert issubclass(module.Default, WorkerEntrypoint)
