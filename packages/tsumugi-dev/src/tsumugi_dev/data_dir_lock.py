"""One ``tsumugi dev`` per data directory, and a data directory removed or replaced under it noticed (ADR-0114).

Two processes on the same SQLite files race (``database is locked``) and leave the read model contradicting the
shards for good; a data directory deleted under a running dev is silently recreated empty at the next start.
So ``tsumugi dev`` takes an exclusive, non-blocking ``flock`` on ``<data dir>/dev.lock`` for its whole life
and writes its pid (and, once serving, its port) there. A second one fails to take the lock and exits at once,
naming the pid and port it read. The kernel drops the lock when the process ends, however it ends, so a
crashed dev leaves no stale lock behind (the file stays; its content is only informative).

While running, `DataDirLock.problem` compares the folder and the lock file with what was there at the start
(device and inode): gone or replaced means the state the runtime writes no longer lands where the next start
reads it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Final

__all__ = ["LOCK_FILE", "DataDirInUseError", "DataDirLock", "lock_data_dir", "watch_data_dir"]

LOCK_FILE: Final = "dev.lock"

try:
    import fcntl
except ImportError:  # Windows: no flock; the lock is then advisory only (the pid file is still written)
    fcntl = None


class DataDirInUseError(RuntimeError):
    """Another ``tsumugi dev`` holds the data directory; its pid and port, as it recorded them."""

    def __init__(self, data_dir: Path, pid: int | None, port: int | None) -> None:
        self.data_dir, self.pid, self.port = data_dir, pid, port
        who = f"pid {pid}" if pid is not None else "another process"
        where = f", serving on port {port}" if port is not None else ""
        super().__init__(
            f"the data directory {data_dir} is in use by another tsumugi dev ({who}{where}); stop it, or pass "
            "another --data-dir"
        )


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _read_holder(path: Path) -> tuple[int | None, int | None]:
    try:
        held = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return None, None
    if not isinstance(held, dict):
        return None, None
    pid, port = held.get("pid"), held.get("port")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return (pid if isinstance(pid, int) else None), (port if isinstance(port, int) else None)


class DataDirLock:
    """The held lock of one data directory; `release` (or process exit) gives it up."""

    def __init__(self, data_dir: Path, fd: int) -> None:
        self.data_dir = data_dir
        self._fd = fd
        self._path = data_dir / LOCK_FILE
        self._dir_identity = _identity(data_dir)
        self._file_identity = _identity(self._path)

    def record(self, port: int | None) -> None:
        """Write this process's pid and ``port`` into the lock file, for a second dev's message."""
        text = json.dumps({"pid": os.getpid(), "port": port}).encode()
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, text, 0)

    def problem(self) -> str | None:
        """Why the data directory is no longer the one this dev started on, or None while it is."""
        if _identity(self.data_dir) is None:
            return f"the data directory {self.data_dir} was removed while tsumugi dev was running"
        if _identity(self.data_dir) != self._dir_identity or _identity(self._path) != self._file_identity:
            return f"the data directory {self.data_dir} was replaced while tsumugi dev was running"
        return None

    def release(self) -> None:
        """Give the lock up (closing the file drops the flock)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def lock_data_dir(data_dir: Path) -> DataDirLock:
    """Take ``data_dir`` (made if missing) for this process.

    Raises:
        DataDirInUseError: Another process holds it.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            pid, port = _read_holder(path)
            raise DataDirInUseError(data_dir, pid, port) from None
    lock = DataDirLock(data_dir, fd)
    lock.record(None)
    return lock


async def watch_data_dir(lock: DataDirLock, stop: asyncio.Event, *, interval_s: float = 1.0) -> None:
    """Until ``stop`` is set: check the data directory every ``interval_s``; on a problem, report it on stderr
    and set ``stop`` (the runtime's writes would no longer reach what the next start reads)."""
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval_s)
        problem = lock.problem()
        if problem is not None:
            print(
                f"tsumugi dev: {problem}; stopping (what it wrote since is lost: restart on a fresh data "
                "directory, or restore the old one first)",
                file=sys.stderr,
                flush=True,
            )
            stop.set()
