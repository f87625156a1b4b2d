"""The schedule routes of the fake REST API (issue 12): a small in-memory Scheduler in the API's shapes."""

from __future__ import annotations

import copy
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

NOW = 1_767_225_600_000
MIN = 60_000
LAST_JOB = "Hello#0:waitingjob1"  # a job the fake API serves (fake_api.SCHEDULED_ID)
LAST_RUN = "greetings:running1"  # a run the fake API serves with flows on (fake_runs.RUNNING_RUN)


def schedule(name: str, **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": name,
        "kind": "job",
        "target": "Hello",
        "every_ms": None,
        "cron": "0 3 * * *",
        "timezone": "Asia/Tokyo",
        "overlap": "skip",
        "next_run_at": NOW + 18 * 3_600_000,
        "last_run_at": NOW - 3_600_000,
        "last_fired_at": NOW - 3_600_000 + 2_500,
        "last_job_id": LAST_JOB,
        "last_run_id": None,
        "last_skipped_at": NOW - 7_200_000,
        "skipped_count": 2,
        "last_error": None,
        "source": "code",
        "paused": False,
        "description": "every day at 03:00, Asia/Tokyo",
        "next_occurrences": [NOW + 18 * 3_600_000, NOW + 42 * 3_600_000, NOW + 66 * 3_600_000],
        "binding": "Hello",
        "payload": {"name": "night"},
        "payload_from_code": False,
        "options": {},
        "created_at": NOW - 86_400_000,
        "updated_at": NOW - 3_600_000,
    }
    return {**base, **changes}


def flow_schedule() -> dict[str, Any]:
    """A code schedule that starts a flow run at each occurrence; its last run is a run, not a job."""
    return schedule(
        "greet-hourly",
        kind="flow",
        target="greetings",
        binding=None,
        flow="greetings",
        input={"names": ["a"]},
        deadline_ms=None,
        payload=None,
        last_job_id=None,
        last_run_id=LAST_RUN,
    )


def default_schedules() -> list[dict[str, Any]]:
    return [
        schedule("nightly"),
        schedule(
            "per-customer-7",
            source="runtime",
            cron=None,
            every_ms=10 * MIN,
            timezone="UTC",
            description="every 10 minutes",
            last_job_id=None,
            last_run_at=None,
            last_fired_at=None,
            skipped_count=0,
            last_skipped_at=None,
            last_error="ValueError: no data yet",
            next_occurrences=[NOW + 10 * MIN, NOW + 20 * MIN, NOW + 30 * MIN],
        ),
    ]


@dataclass
class FakeSchedules:
    """Schedules the fake API holds; every change request is recorded in ``calls``."""

    items: list[dict[str, Any]] = field(default_factory=default_schedules)
    calls: list[tuple[str, str, Any]] = field(default_factory=lambda: [])

    def _find(self, name: str) -> dict[str, Any] | None:
        return next((s for s in self.items if s["name"] == name), None)

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        """``(status, json)`` for a request under /api/schedules."""
        parts = [urllib.parse.unquote(p) for p in path.split("/")[3:]]
        if method != "GET":
            self.calls.append((method, path, body))
        if not parts:
            if method == "GET":
                return 200, {"schedules": sorted(self.items, key=lambda s: s["name"])}
            if not isinstance(body, dict) or not body.get("name"):
                return 400, {"error": "name is required", "field": "name", "rule": "is required"}
            if body.get("everyMs") is not None and body["everyMs"] < 1000:
                rule = f"must be an integer of at least 1000, got {body['everyMs']}"
                return 400, {"error": f"everyMs {rule}", "field": "everyMs", "rule": rule}
            target = body.get("flow") or body.get("binding")
            created = schedule(
                body["name"],
                source="runtime",
                target=target,
                binding=body.get("binding"),
                cron=body.get("cron"),
                every_ms=body.get("everyMs"),
                last_job_id=None,
                description=body.get("cron") or f"every {body.get('everyMs')} ms",
            )
            if body.get("flow"):
                created.update(kind="flow", flow=body["flow"], input=body.get("input"), payload=None)
            self.items.append(created)
            return 201, {"ok": True, "schedule": created}
        found = self._find(parts[0])
        if found is None:
            return 404, {"error": f"schedule not found: {parts[0]}"}
        action = parts[1] if len(parts) > 1 else None
        if method == "DELETE":
            self.items.remove(found)
            return 200, {"ok": True, "name": found["name"]}
        if action in ("pause", "resume"):
            found["paused"] = action == "pause"
            found["next_occurrences"] = [] if found["paused"] else [NOW + MIN]
        if action == "trigger":
            found["last_job_id"] = f"Hello#0:{found['name']}-now-{NOW}"
            return 200, {"ok": True, "schedule": copy.deepcopy(found), "job_id": found["last_job_id"]}
        return 200, {"ok": True, "schedule": copy.deepcopy(found)} if method != "GET" else found
