"""The fields `tsumugi_dev.wrangler_fields` calls known are the pinned wrangler's (ADR-0182).

Two sources, both from `npm ci`: the schema wrangler ships (node_modules/wrangler/config-schema.json), and
wrangler itself, reading a config through its own reader offline (tests/deploy/wrangler_read_config.mjs).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.deploy_helpers import ROOT
from tsumugi_dev.wrangler_fields import KNOWN_FIELDS, NOT_IN_SCHEMA, unexpected_fields

SCHEMA = ROOT / "node_modules" / "wrangler" / "config-schema.json"
READER = Path(__file__).resolve().parent / "wrangler_read_config.mjs"

WRANGLER_DOES_NOT_LOOK: dict[str, str] = {
    "durable_objects": "its schema allows only `bindings`; its validation checks the bindings, not the object",
    "services[]": "its schema lists the fields; its validation checks types, not unexpected fields",
    "limits": "its schema lists the fields; its validation checks types, not unexpected fields",
}
"""Sections where the schema refuses a field wrangler's validation lets pass without a warning: the local runtime
warns there too, since the field is still one wrangler does not know."""

# One misspelt field in each section the local runtime reads, and each field wrangler accepts beyond its schema.
PROBE: dict[str, Any] = {
    "name": "probe",
    "main": "entry.py",
    "compatibility_date": "2026-01-01",
    "compatibility_flags": ["python_workers"],
    "compatiblity_date": "2026-01-01",
    "durable_object": {},
    "cache": {"enabled": True},
    "configPath": "x",
    "definedEnvironments": [],
    "targetEnvironment": "x",
    "topLevelName": "x",
    "userConfigPath": "x",
    "durable_objects": {"bindings": [{"name": "A", "class_name": "A", "clas": "A"}], "bindigs": []},
    "migrations": [
        {"tag": "v1", "new_sqlite_classes": ["A"], "transferred_classes": [], "new_sqlite_class": []}
    ],
    "queues": {
        "producers": [{"binding": "Q", "queue": "q", "deliver_delay": 1}],
        "consumers": [{"queue": "q", "max_batch_timout": 1}],
        "producer": [],
    },
    "d1_databases": [{"binding": "DB", "database_name": "d", "database_id": "x", "migration_dir": "m"}],
    "analytics_engine_datasets": [{"binding": "AE", "datset": "x"}],
    "services": [{"binding": "S", "service": "s", "entry_point": "X"}],
    "triggers": {"crons": [], "cron": []},
    "limits": {"subrequest": 5},
}


@cache
def _schema() -> dict[str, Any]:
    return json.loads(SCHEMA.read_text())


def _resolved(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = _schema()["definitions"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _schema_fields(section: str) -> set[str]:
    node = _resolved(_schema())
    for step in section.split(".") if section else ():
        name = step.removesuffix("[]")
        node = _resolved(node["properties"][name])
        if step.endswith("[]"):
            node = _resolved(node["items"])
    return set(node["properties"])


@pytest.fixture(scope="module")
def wrangler_read(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    node = shutil.which("node")
    assert node is not None, "node is not on PATH: the wrangler checks need Node.js 20+ (scripts/test.sh)"
    folder = tmp_path_factory.mktemp("wrangler-fields")
    config = folder / "wrangler.json"
    config.write_text(json.dumps(PROBE))
    (folder / "tmp").mkdir()
    done = subprocess.run(
        [node, str(READER), str(config)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "TMPDIR": str(folder / "tmp"), "NO_COLOR": "1"},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("section", sorted(KNOWN_FIELDS))
def test_known_fields_are_the_schemas_and_those_wrangler_accepts_beyond_it(section: str) -> None:
    beyond = NOT_IN_SCHEMA.get(section, frozenset())
    assert KNOWN_FIELDS[section] - beyond == _schema_fields(section)
    assert not beyond & _schema_fields(section), "the schema lists these now: drop them from NOT_IN_SCHEMA"


def test_the_top_level_fields_are_the_ones_wranglers_own_check_knows(wrangler_read: dict[str, Any]) -> None:
    assert KNOWN_FIELDS[""] == {*wrangler_read["fields"], "env", "$schema"}


def test_wrangler_warns_of_the_fields_called_unexpected_here(wrangler_read: dict[str, Any]) -> None:
    ours: dict[str, list[str]] = {}
    silent: dict[str, list[str]] = {}
    for found in unexpected_fields(PROBE):
        section = re.sub(r"\[\d+\]", "[]", found.where)
        # wrangler names the top level "top-level", and each migration's place "migrations", without its index
        place = "migrations" if section == "migrations[]" else found.where or "top-level"
        (silent if section in WRANGLER_DOES_NOT_LOOK else ours).setdefault(place, []).append(found.field)
    assert wrangler_read["unexpected"] == ours
    assert NOT_IN_SCHEMA[""] <= PROBE.keys()  # and none of them was unexpected to wrangler
    assert silent == {
        "durable_objects": ["bindigs"],
        "services[0]": ["entry_point"],
        "limits": ["subrequest"],
    }
    # What wrangler tried to fetch (refused): its version check, which runs when a field is unexpected.
    assert wrangler_read["requests"] == ["registry.npmjs.org/wrangler"]
