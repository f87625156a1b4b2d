"""A field wrangler does not know in a Worker's config is warned of, not ignored in silence (ADR-0182).

The tables of known fields are checked against the pinned wrangler in tests/deploy/test_wrangler_fields.py.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tsumugi_dev.cli import main
from tsumugi_dev.config import load_config
from tsumugi_dev.runtime import LocalRuntime
from tsumugi_dev.wrangler_fields import UnexpectedField, unexpected_fields

BASE = '"name": "w", "main": "entry.py", "compatibility_date": "2026-01-01"'

TYPOS_JSONC = (
    "{" + BASE + ",\n"
    ' "compatiblity_date": "2026-01-01",\n'
    ' "durable_object": {"bindings": []},\n'
    ' "durable_objects": {"bindings": [{"name": "A", "class_name": "A", "script": "x"}]},\n'
    ' "migrations": [{"tag": "v1", "new_sqlite_classes": ["A"], "new_sqlite_class": ["B"]}],\n'
    ' "queues": {"consumers": [{"queue": "q", "max_batch_timout": 1}], "producer": []},\n'
    ' "crons": ["* * * * *"],\n'
    ' "limits": {"subrequest": 5},\n'
    "}"
)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_each_unknown_field_is_named_with_its_file_place_and_the_field_meant(tmp_path: Path) -> None:
    path = _write(tmp_path, "wrangler.jsonc", TYPOS_JSONC)
    config = load_config(path)
    tail = ": wrangler does not know it, and the local runtime ignores it"
    assert config.warnings == (
        f'{path}: unexpected field "compatiblity_date" at the top level (did you mean "compatibility_date"?)'
        + tail,
        f'{path}: unexpected field "durable_object" at the top level (did you mean "durable_objects"?)'
        + tail,
        f'{path}: unexpected field "crons" at the top level (did you mean "triggers.crons"?)' + tail,
        f'{path}: unexpected field "script" in durable_objects.bindings[0]' + tail,
        f'{path}: unexpected field "new_sqlite_class" in migrations[0] (did you mean "new_sqlite_classes"?)'
        + tail,
        f'{path}: unexpected field "producer" in queues (did you mean "producers"?)' + tail,
        f'{path}: unexpected field "max_batch_timout" in queues.consumers[0] (did you mean "max_batch_timeout"?)'
        + tail,
        f'{path}: unexpected field "subrequest" in limits (did you mean "subrequests"?)' + tail,
    )
    # Still a warning only: the config loads, without what the misspelt fields meant.
    assert config.crons == ()
    assert config.queue_consumers[0].max_batch_timeout == 5


def test_a_toml_config_is_checked_the_same_way(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "wrangler.toml",
        'name = "w"\nmain = "entry.py"\ncompatibilityDate = "2026-01-01"\n'
        '[[d1_databases]]\nbinding = "DB"\ndatabase_name = "d"\nmigration_dir = "m"\n',
    )
    assert [w.split(": wrangler")[0] for w in load_config(path).warnings] == [
        f'{path}: unexpected field "compatibilityDate" at the top level (did you mean "compatibility_date"?)',
        f'{path}: unexpected field "migration_dir" in d1_databases[0] (did you mean "migrations_dir"?)',
    ]


def test_fields_wrangler_knows_are_not_unknown_though_the_runtime_does_not_emulate_them(
    tmp_path: Path,
) -> None:
    path = _write(
        tmp_path,
        "wrangler.jsonc",
        "{" + BASE + ', "$schema": "node_modules/wrangler/config-schema.json", "workers_dev": false,'
        ' "kv_namespaces": [{"binding": "KV", "id": "x"}], "observability": {"enabled": true},'
        ' "cache": {"enabled": true}, "vars": {"ANY_NAME": 1}, "env": {"staging": {"anything": 1}},'
        ' "queues": {"consumers": [{"queue": "q", "type": "worker", "visibility_timeout_ms": 10}]},'
        ' "migrations": [{"tag": "v1", "transferred_classes": [], "deleted_classes": []}],'
        ' "services": [{"binding": "S", "service": "s", "props": {"x": 1}, "remote": false}],'
        ' "limits": {"cpu_ms": 100}}',
    )
    assert load_config(path).warnings == ()


def test_a_section_of_another_shape_is_left_to_the_loader() -> None:
    # The loader refuses a wrong shape with its own message; the check looks only into objects.
    shapes = {
        "name": "w",
        "queues": [1],
        "durable_objects": {"bindings": "x"},
        "d1_databases": [7, {"bindng": 1}],
    }
    assert unexpected_fields(shapes) == [
        UnexpectedField(where="d1_databases[1]", field="bindng", meant="binding")
    ]


def test_tsumugi_dev_prints_each_warning_before_it_starts(tmp_path: Path, capsys) -> None:
    typo = _write(tmp_path, "wrangler.jsonc", "{" + BASE + ', "triggers": {"cron": []}}')
    other = _write(tmp_path, "other.jsonc", '{"name": "other", "main": "entry.py"}')
    # Two Workers from the last port: refused for want of a second port, after the configs are read.
    with pytest.raises(SystemExit) as exited:
        main(["dev", str(typo), str(other), "--data-dir", str(tmp_path / "data"), "--port", "65535"])
    assert exited.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (
        f'tsumugi dev: warning: {typo.resolve()}: unexpected field "cron" in triggers (did you mean "crons"?): '
        "wrangler does not know it, and the local runtime ignores it"
    )
    assert "leaves no port" in err[1]


def test_a_runtime_given_config_paths_logs_their_warnings(tmp_path: Path, caplog) -> None:
    path = _write(tmp_path, "wrangler.jsonc", "{" + BASE + ', "servcies": []}')
    with caplog.at_level(logging.WARNING, logger="tsumugi_dev"):
        LocalRuntime([path], data_dir=tmp_path / "data")
    assert [r.getMessage() for r in caplog.records] == list(load_config(path).warnings)
    assert '"servcies" at the top level (did you mean "services"?)' in caplog.records[0].getMessage()
