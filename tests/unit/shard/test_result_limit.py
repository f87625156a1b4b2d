"""A result is stored up to 8,192 characters of JSON and dropped past it (issue 17: the limit as a literal)."""

from __future__ import annotations

from tsumugi_scheduler.shard.outcomes import encode_result


def test_a_result_of_8192_json_characters_is_stored_and_8193_is_not() -> None:
    assert encode_result("r" * 8_190) == '"' + "r" * 8_190 + '"'  # two quotes make 8,192
    assert encode_result("r" * 8_191) is None
