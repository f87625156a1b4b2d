"""tsumugi_scheduler.entry_classes: one helper builds the scheduler Worker's five classes (ADR-0156), and every
entry module that used to write them out binds what it builds under the names workerd looks up."""

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
    # Public plain functions found through the MRO, as workerd's Python introspection exports them.
    def lookup(name: str) -> object:
        return next((base.__dict__[name] for base in cls.__mro__ if name in base.__dict__), None)

    return {n for n in dir(cls) if not n.startswith("_") and isinstance(lookup(n), FunctionType)}


def test_the_built_classes_are_what_the_class_statements_said() -> None:
    built = entry_classes(TSUMUGI, DurableObject, WorkerEntrypoint, module="my_entry")

    class TsumugiJobShard(JobShardMethods, DurableObject):
        tsumugi = TSUMUGI

    class TsumugiScheduler(SchedulerMethods, DurableObject):
        tsumugi = TSUMUGI

    class TsumugiRun(RunMethods, DurableObject):
        tsumugi = TSUMUGI

    class TsumugiRpc(ScheduleRpcMethods, RpcMethods, WorkerEntrypoint):
        tsumugi = TSUMUGI

    class Default(DefaultMethods, WorkerEntrypoint):
        tsumugi = TSUMUGI

    written = (TsumugiJobShard, TsumugiScheduler, TsumugiRun, TsumugiRpc, Default)
    for made, by_hand in zip(built, written, strict=True):
        assert made.__name__ == made.__qualname__ == by_hand.__name__
        assert made.__module__ == "my_entry"
        assert made.__bases__ == by_hand.__bases__
        assert made.tsumugi is TSUMUGI
        assert _exported_methods(made) == _exported_methods(by_hand)
    assert {"create_schedule", "enqueue"} <= _exported_methods(built.rpc)


def test_the_sdk_class_still_receives_ctx_and_env() -> None:
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
