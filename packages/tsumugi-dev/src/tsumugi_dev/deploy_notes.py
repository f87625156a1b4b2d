"""What a deploy cannot do for the user: secrets to set, resources to create, placeholders to replace.

Secrets are named where wrangler configs in this project name them: in comments (``wrangler secret put NAME``)
and as the keys of the ``.dev.vars`` file (or its ``.dev.vars.example``) next to the config. Placeholders are
the values ``tsumugi dev`` accepts and Cloudflare does not: a D1 ``database_id`` that is not an id (``"local"``)
and ``vars`` that point at this machine.
"""

from __future__ import annotations

import re
from typing import Final

import msgspec

from tsumugi_dev.dev_vars import DEV_VARS_FILE
from tsumugi_dev.raw_config import object_at, objects_at
from tsumugi_dev.worker_source import WorkerSource

__all__ = ["DeployNotes", "deploy_notes"]

_SECRET_PUT: Final = re.compile(r"wrangler secret put ([A-Za-z_][A-Za-z0-9_]*)")
_DEV_VAR: Final = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=", re.MULTILINE)
_D1_ID: Final = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_LOCAL_HOSTS: Final = ("127.0.0.1", "localhost", "0.0.0.0")


class DeployNotes(msgspec.Struct, frozen=True, kw_only=True):
    """One Worker's remaining steps."""

    worker: str
    secrets: tuple[str, ...]
    queues: tuple[str, ...]
    """queues the config sends to or consumes: they must exist (``wrangler queues create``)"""
    placeholder_databases: tuple[str, ...]
    """D1 ``database_name``s whose ``database_id`` is not an id yet"""
    local_vars: tuple[str, ...]
    """``vars`` whose value points at this machine"""

    def blocking(self) -> list[str]:
        """What makes a real deploy fail: a D1 binding without a real id."""
        return [
            f"{self.worker}: d1_databases: database_id of {name!r} is a placeholder; create the database "
            f"(`wrangler d1 create {name}`) and put the id it prints in database_id"
            for name in self.placeholder_databases
        ]

    def lines(self) -> list[str]:
        """What to do, one step a line."""
        out = self.blocking()
        out += [f"{self.worker}: queue {q!r} must exist: `wrangler queues create {q}`" for q in self.queues]
        out += [
            f"{self.worker}: secret {name}: `wrangler secret put {name} --name {self.worker}`"
            for name in self.secrets
        ]
        out += [
            f"{self.worker}: vars.{name} points at this machine; set the production value before relying on it"
            for name in self.local_vars
        ]
        return out


def _secret_names(source: WorkerSource) -> tuple[str, ...]:
    names = dict.fromkeys(_SECRET_PUT.findall(source.raw_text))
    for file_name in (DEV_VARS_FILE, f"{DEV_VARS_FILE}.example"):
        path = source.directory / file_name
        if path.is_file():
            names.update(dict.fromkeys(_DEV_VAR.findall(path.read_text())))
    return tuple(names)


def deploy_notes(source: WorkerSource) -> DeployNotes:
    """The steps left for the Worker of ``source``."""
    raw = source.raw
    queues_raw = object_at(raw, "queues")
    queues: dict[str, None] = {}
    for entry in objects_at(queues_raw, "producers") + objects_at(queues_raw, "consumers"):
        if isinstance(entry.get("queue"), str):
            queues[entry["queue"]] = None
    placeholders = [
        str(db.get("database_name") or db.get("binding"))
        for db in objects_at(raw, "d1_databases")
        if not _D1_ID.match(str(db.get("database_id", "")))
    ]
    local_vars = [
        name
        for name, value in object_at(raw, "vars").items()
        if isinstance(value, str) and any(host in value for host in _LOCAL_HOSTS)
    ]
    return DeployNotes(
        worker=source.name,
        secrets=_secret_names(source),
        queues=tuple(queues),
        placeholder_databases=tuple(placeholders),
        local_vars=tuple(local_vars),
    )
