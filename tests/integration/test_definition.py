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


# define_tsumugi: wrong shapes refused, zero honoured or refused by rule, and errors in the house style.


@pytest.mark.parametrize("performers", ["Hello", b"Hello", {"Hello": 1}, 5])
def test_performers_must_be_a_list_not_a_string(performers: Any) -> None:
    with pytest.raises(DefinitionError) as caught:
        define_tsumugi(performers=performers)
    assert (caught.value.option, caught.value.rule) == (
        "performers",
        "must be a list of binding names or Performer classes",
    )


def test_a_performer_class_counts_by_its_name() -> None:
    class Greeter:
        pass

    assert define_tsumugi(performers=(Greeter, "Other")).performers == ("Greeter", "Other")


def test_zero_retention_is_honoured_not_replaced_by_the_defaults() -> None:
    app = define_tsumugi(bindings={"A": {"sweep_after_ms": 0, "failed_retention_ms": 0}, "B": {}})
    zero, default = app.settings_of("A"), app.settings_of("B")
    assert zero is not None
    assert default is not None
    assert (zero.retention.sweep_after_ms, zero.retention.failed_retention_ms) == (0, 0)
    assert (default.retention.sweep_after_ms, default.retention.failed_retention_ms) == (300_000, 604_800_000)


def test_aging_interval_absent_keeps_the_default_and_none_disables_it() -> None:
    app = define_tsumugi(
        bindings={
            "Default": {},
            "Off": {"policy": {"aging_interval_ms": None}},
            "Set": {"policy": {"aging_interval_ms": 5}},
        }
    )
    intervals = {}
    for name in ("Default", "Off", "Set"):
        settings = app.settings_of(name)
        assert settings is not None
        intervals[name] = settings.policy.aging_interval_ms
    assert intervals == {"Default": 60_000, "Off": None, "Set": 5}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"bindings": {"A": {"policy": {"aging_interval_ms": 0}}}},
            "bindings.A.policy.aging_interval_ms must be at least 1",
        ),
        (
            {"bindings": {"A": {"policy": {"aging_disabled": True, "aging_interval_ms": 10}}}},
            "bindings.A.policy.aging_disabled cannot be combined with an aging_interval_ms",
        ),
        ({"bindings": {"A": {"sweep_after_ms": -1}}}, "bindings.A.sweep_after_ms must be at least 0"),
        (
            {"bindings": {"A": {"policy": {"rate": {"tokens": 0, "interval_ms": 1000}}}}},
            "bindings.A.policy.rate.tokens must be at least 1",
        ),
        (
            {"bindings": {"A": {"policy": {"per_key_rate": {"tokens": 1, "interval_ms": 0}}}}},
            "bindings.A.policy.per_key_rate.interval_ms must be at least 1",
        ),
        ({"bindings": {"X": {"polcy": {}}}}, "bindings.X.polcy is not a known option"),
        ({"bindings": {"X": {"policy": {"speed": 1}}}}, "bindings.X.policy.speed is not a known option"),
        ({"bindings": {"X": "fast"}}, "bindings.X must be a mapping of options, got 'fast'"),
        ({"bindings": ["X"]}, "bindings must be a mapping of binding name to options, got ['X']"),
        (
            {"bindings": {"X": {"policy": {"rate": {"tokens": 1}}}}},
            "bindings.X.policy.rate.interval_ms is required",
        ),
        (
            {"bindings": {"X": {"policy": {"rate": {"tokens": 1.5, "interval_ms": 1}}}}},
            "bindings.X.policy.rate.tokens must be an integer, got 1.5",
        ),
        (
            {"bindings": {"X": {"policy": {"paused": "yes"}}}},
            "bindings.X.policy.paused must be a boolean, got 'yes'",
        ),
        ({"on_settled": 5}, "on_settled must be a mapping of options, got 5"),
        (
            {"on_settled": {"binding": "A", "states": "FAILED"}},
            "on_settled.states must be a list, got 'FAILED'",
        ),
        ({"on_settled": {"binding": "A", "states": [1]}}, "on_settled.states[0] must be a string, got 1"),
        ({"on_settled": {"binding": 7, "states": ["FAILED"]}}, "on_settled.binding must be a string, got 7"),
        (
            {"on_settled": {"binding": "A", "states": ["FAILED"], "x": 1}},
            "on_settled.x is not a known option",
        ),
        ({"retention": {"limit": "10"}}, "retention.limit must be an integer, got '10'"),
        ({"retention": {"older_than_ms": 0}}, "retention.older_than_ms must be at least 1"),
        # D1 binds no integer past 2**53 - 1: the hourly sweep failed on it.
        ({"retention": {"limit": 10**20}}, "retention.limit must be at most 9007199254740991"),
        (
            {"retention": {"older_than_ms": 10**20}},
            "retention.older_than_ms must be at most 9007199254740991",
        ),
        ({"runs": "x"}, "runs must be a mapping of options, got str"),
        ({"runs": 5}, "runs must be a mapping of options, got int"),
        (
            {"performers": ["Hello", "Boom"], "bindings": {"Zzz": {}}},
            "bindings.Zzz is not one of the performers (Hello, Boom)",
        ),
    ],
)
def test_errors_name_the_option_path_and_the_rule_in_the_house_style(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(DefinitionError) as caught:
        define_tsumugi(**options)
    assert str(caught.value) == message
    assert f"{caught.value.option} {caught.value.rule}" == message


@pytest.mark.parametrize(
    "options",
    [
        {"bindings": {"X": {"polcy": {}}}},
        {"bindings": {"X": 5}},
        {"bindings": {"X": {"shards": 0}}},
        {"on_settled": {"binding": "A"}},
        {"retention": {"limit": True}},
    ],
)
def test_pydantics_own_wording_never_leaks(options: dict[str, Any]) -> None:
    with pytest.raises(DefinitionError) as caught:
        define_tsumugi(**options)
    text = str(caught.value).lower()
    for leaked in ("input", "extra", "permitted", "should be", "field required", "_", "model"):
        assert leaked not in text.split(" ", 1)[1], text
