"""define_tsumugi: wrong shapes refused, zero honoured or refused by rule, and errors in the house style."""

from __future__ import annotations

from typing import Any

import pytest

from tsumugi_scheduler.definition import DefinitionError, define_tsumugi


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
