# pyright: reportArgumentType=false, reportGeneralTypeIssues=false, reportAttributeAccessIssue=false, reportCallIssue=false
# (The SDK's annotations are narrower than its behaviour: str methods, awaitable wrapper results.)
"""``tsumugi dev``'s own surfaces (issue 15 items 6 and 9, issue 11): the kept token, who gets it, private data
files, vars that follow ``--port``, one log line per event, and a mail sink that web pages cannot use."""

from __future__ import annotations

import io
import logging
import stat
from pathlib import Path

import pytest
from workers import Request

from tsumugi_dev import cli
from tsumugi_dev.api_token import TOKEN_FILE, TOKEN_VAR, DevToken, dev_token
from tsumugi_dev.clock import VirtualClock
from tsumugi_dev.config import load_config
from tsumugi_dev.dev_ports import follow_ports, plan_ports
from tsumugi_dev.project import project_worker_configs
from tsumugi_dev.runtime import LocalRuntime
from tsumugi_examples import MailSink

REPO = Path(__file__).resolve().parents[2]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_generated_token_is_kept_0600_in_the_data_folder_and_reused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = dev_token({}, data)
    again = dev_token({}, data)

    assert first == DevToken(value=first.value, generated=True, kept_in=data / TOKEN_FILE)
    assert again == DevToken(value=first.value, generated=False, kept_in=data / TOKEN_FILE)
    assert (data / TOKEN_FILE).read_text() == first.value + "\n"
    assert (_mode(data / TOKEN_FILE), _mode(data)) == (0o600, 0o700)
    assert dev_token({TOKEN_VAR: "from-env"}, data) == DevToken(value="from-env", generated=False)


def test_dev_prints_the_kept_token_and_gives_it_to_the_scheduler_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.delenv(TOKEN_VAR, raising=False)
    configs = cli._load([], tmp_path / "data")  # pyright: ignore[reportPrivateUsage]
    assert configs is not None
    token = (tmp_path / "data" / TOKEN_FILE).read_text().strip()
    printed = capsys.readouterr().out
    assert f"API token: {token} (generated and kept in {tmp_path / 'data' / TOKEN_FILE};" in printed
    assert printed.count(token) == 1

    scheduler, *others = configs
    assert scheduler.vars[TOKEN_VAR] == token
    assert [config.name for config in others] == ["tsumugi-performers", "tsumugi-producer"]
    assert all(TOKEN_VAR not in config.vars for config in others)

    assert cli._load([], tmp_path / "data") is not None  # pyright: ignore[reportPrivateUsage]
    assert (
        f"API token: {token} (kept in {tmp_path / 'data' / TOKEN_FILE}; delete the file for a new one)"
        in capsys.readouterr().out
    )


async def test_every_data_file_is_0600_and_every_folder_0700(runtime: LocalRuntime, tmp_path: Path) -> None:
    response = await runtime.fetch("conformance", "http://127.0.0.1/counter/increment")
    assert response.status == 200
    data = tmp_path / "data"
    files = [p for p in data.rglob("*") if p.is_file()]
    folders = [data, *(p for p in data.rglob("*") if p.is_dir())]

    assert any(p.suffix == ".sqlite" and "do" in p.parts for p in files) or len(files) > 2, files
    assert {p.name: oct(_mode(p)) for p in files if _mode(p) != 0o600} == {}
    assert {str(p): oct(_mode(p)) for p in folders if _mode(p) != 0o700} == {}


def test_vars_pointing_at_a_default_port_follow_the_port_given() -> None:
    configs = [load_config(p) for p in project_worker_configs(REPO)]
    names = [config.name for config in configs]

    moved = [follow_ports(c, plan_ports(names, 9000, lambda: 0)) for c in configs]
    assert moved[1].vars["MAIL_API_URL"] == "http://127.0.0.1:9001/mail"
    assert [follow_ports(c, plan_ports(names, 8787, lambda: 0)) for c in configs] == configs
    free = iter([41001, 41002, 41003])
    assert follow_ports(configs[1], plan_ports(names, 0, lambda: next(free))).vars["MAIL_API_URL"] == (
        "http://127.0.0.1:41002/mail"
    )


def test_a_newline_in_a_mail_subject_cannot_forge_a_log_line() -> None:
    stream = io.StringIO()
    cli.configure_logging(stream)
    try:
        MailSink().post(
            '{"to": "a@example.com", "subject": "hi\\n2026-12-01 00:00:00,000 job X COMPLETED"}', None
        )
    finally:
        logging.getLogger().handlers.clear()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].endswith(
        "mail sink: mail-1 to a@example.com: hi\\n2026-12-01 00:00:00,000 job X COMPLETED"
    )


@pytest.mark.parametrize(
    "headers",
    [{"origin": "http://127.0.0.1:8800"}, {"sec-fetch-site": "same-site"}, {"sec-fetch-site": "cross-site"}],
)
async def test_web_pages_cannot_use_the_mail_sink(
    repo_system: tuple[LocalRuntime, VirtualClock], headers: dict[str, str]
) -> None:
    runtime, _ = repo_system
    body = '{"to": "a@example.com", "subject": "forged"}'
    posted = await runtime.fetch(
        "tsumugi-performers", Request("http://127.0.0.1:8788/mail", method="POST", headers=headers, body=body)
    )
    read = await runtime.fetch("tsumugi-performers", Request("http://127.0.0.1:8788/mail", headers=headers))
    assert (posted.status, read.status) == (403, 403)
    listing = await runtime.fetch("tsumugi-performers", "http://127.0.0.1:8788/mail")
    assert (listing.status, await listing.json()) == (200, {"messages": []})
