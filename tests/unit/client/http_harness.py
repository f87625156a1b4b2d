"""One harness for the respx tests of both HTTP clients: the same test drives `TsumugiClient` (blocking) and
`AsyncTsumugiClient` (awaited), with a fake sleep that records pauses and moves a fake clock on."""

from __future__ import annotations

import inspect
import ssl
from typing import Any

import httpx
import respx

from tsumugi_client import AsyncTsumugiClient, TsumugiClient
from tsumugi_core.testing import SequentialIds

BASE = "https://tsumugi.example.com"
TOKEN = "secret-token"
# Loading CA certificates costs ~0.1 s per httpx client; the tests share one context (no real TLS happens).
TLS = ssl.create_default_context()


def detail(
    job_id: str = "Hello#0:job000000000000000000001", state: str = "COMPLETED", **fields: Any
) -> dict[str, Any]:
    """A JobDetail as ``GET /api/jobs/{id}`` answers it."""
    return {
        "id": job_id,
        "binding": job_id.split("#")[0],
        "state": state,
        "priority": 0,
        "attempts": 1,
        "max_attempts": 3,
        "concurrency_key": None,
        "unique_key": None,
        "guarantee": "at-least-once",
        "created_at": 1,
        "updated_at": 2,
        "dispatched_at": None,
        "run_after": 1,
        "progress": None,
        "payload": "{}",
        "result": None,
        "retryable": False,
        "attempts_log": [],
        **fields,
    }


class Clock:
    """Monotonic seconds that only move when the fake sleep sleeps."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)


class Harness:
    """Makes a client of one kind and runs its calls, awaiting them when the kind is async."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.clock = Clock()
        self._made: list[Any] = []

    def client(self, **settings: Any) -> Any:
        settings.setdefault("token", TOKEN)
        settings.setdefault("seed", 7)
        settings.setdefault("ids", SequentialIds())
        settings.setdefault("clock", self.clock)
        if self.kind == "sync":
            settings.setdefault("sleep", self.clock.sleep)
            settings.setdefault("http_client", httpx.Client(verify=TLS))
            made: Any = TsumugiClient(BASE, **settings)
        else:
            settings.setdefault("sleep", self.clock.asleep)
            settings.setdefault("http_client", httpx.AsyncClient(verify=TLS))
            made = AsyncTsumugiClient(BASE, **settings)
        self._made.append(settings["http_client"])
        return made

    async def __call__(self, value: Any) -> Any:
        """The value of a client call: awaited for the async client, as it is for the blocking one."""
        return await value if inspect.isawaitable(value) else value

    async def close(self) -> None:
        for http in self._made:
            if isinstance(http, httpx.AsyncClient):
                await http.aclose()
            else:
                http.close()


def one_shard_each(router: respx.MockRouter, *bindings: str) -> respx.Route:
    """``GET /api/bindings`` answering one shard for each of ``bindings``."""
    return router.get("/api/bindings").respond(
        200, json={"bindings": list(bindings), "shards": dict.fromkeys(bindings, 1)}
    )
