"""What a job list asks for (``GET /api/jobs``), and the lenient parsing of its query string.

Source: docs/reference/original.md §4.3.

``parse_job_query`` never fails: like the original, values it cannot use fall back to their defaults.
``JobQuery`` itself is strict, so code that builds one directly gets a clear error for a bad value.

Example:
    >>> q = parse_job_query({"state": "FAILED", "sort": "constructor", "limit": "500", "offset": "-3"})
    >>> (q.state, q.sort, q.order, q.limit, q.offset)
    ('FAILED', 'updated_at', 'desc', 100, 0)
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Final, Literal, cast

import msgspec

from tsumugi_core.exceptions import InvalidFieldError

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_EXCLUDED",
    "MAX_LIMIT",
    "MAX_TEXT",
    "SORT_COLUMNS",
    "JobQuery",
    "SortColumn",
    "SortOrder",
    "parse_job_query",
]

SortColumn = Literal["updated_at", "created_at", "binding", "state", "priority", "attempts"]
SortOrder = Literal["asc", "desc"]

SORT_COLUMNS: Final[frozenset[str]] = frozenset(
    {"updated_at", "created_at", "binding", "state", "priority", "attempts"}
)
"""Columns a list may sort by; anything else sorts by ``updated_at``."""

DEFAULT_LIMIT: Final = 20
MAX_LIMIT: Final = 100
MAX_TEXT: Final = 200
"""Longest search text; longer text is cut to this length when parsed."""
MAX_EXCLUDED: Final = 20
"""Most bindings one list leaves out (each is a bound parameter)."""
_MAX_SAFE_INTEGER: Final = 2**53 - 1
"""JavaScript's largest exact integer; bigger numbers are clamped so SQLite can bind them."""

# What JavaScript's Number() accepts as a finite decimal: optional sign, digits with an optional fraction,
# optional exponent. Python's float() would also take "1_000", "nan" and "inf", which Number() does not.
_DECIMAL_RE: Final = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class JobQuery(msgspec.Struct, frozen=True, kw_only=True):
    """Filters (ANDed, exact match), sort and page of a job list.

    Attributes:
        created_from: Inclusive lower bound on ``created_at`` (epoch ms).
        created_to: Inclusive upper bound on ``created_at`` (epoch ms).
        exclude_bindings: Bindings left out (at most ``MAX_EXCLUDED``), e.g. the notice bindings.
        sort: Sort column; ties are broken by ``id`` descending.
        limit: Page size, 1..``MAX_LIMIT``.
        offset: Rows skipped, 0 or more.
    """

    state: str | None = None
    binding: str | None = None
    id: str | None = None
    unique_key: str | None = None
    concurrency_key: str | None = None
    text: str | None = None
    """Text the payload, the last error or an attempt log contains (case-insensitive; ADR-0139)."""
    created_from: int | None = None
    created_to: int | None = None
    exclude_bindings: tuple[str, ...] = ()
    sort: SortColumn = "updated_at"
    order: SortOrder = "desc"
    limit: int = DEFAULT_LIMIT
    offset: int = 0

    def __post_init__(self) -> None:
        """Reject values no list can use; the message names the field and the rule."""
        if self.sort not in SORT_COLUMNS:
            raise InvalidFieldError(
                "sort", f"must be one of {', '.join(sorted(SORT_COLUMNS))}, got {self.sort!r}"
            )
        if self.order not in ("asc", "desc"):
            raise InvalidFieldError("order", f"must be 'asc' or 'desc', got {self.order!r}")
        if not 1 <= self.limit <= MAX_LIMIT:
            raise InvalidFieldError("limit", f"must be between 1 and {MAX_LIMIT}, got {self.limit}")
        if self.offset < 0:
            raise InvalidFieldError("offset", f"must not be negative, got {self.offset}")
        if self.text is not None and not 0 < len(self.text) <= MAX_TEXT:
            raise InvalidFieldError("text", f"must be 1 to {MAX_TEXT} characters, got {len(self.text)}")
        if len(self.exclude_bindings) > MAX_EXCLUDED:
            raise InvalidFieldError("exclude_bindings", f"must list at most {MAX_EXCLUDED} bindings")


def _number(text: str | None) -> float | None:
    """The finite number ``text`` spells, or None (empty and non-numeric text alike)."""
    if text is None:
        return None
    stripped = text.strip()
    if not _DECIMAL_RE.fullmatch(stripped):
        return None
    value = float(stripped)
    if not math.isfinite(value):
        return None
    return max(-_MAX_SAFE_INTEGER, min(value, _MAX_SAFE_INTEGER))


def _text(params: Mapping[str, str], name: str) -> str | None:
    # An empty value is the same as an absent one: the dashboard sends "state=" for "any state".
    value = params.get(name)
    return value if value else None


def _limit(text: str | None) -> int:
    number = _number(text)
    if number is None or number < 1:
        # 0, negative (gap 28: LIMIT -5 would mean "no limit" in SQLite) and junk all mean "default".
        return DEFAULT_LIMIT
    return min(math.floor(number), MAX_LIMIT)


def _offset(text: str | None) -> int:
    number = _number(text)
    return 0 if number is None or number < 0 else math.floor(number)


def _excluded(text: str | None) -> tuple[str, ...]:
    names = dict.fromkeys(name.strip() for name in (text or "").split(","))
    return tuple(name for name in names if name)[:MAX_EXCLUDED]


def parse_job_query(params: Mapping[str, str]) -> JobQuery:
    """Build a ``JobQuery`` from query-string values, with the original's lenient rules.

    Empty or non-numeric ``created_from`` / ``created_to`` are ignored (``0`` is honoured; fractions round
    inward, which keeps the inclusive bounds exact for integer instants); an unknown ``sort`` means
    ``updated_at``; any ``order`` but ``asc`` means descending; ``limit`` defaults to 20 when missing, 0,
    negative or non-numeric and is capped at 100; ``offset`` defaults to 0 when negative or non-numeric;
    ``exclude_bindings`` is a comma-separated list (blanks and repeats dropped, the first 20 kept).

    Args:
        params: Query parameters (the first value of each name).

    Returns:
        A valid query.
    """
    created_from = _number(params.get("created_from"))
    created_to = _number(params.get("created_to"))
    sort = params.get("sort", "")
    return JobQuery(
        state=_text(params, "state"),
        binding=_text(params, "binding"),
        id=_text(params, "id"),
        unique_key=_text(params, "unique_key"),
        concurrency_key=_text(params, "concurrency_key"),
        text=(_text(params, "text") or "").strip()[:MAX_TEXT] or None,
        created_from=None if created_from is None else math.ceil(created_from),
        created_to=None if created_to is None else math.floor(created_to),
        exclude_bindings=_excluded(params.get("exclude_bindings")),
        sort=cast(SortColumn, sort) if sort in SORT_COLUMNS else "updated_at",
        order="asc" if params.get("order") == "asc" else "desc",
        limit=_limit(params.get("limit")),
        offset=_offset(params.get("offset")),
    )
