"""What the deploy tells the user to set: secrets, queues, placeholder ids, local vars."""

from __future__ import annotations

from pathlib import Path

from tsumugi_dev.deploy_notes import deploy_notes
from tsumugi_dev.worker_source import read_worker_source

ROOT = Path(__file__).resolve().parents[3]


def test_the_scheduler_needs_its_secrets_its_queue_and_a_database_id() -> None:
    notes = deploy_notes(read_worker_source(ROOT / "services" / "scheduler" / "wrangler.jsonc"))
    assert notes.secrets == ("TSUMUGI_TOKEN", "CF_ACCOUNT_ID", "CF_API_TOKEN")
    assert notes.queues == ("tsumugi",)
    assert notes.placeholder_databases == ("tsumugi",)
    assert notes.blocking() == [
        "tsumugi-scheduler: d1_databases: database_id of 'tsumugi' is a placeholder; create the database "
        "(`wrangler d1 create tsumugi`) and put the id it prints in database_id"
    ]


def test_the_performers_mail_api_still_points_at_this_machine() -> None:
    notes = deploy_notes(read_worker_source(ROOT / "services" / "performers" / "wrangler.jsonc"))
    assert notes.local_vars == ("MAIL_API_URL",)
    assert notes.blocking() == []


def test_dev_vars_keys_are_secrets_too(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "entry.py").write_text("")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "w"\nversion = "0"\ndependencies = []\n')
    (tmp_path / ".dev.vars").write_text("# local\nAPI_KEY=abc\nexport OTHER = 'x'\n")
    (tmp_path / "wrangler.jsonc").write_text(
        '{"name": "w", "main": "src/entry.py", "compatibility_flags": ["python_workers"],'
        ' "d1_databases": [{"binding": "DB", "database_name": "d", '
        '"database_id": "0b1f5c3e-8d2a-4c6f-9e7b-1a2b3c4d5e6f"}]}'
    )
    notes = deploy_notes(read_worker_source(tmp_path / "wrangler.jsonc"))
    assert notes.secrets == ("API_KEY", "OTHER")
    assert notes.placeholder_databases == ()


def test_the_producer_needs_its_callers_token() -> None:
    # ADR-0066: the example producer is fail-closed without PRODUCER_TOKEN, so the deploy names it.
    notes = deploy_notes(read_worker_source(ROOT / "services" / "performers" / "producer" / "wrangler.jsonc"))
    assert notes.secrets == ("PRODUCER_TOKEN",)
