"""parse_job_query's lenient rules (docs/reference/original.md §4.3, gap 28) and JobQuery's strict checks."""

from __future__ import annotations

import doctest
from types import ModuleType

import msgspec
import pytest

import tsumugi_scheduler.readmodel.detail
import tsumugi_scheduler.readmodel.job_query
import tsumugi_scheduler.readmodel.retry_window
from tsumugi_scheduler.readmodel import JobQuery, parse_job_query


def test_no_parameters_give_the_defaults() -> None:
    assert parse_job_query({}) == JobQuery(sort="updated_at", order="desc", limit=20, offset=0)


def test_string_filters_are_exact_and_empty_means_absent() -> None:
    query = parse_job_query(
        {
            "state": "FAILED",
            "binding": "MAIL",
            "id": "MAIL#0:a",
            "unique_key": "u",
            "concurrency_key": "",
        }
    )
    assert (query.state, query.binding, query.id, query.unique_key) == ("FAILED", "MAIL", "MAIL#0:a", "u")
    assert query.concurrency_key is None


def test_any_state_string_is_passed_through() -> None:
    assert parse_job_query({"state": "nonsense"}).state == "nonsense"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("0", 0),
        ("1700000000000", 1_700_000_000_000),
        (" 42 ", 42),
        ("1e3", 1000),
        ("", None),
        ("abc", None),
        ("12abc", None),
        ("1_000", None),
        ("NaN", None),
        ("Infinity", None),
        ("-5", -5),
    ],
)
def test_created_bounds_take_numbers_and_ignore_the_rest(raw: str, expected: int | None) -> None:
    query = parse_job_query({"created_from": raw, "created_to": raw})
    assert (query.created_from, query.created_to) == (expected, expected)


def test_fractional_created_bounds_round_inward() -> None:
    query = parse_job_query({"created_from": "10.5", "created_to": "20.5"})
    assert (query.created_from, query.created_to) == (11, 20)


def test_huge_numbers_are_clamped_to_what_sqlite_can_bind() -> None:
    query = parse_job_query({"created_from": "1e300", "offset": "1e300"})
    assert query.created_from == query.offset == 2**53 - 1


@pytest.mark.parametrize("sort", ["updated_at", "created_at", "binding", "state", "priority", "attempts"])
def test_whitelisted_sorts_are_kept(sort: str) -> None:
    assert parse_job_query({"sort": sort}).sort == sort


@pytest.mark.parametrize(
    "sort", ["", "id", "payload", "constructor", "__proto__", "updated_at; DROP TABLE job"]
)
def test_other_sorts_fall_back_to_updated_at(sort: str) -> None:
    assert parse_job_query({"sort": sort}).sort == "updated_at"


@pytest.mark.parametrize(
    ("order", "expected"), [("asc", "asc"), ("desc", "desc"), ("ASC", "desc"), ("x", "desc")]
)
def test_only_asc_is_ascending(order: str, expected: str) -> None:
    assert parse_job_query({"order": order}).order == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("5", 5),
        ("100", 100),
        ("101", 100),
        ("5000", 100),
        ("0", 20),
        ("-5", 20),
        ("abc", 20),
        ("", 20),
        ("7.9", 7),
        ("0.5", 20),
    ],
)
def test_limit_defaults_and_caps(raw: str, expected: int) -> None:
    assert parse_job_query({"limit": raw}).limit == expected


@pytest.mark.parametrize(("raw", "expected"), [("0", 0), ("40", 40), ("-1", 0), ("x", 0), ("2.5", 2)])
def test_offset_is_never_negative(raw: str, expected: int) -> None:
    assert parse_job_query({"offset": raw}).offset == expected


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"limit": 0}, "limit must be between 1 and 100"),
        ({"limit": 101}, "limit must be between 1 and 100"),
        ({"offset": -1}, "offset must not be negative"),
        ({"sort": "payload"}, "sort must be one of"),
        ({"order": "up"}, "order must be 'asc' or 'desc'"),
    ],
)
def test_a_directly_built_query_is_checked(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        JobQuery(**kwargs)  # pyright: ignore[reportArgumentType]
    # Decoding (as a REST layer holding JSON would) names the field too.
    (field,) = kwargs
    with pytest.raises(msgspec.ValidationError, match=field):
        msgspec.convert(kwargs, JobQuery)


@pytest.mark.parametrize(
    "module",
    [
        tsumugi_scheduler.readmodel.job_query,
        tsumugi_scheduler.readmodel.detail,
        tsumugi_scheduler.readmodel.retry_window,
    ],
    ids=lambda module: module.__name__,
)
def test_docstring_examples(module: ModuleType) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0
    assert result.failed == 0
