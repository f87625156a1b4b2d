"""Ids the scheduler derives, as a test names them: without the digest of the deriving object's key."""

from __future__ import annotations

import re
from typing import Final

DIGEST: Final = re.compile(r"-[0-9a-f]{12}$")
"""The end of a schedule occurrence's, a run now's or a notice's job or run id (ADR-0177)."""


def readable(derived: str) -> str:
    """``derived`` without its final ``-<12 hex digits>``; an id without one is answered as it is."""
    return DIGEST.sub("", derived)
