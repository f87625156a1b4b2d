"""The ``tsumugi init``, ``tsumugi add-performer`` and ``tsumugi add-flow`` subcommands: arguments, messages and exit statuses.

Exit statuses: 0 done (also when add-performer finds the performer already in place: it says so and
changes nothing, and add-flow likewise); 1 the project is in the way (a file to write exists, a file is missing or has an
unexpected shape, a conflicting definition); 2 a bad argument (an unusable name).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Final

from tsumugi_dev.scaffold import ScaffoldError, add_performer, init_project
from tsumugi_dev.scaffold.add_flow import add_flow, validate_flow_name
from tsumugi_dev.scaffold.names import validate_performer_name

__all__ = ["EXIT_PROJECT", "EXIT_USAGE", "SCAFFOLD_COMMANDS", "add_scaffold_commands", "run_scaffold_command"]

EXIT_PROJECT: Final = 1
EXIT_USAGE: Final = 2
SCAFFOLD_COMMANDS: Final = frozenset({"init", "add-performer", "add-flow"})
"""The subcommands this module adds and runs."""


def add_scaffold_commands(commands: Any) -> None:
    """Add ``init``, ``add-performer`` and ``add-flow`` to the ``tsumugi`` subparsers."""
    init = commands.add_parser("init", help="scaffold a project: scheduler, performers and producer Workers")
    init.add_argument("directory", nargs="?", default=".", metavar="DIR", help="project folder (default: .)")
    init.add_argument("--name", help="project name, the Workers' name prefix (default: the folder's name)")
    add = commands.add_parser(
        "add-performer", help="add a performer class, its entrypoint, binding and registration"
    )
    add.add_argument("name", metavar="NAME", help="class = entrypoint = binding name, e.g. Resize")
    add.add_argument(
        "--worker",
        type=Path,
        metavar="DIR",
        help="the performers Worker's folder (default: found via [tool.tsumugi])",
    )
    flow = commands.add_parser("add-flow", help="add a flow skeleton over performers and register it")
    flow.add_argument("name", metavar="NAME", help="the flow's name, e.g. resize-all")
    flow.add_argument(
        "--performer",
        action="append",
        metavar="BINDING",
        help="a node running this performer, in order; repeatable (default: the first registered performer)",
    )
    flow.add_argument(
        "--worker",
        type=Path,
        metavar="DIR",
        help="the performers Worker's folder (default: found via [tool.tsumugi])",
    )


def _init(args: argparse.Namespace) -> int:
    target = Path(args.directory)
    try:
        result = init_project(target, name=args.name)
    except ScaffoldError as exc:
        print(f"tsumugi init: {exc}", file=sys.stderr)
        return EXIT_PROJECT
    print(f"tsumugi init: wrote project {result.project} in {target} ({len(result.written)} files)")
    print(f"  cd {target} && uv run tsumugi dev    # the scheduler on http://127.0.0.1:8787")
    print("  uv run pytest                        # the tests")
    print("  uv run tsumugi add-performer Resize  # another performer")
    print("  uv run tsumugi add-flow resize-all --performer Resize  # a flow over it")
    print("  npm install                          # wrangler (pinned in package.json), for tsumugi deploy")
    print("  uv run tsumugi deploy --dry-run      # build and check each Worker's upload, offline")
    print("  uv run tsumugi deploy                # deploy to Cloudflare")
    return 0


def _add_performer(args: argparse.Namespace) -> int:
    try:
        validate_performer_name(args.name)
    except ScaffoldError as exc:
        print(f"tsumugi add-performer: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        added = add_performer(Path.cwd(), args.name, worker=args.worker)
    except ScaffoldError as exc:
        print(f"tsumugi add-performer: {exc}", file=sys.stderr)
        return EXIT_PROJECT
    for note in added.notes:
        print(f"tsumugi add-performer: {note}")
    if not added.changed:
        print(f"tsumugi add-performer: {args.name} is already there; nothing changed")
        return 0
    for path in added.changed:
        print(f"  changed {path}")
    print(f"tsumugi add-performer: added {args.name}")
    return 0


def _add_flow(args: argparse.Namespace) -> int:
    try:
        validate_flow_name(args.name)
    except ScaffoldError as exc:
        print(f"tsumugi add-flow: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        added = add_flow(Path.cwd(), args.name, performers=args.performer, worker=args.worker)
    except ScaffoldError as exc:
        print(f"tsumugi add-flow: {exc}", file=sys.stderr)
        return EXIT_PROJECT
    for note in added.notes:
        print(f"tsumugi add-flow: {note}")
    if not added.changed:
        print(f"tsumugi add-flow: {args.name} is already there; nothing changed")
        return 0
    for path in added.changed:
        print(f"  changed {path}")
    print(f"tsumugi add-flow: added {args.name}")
    return 0


def run_scaffold_command(args: argparse.Namespace) -> int:
    """Run ``init``, ``add-performer`` or ``add-flow``; returns the exit status."""
    if args.command == "init":
        return _init(args)
    return _add_performer(args) if args.command == "add-performer" else _add_flow(args)
