"""The REST API token ``tsumugi dev`` injects when it runs a project's Workers (``[tool.tsumugi].workers``).

The scheduler's REST API reads the ``TSUMUGI_TOKEN`` secret. Like every secret it may come from the
scheduler's ``.dev.vars`` (``tsumugi_dev.dev_vars``); otherwise from the environment, or a generated one is
printed. Wiring (in ``cli._load``, when no CONFIG is given)::

    configs = [load_config(p) for p in project_worker_configs(Path.cwd())]
    token = project_token(configs, os.environ)
    configs = [with_secrets(c, token) for c in configs]
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from typing import Final

import msgspec

from tsumugi_dev.config import WorkerConfig

__all__ = ["TOKEN_VAR", "DevToken", "dev_token", "project_token", "with_secrets"]

TOKEN_VAR: Final = "TSUMUGI_TOKEN"
"""The scheduler's bearer-token secret."""


class DevToken(msgspec.Struct, frozen=True, kw_only=True):
    """The API token for this run, and whether it was generated (then it must be printed)."""

    value: str
    generated: bool


def dev_token(environ: Mapping[str, str]) -> DevToken:
    """``TSUMUGI_TOKEN`` from the environment, or a fresh random one."""
    given = environ.get(TOKEN_VAR, "").strip()
    if given:
        return DevToken(value=given, generated=False)
    return DevToken(value=secrets.token_urlsafe(24), generated=True)


def project_token(configs: Sequence[WorkerConfig], environ: Mapping[str, str]) -> DevToken:
    """The token for this run: the first Worker's own (``vars`` or ``.dev.vars``), else ``dev_token(environ)``.

    The first Worker that sets ``TSUMUGI_TOKEN`` itself is the scheduler (the only Worker that reads it).
    """
    for config in configs:
        preset = config.vars.get(TOKEN_VAR)
        if isinstance(preset, str) and preset.strip():
            return DevToken(value=preset.strip(), generated=False)
    return dev_token(environ)


def with_secrets(config: WorkerConfig, token: DevToken) -> WorkerConfig:
    """``config`` with the token as a secret, as if its ``.dev.vars`` held it; a token already set wins."""
    if TOKEN_VAR in config.vars:
        return config
    return config.with_secrets({TOKEN_VAR: token.value})
