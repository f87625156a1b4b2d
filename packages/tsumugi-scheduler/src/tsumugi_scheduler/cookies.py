"""Reading a request's ``Cookie`` header."""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["cookie_values"]


def cookie_values(header: str, name: str) -> Iterator[str]:
    """Every value of the cookie ``name`` in a ``Cookie`` header (a browser may send several paths' copies).

    Example:
        >>> list(cookie_values("a=1; b=2; a=3", "a"))
        ['1', '3']
    """
    for part in header.split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key == name:
            yield value
