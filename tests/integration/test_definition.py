"""define_tsumugi: every option validated when defined, errors naming the option and the rule."""

from __future__ import annotations

from typing import Any

import pytest

from tsumugi_core.states import JobState
from tsumugi_scheduler.definition import DefinitionError, define_tsumugi


def test_settings_notices_and_retention_come_out_as_core_values() -> None:
    app = define_tsumugi(
        performers=["Mail", "Alert", "Audit"],
        bindings={
            "Mail": {
                "shards": 4,
                "policy": {"concurrency": 3, "rate": {"tokens": 5, "interval_ms": 1000}},
                "sweep_after_ms": 10_000,
            }
        },
        on_failure="Alert",
        on_settled={"binding": "Audit", "states": ["COMPLETED", "CANCELLED"]},
        retention={"older_than_ms": 86_400_000, "limit": 50},
    )
    settings = app.settings_of("Mail")
    assert settings is not None
    assert (app.shards_of("Mail"), app.shards_of("Alert")) == (4, 1)
    assert (settings.policy.concurrency, settings.policy.rate, settings.retention.sweep_after_ms) == (
        3,
        settings.policy.rate,
        10_000,
    )
    assert settings.policy.rate is not None
    assert (settings.policy.rate.tokens, settings.policy.rate.interval_ms) == (5, 1000)
    assert app.settings_of("Alert") is None
    assert app.notices.on_failure == "Alert"
    assert app.notices.on_settled_states == frozenset({JobState.COMPLETED, JobState.CANCELLED})
    assert (app.sweep.older_than_ms, app.sweep.limit) == (86_400_000, 50)
    assert app.is_registered("Mail")
    assert not app.is_registered("Other")
    assert define_tsumugi().is_registered("Anything")


def test_aging_can_be_disabled() -> None:
    settings = define_tsumugi(bindings={"A": {"policy": {"aging_disabled": True}}}).settings_of("A")
    assert settings is not None
    assert settings.policy.aging_interval_ms is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"bindings": {"A": {"shards": 0}}}, "bindings.A.shards must be at least 1"),
        (
            {"bindings": {"A": {"policy": {"concurrency": -1}}}},
            "bindings.A.policy.concurrency must be at least 0",
        ),
        ({"bindings": {"A": {"shards": "2"}}}, "bindings.A.shards must be an integer, got '2'"),
        ({"bindings": {"A": {"colour": 1}}}, "bindings.A.colour is not a known option"),
        ({"bindings": {"9A": {}}}, "bindings.9A is invalid: invalid binding name"),
        ({"performers": ["ok", "not ok"]}, "performers[1] is invalid: invalid binding name"),
        ({"on_enqueue": 5}, "on_enqueue must be callable, got int"),
        ({"performers": ["A"], "on_failure": "B"}, "on_failure must be one of the performers, got 'B'"),
        ({"on_settled": {"binding": "A", "states": []}}, "on_settled.states must list at least one of"),
        (
            {"on_settled": {"binding": "A", "states": ["QUEUED"]}},
            "on_settled.states must hold only COMPLETED",
        ),
        ({"on_settled": {"states": ["FAILED"]}}, "on_settled.binding is required"),
        ({"retention": {"limit": 0}}, "retention.limit must be at least 1"),
    ],
)
def test_a_bad_option_is_named_with_its_rule(options: dict[str, Any], message: str) -> None:
    with pytest.raises(DefinitionError) as caught:
        define_tsumugi(**options)
    assert str(caught.value).startswith(message)
