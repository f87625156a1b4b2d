"""The data folder is private to its user: the folder 0700, every file in it 0600 (issue 15 item 9).

It holds job payloads and results, the API token and every Durable Object's data; on a shared machine other
users must not read them. SQLite creates a database's ``-wal`` and ``-shm`` files with the database file's
own mode, so creating the database file 0600 first covers them too.

Example:
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "data"
    >>> private_dir(folder)
    >>> oct(folder.stat().st_mode & 0o777)
    '0o700'
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["private_dir", "private_file"]


def private_dir(path: Path) -> None:
    """Create ``path`` and any missing parents 0700 (existing parents are left alone); make ``path`` 0700."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)  # exist_ok: another runtime thread may create it first
    if path.stat().st_mode & 0o777 != 0o700:
        path.chmod(0o700)


def private_file(path: Path | str) -> None:
    """Create ``path`` empty if it does not exist, and make it 0600 (before SQLite or a writer opens it)."""
    descriptor = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
    try:
        if os.fstat(descriptor).st_mode & 0o777 != 0o600:
            os.fchmod(descriptor, 0o600)
    finally:
        os.close(descriptor)
