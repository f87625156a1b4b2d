"""A stdlib HTTP server for browser tests: the dashboard page at ``/`` and a fake REST API from fixtures.

It answers the shapes of docs/design/scheduler-rpc.md and the docs/reference/original.md §4, records every
request so tests can check what the page asked for, and can demand a token cookie to exercise the 401 path.
Where the real API derives a shape in code, the fake calls that code: shard diagnostics go through the API's
``shard_view`` and settings through ``settings_view``, so a change there shows in the dashboard tests too. The
bindings are those of ``tsumugi dev`` (six, two of them notice receivers).
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import msgspec

from tests.e2e.fake_schedules import FakeSchedules
from tsumugi_core.options import RateLimit
from tsumugi_core.policy import Policy, ShardSettings
from tsumugi_core.states import current_attempt
from tsumugi_scheduler.api.insight import AXES, shard_view
from tsumugi_scheduler.dashboard import render_dashboard
from tsumugi_scheduler.shard_admin import settings_view

NOW = 1_767_225_600_000  # 2026-01-01T00:00:00Z

FAILED_ID = "SendMail#0:failedjob1"
SCHEDULED_ID = "Hello#0:waitingjob1"
RUNNING_ID = "Hello#0:runningjob1"
CANCELLED_ID = "Slow#0:cancelledjob1"
DELAYED_ID = "Hello#0:delayedjob1"
NOTICE_ID = "NotifyFailure#0:noticejob1"
BINDINGS = ["Boom", "Hello", "NotifyFailure", "NotifySettled", "SendMail", "Slow"]
NOTICES = ["NotifyFailure", "NotifySettled"]

TRACEBACK = "\n".join(
    ["Traceback (most recent call last):"]
    + [
        f'  File "/srv/app/services/performers/src/tsumugi_examples/send_mail.py", line {40 + i}, in perform\n'
        f"    await self._deliver(payload.to, payload.subject, payload.body, retries={i}, timeout_ms=30000)"
        for i in range(12)
    ]
    + ["SmtpError: mailbox full (third): the receiving server answered 552 5.2.2 for a@example.com"]
)


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
        "dispatched_at": NOW - 5_000 if attempts or state == "RUNNING" else None,
        "retryable": retryable,
        "current_attempt": current_attempt(state, attempts),
    }


JOBS = [
    _summary(FAILED_ID, "FAILED", 3, retryable=True),
    _summary(RUNNING_ID, "RUNNING", 1),  # its second attempt runs: attempts counts finished ones
    _summary(SCHEDULED_ID, "SCHEDULED", 0),
    _summary(NOTICE_ID, "COMPLETED", 1),
]


def _detail(summary: dict[str, Any], **fields: Any) -> dict[str, Any]:
    base = {
        "concurrency_key": None,
        "unique_key": None,
        "guarantee": "at-least-once",
        "run_after": NOW - 60_000,
        "progress": None,
        "payload": "{}",
        "result": None,
        "timeout_ms": 60_000,
        "expires_at": None,
        "traceparent": None,
        "run_id": None,
        "node_id": None,
        "cancel_requested": False,
        "attempts_log": [],
    }
    return {**summary, **base, **fields}


FAILED_DETAIL = _detail(
    _summary(FAILED_ID, "FAILED", 3, retryable=True),
    concurrency_key="user-1",
    progress=0.5,
    payload=json.dumps({"to": "a@example.com"}),
    attempts_log=[  # newest first, as the API sends it
        {
            "attempt": 3,
            "state": "FAILED",
            "started_at": NOW - 5_000,
            "finished_at": NOW - 1_000,
            "error": TRACEBACK,
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
)

SCHEDULED_DETAIL = _detail(_summary(SCHEDULED_ID, "SCHEDULED", 0), concurrency_key="user-1", run_after=NOW)

DELAYED_DETAIL = _detail(_summary(DELAYED_ID, "SCHEDULED", 0), run_after=NOW + 252_000)

# A job cancelled while running, as a scheduler before issue 11 logged it: the stopped attempt reads FAILED
# and the detail still carries the (honoured) cancel request.
CANCELLED_DETAIL = _detail(
    _summary(CANCELLED_ID, "CANCELLED", 1),
    cancel_requested=True,
    attempts_log=[
        {
            "attempt": 1,
            "state": "FAILED",
            "started_at": NOW - 12_000,
            "finished_at": NOW - 1_000,
            "error": "SlowCancelledError: cancelled after 10s of 30s",
        }
    ],
)

EXPLAIN = {  # GET /api/jobs/{id}/explain wraps the shard's Explanation
    "explain": {
        "job_id": SCHEDULED_ID,
        "binding": "Hello",
        "state": "SCHEDULED",
        "now": NOW,
        "waiting": True,
        "summary": f"waits for job {RUNNING_ID} of concurrency_key 'user-1' (per-key concurrency 1)",
        "blockers": [
            {
                "kind": "per_key_concurrency",
                "message": f"waits for job {RUNNING_ID} of concurrency_key 'user-1' (per-key concurrency 1)",
                "clears_at": None,
                "count": 1,
                "holders": [RUNNING_ID],
                "key": "user-1",
                "limit": 1,
            }
        ],
        "jobs_ahead": 0,
    }
}

DELAYED_EXPLAIN = {
    "explain": {
        "job_id": DELAYED_ID,
        "binding": "Hello",
        "state": "SCHEDULED",
        "now": NOW,
        "waiting": True,
        "summary": "run_after is in the future: ready in 4 min 12 s (2026-01-01T00:04:12Z)",
        "blockers": [
            {
                "kind": "run_after",
                "message": "run_after is in the future: ready in 4 min 12 s (2026-01-01T00:04:12Z)",
                "clears_at": NOW + 252_000,
                "count": None,
                "holders": [],
                "key": None,
                "limit": None,
            }
        ],
        "jobs_ahead": 0,
    }
}


def _quoted(job_id: str) -> str:
    return urllib.parse.quote(job_id, safe="")


DETAILS = {
    FAILED_ID: FAILED_DETAIL,
    SCHEDULED_ID: SCHEDULED_DETAIL,
    DELAYED_ID: DELAYED_DETAIL,
    CANCELLED_ID: CANCELLED_DETAIL,
    RUNNING_ID: _detail(
        _summary(RUNNING_ID, "RUNNING", 1),
        concurrency_key="user-1",
        progress=0.3,
        attempts_log=[
            {
                "attempt": 1,
                "state": "FAILED",
                "started_at": NOW - 40_000,
                "finished_at": NOW - 39_000,
                "error": "ConnectionResetError: first attempt lost its connection",
            }
        ],
    ),
    NOTICE_ID: _detail(
        _summary(NOTICE_ID, "COMPLETED", 1), result=json.dumps("FAILED SendMail#0:failedjob1")
    ),
}

_CODE = ShardSettings()
_RATE = ShardSettings(policy=Policy(rate=RateLimit(tokens=10, interval_ms=1_000), concurrency=4))


def _raw_shard(
    counts: dict[str, int], blocked: dict[str, int], settings: ShardSettings, pinned: bool, outbox: int = 0
) -> dict[str, Any]:
    """One shard's answer as ``ShardAdmin.diagnostics`` gives it."""
    return {
        "counts": counts,
        "changes_pending": outbox,
        "notices_pending": 0,
        "run_events_pending": 0,
        "blocked": {axis: blocked.get(axis, 0) for axis in AXES},
        "settings": settings_view(settings),
        "pinned": pinned,
    }


def _binding_view(shards: list[dict[str, Any]]) -> dict[str, Any]:
    """The binding-level figures as ``api/insight.py`` aggregates them."""
    views = [shard_view(i, raw) for i, raw in enumerate(shards)]
    first = views[0]
    return {
        "active": first["active"],
        "outbox": first["outbox"],
        "blocked": {
            "capacity": first["blocked"]["capacity"] > 0,
            "tokens": first["blocked"]["rate"] > 0,
            "perKey": first["blocked"]["per_key_concurrency"] + first["blocked"]["per_key_rate"] > 0,
        },
        "held_back_by": sorted({a for v in views for a in v["held_back_by"]}, key=AXES.index),
        "pinned": any(v["pinned"] for v in views),
        "shards": views,
    }


def _metrics(hours: int, binding: str | None, bucket_minutes: int) -> dict[str, Any]:
    """A report in the real shape, its buckets laid over the last ``hours`` of the wall clock."""
    bucket = bucket_minutes * 60_000
    now = int(time.time() * 1000)
    first = (now - hours * 3_600_000) // bucket * bucket
    series = []
    for i, at in enumerate(range(first, now + 1, bucket)):
        if i % 7 == 3:
            continue  # a quiet bucket: no point at all, as Analytics Engine answers
        total = 5 + (i * 7) % 11
        failed = (i % 5 == 0) + (i % 9 == 0)
        series.append(
            {
                "at": at,
                "total": total,
                "failed": failed,
                "avgDurationMs": 90 + i % 13 * 10,
                "p50DurationMs": 80 + i % 7 * 5,
                "p95DurationMs": 400 + i % 11 * 40,
                "p99DurationMs": 900 + i % 6 * 200,
            }
        )
    rows = [
        {
            "binding": "SendMail",
            "total": 10,
            "failed": 2,
            "failureRate": 0.2,
            "avgDurationMs": 120,
            "maxDurationMs": 2_500,
            "p95DurationMs": 900,
            "avgAttempts": 1.5,
            "p50DurationMs": 80,
            "p99DurationMs": 2_400,
        },
        {
            "binding": "Hello",
            "total": 40,
            "failed": 0,
            "failureRate": 0.0,
            "avgDurationMs": 3,
            "maxDurationMs": 20,
            "p95DurationMs": 9,
            "avgAttempts": 1.0,
            "p50DurationMs": 2,
            "p99DurationMs": 18,
        },
    ]
    if binding:
        rows = [r for r in rows if r["binding"] == binding]
    return {"hours": hours, "bindings": rows, "series": series, "bucketMs": bucket}


def _job_list(query: dict[str, str]) -> dict[str, Any]:
    """``GET /api/jobs``: the filters the dashboard sends, and a text search as the real API answers it."""
    excluded = set(filter(None, query.get("exclude_bindings", "").split(",")))
    jobs = [
        j
        for j in JOBS
        if j["binding"] not in excluded
        and (not query.get("binding") or j["binding"] == query["binding"])
        and (not query.get("state") or j["state"] == query["state"])
    ]
    text = query.get("text")
    if not text:
        return {"jobs": jobs, "total": len(jobs)}
    # Payload and errors, case-insensitive, within the window read (here every job the filters keep).
    found = [j for j in jobs if text.lower() in json.dumps(DETAILS[j["id"]]).lower()]
    return {"jobs": found, "total": len(found), "searched": len(jobs)}


def _default_shards() -> dict[str, list[dict[str, Any]]]:
    return {
        "Hello": [_raw_shard({"RUNNING": 1, "SCHEDULED": 2}, {"per_key_concurrency": 1}, _CODE, pinned=True)],
        "SendMail": [
            _raw_shard({"FAILED": 1, "QUEUED": 3, "SCHEDULED": 5}, {"rate": 5}, _RATE, pinned=False),
            _raw_shard({"RUNNING": 1}, {}, _RATE, pinned=False, outbox=2),
        ],
        "Slow": [_raw_shard({"CANCELLED": 1}, {}, _CODE, pinned=False)],
        "Boom": [_raw_shard({"FAILED": 4}, {}, _CODE, pinned=False)],
        "NotifyFailure": [_raw_shard({"COMPLETED": 1}, {}, _CODE, pinned=False)],
        "NotifySettled": [_raw_shard({}, {}, _CODE, pinned=False)],
    }


NOT_CONFIGURED = {"/api/schedules": "schedules are not available"}
_POLICY_MINIMUM = {
    "concurrency": 0,
    "per_key_concurrency": 1,
    "reaper_grace_ms": 0,
    "sweep_after_ms": 0,
    "failed_retention_ms": 0,
}


_FAKE_SESSION = "v1.fake-session"


@dataclass
class FakeApi:
    """What the fake server answers and what it saw."""

    token: str | None = None
    """When set, every /api request needs the cookie ``tsumugi_token`` with this value."""
    token_cookie: str | None = "tsumugi_token"
    """The cookie name the served page is rendered with (None: sign-in through an identity provider)."""
    requests: list[tuple[str, str]] = field(default_factory=lambda: [])
    """(method, raw path with query) of every request, in arrival order."""
    bodies: list[tuple[str, Any]] = field(default_factory=lambda: [])
    """(path, decoded JSON body) of every POST, in arrival order."""
    shards: dict[str, list[dict[str, Any]]] = field(default_factory=_default_shards)
    """Per binding, each shard's raw diagnostics answer; policy POSTs change them."""
    flows: bool = False
    """When set, flows are registered and the runs of fake_runs answer (else no flow exists, as before)."""
    port: int = 0
    schedules: FakeSchedules | None = None
    """When set, /api/schedules answers from it (else 501: the schedules tab stays hidden)."""

    def url(self, fragment: str = "") -> str:
        """The page's URL (with an optional ``#/...`` route)."""
        return f"http://127.0.0.1:{self.port}/{fragment}"

    def api_paths(self) -> list[str]:
        """Paths (no query) of the /api requests seen."""
        return [path.split("?")[0] for _, path in self.requests if path.startswith("/api/")]

    def queries(self, path: str) -> list[dict[str, str]]:
        """The query parameters of every request to ``path``."""
        found = []
        for _, raw in self.requests:
            route, _, query = raw.partition("?")
            if route == path:
                found.append(dict(urllib.parse.parse_qsl(query)))
        return found

    def get(self, path: str, query: dict[str, str]) -> tuple[int, Any]:
        """The answer to a GET of an /api path."""
        if path == "/api/jobs":
            return 200, _job_list(query)
        if path == "/api/bindings":
            return 200, {"bindings": BINDINGS, "notices": NOTICES}
        if path == "/api/diagnostics":
            return 200, {
                "shard": 0,
                "bindings": {b: _binding_view(s) for b, s in sorted(self.shards.items())},
            }
        if path == "/api/metrics":
            return 200, _metrics(
                int(query.get("hours", 24)), query.get("binding"), int(query.get("bucket_minutes", 60))
            )
        if path == "/api/stats":
            excluded = set(filter(None, query.get("exclude_bindings", "").split(",")))
            by_state: dict[str, int] = {}
            for job in JOBS:
                if job["binding"] not in excluded:
                    by_state[job["state"]] = by_state.get(job["state"], 0) + 1
            return 200, {"byState": by_state, "oldestScheduledMs": 60_000}
        if path == "/api/flows":
            return 200, {"flows": []}
        for job_id, detail in DETAILS.items():
            if path == f"/api/jobs/{_quoted(job_id)}":
                return 200, {"job": detail}
        if path == f"/api/jobs/{_quoted(SCHEDULED_ID)}/explain":
            return 200, EXPLAIN
        if path == f"/api/jobs/{_quoted(DELAYED_ID)}/explain":
            return 200, DELAYED_EXPLAIN
        return 404, {"error": "not found"}

    def post(self, path: str, body: Any) -> tuple[int, Any]:
        """The answer to a POST (policy changes are applied to ``shards``)."""
        self.bodies.append((path, body))
        parts = path.split("/")
        if path.startswith("/api/bindings/") and parts[-1] in ("policy", "reset"):
            return self._policy(urllib.parse.unquote(parts[3]), body if parts[-1] == "policy" else None)
        if path == "/api/jobs":
            return 201, {"id": f"{body['binding']}#0:newjob1"}
        if path in ("/api/jobs/bulk-retry", "/api/jobs/bulk-cancel"):
            if "ids" not in body:  # by filter: the fake's failed jobs of that binding, all in one call
                ids = [
                    j["id"] for j in JOBS if j["binding"] == body.get("binding") and j["state"] == "FAILED"
                ]
                return 200, {"ok": ids, "failed": [], "remaining": 0}
            return 200, {"ok": list(body["ids"]), "failed": []}
        if path.endswith("/cancel"):
            return 200, {"ok": True, "requested": True, "cancelled": False}
        return 200, {"ok": True}

    def _policy(self, binding: str, patch: dict[str, Any] | None) -> tuple[int, Any]:
        for key, value in (patch or {}).items():
            minimum = _POLICY_MINIMUM.get(key)
            if minimum is not None and (not isinstance(value, int) or value < minimum):
                rule = f"must be at least {minimum}"
                return 400, {"error": f"{key} {rule}", "field": key, "rule": rule}
        for raw in self.shards[binding]:
            if patch is None:
                raw["settings"], raw["pinned"] = settings_view(_CODE), False
            else:
                raw["settings"] = {**raw["settings"], **patch}
                raw["pinned"] = True
        shards = [
            {"shard": i, "pinned": raw["pinned"], "settings": raw["settings"]}
            for i, raw in enumerate(self.shards[binding])
        ]
        return 200, {"binding": binding, "shards": shards}


def _answer_session(handler: BaseHTTPRequestHandler, api: FakeApi, signed_in: bool) -> None:
    """The real API's /api/session (ADR-0069): a probe that never answers 401, and a sign-in that sets an
    HttpOnly cookie holding a session value, not the token."""
    status, data, cookie = 200, {"signedIn": signed_in}, None
    if handler.command == "POST":
        length = int(handler.headers.get("content-length") or 0)
        given = json.loads(handler.rfile.read(length) or b"{}").get("token")
        if given == api.token:
            data, cookie = (
                {"signedIn": True},
                f"tsumugi_token={_FAKE_SESSION}; Path=/api; HttpOnly; SameSite=Strict",
            )
        else:
            status, data = 401, {"error": "wrong token"}
    encoded = json.dumps(data).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    if cookie is not None:
        handler.send_header("set-cookie", cookie)
    handler.send_header("content-length", str(len(encoded)))
    handler.end_headers()
    handler.wfile.write(encoded)


def _handler(api: FakeApi) -> type[BaseHTTPRequestHandler]:
    from tests.e2e import fake_runs  # imports this module's fixtures

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
            return api.token is None or cookies.get("tsumugi_token", "") == _FAKE_SESSION

        def _answer(self) -> None:
            api.requests.append((self.command, self.path))
            path, _, query = self.path.partition("?")
            if path == "/api/session":
                _answer_session(self, api, self._signed_in())
                return
            if not path.startswith("/api/"):
                self._send(200, render_dashboard(api.token_cookie), "text/html; charset=utf-8")
                return
            if not self._signed_in():
                self._send(401, json.dumps({"error": "unauthorized"}))
                return
            if api.schedules is not None and path.startswith("/api/schedules"):
                length = int(self.headers.get("content-length") or 0)
                sent = json.loads(self.rfile.read(length) or b"null") if length else None
                status, answer = api.schedules.answer(self.command, path, sent)
                self._send(status, json.dumps(answer))
                return
            if path in NOT_CONFIGURED:
                self._send(501, json.dumps({"error": NOT_CONFIGURED[path]}))
                return
            if self.command == "POST":
                length = int(self.headers.get("content-length") or 0)
                text = self.rfile.read(length).decode() if length else ""
                sent = json.loads(text) if text else None
                flows = fake_runs.answer("POST", path, query, sent) if api.flows else None
                if flows is not None:
                    api.bodies.append((path, sent))
                status, body = flows if flows is not None else api.post(path, sent)
            elif api.flows and (flows := fake_runs.answer("GET", path, query, None)) is not None:
                status, body = flows
            else:
                status, body = api.get(path, dict(urllib.parse.parse_qsl(query)))
            self._send(status, msgspec.json.encode(body).decode())

        do_GET = _answer
        do_POST = _answer
        do_PATCH = _answer
        do_DELETE = _answer
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
