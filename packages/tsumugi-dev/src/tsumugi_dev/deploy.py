"""``tsumugi deploy [CONFIG ...] [--dry-run] [--out DIR]``: build each Worker's upload and deploy them in order.

For each Worker, in dependency order (``deploy_order``): build its upload (``upload_build``), check its
third-party pins against Pyodide 0.28 (``pyodide_pins``); then either ``wrangler deploy --dry-run`` (nothing
leaves this machine) or, for real, ``pywrangler sync``, ``wrangler d1 migrations apply --remote`` for each D1
database with migrations, and ``wrangler deploy``. Last, what the user must still do (``deploy_notes``).
Exit status: 0 done, 1 a wrangler or pywrangler command failed, 2 bad configs or a missing tool. ADR-0040.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final, TextIO

from tsumugi_dev.config import ConfigError, find_configs
from tsumugi_dev.deploy_notes import DeployNotes, deploy_notes
from tsumugi_dev.deploy_order import bound_services, deploy_order
from tsumugi_dev.deploy_tools import (
    DeployTools,
    ToolMissingError,
    find_tools,
    quiet_wrangler_env,
    run_tool,
    wrangler_warnings,
)
from tsumugi_dev.project import project_worker_configs
from tsumugi_dev.pyodide_pins import pin_problems
from tsumugi_dev.raw_config import object_at, objects_at
from tsumugi_dev.sdk_pin import sdk_line
from tsumugi_dev.upload_build import UploadBuild, build_upload
from tsumugi_dev.upload_check import refuse_incomplete_upload
from tsumugi_dev.worker_source import DeployError, WorkerSource, read_worker_source

__all__ = ["DEFAULT_OUT", "EXIT_FAILED", "EXIT_USAGE", "default_deploy_configs", "run_deploy"]

DEFAULT_OUT: Final = Path(".tsumugi/build")
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2
_PYWRANGLER_UNSET: Final = ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")
"""Our environment's variables that would point pywrangler's uv at the wrong virtualenv."""


def default_deploy_configs(cwd: Path) -> list[Path]:
    """The Workers deployed when no CONFIG is given: the config in ``cwd``, else those its project lists.

    A project (an init'ed one, or this repository) lists them in ``[tool.tsumugi] workers`` of its
    ``pyproject.toml``; a bad list raises ``ProjectConfigError`` naming the file, the field and the rule.
    """
    return find_configs(cwd) or project_worker_configs(cwd)


def _sources(paths: Sequence[Path]) -> list[WorkerSource]:
    sources = [read_worker_source(path) for path in paths]
    by_name = {source.name: source for source in sources}
    if len(by_name) != len(sources):
        names = [source.name for source in sources]
        raise DeployError(
            f"name: {sorted({n for n in names if names.count(n) > 1})} named by several configs"
        )
    order = deploy_order({source.name: bound_services(source.raw) for source in sources})
    return [by_name[name] for name in order]


class _Deploy:
    def __init__(self, tools: DeployTools, environ: Mapping[str, str], out: TextIO) -> None:
        self.tools = tools
        self.environ = quiet_wrangler_env(environ)
        self.out = out

    def say(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    def describe(self, build: UploadBuild, position: str) -> None:
        vendored = sorted({f"{p.distribution} {p.version}" for p in build.resolution.vendored})
        fetched = [r.text for r in build.resolution.third_party]
        self.say(f"{position} {build.source.name} ({build.source.config_path})")
        self.say(
            f"  upload: {build.folder} ({len(build.modules.modules) + 1} modules besides python_modules/)"
        )
        self.say(f"  vendored: {', '.join(vendored) or 'nothing'}")
        self.say(f"  from pywrangler (Pyodide 0.28 / PyPI): {', '.join(fetched) or 'nothing'}")
        self.say(sdk_line(build.folder / "pyproject.toml"))
        if build.data_rule is not None:
            self.say(f"  added a Text rule for package data: {', '.join(build.data_rule.globs)}")

    def wrangler(self, build: UploadBuild, *args: str, capture: bool) -> subprocess.CompletedProcess[str]:
        command = (*self.tools.need_wrangler(), *args, "--config", build.config.name)
        result = run_tool(command, cwd=build.folder, environ=self.environ, capture=capture)
        if result.returncode != 0:
            if capture:
                self.say(result.stdout.rstrip())
            self.say(f"  FAILED: {' '.join(args)} (exit {result.returncode})")
        return result

    def dry_run(self, build: UploadBuild) -> int:
        result = self.wrangler(build, "deploy", "--dry-run", "--outdir", "dist", capture=True)
        if result.returncode != 0:
            return result.returncode
        # A dry run that passes can still upload something else than meant: wrangler's warnings say so.
        for warning in wrangler_warnings(result.stdout):
            self.say(f"  wrangler: {warning}")
        self.say(f"  wrangler deploy --dry-run: ok (upload written to {build.folder / 'dist'})")
        return 0

    def deploy(self, build: UploadBuild) -> int:
        environ = {k: v for k, v in self.environ.items() if k not in _PYWRANGLER_UNSET}
        self.say(f"  pywrangler sync (in {build.folder})")
        result = run_tool(
            (*self.tools.need_pywrangler(), "sync"), cwd=build.folder, environ=environ, capture=False
        )
        if result.returncode != 0:
            self.say(f"  FAILED: pywrangler sync (exit {result.returncode})")
            return result.returncode
        for database in _migrated_databases(build):
            self.say(f"  wrangler d1 migrations apply {database} --remote")
            result = self.wrangler(build, "d1", "migrations", "apply", database, "--remote", capture=False)
            if result.returncode != 0:
                return result.returncode
        self.say("  wrangler deploy")
        return self.wrangler(build, "deploy", capture=False).returncode


def _migrated_databases(build: UploadBuild) -> list[str]:
    """The D1 databases of the generated config that have a migrations folder, by ``database_name``."""
    generated = object_at({"config": json.loads(build.config.read_text())}, "config")
    return [
        database["database_name"]
        for database in objects_at(generated, "d1_databases")
        if "migrations_dir" in database and isinstance(database.get("database_name"), str)
    ]


def _print_notes(notes: Sequence[DeployNotes], say: Callable[[str], None], *, dry_run: bool) -> None:
    lines = [line for note in notes for line in note.lines()]
    if lines:
        say("Before the system works on Cloudflare:" if dry_run else "Still to set:")
        for line in lines:
            say(f"  - {line}")


def _build_all(sources: Sequence[WorkerSource], out: Path) -> list[UploadBuild]:
    """Every upload, built and checked before any command runs (a bad last Worker stops the first too)."""
    builds: list[UploadBuild] = []
    for source in sources:
        build = build_upload(source, out)
        problems = pin_problems(build.resolution.third_party)
        if problems:
            raise DeployError(f"{source.pyproject}: " + "; ".join(problems))
        refuse_incomplete_upload(build)
        builds.append(build)
    return builds


def run_deploy(
    paths: Sequence[Path],
    *,
    dry_run: bool,
    out_dir: Path = DEFAULT_OUT,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Build and deploy (or dry-run) the Workers of ``paths`` (default: ``default_deploy_configs``)."""
    cwd = cwd or Path.cwd()
    environ = environ if environ is not None else dict(os.environ)
    out, err = stdout or sys.stdout, stderr or sys.stderr
    try:
        paths = list(paths) or default_deploy_configs(cwd)
    except ConfigError as exc:
        print(f"tsumugi deploy: {exc}", file=err)
        return EXIT_USAGE
    if not paths:
        print(
            f"tsumugi deploy: no wrangler config given and none found in {cwd}; pass CONFIG paths", file=err
        )
        return EXIT_USAGE
    try:
        sources = _sources([cwd / path for path in paths])
        notes = [deploy_notes(source) for source in sources]
        blocking = [line for note in notes for line in note.blocking()]
        if blocking and not dry_run:
            raise DeployError("; ".join(blocking))
        tools = find_tools(cwd, environ)
        tools.need_wrangler()
        if not dry_run:
            tools.need_pywrangler()
        builds = _build_all(sources, cwd / out_dir)
    except (DeployError, ToolMissingError) as exc:
        print(f"tsumugi deploy: {exc}", file=err)
        return EXIT_USAGE
    run = _Deploy(tools, environ, out)
    mode = "dry run: nothing leaves this machine" if dry_run else "deploying"
    run.say(f"tsumugi deploy ({mode}): {' -> '.join(s.name for s in sources)}")
    for index, build in enumerate(builds, start=1):
        run.describe(build, f"[{index}/{len(builds)}]")
        status = run.dry_run(build) if dry_run else run.deploy(build)
        if status != 0:
            return EXIT_FAILED
    _print_notes(notes, run.say, dry_run=dry_run)
    return 0
