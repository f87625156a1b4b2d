"""Drive the local system in tests: enqueue and read through the real client, the REST API and the read model."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path
from typing import Any

from tsumugi_client import JobDetail, WorkerClient, create_client
from tsumugi_dev.config import WorkerConfig, load_config
from tsumugi_dev.faults import Fault
from tsumugi_dev.runtime import LocalRuntime

TOKEN = "test-token"
"""The scheduler's API token in these tests (set as its TSUMUGI_TOKEN secret)."""
PRODUCER_TOKEN = "producer-token"
"""The producer's PRODUCER_TOKEN secret in these tests (the example producer's sign-in, ADR-0066)."""
SCHEDULER = "tsumugi-scheduler"
PRODUCER = "tsumugi-producer"
QUEUE = "tsumugi"


REPO = Path(__file__).resolve().parents[2]
SYSTEM = Path(__file__).parent / "fixtures" / "system"
"""The tests' own Workers: scheduler.jsonc, performers.jsonc and producer.jsonc over system_performers.py."""
MAIL_API_URL = "http://127.0.0.1:9/mail"
"""Where the tests' SendMail posts (fixtures/system/performers.jsonc); tests answer it with respx."""


def _with_tokens(scheduler: Path, performers: Path, producer: Path) -> list[WorkerConfig]:
    # The test's tokens win over a developer's .dev.vars.
    return [
        load_config(scheduler).with_secrets({"TSUMUGI_TOKEN": TOKEN}),
        load_config(performers),
        load_config(producer).with_secrets({"PRODUCER_TOKEN": PRODUCER_TOKEN}),
    ]


def example_configs() -> list[WorkerConfig]:
    """This repository's Workers: services/scheduler, the example performers and the example producer."""
    return _with_tokens(
        REPO / "services" / "scheduler" / "wrangler.jsonc",
        REPO / "services" / "performers" / "wrangler.jsonc",
        REPO / "services" / "performers" / "producer" / "wrangler.jsonc",
    )


def own_configs() -> list[WorkerConfig]:
    """The tests' own Workers (fixtures/system): what ``system`` runs unless a test module overrides it."""
    return _with_tokens(SYSTEM / "scheduler.jsonc", SYSTEM / "performers.jsonc", SYSTEM / "producer.jsonc")


class Driver:
    """The system as a producer, an operator and a reader of the read model see it."""

    def __init__(self, system: LocalRuntime, token: str) -> None:
        self.system = system
        self.token = token
        self.producer_env = system.env(PRODUCER)
        self.client: WorkerClient = create_client()
        self._lost: Fault | None = None

    async def enqueue(self, binding: str, payload: Any, **options: Any) -> str:
        return await self.client.enqueue(self.producer_env, binding=binding, payload=payload, **options)

    async def job(self, job_id: str) -> JobDetail:
        detail = await self.client.get(self.producer_env, job_id)
        assert detail is not None, f"{job_id} is not in its shard"
        return detail

    async def rest(self, method: str, path: str, body: Any = None, token: str | None = "") -> tuple[int, Any]:
        headers = {} if token is None else {"authorization": f"Bearer {token or self.token}"}
        content = None if body is None else json.dumps(body)
        if content is not None:
            headers["content-type"] = "application/json"  # a body must be declared JSON (ADR-0064)
        response = await self.system.fetch(
            SCHEDULER, f"http://scheduler{path}", method=method, headers=headers, body=content
        )
        text = await response.text()
        return response.status, json.loads(text) if text.startswith(("{", "[")) else text

    async def row(self, job_id: str) -> dict[str, Any] | None:
        found = await self.system.d1("tsumugi").prepare("SELECT * FROM job WHERE id = ?").bind(job_id).first()
        return None if found is None else dict(found)

    async def jobs_of(self, binding: str) -> list[dict[str, Any]]:
        answer = (
            await self.system.d1("tsumugi")
            .prepare("SELECT * FROM job WHERE binding = ? ORDER BY created_at, id")
            .bind(binding)
            .all()
        )
        return [dict(r) for r in answer.results]

    async def notices_for(self, binding: str, job_id: str) -> list[dict[str, Any]]:
        """The notice jobs of ``binding`` about ``job_id``, with their payload decoded."""
        found = []
        for row in await self.jobs_of(binding):
            payload = json.loads(row["payload"])
            if payload.get("job_id") == job_id:
                found.append({**row, "payload": payload})
        return found

    async def jobs_payloads(self, binding: str) -> list[dict[str, Any]]:
        """The jobs of ``binding`` (oldest first) with their payload decoded."""
        return [{**row, "payload": json.loads(row["payload"])} for row in await self.jobs_of(binding)]

    def lose_messages_of(self, job_id: str) -> Fault:
        """Fault injection: the next queue message carrying ``job_id`` vanishes before delivery."""
        # A dispatch message is its JSON text (ADR-0166).
        self._lost = self.system.faults.drop_next(
            QUEUE, matching=lambda body: json.loads(body)["jobId"] == job_id
        )
        return self._lost

    def restore_delivery(self) -> None:
        """Disarm ``lose_messages_of`` if it has not struck yet."""
        if self._lost is not None:
            self._lost.cancel()
            self._lost = None


def quoted(job_id: str) -> str:
    return urllib.parse.quote(job_id, safe="")
