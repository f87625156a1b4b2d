"""A project shaped as ``tsumugi init`` makes one: three Worker folders, each with wrangler.jsonc, pyproject.toml
(Tsumugi's packages pinned by version, nothing from this repository's paths) and src/entry.py."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKERS = ("scheduler/wrangler.jsonc", "performers/wrangler.jsonc", "producer/wrangler.jsonc")
D1_ID = "0b1f5c3e-8d2a-4c6f-9e7b-1a2b3c4d5e6f"

PERFORMERS_ENTRY = """\
from workers import WorkerEntrypoint

from tsumugi_performer.entrypoint import performer_entrypoint

from thumbnails import Thumbnail as ThumbnailPerformer

Thumbnail = performer_entrypoint(WorkerEntrypoint, ThumbnailPerformer)


class Default(WorkerEntrypoint):
    async def fetch(self, request):
        return None
"""
PERFORMERS_MODULE = """\
import msgspec

from tsumugi_performer import JobContext, Performer


class ThumbnailPayload(msgspec.Struct, frozen=True, kw_only=True):
    url: str


class Thumbnail(Performer[ThumbnailPayload, str]):
    async def perform(self, payload: ThumbnailPayload, ctx: JobContext) -> str:
        return payload.url
"""


def _pyproject(name: str, dependency: str) -> str:
    pin = f"{dependency}=={metadata.version(dependency)}"
    return f'[project]\nname = "{name}"\nversion = "0.1.0"\nrequires-python = ">=3.11"\ndependencies = ["{pin}"]\n'


def _config(**fields: object) -> str:
    base = {
        "$schema": "../node_modules/wrangler/config-schema.json",
        "main": "src/entry.py",
        "compatibility_date": "2026-07-01",
        "compatibility_flags": ["python_workers"],
    }
    return "// made like `tsumugi init` makes it\n" + json.dumps({**base, **fields}, indent=2) + "\n"


def make_init_project(root: Path, *, database_id: str = "local") -> list[Path]:
    """Write the project under ``root``; returns its three configs, scheduler first (the init order)."""
    (root / "pyproject.toml").write_text(
        '[project]\nname = "my-jobs"\nversion = "0.1.0"\n\n[tool.tsumugi]\nworkers = '
        + json.dumps(list(WORKERS))
        + "\n"
    )
    scheduler = root / "scheduler"
    (scheduler / "src").mkdir(parents=True)
    (scheduler / "migrations").mkdir()
    (scheduler / "migrations" / "0001_init.sql").write_text("CREATE TABLE t (id INTEGER PRIMARY KEY);\n")
    (scheduler / "src" / "entry.py").write_text((ROOT / "services/scheduler/src/entry.py").read_text())
    (scheduler / "pyproject.toml").write_text(_pyproject("my-jobs-scheduler", "tsumugi-scheduler"))
    (scheduler / ".dev.vars.example").write_text("TSUMUGI_TOKEN=change-me\n")
    (scheduler / "wrangler.jsonc").write_text(
        _config(
            name="my-jobs-scheduler",
            durable_objects={"bindings": [{"name": "JOB_SHARD", "class_name": "TsumugiJobShard"}]},
            migrations=[{"tag": "v1", "new_sqlite_classes": ["TsumugiJobShard"]}],
            d1_databases=[
                {
                    "binding": "TSUMUGI_DB",
                    "database_name": "my-jobs",
                    "database_id": database_id,
                    "migrations_dir": "migrations",
                }
            ],
            queues={
                "producers": [{"binding": "TSUMUGI_QUEUE", "queue": "my-jobs"}],
                "consumers": [{"queue": "my-jobs", "max_batch_size": 100}],
            },
            analytics_engine_datasets=[{"binding": "TSUMUGI_METRICS", "dataset": "my_jobs_metrics"}],
            services=[{"binding": "Thumbnail", "service": "my-jobs-performers", "entrypoint": "Thumbnail"}],
        )
    )
    performers = root / "performers"
    (performers / "src").mkdir(parents=True)
    (performers / "src" / "entry.py").write_text(PERFORMERS_ENTRY)
    (performers / "src" / "thumbnails.py").write_text(PERFORMERS_MODULE)
    (performers / "pyproject.toml").write_text(_pyproject("my-jobs-performers", "tsumugi-performer"))
    (performers / "wrangler.jsonc").write_text(_config(name="my-jobs-performers"))
    producer = root / "producer"
    (producer / "src").mkdir(parents=True)
    (producer / "src" / "entry.py").write_text(
        (ROOT / "services/performers/producer/src/entry.py").read_text()
    )
    (producer / "pyproject.toml").write_text(_pyproject("my-jobs-producer", "tsumugi-client"))
    (producer / "wrangler.jsonc").write_text(
        _config(
            name="my-jobs-producer",
            services=[{"binding": "TSUMUGI", "service": "my-jobs-scheduler", "entrypoint": "TsumugiRpc"}],
        )
    )
    return [root / worker for worker in WORKERS]
