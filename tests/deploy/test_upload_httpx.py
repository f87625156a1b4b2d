"""No Worker upload carries or needs httpx: Worker code uses the platform's fetch (issue 22, item 5; ADR-0107).

PyPI's httpx 0.28.1 needs httpcore, anyio and sockets, which Pyodide 0.28 lacks (Pyodide's own build of the
same version is a fork with no dependencies, and which of the two pywrangler would install cannot be checked
offline). So the uploads hold no httpx at all: SendMail and ``GET /api/metrics`` post through ``workers.fetch``,
tsumugi-client requires httpx only off Pyodide (``sys_platform != 'emscripten'``) and imports it only in its HTTP
clients, and the deploy leaves that requirement out of the pyproject pywrangler reads. Checked on what
``tsumugi deploy --dry-run`` wrote, for this repository's Workers and for a ``tsumugi init`` project.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tests.deploy.deploy_helpers import Deployed, InitRun
from tests.deploy.upload_imports import import_time_imports, reached_modules
from tsumugi_dev.vendoring import parse_requirement

HTTPX_STACK = {"httpx", "httpcore", "h11", "certifi", "sniffio"}
"""httpx and what only it brings (anyio stays: starlette needs it)."""


def _uploads(run_name: str, request: pytest.FixtureRequest) -> tuple[Deployed, list[Path]]:
    run = request.getfixturevalue(run_name)
    deployed, out = (run.deployed, run.out) if isinstance(run, InitRun) else run
    return deployed, sorted(p for p in out.iterdir() if p.is_dir())


@pytest.mark.parametrize("run_name", ["repo_run", "init_run"])
def test_no_upload_fetches_httpx_or_imports_it_when_it_starts(
    run_name: str, request: pytest.FixtureRequest
) -> None:
    deployed, uploads = _uploads(run_name, request)
    assert deployed.status == 0, deployed.out + deployed.err
    assert len(uploads) == 3
    for upload in uploads:
        generated = tomllib.loads((upload / "pyproject.toml").read_text())
        fetched = {parse_requirement(text).name for text in generated["project"]["dependencies"]}
        assert fetched & HTTPX_STACK == set(), upload.name
        dist = upload / "dist"
        assert not (dist / "httpx").exists()
        assert "httpx" not in import_time_imports(dist, "entry.py"), upload.name
    for line in deployed.out.splitlines():
        if "from pywrangler" in line:
            assert "httpx" not in line


def test_worker_code_that_speaks_http_reaches_the_platforms_fetch(repo_run: tuple[Deployed, Path]) -> None:
    _, out = repo_run
    performers = reached_modules(out / "tsumugi-performers" / "dist", "entry.py")
    scheduler = reached_modules(out / "tsumugi-scheduler" / "dist", "entry.py")
    assert "tsumugi_examples.send_mail" in performers
    assert {"tsumugi_scheduler.api.metrics", "tsumugi_scheduler._runtime"} <= scheduler
    send_mail = (out / "tsumugi-performers" / "dist" / "tsumugi_examples" / "send_mail.py").read_text()
    runtime = (out / "tsumugi-scheduler" / "dist" / "tsumugi_scheduler" / "_runtime.py").read_text()
    assert "from workers import fetch" in send_mail
    assert "from workers import fetch" in runtime
