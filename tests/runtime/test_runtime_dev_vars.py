# pyright: reportArgumentType=false, reportGeneralTypeIssues=false, reportAttributeAccessIssue=false, reportCallIssue=false
# (The SDK's annotations are narrower than its behaviour: str methods, awaitable wrapper results.)
"""Local secrets: ``.dev.vars`` next to a wrangler config, as ``wrangler dev`` reads it, and the dev token."""

from __future__ import annotations

import doctest
import shutil
from pathlib import Path

import pytest

from tsumugi_dev import dev_vars
from tsumugi_dev.api_token import TOKEN_VAR, DevToken, project_token, with_secrets
from tsumugi_dev.cli import main
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.config import ConfigError, load_config
from tsumugi_dev.dev_vars import DevVarsError, parse_dev_vars
from tsumugi_dev.runtime import LocalRuntime

FIXTURE = Path(__file__).parent / "fixtures" / "secrets"


def test_the_dev_vars_format() -> None:
    text = "\n".join(
        [
            "# a comment",
            "",
            "A=plain value  # comment",
            "export B = 'single #quoted \\n literal'",
            'C="line\\nbreak \\"quoted\\" \\\\"  # comment',
            "D=",
            "E=url#fragment",
            "A=last wins",
        ]
    )
    assert parse_dev_vars(text) == {
        "A": "last wins",
        "B": "single #quoted \\n literal",
        "C": 'line\nbreak "quoted" \\',
        "D": "",
        "E": "url#fragment",
    }


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        ("JUST_A_WORD", "expected KEY=VALUE"),
        ("1KEY=x", "must be letters, digits and underscores"),
        ("MY-KEY=x", "must be letters, digits and underscores"),
        ('K="open', "does not close on the same line"),
        ("K='a' b", "only a # comment may follow a quoted value"),
        ('K="\\q"', "unknown escape"),
    ],
)
def test_bad_lines_name_the_file_line_and_rule(line: str, rule: str) -> None:
    with pytest.raises(DevVarsError, match=rf"^here/.dev.vars:2: .*{rule}"):
        parse_dev_vars(f"OK=1\n{line}\n", "here/.dev.vars")


def test_the_module_examples_hold() -> None:
    assert doctest.testmod(dev_vars).failed == 0


def test_load_config_puts_dev_vars_over_vars_and_names_the_secrets() -> None:
    config = load_config(FIXTURE / "wrangler.toml")
    assert config.vars == {"GREETING": "from .dev.vars", "PLAIN": "kept", "API_KEY": "k-123"}
    assert config.secret_names == ("API_KEY", "GREETING")


def test_a_bad_dev_vars_file_is_a_config_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(FIXTURE, tmp_path / "w")
    (tmp_path / "w" / ".dev.vars").write_text("GOOD=1\nnot a line\n")
    with pytest.raises(ConfigError, match=r"\.dev\.vars:2: expected KEY=VALUE"):
        load_config(tmp_path / "w" / "wrangler.toml")
    with pytest.raises(SystemExit) as exited:
        main(["dev", str(tmp_path / "w" / "wrangler.toml")])
    assert exited.value.code == 2
    assert ".dev.vars:2: expected KEY=VALUE" in capsys.readouterr().err


async def test_the_worker_sees_its_secrets_in_env(tmp_path: Path) -> None:
    async with LocalRuntime([FIXTURE / "wrangler.toml"], data_dir=tmp_path, clock=VirtualClock()) as runtime:
        response = await runtime.fetch("secrets", "http://local/")
        assert await response.json() == {"greeting": "from .dev.vars", "plain": "kept", "key": "k-123"}


def test_the_project_token_prefers_the_schedulers_own_secret() -> None:
    config = load_config(FIXTURE / "wrangler.toml")
    from_file = config.with_secrets({TOKEN_VAR: " s3cret "})
    assert project_token([from_file], {TOKEN_VAR: "env"}) == DevToken(value="s3cret", generated=False)
    assert project_token([config], {TOKEN_VAR: "env"}) == DevToken(value="env", generated=False)
    generated = project_token([config], {})
    assert generated.generated


def test_with_secrets_adds_the_token_as_a_secret_unless_one_is_set() -> None:
    config = load_config(FIXTURE / "wrangler.toml")
    added = with_secrets(config, DevToken(value="t", generated=True))
    assert added.vars[TOKEN_VAR] == "t"
    assert TOKEN_VAR in added.secret_names
    kept = with_secrets(config.with_secrets({TOKEN_VAR: "mine"}), DevToken(value="t", generated=True))
    assert kept.vars[TOKEN_VAR] == "mine"
