"""Durable steps: the messages between a performer and its shard, and the rules both sides share.

A performer's ``ctx.step`` / ``ctx.sleep`` talk to the job's shard through the attempt's callback (ADR-0144):
a `StepCommand` goes out as JSON text, a `StepAnswer` comes back. The shard keeps each finished step's result
in the job's own shard and answers it to any later attempt instead of running the step again.

Example:
    >>> step_name("charge", 1), step_name("charge", 3)
    ('charge', 'charge#3')
    >>> should_continue_elsewhere(now=600_000, invocation_ends_at=840_000, longest_step_ms=200_000)
    True
"""

from __future__ import annotations

import re
from typing import Final, Literal

import msgspec

__all__ = [
    "CONTINUE_RESERVE_MS",
    "MAX_STEPS_PER_JOB",
    "MAX_STEP_RESULT_BYTES",
    "STEP_COMMANDS_PER_INVOCATION",
    "STEP_NAME_MAX",
    "StepAnswer",
    "StepCommand",
    "StepView",
    "Suspension",
    "should_continue_elsewhere",
    "step_name",
    "step_name_problem",
]

STEP_NAME_MAX: Final = 200
"""The longest step name, index included."""
CONTINUE_RESERVE_MS: Final = 60_000
"""The least time an invocation keeps in hand before starting a step (ADR-0147)."""
MAX_STEPS_PER_JOB: Final = 10_000
"""A job stores at most this many steps: a loop that never ends fails its job instead of filling the shard."""
MAX_STEP_RESULT_BYTES: Final = 100 * 1024
"""The largest step result, as UTF-8 JSON: what a payload may hold (a Durable Object's SQLite refuses a value
over 2 MB, and every result comes back with the job's detail) (ADR-0174)."""
STEP_COMMANDS_PER_INVOCATION: Final = 1_000
"""Step commands one invocation sends before it continues in a new one: each is a subrequest, and Cloudflare
allows an invocation 10,000 of them by default (the step functions' own fetches count too) (ADR-0174)."""
_NAME: Final = re.compile(r"[A-Za-z0-9_.:/\- ]+")


class StepCommand(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What a performer asks of its shard about its steps.

    ``load``: every stored step of the job. ``begin``: an at-most-once job is about to run step ``name`` (its
    outcome is unknown from now until ``save``). ``save``: step ``name`` finished with ``result`` (JSON text).
    ``wait``: step ``name`` waits for event ``event``/``key`` until ``until`` (ADR-0146); ``seen`` are the ids
    of the events of that name and key the job has had already; ``result`` is an event the consumer got from
    the event's box for it.
    """

    op: Literal["load", "begin", "save", "wait"]
    name: str | None = None
    result: str | None = None
    event: str | None = None
    key: str | None = None
    until: int | None = None
    seen: list[str] = []


class StepView(msgspec.Struct, frozen=True, kw_only=True):
    """One stored step as the performer sees it."""

    name: str
    state: Literal["done", "started", "waiting"]
    result: str | None = None
    """JSON text of the result once ``done`` (what a wait waits for while ``waiting``)."""


class StepAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """The shard's answer: ``accepted`` only for the live attempt (late invocations are fenced off).

    ``op`` repeats the command's, so a performer can tell a step answer from a heartbeat answer of a scheduler
    that predates steps.
    """

    op: str
    accepted: bool
    cancel_requested: bool = False
    steps: list[StepView] = []
    """``load``: all stored steps; ``begin``/``save``: the step as stored now (the first save wins)."""


class Suspension(msgspec.Struct, frozen=True, kw_only=True):
    """How an invocation ended without finishing the job: resume at ``until`` (now or later)."""

    until: int
    reason: Literal["sleep", "continue", "event"] = "sleep"
    step: str | None = None
    """The sleep or wait step that suspended the job (None for a continuation)."""


def step_name_problem(name: object) -> str | None:
    """Why ``name`` cannot name a step, or None.

    A name is 1 to `STEP_NAME_MAX` letters, digits, spaces or ``_ . : / -``; ``#`` is kept for the index a
    repeated name gets.
    """
    if not isinstance(name, str):
        return f"must be a string, got {type(name).__name__}"
    if not name or len(name) > STEP_NAME_MAX - 8:
        return f"must have 1 to {STEP_NAME_MAX - 8} characters, got {len(name)}"
    if not _NAME.fullmatch(name):
        return f"may hold only letters, digits, spaces and _ . : / -, got {name!r}"
    return None


def step_name(name: str, occurrence: int) -> str:
    """The stored name of the ``occurrence``-th call (from 1) with ``name`` in one run of the performer."""
    return name if occurrence == 1 else f"{name}#{occurrence}"


def should_continue_elsewhere(*, now: int, invocation_ends_at: int | None, longest_step_ms: int) -> bool:
    """Whether to continue in a new invocation before starting the next step (ADR-0147).

    The next step must fit: the time left must cover twice the longest step this invocation ran, and never
    less than `CONTINUE_RESERVE_MS`.
    """
    if invocation_ends_at is None:
        return False
    return invocation_ends_at - now < max(CONTINUE_RESERVE_MS, 2 * longest_step_ms)
