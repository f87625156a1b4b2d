"""A code schedule's payload meets its performer's payload type when the scheduler is defined (ADR-0135).

``define_tsumugi(performers=[Hello, ...])`` knows Hello's payload type (``HelloPayload``: ``{"name": str}``),
so a schedule whose payload value Hello would refuse is refused at definition, naming the field and the rule
as an enqueue does; before, every occurrence enqueued a job that failed at its first attempt.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.fixtures.system.src.system_performers import Boom, Hello
from tsumugi_scheduler.definition import DefinitionError, define_tsumugi

EVERY_MS = 600_000


def _define(payload: Any, performers: tuple[str | type, ...] = (Hello, Boom)) -> None:
    define_tsumugi(
        performers=performers,
        schedules={"greet": {"binding": "Hello", "payload": payload, "every_ms": EVERY_MS}},
    )


@pytest.mark.parametrize(
    ("payload", "field", "rule"),
    [
        ({"name": 5}, "schedules.greet.payload.name", "must be a string, got an integer"),
        ({}, "schedules.greet.payload.name", "is required"),
        ("Ada", "schedules.greet.payload", "must be an object, got a string"),
        (None, "schedules.greet.payload", "must be an object, got null"),
    ],
)
def test_a_payload_value_the_performer_type_refuses_is_refused_at_definition(
    payload: Any, field: str, rule: str
) -> None:
    with pytest.raises(DefinitionError) as caught:
        _define(payload)
    assert (caught.value.option, caught.value.rule) == (field, rule)


def test_a_payload_the_type_accepts_is_defined() -> None:
    _define({"name": "Ada"})
    _define({"name": "Ada", "extra": 1.0})  # msgspec ignores other fields, so the performer takes it
    # A performer without a declared type (Boom: Any) takes any payload.
    define_tsumugi(
        performers=[Hello, Boom],
        schedules={"b": {"binding": "Boom", "payload": [1, "x"], "every_ms": EVERY_MS}},
    )


def test_what_the_definition_cannot_know_is_left_to_each_occurrence() -> None:
    # A binding named, not given as a class: its type lives in another Worker (checked at each enqueue).
    _define({"name": 5}, performers=("Hello", Boom))
    # A payload function: its value exists only at each occurrence.
    define_tsumugi(
        performers=[Hello],
        schedules={"greet": {"binding": "Hello", "payload": lambda at: 5, "every_ms": EVERY_MS}},
    )
