"""The external programs a deploy runs: wrangler (pinned through npm) and pywrangler (pinned, run by uv) (ADR-0040).

wrangler is looked up as ``node_modules/.bin/wrangler`` from the current folder upward (what ``npm ci`` or
``npm install --save-dev wrangler`` makes), then on ``PATH``. pywrangler runs as
``uv tool run --from workers-py==1.17.9 pywrangler``: never installed into the project's environment, whose
``workers`` module is tsumugi-dev's imitation, which workers-py's dependency workers-runtime-sdk would shadow.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

import msgspec

__all__ = [
    "PYWRANGLER_REQUIREMENT",
    "WRANGLER_REQUIREMENT",
    "WRANGLER_VERSION",
    "DeployTools",
    "ToolMissingError",
    "find_tools",
    "quiet_wrangler_env",
    "run_tool",
    "wrangler_warnings",
]

WRANGLER_VERSION: Final = "4.86.0"
"""The wrangler this repository pins (package.json) and ``tsumugi init`` writes into a project's package.json;
4.86.0 is the newest wrangler 4 that runs on Node.js 20. A test keeps it equal to the root package.json's."""
WRANGLER_REQUIREMENT: Final = f"wrangler@{WRANGLER_VERSION}"
PYWRANGLER_REQUIREMENT: Final = "workers-py==1.17.9"

_QUIET: Final = {
    # wrangler's own switches (packages/wrangler/src/environment-variables/factory.ts): no telemetry, no error
    # reports, and no banner, whose update check asks the npm registry for the latest version.
    "WRANGLER_SEND_METRICS": "false",
    "WRANGLER_SEND_ERROR_REPORTS": "false",
    "WRANGLER_HIDE_BANNER": "true",
}


_ANSI: Final = re.compile(r"\x1b\[[0-9;]*m")
_WARNING: Final = "[WARNING]"
"""How wrangler marks a warning (``▲ [WARNING] text``, esbuild's message format, coloured even in a pipe)."""


class ToolMissingError(RuntimeError):
    """A program the deploy needs is not installed; the message says how to get it."""


class DeployTools(msgspec.Struct, frozen=True, kw_only=True):
    """Command prefixes for wrangler and pywrangler (None: not found)."""

    wrangler: tuple[str, ...] | None
    pywrangler: tuple[str, ...] | None

    def need_wrangler(self) -> tuple[str, ...]:
        """The wrangler command, or ``ToolMissingError`` saying how to install it."""
        if self.wrangler is None:
            raise ToolMissingError(
                "wrangler was not found (looked for node_modules/.bin/wrangler from this folder upward, then "
                "on PATH). Install it with Node.js 20 or newer: `npm install` in a project `tsumugi init` made "
                f"(its package.json pins wrangler), `npm install --save-dev {WRANGLER_REQUIREMENT}` in another "
                "(in this repository: `npm ci`), then run this again"
            )
        return self.wrangler

    def need_pywrangler(self) -> tuple[str, ...]:
        """The pywrangler command, or ``ToolMissingError`` saying how to get uv, which runs it."""
        if self.pywrangler is None:
            raise ToolMissingError(
                "uv was not found on PATH; a real deploy runs pywrangler with it "
                f"(`uv tool run --from {PYWRANGLER_REQUIREMENT} pywrangler sync`) to fetch each Worker's "
                "third-party packages. Install uv (https://docs.astral.sh/uv/), then run this again"
            )
        return self.pywrangler


def _which(name: str, environ: Mapping[str, str]) -> str | None:
    return shutil.which(name, path=environ.get("PATH", os.defpath))


def find_tools(start: Path, environ: Mapping[str, str]) -> DeployTools:
    """Find wrangler (``node_modules/.bin`` from ``start`` upward, then ``PATH``) and uv for pywrangler."""
    wrangler: tuple[str, ...] | None = None
    for folder in (start.resolve(), *start.resolve().parents):
        candidate = folder / "node_modules" / ".bin" / "wrangler"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            wrangler = (str(candidate),)
            break
    if wrangler is None:
        found = _which("wrangler", environ)
        wrangler = (found,) if found else None
    uv = _which("uv", environ)
    pywrangler = (uv, "tool", "run", "--from", PYWRANGLER_REQUIREMENT, "pywrangler") if uv else None
    return DeployTools(wrangler=wrangler, pywrangler=pywrangler)


def quiet_wrangler_env(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with wrangler's telemetry, error reports and update check off (unless set already)."""
    return {**_QUIET, **environ}


def run_tool(
    command: Sequence[str], *, cwd: Path, environ: Mapping[str, str], capture: bool
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` in ``cwd``; with ``capture`` its output (stdout and stderr together) is returned, else it
    goes to the terminal (so wrangler can ask its questions there)."""
    output = subprocess.PIPE if capture else None
    return subprocess.run(
        list(command),
        cwd=cwd,
        env=dict(environ),
        stdout=output,
        stderr=subprocess.STDOUT if capture else None,
        text=True,
        check=False,
    )


def wrangler_warnings(output: str) -> list[str]:
    """The warnings in wrangler's ``output`` (one line each, colours removed), e.g. a duplicate module."""
    lines = (_ANSI.sub("", line).strip() for line in output.splitlines())
    return [line for line in lines if _WARNING in line]
