"""The runtime's own SQLite file (queues, the alarm index): opened so a write is durable once it returns."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tsumugi_dev.private_files import private_dir, private_file

__all__ = ["open_state_db"]


def open_state_db(path: Path | str) -> sqlite3.Connection:
    """Open (creating) a SQLite file in autocommit mode with WAL.

    WAL with ``synchronous=NORMAL`` keeps every committed write across a killed process (it can lose the last
    commits only when the whole machine stops), which is the crash the local runtime has to survive.
    """
    if str(path) != ":memory:":
        private_dir(Path(path).parent)
        private_file(path)
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA busy_timeout=5000")
    return conn
