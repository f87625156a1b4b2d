"""The REST API token ``tsumugi dev`` injects when it runs a project's Workers (``[tool.tsumugi].workers``).

The scheduler's REST API reads the ``TSUMUGI_TOKEN`` secret. Like every secret it may come from the
scheduler's ``.dev.vars`` (``tsumugi_dev.dev_vars``); otherwise from the environment; otherwise it is the one
kept in the data folder (``<data dir>/api-token``, mode 0600), generated at the first run, so the exported
token and a signed-in dashboard keep working across restarts (issue 11). Only the scheduler (the project's
first Worker) gets it: the performer and producer Workers never read it (issue 15 item 9). Wiring (in
``cli._load``, when no CONFIG is given)::

    configs = [load_config(p) for p in project_worker_configs(Path.cwd())]
    token = project_token(configs, os.environ, data_dir)
    configs = with_scheduler_token(configs, token)
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

import msgspec

from tsumugi_dev.config import WorkerConfig
from tsumugi_dev.private_files import private_dir

__all__ = [
    "TOKEN_FILE",
    "TOKEN_VAR",
    "DevToken",
    "dev_token",
    "project_token",
    "with_scheduler_token",
    "with_secrets",
]

TOKEN_VAR: Final = "TSUMUGI_TOKEN"
"""The scheduler's bearer-token secret."""
TOKEN_FILE: Final = "api-token"
"""The file in the data folder that keeps the generated token."""


class DevToken(msgspec.Struct, frozen=True, kw_only=True):
    """The API token for this run: whether it was generated now, and the file that keeps it (then print it)."""

    value: str
    generated: bool
    kept_in: Path | None = None


def _kept_token(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return text or None


def _keep_token(path: Path, value: str) -> None:
    private_dir(path.parent)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(value + "\n")
    path.chmod(0o600)


def dev_token(environ: Mapping[str, str], data_dir: Path | None = None) -> DevToken:
    """``TSUMUGI_TOKEN`` from the environment, else the one kept in ``data_dir``, else a fresh random one.

    A fresh token is written to ``data_dir/api-token`` (0600) when a data folder is given, so the next run
    reuses it; delete the file to get a new one.
    """
    given = environ.get(TOKEN_VAR, "").strip()
    if given:
        return DevToken(value=given, generated=False)
    if data_dir is None:
        return DevToken(value=secrets.token_urlsafe(24), generated=True)
    path = data_dir / TOKEN_FILE
    kept = _kept_token(path)
    if kept is not None:
        return DevToken(value=kept, generated=False, kept_in=path)
    value = secrets.token_urlsafe(24)
    _keep_token(path, value)
    return DevToken(value=value, generated=True, kept_in=path)


def project_token(
    configs: Sequence[WorkerConfig], environ: Mapping[str, str], data_dir: Path | None = None
) -> DevToken:
    """The token for this run: the first Worker's own (``vars`` or ``.dev.vars``), else `dev_token`.

    The first Worker that sets ``TSUMUGI_TOKEN`` itself is the scheduler (the only Worker that reads it).
    """
    for config in configs:
        preset = config.vars.get(TOKEN_VAR)
        if isinstance(preset, str) and preset.strip():
            return DevToken(value=preset.strip(), generated=False)
    return dev_token(environ, data_dir)


def with_scheduler_token(configs: Sequence[WorkerConfig], token: DevToken) -> list[WorkerConfig]:
    """``configs`` with the token given to the scheduler only: the project's first Worker (ADR-0049 order)."""
    return [with_secrets(config, token) if index == 0 else config for index, config in enumerate(configs)]


def with_secrets(config: WorkerConfig, token: DevToken) -> WorkerConfig:
    """``config`` with the token as a secret, as if its ``.dev.vars`` held it; a token already set wins."""
    if TOKEN_VAR in config.vars:
        return config
    return config.with_secrets({TOKEN_VAR: token.value})
