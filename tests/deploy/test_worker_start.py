"""What each Worker's entry loads when it starts stays within its module budget (docs/worker-start.md).

Cloudflare's startup limit is about time, which a test here cannot hold (bench/worker_start.py measures it);
the modules an entry loads are deterministic for a given lock, and every one costs Pyodide a compile and a run
at start. A new heavy import (a package's command line pulled in by an optional import, a second web
framework) shows up here as a count over the budget; raising a budget is a decision the docs record.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.deploy.deploy_helpers import ROOT
from tsumugi_dev.start_cost import measure_start

MODULE_BUDGETS = {
    "services/scheduler/wrangler.jsonc": 280,
    "services/performers/wrangler.jsonc": 50,
    "services/performers/producer/wrangler.jsonc": 60,
}
"""Modules outside the standard library each entry may load (measured: 246, 36 and 40; docs/worker-start.md)."""


@pytest.mark.parametrize("config", sorted(MODULE_BUDGETS))
def test_each_entry_loads_no_more_modules_than_its_budget_and_only_from_its_upload(
    config: str, tmp_path: Path
) -> None:
    cost = measure_start(ROOT / config, tmp_path, cold=False)
    assert len(cost.outside_stdlib()) <= MODULE_BUDGETS[config], cost.by_root()
    assert "httpx" not in cost.by_root()  # the platform's fetch serves Worker code (ADR-0107)
    # Only optional imports may be missing from the upload: the entry imported, so each was caught.
    assert set(cost.refused) <= {"multipart", "python_multipart", "sniffio", "typing_extensions"}


def test_a_module_the_upload_lacks_is_refused_not_loaded_from_this_environment(tmp_path: Path) -> None:
    # The producer's upload holds no pydantic (installed here for the scheduler): an entry importing it fails
    # as it would on Cloudflare, instead of being measured with a module the upload lacks.
    worker = tmp_path / "w"
    (worker / "src").mkdir(parents=True)
    (worker / "src" / "entry.py").write_text("import pydantic\n")
    (worker / "wrangler.jsonc").write_text(
        '{"name": "w", "main": "src/entry.py", "compatibility_flags": ["python_workers"]}'
    )
    (worker / "pyproject.toml").write_text('[project]\nname = "w"\nversion = "0"\ndependencies = []\n')
    with pytest.raises(RuntimeError, match=r"No module named 'pydantic' \(not in the upload\)"):
        measure_start(worker / "wrangler.jsonc", tmp_path / "out", cold=False)
