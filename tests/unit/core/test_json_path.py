"""Paths and errors of json_path as a user reads them (found by mutation testing, ADR-0088)."""

from __future__ import annotations

from tsumugi_core.json_path import InvalidValueError, format_path


def test_a_key_outside_ascii_is_quoted_as_typed_not_escaped() -> None:
    assert format_path("payload", ["名前", 0, "café au lait"]) == 'payload["名前"][0]["café au lait"]'


def test_an_errors_message_is_its_rule() -> None:
    error = InvalidValueError("must be a string, got an integer").inside("name")
    assert str(error) == "must be a string, got an integer"
    assert error.path("payload") == "payload.name"
