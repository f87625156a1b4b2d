"""Tracebacks without the machine's absolute paths (issue 15 item 9).

An attempt's error text is stored and shown in the dashboard; an absolute path names the user's home folder and
the layout of their site-packages. Each ``File "/abs/path.py"`` is written relative to the import root it was
loaded from (the longest ``sys.path`` entry that contains it), e.g. ``File "tsumugi_examples/boom.py"``; a file
under no root keeps only its name. Line numbers, function names and source lines stay.

Example:
    >>> trace = 'File "/home/ada/app/src/shop/mail.py", line 3, in perform'
    >>> relative_trace(trace, ["/home/ada/app/src", "/usr/lib/python3.13"])
    'File "shop/mail.py", line 3, in perform'
    >>> relative_trace('File "/opt/other/x.py", line 1', ["/home/ada/app/src"])
    'File "x.py", line 1'
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from typing import Final

__all__ = ["relative_trace"]

_FILE: Final = re.compile(r'File "(/[^"]*)"')


def relative_trace(trace: str, roots: Iterable[str] | None = None) -> str:
    """``trace`` with every absolute ``File "..."`` path made relative to its import root (``sys.path``)."""
    prefixes = sorted(
        {root.rstrip("/") + "/" for root in (sys.path if roots is None else roots) if root.startswith("/")},
        key=len,
        reverse=True,
    )

    def shorten(match: re.Match[str]) -> str:
        path = match[1]
        for prefix in prefixes:
            if path.startswith(prefix):
                return f'File "{path[len(prefix) :]}"'
        return f'File "{path.rsplit("/", 1)[-1]}"'

    return _FILE.sub(shorten, trace)
