"""Every upload pins the Workers SDK the local runtime runs, and the dry run says which (issue 31, item 1).

pywrangler adds ``workers-runtime-sdk`` to each Worker's requirements unpinned; the generated pyproject it reads
pins it, so the deploy resolves the version the tests ran (ADR-0109).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tests.deploy.deploy_helpers import ROOT, Deployed, InitRun
from tsumugi_dev.sdk_pin import (
    SDK_DISTRIBUTION,
    WORKERS_RUNTIME_SDK_VERSION,
    requirement_pins,
    upload_sdk_pins,
)


def _uploads(run_name: str, request: pytest.FixtureRequest) -> tuple[Deployed, list[Path]]:
    run = request.getfixturevalue(run_name)
    deployed, out = (run.deployed, run.out) if isinstance(run, InitRun) else run
    return deployed, sorted(p for p in out.iterdir() if p.is_dir())


@pytest.mark.parametrize("run_name", ["repo_run", "init_run"])
def test_each_upload_pins_the_sdk_the_tests_ran_and_the_dry_run_says_so(
    run_name: str, request: pytest.FixtureRequest
) -> None:
    deployed, uploads = _uploads(run_name, request)
    assert deployed.status == 0, deployed.out + deployed.err
    assert len(uploads) == 3
    for upload in uploads:
        generated = (upload / "pyproject.toml").read_text()
        assert upload_sdk_pins(generated) == [WORKERS_RUNTIME_SDK_VERSION], upload.name
        assert (
            f"{SDK_DISTRIBUTION}=={WORKERS_RUNTIME_SDK_VERSION}"
            in tomllib.loads(generated)["project"]["dependencies"]
        )
    assert (
        deployed.out.count(
            f"  {SDK_DISTRIBUTION}: {WORKERS_RUNTIME_SDK_VERSION} (the version tsumugi dev runs)"
        )
        == 3
    )


def test_the_deploys_pin_is_the_sdk_the_tests_import() -> None:
    # The SDK every test imports as ``workers`` (ADR-0097) is the version uploads pin.
    import importlib.metadata

    import workers

    assert importlib.metadata.version(SDK_DISTRIBUTION) == WORKERS_RUNTIME_SDK_VERSION
    assert "site-packages" in str(workers.__file__)
    pyproject = (ROOT / "packages" / "tsumugi-dev" / "pyproject.toml").read_text()
    assert requirement_pins(pyproject) == [WORKERS_RUNTIME_SDK_VERSION]
