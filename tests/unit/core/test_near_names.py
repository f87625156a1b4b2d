"""Did-you-mean suggestions for mistyped option and binding names (issue 26 item 7)."""

from __future__ import annotations

from tsumugi_core.near_names import did_you_mean, nearest_name


def test_a_near_miss_names_the_known_name_and_a_far_one_nothing() -> None:
    assert nearest_name("max_attempt", ["priority", "max_attempts", "timeout_ms"]) == "max_attempts"
    assert nearest_name("sendmail", ["Hello", "SendMail"]) == "SendMail"  # case does not count
    assert nearest_name("Reporting", ["Hello", "SendMail"]) is None
    assert nearest_name("Hello", ["Hello"]) is None  # the name itself is no suggestion
    assert did_you_mean("Helo", ["Hello"]) == " (did you mean Hello?)"
    assert did_you_mean("Helo", []) == ""


def test_the_cutoff_is_three_quarters_alike() -> None:
    # "abcd" vs "abxy": ratio 0.5, refused; "abcd" vs "abcx": 0.75, the boundary itself, accepted.
    assert nearest_name("abcd", ["abxy"]) is None
    assert nearest_name("abcd", ["abcx"]) == "abcx"
