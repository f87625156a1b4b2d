"""Every wrangler config we ship or generate validates against the pinned wrangler's config-schema.json.

The schema is node_modules/wrangler/config-schema.json from `npm ci` (wrangler pinned by package-lock.json,
ADR-0040); jsonc comments are stripped with tsumugi_dev.jsonc first.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.deploy.deploy_helpers import REPO_CONFIGS, ROOT, WRANGLER_BIN, Deployed, InitRun
from tsumugi_dev.deploy_tools import WRANGLER_VERSION
from tsumugi_dev.jsonc import loads_jsonc
from tsumugi_dev.project import project_worker_configs

SCHEMA = ROOT / "node_modules" / "wrangler" / "config-schema.json"


@cache
def _validator() -> Any:
    schema = json.loads(SCHEMA.read_text())
    return jsonschema.Draft7Validator(schema)


def _errors(config: dict[str, Any]) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in _validator().iter_errors(config)]


def test_the_schema_is_the_pinned_wranglers() -> None:
    pinned = WRANGLER_VERSION  # also what `tsumugi init` writes into a project's package.json
    assert json.loads((ROOT / "package.json").read_text())["devDependencies"]["wrangler"] == pinned
    lock = json.loads((ROOT / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/wrangler"]["version"] == pinned
    installed = json.loads((ROOT / "node_modules" / "wrangler" / "package.json").read_text())
    assert installed["version"] == pinned, "node_modules is stale: run `npm ci`"
    assert (WRANGLER_BIN / "wrangler").is_file()


@pytest.mark.parametrize("config", REPO_CONFIGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_this_repositorys_configs_validate(config: Path) -> None:
    assert _errors(loads_jsonc(config.read_text())) == []


def test_the_init_projects_configs_and_every_generated_config_validate(
    init_run: InitRun, repo_run: tuple[Deployed, Path]
) -> None:
    assert init_run.deployed.status == 0, init_run.deployed.out + init_run.deployed.err
    sources = project_worker_configs(init_run.project)
    assert len(sources) == 3
    for config in sources:
        assert _errors(loads_jsonc(config.read_text())) == [], config
    generated = [
        *sorted(init_run.out.glob("*/wrangler.jsonc")),
        *sorted(repo_run[1].glob("*/wrangler.jsonc")),
    ]
    assert len(generated) == 6
    for config in generated:
        assert _errors(json.loads(config.read_text())) == [], config


def test_the_init_projects_configs_name_the_schema_npm_install_puts_in_its_node_modules(
    init_run: InitRun,
) -> None:
    # The package.json is at the project's root, the configs one folder down: editors must find the schema.
    for config in project_worker_configs(init_run.project):
        schema = config.parent / loads_jsonc(config.read_text())["$schema"]
        assert schema.resolve() == (init_run.project / "node_modules/wrangler/config-schema.json").resolve()
        assert schema.resolve() == SCHEMA.resolve()


@pytest.mark.parametrize("config", REPO_CONFIGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_this_repositorys_configs_name_the_schema_npm_ci_puts_in_its_node_modules(config: Path) -> None:
    schema = config.parent / loads_jsonc(config.read_text())["$schema"]
    assert schema.resolve() == SCHEMA.resolve()


def test_the_schema_refuses_what_wrangler_refuses() -> None:
    # The check has teeth: a misspelt field and a wrongly typed one are errors.
    config = loads_jsonc((ROOT / "services/performers/wrangler.jsonc").read_text())
    assert _errors({**config, "compatibility_flag": ["python_workers"]}) != []
    assert _errors({**config, "main": 1}) != []
