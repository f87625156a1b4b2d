"""Where inside a JSON value a rule was broken: `InvalidValueError` and its path (``payload.items[3].name``).

Checkers raise `InvalidValueError` at the offending value with the rule only; each container the error passes
on its way out adds its key or index (`InvalidValueError.inside`), so no path is built unless a value fails.

Example:
    >>> error = InvalidValueError("must be a string, got an integer").inside("name").inside(3).inside("items")
    >>> error.path("payload")
    'payload.items[3].name'
    >>> format_path("payload", ["odd key", 0])
    'payload["odd key"][0]'
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Final

from tsumugi_core.exceptions import TsumugiError

__all__ = ["InvalidValueError", "format_path"]

_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def format_path(root: str, segments: Iterable[str | int]) -> str:
    """``root`` followed by each segment: ``.name`` for a plain key, ``["key"]`` for others, ``[i]`` for an index."""
    parts = [root]
    for segment in segments:
        if isinstance(segment, int):
            parts.append(f"[{segment}]")
        elif _NAME.fullmatch(segment):
            parts.append(f".{segment}")
        else:
            parts.append(f"[{json.dumps(segment, ensure_ascii=False)}]")
    return "".join(parts)


class InvalidValueError(TsumugiError, ValueError):
    """A value inside a JSON document broke ``rule``.

    Attributes:
        rule: What the value must satisfy, e.g. ``must be a string, got an integer``.
        segments: Keys and indexes from the offending value outwards (innermost first).
    """

    def __init__(self, rule: str) -> None:
        super().__init__(rule)
        self.rule = rule
        self.segments: list[str | int] = []

    def inside(self, segment: str | int) -> InvalidValueError:
        """This error, one level further out (inside ``segment`` of its container)."""
        self.segments.append(segment)
        return self

    def path(self, root: str) -> str:
        """The offending value's path from ``root``."""
        return format_path(root, reversed(self.segments))
