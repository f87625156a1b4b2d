"""A stdlib HTTP server for browser tests: the dashboard page at ``/`` and a fake REST API from fixtures.

It answers the shapes of docs/design/scheduler-rpc.md and the original's §4, records every request so tests can
check what the page asked for, and can demand a token cookie to exercise the 401 path.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fake_schedules import FakeSchedules

from tsumugi_scheduler.dashboard import render_dashboard

NOW = 1_767_225_600_000  # 2026-01-01T00:00:00Z

FAILED_ID = "SendMail#0:failedjob1"
SCHEDULED_ID = "Hello#0:waitingjob1"


def _summary(job_id: str, state: str, attempts: int, retryable: bool = False) -> dict[str, Any]:
    return {
        "id": job_id,
        "binding": job_id.split("#")[0],
        "state": state,
        "priority": 0,
        "attempts": attempts,
        "max_attempts": 3,
        "created_at": NOW - 60_000,
        "updated_at": NOW - 1_000,
        "dispatched_at": NOW - 5_000 if attempts else None,
        "retryable": retryable,
    }


JOBS = [
    _summary(FAILED_ID, "FAILED", 3, retryable=True),
    _summary("Hello#0:runningjob1", "RUNNING", 0),
    _summary(SCHEDULED_ID, "SCHEDULED", 0),
]

FAILED_DETAIL = {
    **_summary(FAILED_ID, "FAILED", 3, retryable=True),
    "concurrency_key": "user-1",
    "unique_key": None,
    "guarantee": "at-least-once",
    "run_after": NOW - 60_000,
    "progress": 0.5,
    "payload": json.dumps({"to": "a@example.com"}),
    "result": None,
    "timeout_ms": 60_000,
    "expires_at": None,
    "traceparent": None,
    "run_id": None,
    "node_id": None,
    "cancel_requested": False,
    "attempts_log": [  # newest first, as the API sends it
        {
            "attempt": 3,
            "state": "FAILED",
            "started_at": NOW - 5_000,
            "finished_at": NOW - 1_000,
            "error": "SmtpError: mailbox full (third)",
        },
        {
            "attempt": 2,
            "state": "FAILED",
            "started_at": NOW - 30_000,
            "finished_at": NOW - 29_000,
            "error": "SmtpError: connection reset (second)",
        },
        {
            "attempt": 1,
            "state": "FAILED",
            "started_at": NOW - 50_000,
            "finished_at": NOW - 49_500,
            "error": "SmtpError: timeout (first)",
        },
    ],
}

SCHEDULED_DETAIL = {
    **_summary(SCHEDULED_ID, "SCHEDULED", 0),
    "concurrency_key": "user-1",
    "unique_key": None,
    "guarantee": "at-least-once",
    "run_after": NOW,
    "progress": None,
    "payload": "{}",
    "result": None,
    "attempts_log": [],
    "cancel_requested": False,
}

EXPLAIN = {  # GET /api/jobs/{id}/explain wraps the shard's Explanation
    "explain": {
        "job_id": SCHEDULED_ID,
        "binding": "Hello",
        "state": "SCHEDULED",
        "now": NOW,
        "waiting": True,
        "summary": "1 blocker holds the job back",
        "blockers": [
            {
                "kind": "per_key_concurrency",
                "message": "concurrency_key user-1 is held by 1 in-flight job",
                "clears_at": None,
                "count": 1,
                "holders": ["Hello#0:runningjob1"],
            }
        ],
        "jobs_ahead": 0,
    }
}

_SHARD_DIAGNOSTICS = {
    "shard": 0,
    "active": 2,
    "outbox": 0,
    "counts": {"RUNNING": 1, "SCHEDULED": 1},
    "notices_pending": 0,
    "run_events_pending": 0,
    "blocked": {"paused": 0, "capacity": 0, "rate": 0, "per_key_concurrency": 1, "per_key_rate": 0},
    "held_back_by": ["per_key_concurrency"],
    "settings": {"paused": False, "concurrency": 100},
    "pinned": True,
}

ROUTES: dict[str, Any] = {
    "/api/jobs": {"jobs": JOBS, "total": len(JOBS)},
    f"/api/jobs/{urllib.parse.quote(FAILED_ID, safe='')}": {"job": FAILED_DETAIL},
    f"/api/jobs/{urllib.parse.quote(SCHEDULED_ID, safe='')}": {"job": SCHEDULED_DETAIL},
    f"/api/jobs/{urllib.parse.quote(SCHEDULED_ID, safe='')}/explain": EXPLAIN,
    "/api/stats": {"byState": {"FAILED": 1, "RUNNING": 1, "SCHEDULED": 1}, "oldestScheduledMs": 60_000},
    "/api/bindings": {"bindings": ["Hello", "SendMail"]},
    "/api/flows": {"flows": []},
    "/api/diagnostics": {
        "shard": 0,
        "bindings": {
            "Hello": {
                "active": 2,
                "outbox": 0,
                "blocked": {"capacity": False, "tokens": False, "perKey": True},
                "held_back_by": ["per_key_concurrency"],
                "pinned": True,
                "shards": [_SHARD_DIAGNOSTICS],
            }
        },
    },
    "/api/metrics": {
        "hours": 24,
        "bindings": [
            {
                "binding": "SendMail",
                "total": 10,
                "failed": 2,
                "failureRate": 0.2,
                "avgDurationMs": 120,
                "maxDurationMs": 2_500,
                "p95DurationMs": 900,
                "avgAttempts": 1.5,
            }
        ],
        "series": [
            {"at": NOW - 3_600_000, "total": 6, "failed": 1, "avgDurationMs": 100},
            {"at": NOW, "total": 4, "failed": 1, "avgDurationMs": 140},
        ],
    },
}
NOT_CONFIGURED = {"/api/schedules": "schedules are not available"}


@dataclass
class FakeApi:
    """What the fake server answers and what it saw."""

    token: str | None = None
    """When set, every /api request needs the cookie ``tsumugi_token`` with this value."""
    token_cookie: str | None = "tsumugi_token"
    """The cookie name the served page is rendered with (None: sign-in through an identity provider)."""
    requests: list[tuple[str, str]] = field(default_factory=lambda: [])
    """(method, raw path with query) of every request, in arrival order."""
    port: int = 0
    schedules: FakeSchedules | None = None
    """When set, /api/schedules answers from it (else 501: the schedules tab stays hidden)."""

    def url(self, fragment: str = "") -> str:
        """The page's URL (with an optional ``#/...`` route)."""
        return f"http://127.0.0.1:{self.port}/{fragment}"

    def api_paths(self) -> list[str]:
        """Paths (no query) of the /api requests seen."""
        return [path.split("?")[0] for _, path in self.requests if path.startswith("/api/")]


def _handler(api: FakeApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            return

        def _send(self, status: int, body: str, content_type: str = "application/json") -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _signed_in(self) -> bool:
            cookies = dict(
                part.strip().split("=", 1)
                for part in self.headers.get("cookie", "").split(";")
                if "=" in part
            )
            return api.token is None or urllib.parse.unquote(cookies.get("tsumugi_token", "")) == api.token

        def _answer(self) -> None:
            api.requests.append((self.command, self.path))
            path = self.path.split("?")[0]
            if not path.startswith("/api/"):
                self._send(200, render_dashboard(api.token_cookie), "text/html; charset=utf-8")
            elif not self._signed_in():
                self._send(401, json.dumps({"error": "unauthorized"}))
            elif api.schedules is not None and path.startswith("/api/schedules"):
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"null") if length else None
                status, answer = api.schedules.answer(self.command, path, body)
                self._send(status, json.dumps(answer))
            elif path in NOT_CONFIGURED:
                self._send(501, json.dumps({"error": NOT_CONFIGURED[path]}))
            elif self.command == "POST":
                self._send(200, json.dumps({"ok": True, "requested": path.endswith("/cancel")}))
            elif path in ROUTES:
                self._send(200, json.dumps(ROUTES[path]))
            else:
                self._send(404, json.dumps({"error": "not found"}))

        do_GET = _answer
        do_POST = _answer
        do_PATCH = _answer
        do_DELETE = _answer

    return Handler


@contextmanager
def serve(api: FakeApi) -> Iterator[FakeApi]:
    """Run the fake server on a free port of 127.0.0.1 for the duration of the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api))
    api.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
