"""bench/e2e.py's default scheduler is the repository's Worker classes over a definition with no notices.

A like-for-like comparison with huey's plain tasks needs it: with the example definition every job also runs a
NotifySettled job (about twice the work).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from tsumugi_scheduler.entrypoints import DefaultMethods, JobShardMethods, RpcMethods
from tsumugi_scheduler.shard.records import NoticeConfig

BENCH_SCHEDULER = Path(__file__).resolve().parents[3] / "bench" / "e2e_scheduler.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_bench_e2e_scheduler", BENCH_SCHEDULER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_worker_class_runs_the_definition_without_notices() -> None:
    module = _load()
    classes = {"TsumugiJobShard": JobShardMethods, "TsumugiRpc": RpcMethods, "Default": DefaultMethods}
    for name, mixin in classes.items():
        cls = getattr(module, name)
        assert issubclass(cls, mixin), name
        # What the Worker actually runs with: the class attribute the mixins read, not a module global.
        assert cls.tsumugi.notices == NoticeConfig(), name
