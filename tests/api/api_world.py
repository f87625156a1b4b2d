"""A scheduler Worker's REST API in-process: the real app over real shards and a real local D1.

The JobShard namespace hosts `JobShardHost` + `ShardAdmin` per object name over stdlib SQLite (the same
pairing as ``services/scheduler/src/entry.py``); the D1 read model is the local runtime's, migrated from
``migrations/``. Time is a `FixedClock` installed as the scheduler's time source. Requests go through
httpx's ASGI transport with the env put in the scope, as ``workers.asgi.fetch`` does.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import urllib.parse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import httpx

from tests.support.clock import START_MS, SteppedClock
from tsumugi_dev.analytics import AnalyticsEngineDataset
from tsumugi_dev.d1 import D1Database, apply_d1_migrations
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.api import SchemaGate, create_app
from tsumugi_scheduler.definition import TsumugiDefinition, define_tsumugi
from tsumugi_scheduler.identity import AuthScheme
from tsumugi_scheduler.run.host import RunHost
from tsumugi_scheduler.schedules.host import SchedulerHost
from tsumugi_scheduler.shard.engine import PROJECTION_HOLD_MS
from tsumugi_scheduler.shard_admin import ShardAdmin
from tsumugi_scheduler.shard_host import JobShardHost

REPO = Path(__file__).resolve().parents[2]
MIGRATIONS = REPO / "migrations"
TOKEN = "s3cret-token"
T0 = START_MS


LocalMetrics = AnalyticsEngineDataset
"""The local runtime's dataset, whose ``query`` is the read path the metrics route uses."""


class AlarmStorage:
    """The ``ctx.storage`` alarm methods a shard host arms."""

    def __init__(self) -> None:
        self.alarm: int | None = None

    async def getAlarm(self) -> int | None:
        return self.alarm

    async def setAlarm(self, at: int) -> None:
        self.alarm = at

    async def deleteAlarm(self) -> None:
        self.alarm = None


class ShardObject:
    """One JobShard Durable Object: the host's and the admin's methods, as entry.py exposes them."""

    def __init__(self, env: Any, definition: TsumugiDefinition) -> None:
        self.storage = AlarmStorage()
        self.sql = SqlStorage()
        self.host = JobShardHost(self.storage, self.sql, env, definition)
        self.admin = ShardAdmin(self.host, self.storage, self.sql)

    def __getattr__(self, name: str) -> Any:
        if name in ("configure", "reset_policy", "diagnostics", "mutate_many", "explain"):
            return getattr(self.admin, name)
        return getattr(self.host, name)


class Namespace:
    """``env.JOB_SHARD``: one object per name."""

    def __init__(self, env: Any, definition: TsumugiDefinition) -> None:
        self.env = env
        self.definition = definition
        self.objects: dict[str, ShardObject] = {}

    def getByName(self, name: str) -> ShardObject:
        if name not in self.objects:
            self.objects[name] = ShardObject(self.env, self.definition)
        return self.objects[name]


class SchedulerObject:
    """One Scheduler Durable Object (``scheduler#<i>``): the host's methods, as entry.py exposes them."""

    def __init__(self, env: Any, definition: TsumugiDefinition) -> None:
        self.storage = AlarmStorage()
        self.sql = SqlStorage()
        self.host = SchedulerHost(self.storage, self.sql, env, definition)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.host, name)


class SchedulerNamespace:
    """``env.SCHEDULER``: one object per name."""

    def __init__(self, env: Any, definition: TsumugiDefinition) -> None:
        self.env = env
        self.definition = definition
        self.objects: dict[str, SchedulerObject] = {}

    def getByName(self, name: str) -> SchedulerObject:
        if name not in self.objects:
            self.objects[name] = SchedulerObject(self.env, self.definition)
        return self.objects[name]


class RunObject:
    """One Run Durable Object (named by its run id): `RunHost` over DO SQL, with its alarm recorded."""

    def __init__(self, env: Any, definition: TsumugiDefinition) -> None:
        self.storage = AlarmStorage()
        self.sql = SqlStorage()
        self.host = RunHost(self.storage, self.sql, env, definition)
        self.starts = 0

    async def start(self, *args: Any) -> dict[str, Any]:
        self.starts += 1
        return await self.host.start(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.host, name)


class RunNamespace:
    """``env.RUN``: one object per run id."""

    def __init__(self, env: Any, definition: TsumugiDefinition) -> None:
        self.env = env
        self.definition = definition
        self.objects: dict[str, RunObject] = {}

    def getByName(self, name: str) -> RunObject:
        if name not in self.objects:
            self.objects[name] = RunObject(self.env, self.definition)
        return self.objects[name]


class Queue:
    """``env.TSUMUGI_QUEUE``: records what was sent (a dispatch's JSON text decoded, ADR-0166)."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def sendBatch(self, messages: Sequence[dict[str, Any]]) -> None:
        assert all(m["contentType"] == "text" for m in messages)
        self.sent.extend(json.loads(m["body"]) for m in messages)


class Env:
    """The scheduler Worker's env."""

    def __init__(self, d1: D1Database, definition: TsumugiDefinition, token: str | None = TOKEN) -> None:
        self.TSUMUGI_DB = d1
        self.TSUMUGI_QUEUE = Queue()
        self.JOB_SHARD = Namespace(self, definition)
        self.SCHEDULER = SchedulerNamespace(self, definition)
        self.RUN = RunNamespace(self, definition)
        if token is not None:
            self.TSUMUGI_TOKEN = token


_TEMPLATE: list[Path] = []


def migrated_d1(folder: Path) -> D1Database:
    """A migrated read model in ``folder``: a copy of one database migrated once per session."""
    if not _TEMPLATE:
        template = Path(tempfile.mkdtemp(prefix="tsumugi-api-")) / "template.sqlite"
        db = D1Database(template)
        apply_d1_migrations(db, MIGRATIONS)
        db.close()
        _TEMPLATE.append(template)
    target = folder / "readmodel.sqlite"
    shutil.copyfile(_TEMPLATE[0], target)
    return D1Database(target)


def with_env(app: Any, env: Any) -> Any:
    """The app with ``env`` in every scope, as ``workers.asgi.fetch`` hands it over."""

    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await app({**scope, "env": env}, receive, send)

    return asgi


def quoted(job_id: str) -> str:
    return urllib.parse.quote(job_id, safe="")


class World:
    """An app, its env and a client; ``tick`` runs every shard's alarm (projection, then dispatch)."""

    def __init__(
        self,
        folder: Path,
        clock: SteppedClock,
        definition: TsumugiDefinition | None = None,
        *,
        auth: AuthScheme | Literal["definition"] | None = "definition",
        token: str | None = TOKEN,
        d1: D1Database | None = None,
    ) -> None:
        self.clock = clock
        self.folder = folder
        self.closing: list[Callable[[], None]] = []
        """Closed by `aclose` (stores a test opened for this world)."""
        self.definition = definition or define_tsumugi(
            performers=["MAIL", "SMS", "Notify"], bindings={"SMS": {"shards": 2}}
        )
        self._owns_d1 = d1 is None
        self.d1 = d1 if d1 is not None else migrated_d1(folder)
        self.env = Env(self.d1, self.definition, token)
        self._shards = self.env.JOB_SHARD  # a test may wrap env.JOB_SHARD; these are the objects to close
        self._schedulers = self.env.SCHEDULER  # and a test may delete env.SCHEDULER
        self._runs = self.env.RUN
        self.app = create_app(self.definition, auth=auth, gate=SchemaGate())
        transport = httpx.ASGITransport(app=with_env(self.app, self.env))
        self.client = httpx.AsyncClient(
            transport=transport,
            base_url="http://scheduler.test",
            headers={"authorization": f"Bearer {TOKEN}"},
        )

    async def request(self, method: str, path: str, body: Any = None, **kwargs: Any) -> tuple[int, Any]:
        content = (
            None
            if body is None
            else (
                body
                if isinstance(body, str | bytes)
                else httpx.Request("POST", "http://x", json=body).content
            )
        )
        if content is not None:
            # A body is declared JSON, as every client sends it (a state change without it answers 415).
            kwargs["headers"] = {"content-type": "application/json", **kwargs.get("headers", {})}
        response = await self.client.request(method, path, content=content, **kwargs)
        if response.headers.get("content-type", "").startswith("application/json"):
            return response.status_code, response.json()
        return response.status_code, response.text

    def shard(self, name: str) -> ShardObject:
        return self.env.JOB_SHARD.getByName(name)

    async def tick(self) -> None:
        for shard in list(self.env.JOB_SHARD.objects.values()):
            await shard.host.alarm()

    async def tick_and_project(self) -> None:
        """One tick, then the alarm after the projection hold: a job the tick dispatched reaches the read
        model with that later alarm (ADR-0132 leaves out its stale pre-tick snapshot)."""
        await self.tick()
        self.clock.advance(PROJECTION_HOLD_MS)
        await self.tick()

    async def enqueue(self, binding: str = "MAIL", **options: Any) -> str:
        status, body = await self.request("POST", "/api/jobs", {"binding": binding, "payload": {}, **options})
        assert status == 201, body
        return str(body["id"])

    async def fail(self, job_id: str) -> None:
        """Dispatch ``job_id`` (one tick) and report its live attempt as a failure."""
        await self.tick()
        name = job_id.split(":", 1)[0]
        engine = self.shard(name).host.engine(name)
        assert engine is not None
        job = engine.get(job_id)
        assert job is not None
        await self.shard(name).host.report(name, job_id, job.attempts + 1, {"ok": False, "error": "boom"})

    async def aclose(self) -> None:
        await self.client.aclose()
        for close in self.closing:
            close()
        for shard in self._shards.objects.values():
            shard.sql.close()
        for scheduler in self._schedulers.objects.values():
            scheduler.sql.close()
        for run in self._runs.objects.values():
            run.sql.close()
        if self._owns_d1:
            self.d1.close()


FOREIGN_IDS = ["Foo#0:x", "SMS#2:x", "MAIL#1:x"]
"""Job ids no shard of the world holds: an unregistered binding, shards beyond SMS's 2 and MAIL's 1."""
