"""The repository's default Worker set for ``tsumugi dev`` and its API token."""

from __future__ import annotations

from pathlib import Path

from tsumugi_dev.config import load_config
from tsumugi_dev.repo_workers import DevToken, dev_token, repo_worker_configs, with_secrets

REPO = Path(__file__).resolve().parents[2]


def test_the_repository_root_yields_its_three_workers_scheduler_first(tmp_path: Path) -> None:
    names = [load_config(p).name for p in repo_worker_configs(REPO)]
    assert names == ["tsumugi-scheduler", "tsumugi-performers", "tsumugi-producer"]
    assert repo_worker_configs(tmp_path) == []


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
