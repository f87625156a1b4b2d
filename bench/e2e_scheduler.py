"""The scheduler Worker bench/e2e.py runs by default: the repository's scheduler with no notices.

``services/scheduler/src/entry.py`` configures ``on_failure`` and ``on_settled`` for every state, so each
example job there also runs a NotifySettled job: twice the work of a plain job queue. Huey runs no such
follow-up task, so the like-for-like comparison uses this module: the same Worker classes (loaded from that
file, so nothing is copied) over a definition with the same performers and no notices. ``--scheduler example``
in bench/e2e.py measures the example setup instead.
"""

import importlib.util
from pathlib import Path

from tsumugi_scheduler.definition import define_tsumugi
from tsumugi_scheduler.rest_api import rest_app

_ENTRY = Path(__file__).resolve().parents[1] / "services" / "scheduler" / "src" / "entry.py"
_spec = importlib.util.spec_from_file_location("_tsumugi_bench_scheduler_entry", _ENTRY)
if _spec is None or _spec.loader is None:
    raise ImportError(f"cannot load the scheduler entry {_ENTRY}")
_entry = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_entry)

# The Worker classes read these module globals at call time.
_definition = define_tsumugi(
    performers=["Hello", "Boom", "Slow", "SendMail", "NotifyFailure", "NotifySettled"]
)
vars(_entry).update(TSUMUGI=_definition, API=rest_app(_definition))

TsumugiJobShard = _entry.TsumugiJobShard
TsumugiRpc = _entry.TsumugiRpc
Default = _entry.Default
