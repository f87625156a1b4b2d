"""The D1 migrations reach an init'ed project from the installed packages, never from this repository's paths.

``migrations/`` is the one source; ``tsumugi_scheduler/d1_migrations/`` is the copy the wheel ships
(ADR-0049). After changing a migration: ``cp migrations/*.sql packages/tsumugi-scheduler/src/tsumugi_scheduler/d1_migrations/``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tsumugi_dev.scaffold.init_project import shipped_migrations
from tsumugi_scheduler.readmodel import EXPECTED_MIGRATIONS

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "packages" / "tsumugi-scheduler" / "src" / "tsumugi_scheduler" / "d1_migrations"


def test_the_shipped_copy_equals_the_migrations_folder() -> None:
    source = {p.name: p.read_bytes() for p in (ROOT / "migrations").glob("*.sql")}
    copy = {p.name: p.read_bytes() for p in SHIPPED.iterdir()}
    assert copy == source, (
        "tsumugi_scheduler/d1_migrations differs from migrations/: "
        "cp migrations/*.sql packages/tsumugi-scheduler/src/tsumugi_scheduler/d1_migrations/"
    )


def test_init_reads_them_as_package_data_in_order() -> None:
    assert tuple(name for name, _ in shipped_migrations()) == EXPECTED_MIGRATIONS


def _build(package: str, out: Path) -> Path:
    uv = shutil.which("uv")
    assert uv is not None, "uv is needed to build the wheels"
    subprocess.run(
        [uv, "build", "--wheel", "--package", package, "--out-dir", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=180,
    )
    (wheel,) = out.glob(package.replace("-", "_") + "-*.whl")
    return wheel


@pytest.mark.slow
def test_init_works_from_the_built_wheels_alone(tmp_path: Path) -> None:
    site = tmp_path / "site"
    for package in ("tsumugi-scheduler", "tsumugi-dev"):
        with zipfile.ZipFile(_build(package, tmp_path / "dist")) as wheel:
            wheel.extractall(site)
    # -I: isolated, and the unpacked wheels first on the path, so the workspace's sources cannot stand in.
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from pathlib import Path;"
        "import tsumugi_dev, tsumugi_scheduler;"
        "assert tsumugi_dev.__file__.startswith(sys.argv[1]), tsumugi_dev.__file__;"
        "assert tsumugi_scheduler.__file__.startswith(sys.argv[1]), tsumugi_scheduler.__file__;"
        "from tsumugi_dev.scaffold import init_project;"
        "print(len(init_project(Path(sys.argv[2])).written))"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", probe, str(site), str(tmp_path / "shop")],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    made = tmp_path / "shop"
    assert int(done.stdout) == len([p for p in made.rglob("*") if p.is_file()])
    assert sorted(p.name for p in (made / "scheduler" / "migrations").iterdir()) == list(EXPECTED_MIGRATIONS)
    assert (made / "performers" / "src" / "shop_performers" / "hello.py").is_file()
