"""Issue 23, acceptance 2: ``tsumugi deploy`` refuses an upload whose code imports a module nothing provides,
naming the module and the module importing it (ADR-0113); what is optional or never runs is not counted."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from tests.deploy.deploy_helpers import deploy, init_for_deploy, offline_env
from tsumugi_dev.deploy import EXIT_USAGE
from tsumugi_dev.upload_build import build_upload
from tsumugi_dev.upload_check import refuse_incomplete_upload
from tsumugi_dev.upload_imports import missing_modules
from tsumugi_dev.worker_source import DeployError, read_worker_source


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def test_a_scheduler_without_its_performers_package_is_refused_naming_the_module(tmp_path: Path) -> None:
    # The issue's case: the flows' module is imported by the entry but the scheduler does not depend on it.
    project = init_for_deploy(tmp_path)
    pyproject = project / "scheduler" / "pyproject.toml"
    text = pyproject.read_text()
    assert '    "my-jobs-performers",\n' in text
    pyproject.write_text(text.replace('    "my-jobs-performers",\n', ""))
    done = deploy([], cwd=project, out_dir=Path(".tsumugi/build"), dry_run=True, environ=offline_env())
    assert done.status == EXIT_USAGE, done.out + done.err
    assert re.search(
        r"my-jobs-scheduler: the upload cannot start: 'my_jobs_performers' \(imported by entry, line \d+\)",
        done.err,
    ), done.err
    assert "wrangler" not in done.out  # refused before any Worker's dry run


def test_a_module_removed_from_a_built_upload_is_named_with_its_importer(tmp_path: Path) -> None:
    project = init_for_deploy(tmp_path)
    build = build_upload(read_worker_source(project / "scheduler" / "wrangler.jsonc"), tmp_path / "out")
    refuse_incomplete_upload(build)  # complete as built
    (build.folder / "src" / "tsumugi_scheduler" / "entry_classes.py").unlink()
    with pytest.raises(
        DeployError, match=r"'tsumugi_scheduler\.entry_classes' \(imported by entry, line \d+\)"
    ):
        refuse_incomplete_upload(build)


def test_guarded_and_type_checking_imports_do_not_count_and_relative_ones_resolve(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            "entry.py": """
            from typing import TYPE_CHECKING
            import pkg.a
            try:
                import optional_speedup
            except ImportError:
                optional_speedup = None
            if TYPE_CHECKING:
                import only_for_types
        """,
            "pkg/__init__.py": "",
            "pkg/a.py": "from . import b\nfrom .c import thing\n",
            "pkg/b.py": "import json\nimport msgspec\n",
        },
    )
    found = [(m.module, m.importer) for m in missing_modules(src, "entry.py", frozenset({"msgspec"}))]
    assert found == [("pkg.c", "pkg.a")]
    unprovided = [(m.module, m.importer) for m in missing_modules(src, "entry.py", frozenset())]
    assert unprovided == [("pkg.c", "pkg.a"), ("msgspec", "pkg.b")]
