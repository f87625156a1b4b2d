"""Policy numbers up to 2^53 - 1 and not one more, and the error's field and rule apart (issue 17)."""

from __future__ import annotations

import pytest

from tsumugi_core.policy import PolicyPatch, PolicyValidationError, validate_settings


def test_the_largest_safe_integer_is_taken_and_one_more_is_refused_naming_the_field() -> None:
    validate_settings(PolicyPatch(concurrency=9_007_199_254_740_991, reaper_grace_ms=9_007_199_254_740_991))
    with pytest.raises(PolicyValidationError) as caught:
        validate_settings(PolicyPatch(reaper_grace_ms=9_007_199_254_740_992))
    assert (caught.value.field, caught.value.rule, str(caught.value)) == (
        "reaper_grace_ms",
        "must be at most 9007199254740991",
        "reaper_grace_ms must be at most 9007199254740991",
    )
