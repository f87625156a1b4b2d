"""The body's nesting check is linear in its length (issue 25 item 2).

The old string pattern needed a closing quote, so on ``"\\"\\"\\"...`` (a string that opens and never closes) it
scanned to the end from every escaped quote: 22 s for 64 KiB and, by the curve, about an hour at the 1 MiB cap,
during which the isolate served no other request. The guard below is the test's timeout: the check itself takes
milliseconds, and the old one never finishes within it.
"""

from __future__ import annotations

import pytest

from tsumugi_scheduler.api.answers import ApiError
from tsumugi_scheduler.api.json_body import MAX_BODY_DEPTH, _depth, read_json  # pyright: ignore[reportPrivateUsage]
from tsumugi_scheduler.request_limits import MAX_BODY_BYTES

_DEEP = "[" * (MAX_BODY_DEPTH + 1)


def _filled(opening: str, unit: str, closing: str = "") -> str:
    return opening + unit * ((MAX_BODY_BYTES - len(opening) - len(closing)) // len(unit)) + closing


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "body",
    [
        _filled(_DEEP + '"', '\\"'),  # escaped quotes after an unclosed one: the quadratic case
        _filled(_DEEP + '"', "\\\\"),  # escaped backslashes
        _filled(_DEEP, '"\\'),  # a quote and a lone backslash, repeated
        _filled(_DEEP + '"', "a", "\\"),  # a lone backslash at the very end
    ],
    ids=["escaped-quotes", "escaped-backslashes", "quote-backslash", "trailing-backslash"],
)
def test_a_body_at_the_cap_whose_string_never_closes_is_refused_at_once(body: str) -> None:
    assert len(body.encode()) <= MAX_BODY_BYTES
    with pytest.raises(ApiError) as refused:
        read_json(body)
    assert refused.value.status == 400


@pytest.mark.parametrize(
    ("body", "depth"),
    [
        ('"\\"[[[["' + "[" * 3 + "]" * 3, 3),  # an escaped quote does not end the string
        ('["\\\\", [[]]]', 3),  # an escaped backslash does not escape the closing quote
        ('"a' + "[" * 200, 0),  # an unclosed string holds the rest of the text
    ],
)
def test_brackets_in_strings_are_text_and_only_structure_counts(body: str, depth: int) -> None:
    assert _depth(body) == depth
