"""The known name a mistyped one most likely meant, for "did you mean" in error messages.

Example:
    >>> did_you_mean("max_attempt", ["max_attempts", "priority"])
    ' (did you mean max_attempts?)'
    >>> did_you_mean("Helo", ["Hello", "SendMail"]), did_you_mean("zzz", ["Hello"])
    (' (did you mean Hello?)', '')
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Final

__all__ = ["did_you_mean", "nearest_name"]

_CUTOFF: Final = 0.75
"""How alike (difflib's ratio, 0..1) a known name must be to be suggested."""


def nearest_name(name: str, known: Iterable[str]) -> str | None:
    """The known name closest to ``name`` (case-insensitively), or None when none is close."""
    by_folded = {candidate.casefold(): candidate for candidate in known if candidate != name}
    found = difflib.get_close_matches(name.casefold(), list(by_folded), n=1, cutoff=_CUTOFF)
    return by_folded[found[0]] if found else None


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean X?)`` for the closest known name, or ``""``."""
    nearest = nearest_name(name, known)
    return "" if nearest is None else f" (did you mean {nearest}?)"
