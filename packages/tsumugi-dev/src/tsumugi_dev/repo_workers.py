"""What ``tsumugi dev`` runs with no arguments at the root of this repository, and the API token it injects.

The repository root has no wrangler config of its own; its Workers are the scheduler (first, so it gets the
first port: http://127.0.0.1:8787), the example performers and the producer example. The scheduler's REST API
reads the ``TSUMUGI_TOKEN`` secret. Like every secret it may come from ``services/scheduler/.dev.vars``
(``tsumugi_dev.dev_vars``); otherwise from the environment, or a generated one is printed.

Wiring (in ``cli._load``, when no CONFIG is given and the current folder has no wrangler config)::

    configs = [load_config(p) for p in repo_worker_configs(Path.cwd())]
    token = repo_token(configs, os.environ)
    configs = [with_secrets(c, token) for c in configs]
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

import msgspec

from tsumugi_dev.config import WorkerConfig

__all__ = [
    "REPO_WORKER_CONFIGS",
    "TOKEN_VAR",
    "DevToken",
    "dev_token",
    "repo_token",
    "repo_worker_configs",
    "with_secrets",
]

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


def repo_token(configs: Sequence[WorkerConfig], environ: Mapping[str, str]) -> DevToken:
    """The token for this run: the scheduler's own (``vars`` or ``.dev.vars``), else ``dev_token(environ)``.

    ``configs[0]`` is the scheduler (``REPO_WORKER_CONFIGS`` order).
    """
    preset = configs[0].vars.get(TOKEN_VAR) if configs else None
    if isinstance(preset, str) and preset.strip():
        return DevToken(value=preset.strip(), generated=False)
    return dev_token(environ)


def with_secrets(config: WorkerConfig, token: DevToken) -> WorkerConfig:
    """``config`` with the token as a secret, as if its ``.dev.vars`` held it; a token already set wins."""
    if TOKEN_VAR in config.vars:
        return config
    return config.with_secrets({TOKEN_VAR: token.value})
