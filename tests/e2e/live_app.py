"""The real scheduler (with the example performers) on the local runtime, served over HTTP from a thread.

Browser tests drive it the way a user of ``tsumugi dev`` would: the real REST API, the real dashboard page and
the dev HTTP server, on a free port of 127.0.0.1. `attacker_site` serves pages from another port of the same
host, which is the same *site* as the app but another *origin*.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tsumugi_dev.access_dev import AccessDev
from tsumugi_dev.config import load_config
from tsumugi_dev.http_server import WorkerServer
from tsumugi_dev.runtime import LocalRuntime

REPO = Path(__file__).resolve().parents[2]
SCHEDULER_CONFIG = REPO / "services" / "scheduler" / "wrangler.jsonc"
PERFORMERS_CONFIG = REPO / "services" / "performers" / "wrangler.jsonc"
SCHEDULER = "tsumugi-scheduler"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LiveApp:
    """The scheduler Worker's HTTP front at `url`, its token `token`."""

    def __init__(self, data_dir: Path, token: str, access: AccessDev | None = None) -> None:
        self.token = token
        self.access = access
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        configs = [
            load_config(SCHEDULER_CONFIG).with_secrets({"TSUMUGI_TOKEN": token}),
            load_config(PERFORMERS_CONFIG),
        ]
        if access is not None:
            configs = access.configure(configs)
        self._runtime = LocalRuntime(configs, data_dir=data_dir)
        self._server = WorkerServer(self._runtime, SCHEDULER, self.port)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def _run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=120)

    async def _start(self) -> None:
        if self.access is not None:
            await self.access.start()
        await self._runtime.start()
        await self._server.start()

    async def _stop(self) -> None:
        await self._server.stop()
        await self._runtime.stop()
        if self.access is not None:
            await self.access.stop()

    def start(self) -> None:
        self._thread.start()
        self._run(self._start())

    def stop(self) -> None:
        try:
            self._run(self._stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()

    def api(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """A bearer-token call (what a script or the HTTP client does)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}{path}", data=data, method=method)
        request.add_header("authorization", f"Bearer {self.token}")
        if data is not None:
            request.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            with error:
                return error.code, json.loads(error.read() or b"null")


@contextmanager
def live_app(data_dir: Path, token: str, access: AccessDev | None = None) -> Iterator[LiveApp]:
    app = LiveApp(data_dir, token, access)
    app.start()
    try:
        yield app
    finally:
        app.stop()


@contextmanager
def attacker_site(pages: dict[str, str]) -> Iterator[str]:
    """Serve ``pages`` (path -> HTML) on another free port of 127.0.0.1; yields its origin."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            body = pages.get(self.path, "not here").encode()
            self.send_response(200 if self.path in pages else 404)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
