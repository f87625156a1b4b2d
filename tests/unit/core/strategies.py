"""Hypothesis strategies for shard inputs, documenting what counts as valid input.

Validity constraints (the engine rejects anything outside them with ``EnqueueValidationError``):

- ``max_attempts >= 1``; ``timeout_ms > 0``; ``delay_ms >= 0``; ``unique_for_ms > 0``; ``expires_in_ms > 0``;
- at most one of ``delay_ms`` / ``run_at`` and at most one of ``expires_at`` / ``expires_in_ms``;
- an explicit ``id`` is a job id of this shard (``<binding>#<shard>:<local>``);
- policies: ``concurrency >= 0``, ``per_key_concurrency >= 1``, rates with ``tokens >= 1`` and
  ``interval_ms >= 1``, ``reaper_grace_ms >= 0``, ``aging_interval_ms`` positive or None.

The key spaces are tiny on purpose, so concurrency keys, unique keys and explicit ids collide often; times are
relative to ``now`` so delays, expiries and run_at land on both sides of the instants the tests step through.
Policies are small (tight concurrency, low rates) so the throttles bind within a short command sequence.
"""

from __future__ import annotations

from hypothesis import strategies as st

from tests.unit.core.reference_model import JobSpec, ModelBackoff, ModelPolicy, ModelRate

__all__ = [
    "BINDING",
    "CLOCK_STEPS_MS",
    "CONCURRENCY_KEYS",
    "UNIQUE_KEYS",
    "backoffs",
    "explicit_ids",
    "invalid_specs",
    "job_specs",
    "policies",
    "policy_patches",
    "rates",
]

BINDING = "WORK"
"""The one binding the shard under test serves."""
CONCURRENCY_KEYS = ("k1", "k2", "k3")
UNIQUE_KEYS = ("u1", "u2")
CLOCK_STEPS_MS = (1, 10, 100, 499, 500, 1_000, 5_000, 30_000, 61_000, 301_000)
"""Clock advances: near the strategies' timeouts, graces, backoffs, aging intervals and retention."""


def explicit_ids() -> st.SearchStrategy[str]:
    """A pinned job id from a pool of three, so re-enqueues of the same id happen."""
    return st.sampled_from([f"{BINDING}#0:pinned{n}" for n in range(3)])


def backoffs() -> st.SearchStrategy[ModelBackoff]:
    """Short fixed or exponential backoffs, with and without jitter."""
    fixed = st.builds(
        ModelBackoff, kind=st.just("fixed"), delay_ms=st.sampled_from([0, 50, 1_000]), jitter=st.booleans()
    )
    exponential = st.builds(
        ModelBackoff,
        kind=st.just("exponential"),
        base_ms=st.sampled_from([10, 100, 1_000]),
        factor=st.sampled_from([1, 2, 3]),
        max_ms=st.sampled_from([500, 60_000]),
        jitter=st.booleans(),
    )
    return fixed | exponential


@st.composite
def job_specs(draw: st.DrawFn, now: int) -> JobSpec:
    """A valid job to enqueue at ``now``."""
    when = draw(st.sampled_from(["now", "delay", "run_at"]))
    expiry = draw(st.sampled_from(["none", "none", "at", "in"]))
    return JobSpec(
        payload=draw(st.none() | st.integers(0, 9) | st.fixed_dictionaries({"n": st.integers(0, 9)})),
        id=draw(st.none() | st.none() | st.none() | explicit_ids()),
        priority=draw(st.none() | st.integers(-100, 100)),
        max_attempts=draw(st.none() | st.integers(1, 3)),
        backoff=draw(st.none() | backoffs()),
        timeout_ms=draw(st.none() | st.sampled_from([100, 1_000, 5_000])),
        delay_ms=draw(st.sampled_from([0, 50, 1_000, 70_000])) if when == "delay" else None,
        run_at=now + draw(st.sampled_from([-1_000, 0, 100, 5_000])) if when == "run_at" else None,
        guarantee=draw(st.none() | st.sampled_from(["at-least-once", "at-most-once"])),
        concurrency_key=draw(st.none() | st.sampled_from(CONCURRENCY_KEYS)),
        unique_key=draw(st.none() | st.none() | st.sampled_from(UNIQUE_KEYS)),
        unique_for_ms=draw(st.none() | st.sampled_from([500, 5_000])),
        expires_at=now + draw(st.sampled_from([1, 500, 5_000])) if expiry == "at" else None,
        expires_in_ms=draw(st.sampled_from([500, 5_000, 100_000])) if expiry == "in" else None,
    )


def invalid_specs() -> st.SearchStrategy[JobSpec]:
    """Jobs breaking exactly one documented rule; enqueue_many must reject the whole call."""
    return st.sampled_from(
        [
            JobSpec(max_attempts=0),
            JobSpec(timeout_ms=0),
            JobSpec(delay_ms=-1),
            JobSpec(delay_ms=10, run_at=5),
            JobSpec(unique_key="u1", unique_for_ms=0),
        ]
    )


def rates() -> st.SearchStrategy[ModelRate]:
    """Low rates (1-3 tokens per 100 ms .. 2 s) so a few dispatches empty the bucket."""
    return st.builds(ModelRate, tokens=st.integers(1, 3), interval_ms=st.sampled_from([100, 1_000, 2_000]))


def policies() -> st.SearchStrategy[ModelPolicy]:
    """Small policies: tight concurrency, rates, per-key limits, short graces, sometimes paused."""
    return st.builds(
        ModelPolicy,
        concurrency=st.sampled_from([0, 1, 2, 3, 100]),
        rate=st.none() | rates(),
        per_key_concurrency=st.integers(1, 2),
        per_key_rate=st.none() | rates(),
        aging_interval_ms=st.sampled_from([None, 1_000, 60_000]),
        reaper_grace_ms=st.sampled_from([0, 100, 1_000]),
        paused=st.booleans(),
        sweep_after_ms=st.sampled_from([1_000, 300_000]),
        failed_retention_ms=st.sampled_from([5_000, 604_800_000]),
    )


@st.composite
def policy_patches(draw: st.DrawFn) -> dict[str, object]:
    """A runtime patch: a random subset of a small policy's fields (pinned field by field)."""
    policy = draw(policies())
    names = draw(st.sets(st.sampled_from(sorted(vars(policy))), min_size=1, max_size=4))
    return {name: getattr(policy, name) for name in sorted(names)}
