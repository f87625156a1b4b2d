"""The ``tsumugi`` command: ``tsumugi dev [CONFIG ...] [--data-dir .tsumugi] [--port 8787] [--test-scheduled]
[--verbose] [--access]``,
``tsumugi init [DIR] [--name NAME]``, ``tsumugi add-performer NAME [--worker DIR]``, ``tsumugi add-flow NAME
[--performer BINDING ...]`` and
``tsumugi deploy [CONFIG ...] [--dry-run] [--out .tsumugi/build]`` (``tsumugi_dev.deploy``)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Final, TextIO
from urllib.parse import urlsplit

from tsumugi_dev.access_dev import AccessDev
from tsumugi_dev.api_token import TOKEN_VAR, project_token, with_scheduler_token
from tsumugi_dev.config import CONFIG_NAMES, ConfigError, WorkerConfig, find_configs, load_config
from tsumugi_dev.data_dir_lock import DataDirInUseError, DataDirLock, lock_data_dir, watch_data_dir
from tsumugi_dev.deploy import DEFAULT_OUT, run_deploy
from tsumugi_dev.dev_ports import follow_ports, plan_ports
from tsumugi_dev.event_loop import loop_factory
from tsumugi_dev.gc_policy import tune_for_throughput
from tsumugi_dev.http_server import PortInUseError, WorkerServer
from tsumugi_dev.log_lines import OneLineFormatter
from tsumugi_dev.project import PROJECT_FILE, project_worker_configs
from tsumugi_dev.runtime import LocalRuntime
from tsumugi_dev.scaffold_commands import SCAFFOLD_COMMANDS, add_scaffold_commands, run_scaffold_command

__all__ = ["configure_logging", "main", "run_dev"]

EXIT_USAGE = 2
EXIT_DATA_DIR_LOST = 3
"""The data directory was removed or replaced under the running dev (ADR-0114)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tsumugi", description="Tsumugi for Python Workers")
    commands = parser.add_subparsers(dest="command", required=True)
    dev = commands.add_parser(
        "dev", help="run Workers on the local runtime (Durable Objects, Queues, D1, ... on SQLite)"
    )
    dev.add_argument(
        "configs", nargs="*", metavar="CONFIG", help="wrangler config files (default: the one in .)"
    )
    dev.add_argument(
        "--data-dir", default=".tsumugi", type=Path, help="where state is kept (default: .tsumugi)"
    )
    dev.add_argument(
        "--port", default=8787, type=_port, help="first HTTP port; 0 picks free ports (default: 8787)"
    )
    dev.add_argument(
        "--verbose",
        action="store_true",
        help="also log each HTTP request, alarm and queue batch (default: job and run events and warnings)",
    )
    dev.add_argument(
        "--test-scheduled",
        action="store_true",
        help="serve /cdn-cgi/handler/scheduled?cron=... to run a Worker's cron handler (as wrangler dev's flag)",
    )
    dev.add_argument(
        "--access",
        action="store_true",
        help="play Cloudflare Access locally: sign in at the printed URL as any email and groups (ADR-0152)",
    )
    add_scaffold_commands(commands)
    deploy = commands.add_parser(
        "deploy", help="build each Worker's upload (Tsumugi's packages vendored) and deploy them in order"
    )
    deploy.add_argument(
        "configs", nargs="*", metavar="CONFIG", help="wrangler config files (default: the one in .)"
    )
    deploy.add_argument(
        "--dry-run",
        action="store_true",
        help="build and validate, run `wrangler deploy --dry-run`; no network",
    )
    deploy.add_argument(
        "--out", default=DEFAULT_OUT, type=Path, help=f"where uploads are built (default: {DEFAULT_OUT})"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``tsumugi`` script."""
    args = _parser().parse_args(argv)
    if args.command == "dev":
        raise SystemExit(
            run_dev(
                [Path(c) for c in args.configs],
                data_dir=args.data_dir,
                port=args.port,
                test_scheduled=args.test_scheduled,
                verbose=args.verbose,
                access=args.access,
            )
        )
    if args.command in SCAFFOLD_COMMANDS:
        raise SystemExit(run_scaffold_command(args))
    if args.command == "deploy":
        raise SystemExit(run_deploy([Path(c) for c in args.configs], dry_run=args.dry_run, out_dir=args.out))


def _load(paths: Sequence[Path], data_dir: Path) -> list[WorkerConfig] | None:
    project_default = False
    try:
        if not paths:
            paths = find_configs(Path.cwd())
            if not paths:
                # A project's root (an init'ed one, or this repository): its Workers, with the API token.
                paths = project_worker_configs(Path.cwd())
                project_default = bool(paths)
            if not paths:
                print(
                    f"tsumugi dev: no wrangler config given and none found in {Path.cwd()} "
                    f"(looked for {', '.join(CONFIG_NAMES)}, and [tool.tsumugi] workers in {PROJECT_FILE}); "
                    "pass CONFIG paths",
                    file=sys.stderr,
                )
                return None
        configs = [load_config(p) for p in paths]
    except ConfigError as exc:
        print(f"tsumugi dev: {exc}", file=sys.stderr)
        return None
    for config in configs:
        for warning in config.warnings:  # wrangler warns of a field it does not know, and goes on
            print(f"tsumugi dev: warning: {warning}", file=sys.stderr)
    if project_default:
        token = project_token(configs, os.environ, data_dir)
        if token.kept_in is not None:
            made = "generated and kept" if token.generated else "kept"
            print(
                f"tsumugi dev: {TOKEN_VAR} was not set; API token: {token.value} "
                f"({made} in {token.kept_in}; delete the file for a new one)",
                flush=True,
            )
        configs = with_scheduler_token(configs, token)
    for config in configs:
        if config.secret_names:
            # As wrangler dev does: say which secrets are in use, never their values.
            print(f"{config.name}: secrets {', '.join(config.secret_names)}", flush=True)
    return configs


QUIET_LOGGERS: Final = ("tsumugi_dev", "tsumugi_scheduler")
"""The runtime's and the scheduler's own lines (requests, alarms, queue batches, migrations): shown with
``--verbose`` only."""


def configure_logging(stream: TextIO, *, verbose: bool = False) -> None:
    """Log one line per job and run event (``tsumugi.jobs``, ``tsumugi.runs``) and per warning on ``stream``.

    The runtime's own event lines (each HTTP request, the dashboard's polling among them, each alarm and queue
    batch) outnumbered the job events three to one (issue 26); they show with ``verbose`` only. Performers'
    own INFO lines (the mail sink's) always show.
    """
    handler = logging.StreamHandler(stream)
    # One event, one line: a newline in a mail subject or a job's text cannot forge a line (issue 15 item 6).
    handler.setFormatter(OneLineFormatter("%(asctime)s %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    # A Worker module may have quietened these at import; the dev console wants them.
    logging.getLogger("tsumugi").setLevel(logging.INFO)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.INFO if verbose else logging.WARNING)


def run_dev(
    paths: Sequence[Path],
    *,
    data_dir: Path,
    port: int,
    test_scheduled: bool = False,
    verbose: bool = False,
    access: bool = False,
) -> int:
    """Run the Workers of ``paths`` until SIGINT/SIGTERM; returns the exit status."""
    if data_dir.exists() and not data_dir.is_dir():
        print(f"tsumugi dev: --data-dir {data_dir} exists and is not a folder", file=sys.stderr)
        return EXIT_USAGE
    try:
        lock = lock_data_dir(data_dir)  # one dev per data directory (ADR-0114)
    except DataDirInUseError as exc:
        print(f"tsumugi dev: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return _run_locked(paths, data_dir, port, test_scheduled, lock, verbose, access)
    finally:
        lock.release()


class _StartFailedError(Exception):
    """A Worker's module or wiring raised while the runtime started; the message is one line."""


def _is_own(path: Path, root: Path) -> bool:
    """A file of the project itself (under ``root``, outside its virtual environments)."""
    return path.is_relative_to(root) and not any(part.startswith(".venv") for part in path.parts)


def start_failure_line(error: BaseException, root: Path) -> str:
    """``<Type>: <message> (at <file>:<line>)``: the error and the last frame in the project's own files.

    A definition error (a schedule's typo, say) already names its field and rule; the traceback through the
    runtime's loader under it (40 lines) only hid it (issue 26). ``--verbose`` keeps the traceback.
    """
    frames = traceback.extract_tb(error.__traceback__)
    own = [f for f in frames if _is_own(Path(f.filename), root)]
    message = str(error).splitlines()[0] if str(error) else ""
    line = f"{type(error).__name__}: {message}" if message else type(error).__name__
    if own:
        line += f" (at {Path(own[-1].filename).relative_to(root)}:{own[-1].lineno})"
    return line


def _run_locked(
    paths: Sequence[Path],
    data_dir: Path,
    port: int,
    test_scheduled: bool,
    lock: DataDirLock,
    verbose: bool = False,
    access: bool = False,
) -> int:
    configs = _load(paths, data_dir)
    if configs is None:
        return EXIT_USAGE
    try:
        new_loop = loop_factory()  # uvloop's, unless TSUMUGI_EVENT_LOOP says asyncio (ADR-0181)
    except ValueError as exc:
        print(f"tsumugi dev: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if port and port + len(configs) - 1 > _MAX_PORT:  # each Worker takes the next port
        print(
            f"tsumugi dev: --port {port} leaves no port for {len(configs)} Workers (the last would be "
            f"{port + len(configs) - 1}, past {_MAX_PORT}): pass a lower one, or 0 for free ports",
            file=sys.stderr,
        )
        return EXIT_USAGE
    configure_logging(sys.stdout, verbose=verbose)
    try:
        with asyncio.Runner(loop_factory=new_loop) as runner:
            return runner.run(
                _serve(
                    configs, data_dir, port, test_scheduled, lock, verbose, AccessDev() if access else None
                )
            )
    except _StartFailedError as exc:
        print(
            f"tsumugi dev: a Worker failed to start: {exc} (--verbose shows the traceback)", file=sys.stderr
        )
        return EXIT_USAGE
    except ConfigError as exc:
        print(f"tsumugi dev: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except PortInUseError as exc:
        print(
            f"tsumugi dev: port {exc.port} is in use (pass another --port, or 0 for free ports)",
            file=sys.stderr,
        )
        return EXIT_USAGE


_MAX_PORT: Final = 65_535


def _port(text: str) -> int:
    """``--port``: 0 (free ports) or a TCP port; argparse reports the error as a usage error."""
    port = int(text) if text.isascii() and text.lstrip("-").isdigit() else None
    if port is None or not 0 <= port <= _MAX_PORT:
        raise argparse.ArgumentTypeError(
            f"must be a port from 0 to {_MAX_PORT} (0 picks free ports), got {text!r}"
        )
    return port


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _serve(
    configs: list[WorkerConfig],
    data_dir: Path,
    port: int,
    test_scheduled: bool,
    lock: DataDirLock,
    verbose: bool = False,
    access: AccessDev | None = None,
) -> int:
    planned = plan_ports([config.name for config in configs], port, _free_port)
    configs = [follow_ports(config, planned) for config in configs]  # ADR-0067
    if access is not None:
        configs = access.configure(configs)
        await access.start()
    runtime = LocalRuntime(configs, data_dir=data_dir)
    try:
        await runtime.start()
    except (ConfigError, PortInUseError):
        raise
    except Exception as exc:
        if verbose:
            raise
        raise _StartFailedError(start_failure_line(exc, Path.cwd())) from None
    tune_for_throughput()  # after start: the Workers' modules are loaded and frozen with the rest
    servers: list[WorkerServer] = []
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        for config in configs:
            if runtime.workers[config.name].has_handler("fetch"):
                server = WorkerServer(
                    runtime, config.name, planned[config.name], test_scheduled=test_scheduled
                )
                await server.start()
                servers.append(server)
                print(f"{config.name}: {server.url}", flush=True)
        if access is not None and servers:
            dashboard = servers[0].url + "/"
            print(
                f"Access stand-in: {access.url} (team {access.stand_in.team}); sign in with "
                f"{access.login_url('you@example.com', ['tsumugi-operators'], dashboard)}",
                flush=True,
            )
        lock.record(urlsplit(servers[0].url).port if servers else None)
        print(f"tsumugi dev: ready (data in {data_dir}); Ctrl-C stops", flush=True)
        watch = asyncio.create_task(watch_data_dir(lock, stop))
        await stop.wait()
        watch.cancel()
        if lock.problem() is not None:
            return EXIT_DATA_DIR_LOST
    finally:
        for server in servers:
            await server.stop()
        await runtime.stop()
        if access is not None:
            await access.stop()
    print("tsumugi dev: stopped", flush=True)
    return 0
