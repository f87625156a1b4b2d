"""Random workloads: enqueue options of every kind, and what operators do (cancel, retry, reschedule, policy).

Everything is drawn from the seed's `random.Random`, in a fixed order, so one seed is one run.
"""

from __future__ import annotations

import random
from typing import Any

from tsumugi_core.options import ExponentialBackoff, FixedBackoff

__all__ = ["OPERATIONS", "enqueue_options", "policy_patch"]

OPERATIONS = ("cancel", "retry", "reschedule", "policy", "pause", "resume", "reset")
"""What an operator may do at a step, besides enqueueing."""


def _maybe(rng: random.Random, p: float) -> bool:
    return rng.random() < p


def enqueue_options(rng: random.Random, now_ms: int) -> dict[str, Any]:
    """Random enqueue options: each option is set on some jobs and left to its default on others."""
    return {**_when_and_how_often(rng, now_ms), **_how_and_with_whom(rng, now_ms)}


def _when_and_how_often(rng: random.Random, now_ms: int) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if _maybe(rng, 0.4):
        options["priority"] = rng.randint(-5, 10)
    if _maybe(rng, 0.25):
        options["delay_ms"] = rng.choice((100, 1_000, 4_000, 15_000))
    elif _maybe(rng, 0.1):
        options["run_at"] = now_ms + rng.choice((500, 3_000, 20_000))
    if _maybe(rng, 0.5):
        options["max_attempts"] = rng.randint(1, 4)
    if _maybe(rng, 0.3):
        options["backoff"] = rng.choice(
            (
                FixedBackoff(delay_ms=rng.choice((50, 500, 2_000))),
                ExponentialBackoff(base_ms=200, max_ms=5_000),
            )
        )
    if _maybe(rng, 0.5):
        options["timeout_ms"] = rng.choice((1_000, 3_000, 10_000))
    return options


def _how_and_with_whom(rng: random.Random, now_ms: int) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if _maybe(rng, 0.3):
        options["guarantee"] = "at-most-once"
    if _maybe(rng, 0.5):
        options["concurrency_key"] = f"k{rng.randint(0, 3)}"
    if _maybe(rng, 0.1):
        options["unique_key"] = f"u{rng.randint(0, 5)}"
        if _maybe(rng, 0.5):
            options["unique_for_ms"] = rng.choice((1_000, 30_000))
    if _maybe(rng, 0.2):
        options["partition_key"] = f"p{rng.randint(0, 3)}"
    if _maybe(rng, 0.1):
        options["expires_in_ms"] = rng.choice((500, 5_000, 30_000))
    elif _maybe(rng, 0.05):
        options["expires_at"] = now_ms + rng.choice((1_000, 10_000))
    return options


def policy_patch(rng: random.Random) -> dict[str, Any]:
    """A runtime policy change as the REST API takes it (field names as ``POST /api/bindings/{b}/policy``)."""
    patch: dict[str, Any] = {}
    if _maybe(rng, 0.7):
        patch["concurrency"] = rng.choice((1, 2, 5))
    if _maybe(rng, 0.4) or not patch:
        patch["per_key_concurrency"] = rng.choice((1, 2))
    return patch
