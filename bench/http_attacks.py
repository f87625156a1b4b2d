"""Does ``tsumugi dev`` keep serving under the attacks of issue 25? A second client's latency, measured.

Run: ``uv run python bench/http_attacks.py [--quick]``. Starts ``tsumugi dev`` on this repository's Workers in a
data folder of its own (a separate process, as a developer runs it), then for each attack measures a second
client's ``GET /api/jobs`` (bearer token, a new connection each time) while the attack runs from other threads:

- ``baseline``: no attack;
- ``deep_body`` (item 2): authenticated ``POST /api/jobs`` bodies of 1 MiB holding a string that opens and never
  closes, full of escaped quotes, sent back to back by 2 clients (the nesting check was quadratic on it);
- ``idle_flood`` (item 3): 1,100 connections opened and left idle, more than the connection cap (256);
- ``never_read`` (item 4): 100 connections that send requests for large answers and never read them.

It prints each attack's p50 and worst latency of the second client next to the 1 s target, then exactly one
``RESULT {json}`` line. ``--quick`` sends 10 measured requests per attack instead of 40.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Final

REPO: Final = Path(__file__).resolve().parents[1]
TARGET_S: Final = 1.0
BODY_BYTES: Final = 1024 * 1024


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def dev_server(folder: Path) -> Iterator[tuple[int, str]]:
    """``tsumugi dev`` on free ports; yields the scheduler's port and the API token."""
    port = _free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("TSUMUGI_TOKEN", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "tsumugi_dev", "dev", "--data-dir", str(folder / "data"), "--port", str(port)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    token = ""
    try:
        for line in process.stdout:
            found = re.search(r"API token: (\S+)", line)
            token = found[1] if found else token
            if "ready" in line:
                break
        threading.Thread(target=lambda: [None for _ in process.stdout or ()], daemon=True).start()  # drain
        yield port, token
    finally:
        process.terminate()
        process.wait(timeout=30)


def _request(port: int, head: bytes, body: bytes = b"", timeout: float = 30.0) -> tuple[int, float]:
    """One request on a new connection: its status and seconds until the whole answer arrived."""
    start = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        conn.sendall(head + body)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    answer = b"".join(chunks)
    return int(answer.split(b" ", 2)[1]), time.perf_counter() - start


def _head(method: str, path: str, port: int, token: str, length: int = 0) -> bytes:
    lines = [
        f"{method} {path} HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        f"Authorization: Bearer {token}",
        "Connection: close",
    ] + ([f"Content-Length: {length}", "Content-Type: application/json"] if length else [])
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def measure(port: int, token: str, count: int) -> list[float]:
    """The second client's latencies; a refused or failed request counts as the target missed."""
    latencies: list[float] = []
    for _ in range(count):
        try:
            status, seconds = _request(port, _head("GET", "/api/jobs?limit=5", port, token), timeout=10)
            latencies.append(seconds if status == 200 else float("inf"))
        except OSError:
            latencies.append(float("inf"))
        time.sleep(0.05)
    return latencies


def deep_body(port: int, token: str, stop: threading.Event) -> None:
    opening = b"[" * 101 + b'"'
    body = opening + b'\\"' * ((BODY_BYTES - len(opening)) // 2)
    while not stop.is_set():
        try:
            _request(port, _head("POST", "/api/jobs", port, token, len(body)), body, timeout=120)
        except OSError:
            time.sleep(0.05)


def idle_flood(port: int, token: str, stop: threading.Event) -> None:
    held: list[socket.socket] = []
    try:
        for _ in range(1_100):
            try:
                held.append(socket.create_connection(("127.0.0.1", port), timeout=5))
            except OSError:
                time.sleep(0.01)
        while not stop.wait(0.5):  # keep the flood up: reopen what the server closed
            for index, conn in enumerate(held):
                conn.setblocking(False)
                try:
                    closed = conn.recv(1) == b""
                except BlockingIOError:
                    closed = False
                except OSError:
                    closed = True
                if closed:
                    conn.close()
                    with suppress(OSError):
                        held[index] = socket.create_connection(("127.0.0.1", port), timeout=5)
    finally:
        for conn in held:
            conn.close()


def never_read(port: int, token: str, stop: threading.Event) -> None:
    held: list[socket.socket] = []
    try:
        for _ in range(100):
            conn = socket.socket()
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            conn.settimeout(5)
            try:
                conn.connect(("127.0.0.1", port))
                # The dashboard page (tens of KiB), asked twice on a connection that keeps alive: its kernel
                # buffers fill, and the server's write waits on a client that never reads.
                conn.sendall(_head("GET", "/", port, token).replace(b"Connection: close", b"X: y") * 2)
                held.append(conn)
            except OSError:
                conn.close()
        stop.wait()
    finally:
        for conn in held:
            conn.close()


ATTACKS: Final[dict[str, Callable[[int, str, threading.Event], None] | None]] = {
    "baseline": None,
    "deep_body": deep_body,
    "idle_flood": idle_flood,
    "never_read": never_read,
}


def run(
    port: int, token: str, name: str, attack: Callable[[int, str, threading.Event], None] | None, count: int
) -> dict[str, Any]:
    stop = threading.Event()
    threads = (
        [
            threading.Thread(target=attack, args=(port, token, stop), daemon=True)
            for _ in range(2 if name == "deep_body" else 1)
        ]
        if attack
        else []
    )
    for thread in threads:
        thread.start()
    time.sleep(2.0 if attack else 0.0)  # let the attack reach full strength
    latencies = measure(port, token, count)
    stop.set()
    for thread in threads:
        thread.join(timeout=150)
    worst = max(latencies)
    p50 = statistics.median(latencies)
    within = worst <= TARGET_S
    print(
        f"{name:>11}: second client p50 {p50 * 1000:8.1f} ms, worst {worst * 1000:8.1f} ms "
        f"(target < {TARGET_S * 1000:.0f} ms): {'within' if within else 'MISSED'}",
        flush=True,
    )
    return {
        f"{name}_p50_ms": round(p50 * 1000, 1),
        f"{name}_worst_ms": round(worst * 1000, 1),
        f"{name}_within_target": within,
    }


def main() -> None:
    """Start the server, run each attack, print; the last line is ``RESULT {json}``."""
    parser = argparse.ArgumentParser(description="A second client's latency under each attack of issue 25.")
    parser.add_argument("--quick", action="store_true", help="10 measured requests per attack")
    args = parser.parse_args()
    count = 10 if args.quick else 40
    result: dict[str, Any] = {"mode": "quick" if args.quick else "full", "target_ms": TARGET_S * 1000}
    with tempfile.TemporaryDirectory() as folder, dev_server(Path(folder)) as (port, token):
        for name, attack in ATTACKS.items():
            result.update(run(port, token, name, attack, count))
    print("RESULT " + json.dumps(result, sort_keys=True), flush=True)


if __name__ == "__main__":
    sys.exit(main())
