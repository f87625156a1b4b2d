"""Issue 23, acceptances 1 and 2: a project made by ``tsumugi init`` in a folder outside this repository runs
with the commands it prints, in its own environment: plain ``uv run``, no ``--project``, no ``PYTHONPATH``.

The project gets a performer (``add-performer Resize``), a flow over it (``add-flow resize-all --performer
Resize``) and a schedule (``POST /api/schedules``, the README's step; the template's code schedule is there
too); its tests pass; ``tsumugi dev`` completes a job, a run of the flow and an occurrence of each schedule
through REST; ``tsumugi deploy --dry-run`` passes, with the flow's modules in the scheduler's upload and no
``tsumugi_examples`` anywhere.

Tests never reach the network: uv runs with ``UV_OFFLINE=1``, from its cache (which ``uv sync`` and
``uv lock --check --refresh`` of this repository fill; scripts/test.sh runs both), with this repository's locked
versions as constraints so the project resolves to wheels that are in the cache. The project finds Tsumugi
through the path source ``tsumugi init`` writes when run from a checkout (ADR-0112).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.dev_process import DevProcess

REPO = Path(__file__).resolve().parents[2]
DEADLINE_S = 120.0
TOKEN = "user-project-token"

pytestmark = pytest.mark.slow


def _uv() -> str:
    found = shutil.which("uv")
    assert found is not None, "uv is not on PATH (scripts/test.sh puts it there)"
    return found


def _constraints(folder: Path) -> Path:
    exported = subprocess.run(
        [
            _uv(),
            "export",
            "--frozen",
            "--no-hashes",
            "--all-packages",
            "--all-groups",
            "--no-emit-workspace",
            "--no-header",
            "--no-annotate",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    path = folder / "constraints.txt"
    path.write_text(exported.stdout, encoding="utf-8")
    return path


def _environment(constraints: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"VIRTUAL_ENV", "PYTHONPATH", "UV_PROJECT_ENVIRONMENT"}
    }
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    return {
        **env,
        "UV_OFFLINE": "1",
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_PYTHON": str(base),
        "UV_CONSTRAINT": str(constraints),
        "TSUMUGI_TOKEN": TOKEN,
    }


def _run(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args), cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=DEADLINE_S
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    outside = tmp_path_factory.mktemp("outside")
    assert not outside.resolve().is_relative_to(REPO.resolve())
    env = _environment(_constraints(outside))
    made = _run(outside, env, sys.executable, "-m", "tsumugi_dev", "init", "photo-shop")
    assert made.returncode == 0, made.stderr
    for printed in ("uv run tsumugi dev", "uv run pytest", "uv run tsumugi deploy --dry-run"):
        assert printed in made.stdout
    root = outside / "photo-shop"
    for step in (("add-performer", "Resize"), ("add-flow", "resize-all", "--performer", "Resize")):
        done = _run(root, env, _uv(), "run", "tsumugi", *step)
        assert done.returncode == 0, done.stdout + done.stderr
    return root, env


def test_its_tests_pass_with_uv_run(project: tuple[Path, dict[str, str]]) -> None:
    root, env = project
    done = _run(root, env, _uv(), "run", "pytest", "-q", "-p", "no:cacheprovider")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


@pytest.fixture
def server(project: tuple[Path, dict[str, str]]) -> Iterator[DevProcess]:
    root, env = project
    dev = DevProcess(root, env=env, timeout_s=DEADLINE_S, command=(_uv(), "run", "tsumugi"))
    try:
        yield dev
    finally:
        dev.stop()


def _job_completes(server: DevProcess, http: httpx.Client, job_id: str, deadline: float) -> dict[str, Any]:
    server.wait_for(rf"job {re.escape(job_id)} COMPLETED", deadline)
    job = http.get("/api/jobs/" + urllib.parse.quote(job_id, safe="")).json()["job"]
    assert job["state"] == "COMPLETED", job
    return job


def _run_completes(http: httpx.Client, run_id: str, deadline: float) -> dict[str, Any]:
    # A bounded wait on the run's state through REST (the dev log has no line per run); 404 until the read
    # model has the run.
    path = "/api/runs/" + urllib.parse.quote(run_id, safe="")
    while True:
        answer = http.get(path)
        run: dict[str, Any] = answer.json()["run"] if answer.status_code == 200 else {"state": "PENDING"}
        if run["state"] not in ("PENDING", "RUNNING") or time.monotonic() > deadline:
            return run
        time.sleep(0.1)


def test_dev_completes_a_job_a_flow_run_and_each_schedules_occurrence(server: DevProcess) -> None:
    deadline = time.monotonic() + DEADLINE_S
    url = server.ready_url("photo-shop-scheduler", deadline)
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10.0) as http:
        created = http.post("/api/jobs", json={"binding": "Resize", "payload": {"width": 640}})
        assert created.status_code == 201, created.text
        assert _job_completes(server, http, created.json()["id"], deadline)["result"] == (
            '{"received":{"width":640}}'
        )

        started = http.post("/api/runs", json={"flow": "resize-all", "input": {"width": 320}})
        assert started.status_code in (200, 201), started.text
        run = _run_completes(http, started.json()["id"], deadline)
        assert run["state"] == "COMPLETED", run

        greeted = http.post("/api/runs", json={"flow": "greetings", "input": {"names": ["Ada", "Grace"]}})
        assert greeted.status_code in (200, 201), greeted.text
        assert _run_completes(http, greeted.json()["id"], deadline)["state"] == "COMPLETED"

        made = http.post(
            "/api/schedules",
            json={"name": "resize-daily", "binding": "Resize", "payload": {"width": 64}, "cron": "0 3 * * *"},
        )
        assert made.status_code == 201, made.text
        for name in ("resize-daily", "hello-hourly"):  # run-time and code-defined
            fired = http.post(f"/api/schedules/{name}/trigger")
            assert fired.status_code in (200, 201, 202), fired.text
            job_id = server.wait_for(
                rf"job ((?:Resize|Hello)#\d+:{re.escape(name)}-now-\d+-[0-9a-f]{{12}}) ", deadline
            ).group(1)
            _job_completes(server, http, job_id, deadline)
        listed = {s["name"]: s["source"] for s in http.get("/api/schedules").json()["schedules"]}
        assert listed == {"hello-hourly": "code", "resize-daily": "runtime"}


def test_the_dry_run_passes_with_the_flow_in_the_schedulers_upload(
    project: tuple[Path, dict[str, str]],
) -> None:
    root, env = project
    (root / "node_modules").symlink_to(
        REPO / "node_modules", target_is_directory=True
    )  # `npm install`, offline
    done = _run(root, env, _uv(), "run", "tsumugi", "deploy", "--dry-run")
    assert done.returncode == 0, done.stdout + done.stderr
    builds = root / ".tsumugi" / "build"
    scheduler = builds / "photo-shop-scheduler" / "src"
    assert (scheduler / "photo_shop_performers" / "flows" / "resize_all.py").is_file()
    assert (scheduler / "photo_shop_performers" / "resize.py").is_file()
    assert sorted(p.name for p in builds.iterdir() if p.is_dir()) == [
        "photo-shop-performers",
        "photo-shop-producer",
        "photo-shop-scheduler",
    ]
    assert not list(builds.rglob("tsumugi_examples")), "an upload carries this repository's examples"
