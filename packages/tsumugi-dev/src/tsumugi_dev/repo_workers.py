"""What ``tsumugi dev`` runs with no arguments at the root of this repository, and the API token it injects.

The repository root has no wrangler config of its own; its Workers are the scheduler (first, so it gets the
first port: http://127.0.0.1:8787), the example performers and the producer example. The scheduler's REST API
reads the ``TSUMUGI_TOKEN`` secret; locally it comes from the environment, or a generated one is printed.

Wiring (in ``cli._load``, when no CONFIG is given and the current folder has no wrangler config)::

    paths = repo_worker_configs(Path.cwd())
    configs = [with_secrets(load_config(p), token) for p in paths]   # token = dev_token(os.environ)
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import msgspec

from tsumugi_dev.config import WorkerConfig

__all__ = ["REPO_WORKER_CONFIGS", "TOKEN_VAR", "DevToken", "dev_token", "repo_worker_configs", "with_secrets"]

REPO_WORKER_CONFIGS: Final = (
    "services/scheduler/wrangler.jsonc",
    "services/performers/wrangler.jsonc",
    "services/performers/producer/wrangler.jsonc",
)
"""This repository's Workers, scheduler first."""
TOKEN_VAR: Final = "TSUMUGI_TOKEN"
"""The scheduler's bearer-token secret."""


class DevToken(msgspec.Struct, frozen=True, kw_only=True):
    """The API token for this run, and whether it was generated (then it must be printed)."""

    value: str
    generated: bool


def repo_worker_configs(root: Path) -> list[Path]:
    """The repository's Worker configs when ``root`` is this repository's root, else an empty list."""
    paths = [root / relative for relative in REPO_WORKER_CONFIGS]
    return paths if all(p.is_file() for p in paths) else []


def dev_token(environ: Mapping[str, str]) -> DevToken:
    """``TSUMUGI_TOKEN`` from the environment, or a fresh random one."""
    given = environ.get(TOKEN_VAR, "").strip()
    if given:
        return DevToken(value=given, generated=False)
    return DevToken(value=secrets.token_urlsafe(24), generated=True)


def with_secrets(config: WorkerConfig, token: DevToken) -> WorkerConfig:
    """``config`` with the token as a var (as ``wrangler dev`` does with ``.dev.vars``); explicit vars win."""
    if TOKEN_VAR in config.vars:
        return config
    return msgspec.structs.replace(config, vars={**config.vars, TOKEN_VAR: token.value})
