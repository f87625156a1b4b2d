"""A real ``tsumugi dev`` process for tests and benchmarks, waited on by its output lines (no sleeps, no polling).

`DevProcess` starts ``python -m tsumugi_dev dev --port 0 ...`` (this environment's Python) in a folder, reads its
output (stdout and stderr together) line by line on a thread, and lets the caller wait, up to a deadline, for the
first line matching a pattern; every line read so far is kept in ``lines``. `stop` signals it (SIGTERM, or what
the caller chose, e.g. SIGINT for Ctrl-C), kills it if it does not stop in time, collects the rest of its output
and closes the pipe, so nothing is left open.

Tests import it as ``tests.support.dev_process`` (pyproject's pytest ``pythonpath`` puts the repository root
on ``sys.path``); a benchmark puts the root there itself.
"""

from __future__ import annotations

import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

DEFAULT_TIMEOUT_S = 60.0


class DevProcess:
    """``tsumugi dev --port 0 *args`` in ``cwd`` with ``env``; its output lines arrive on a queue."""

    def __init__(
        self,
        cwd: Path,
        *args: str,
        env: Mapping[str, str],
        stop_signal: signal.Signals = signal.SIGTERM,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        command: Sequence[str] | None = None,
    ) -> None:
        self.lines: list[str] = []
        self.timeout_s = timeout_s
        self._stop_signal = stop_signal
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._ended = False
        self.proc = subprocess.Popen(
            # ``command`` runs ``tsumugi`` another way (e.g. ``uv run tsumugi`` in a project of its own).
            [*(command or (sys.executable, "-m", "tsumugi_dev")), "dev", "--port", "0", *args],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**env, "PYTHONUNBUFFERED": "1"},
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def text(self) -> str:
        """Every output line read so far."""
        return "\n".join(self.lines)

    def wait_for(self, pattern: str, deadline: float | None = None) -> re.Match[str]:
        """The first line (seen so far or arriving before ``deadline``, a `time.monotonic` instant; by default
        ``timeout_s`` from now) that matches ``pattern``; AssertionError with the output if none does."""
        compiled = re.compile(pattern)
        for line in self.lines:
            if found := compiled.search(line):
                return found
        end = time.monotonic() + self.timeout_s if deadline is None else deadline
        while not self._ended and (left := end - time.monotonic()) > 0:
            try:
                line = self._queue.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                self._ended = True
                break
            self.lines.append(line)
            if found := compiled.search(line):
                return found
        if self._ended:
            raise AssertionError("tsumugi dev exited:\n" + self.text())
        raise AssertionError(f"no line matching {pattern!r} in time:\n" + self.text())

    def ready_url(self, scheduler: str, deadline: float | None = None) -> str:
        """Wait until it says ready; the URL it printed for the scheduler Worker named ``scheduler``."""
        url = self.wait_for(rf"{re.escape(scheduler)}: (http://127\.0\.0\.1:\d+)", deadline).group(1)
        self.wait_for(r"tsumugi dev: ready", deadline)
        return url

    def stop(self) -> int:
        """Signal it, wait (kill it if it does not stop in time), collect the rest of its output; its exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(self._stop_signal)
        try:
            return self.proc.wait(timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()
        finally:
            self._reader.join(timeout=self.timeout_s)  # the pipe is at its end once the process has gone
            self._drain()
            assert self.proc.stdout is not None
            self.proc.stdout.close()

    def _drain(self) -> None:
        while not self._ended:
            try:
                line = self._queue.get_nowait()
            except queue.Empty:
                return
            if line is None:
                self._ended = True
            else:
                self.lines.append(line)
