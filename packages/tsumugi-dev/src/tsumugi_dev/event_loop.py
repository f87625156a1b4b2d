"""The event loop a process runs the local runtime on: uvloop's where it is installed, else asyncio's (ADR-0181).

Every Worker of the local runtime shares one loop, so the loop's own cost (ready callbacks, futures, timers,
sockets) falls on every job: on bench/e2e.py's loop thread uvloop's loop did the same work in about 15% less
CPU time than asyncio's. ``TSUMUGI_EVENT_LOOP=asyncio`` keeps asyncio's loop (to debug with its debug mode, or
to rule the loop out); ``uvloop``, the default, falls back to asyncio's where uvloop is not installed (Windows,
which it does not support). The virtual clock of the tests needs asyncio's loop (`tsumugi_dev.clock`) and
never runs on this one.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Final, TypeVar

__all__ = ["EVENT_LOOP_VARIABLE", "LOOPS", "loop_factory", "run"]

T = TypeVar("T")

EVENT_LOOP_VARIABLE: Final = "TSUMUGI_EVENT_LOOP"
"""The environment variable that chooses the loop."""
LOOPS: Final = ("uvloop", "asyncio")
"""Its values; an unset or empty variable means the first."""


def loop_factory(environ: Mapping[str, str] | None = None) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """What makes the loop ``environ`` (default: the process's) asks for; None means asyncio's own.

    Raises:
        ValueError: ``TSUMUGI_EVENT_LOOP`` is set to something other than ``uvloop`` or ``asyncio``.
    """
    chosen = (os.environ if environ is None else environ).get(EVENT_LOOP_VARIABLE, "") or LOOPS[0]
    if chosen not in LOOPS:
        raise ValueError(f"{EVENT_LOOP_VARIABLE}: must be one of {', '.join(LOOPS)}, got {chosen!r}")
    if chosen == "asyncio":
        return None
    try:
        import uvloop  # optional: not installed on Windows
    except ImportError:
        return None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T], environ: Mapping[str, str] | None = None) -> T:
    """Run ``main`` to completion on a new loop of `loop_factory`'s kind, as `asyncio.run` does on its own."""
    with asyncio.Runner(loop_factory=loop_factory(environ)) as runner:
        return runner.run(main)
