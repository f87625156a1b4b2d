"""The built wheel ships the dashboard's assets, and the page renders from the wheel alone."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tsumugi_scheduler.dashboard import SCRIPT_ORDER

pytestmark = pytest.mark.e2e

_ROOT = Path(__file__).resolve().parents[2]


def _build_wheel(out: Path) -> Path:
    uv = shutil.which("uv")
    assert uv is not None, "uv is needed to build the scheduler wheel"
    subprocess.run(
        [uv, "build", "--wheel", "--package", "tsumugi-scheduler", "--out-dir", str(out)],
        cwd=_ROOT,
        check=True,
        capture_output=True,
        timeout=120,
    )
    (wheel,) = out.glob("tsumugi_scheduler-*.whl")
    return wheel


def test_wheel_ships_the_assets_and_renders_without_the_source_tree(tmp_path: Path):
    wheel = _build_wheel(tmp_path / "dist")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        "tsumugi_scheduler/dashboard/assets/index.html",
        "tsumugi_scheduler/dashboard/assets/style.css",
    }
    expected |= {f"tsumugi_scheduler/dashboard/assets/js/{name}" for name in SCRIPT_ORDER}
    assert expected <= names

    unpacked = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(unpacked)
    # -I: isolated, so the workspace's editable install cannot stand in for the wheel.
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import tsumugi_scheduler.dashboard as d;"
        "assert d.__file__.startswith(sys.argv[1]), d.__file__;"
        "print(len(d.render_dashboard()))"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", probe, str(unpacked)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 40_000
