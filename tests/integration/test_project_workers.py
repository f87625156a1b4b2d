"""The repository's own ``[tool.tsumugi]`` Workers for ``tsumugi dev`` and the API token."""

from __future__ import annotations

from pathlib import Path

from tsumugi_dev.api_token import DevToken, dev_token, project_token, with_secrets
from tsumugi_dev.config import load_config
from tsumugi_dev.project import project_worker_configs

REPO = Path(__file__).resolve().parents[2]


def test_the_repository_root_yields_its_three_workers_scheduler_first(tmp_path: Path) -> None:
    names = [load_config(p).name for p in project_worker_configs(REPO)]
    assert names == ["tsumugi-scheduler", "tsumugi-performers", "tsumugi-producer"]
    assert project_worker_configs(tmp_path) == []


def test_the_token_comes_from_the_environment_or_is_generated() -> None:
    assert dev_token({"TSUMUGI_TOKEN": " s3cret "}) == DevToken(value="s3cret", generated=False)
    generated = dev_token({})
    assert generated.generated
    assert len(generated.value) >= 24
    assert dev_token({}).value != generated.value


def test_the_token_becomes_a_var_unless_the_config_sets_one() -> None:
    config = load_config(REPO / "services" / "scheduler" / "wrangler.jsonc")
    token = DevToken(value="t", generated=False)
    assert with_secrets(config, token).vars["TSUMUGI_TOKEN"] == "t"
    preset = with_secrets(with_secrets(config, DevToken(value="first", generated=False)), token)
    assert preset.vars["TSUMUGI_TOKEN"] == "first"


def test_the_token_is_the_first_workers_own_whatever_the_order() -> None:
    performers = load_config(REPO / "services" / "performers" / "wrangler.jsonc")
    scheduler = load_config(REPO / "services" / "scheduler" / "wrangler.jsonc")
    scheduler = scheduler.with_secrets({"TSUMUGI_TOKEN": "from-dev-vars"})
    # Deploy order puts the performers first; the scheduler's .dev.vars still gives the token.
    assert project_token([performers, scheduler], {"TSUMUGI_TOKEN": "env"}) == DevToken(
        value="from-dev-vars", generated=False
    )
