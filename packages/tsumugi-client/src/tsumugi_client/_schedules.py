"""Recurring schedules from a producer: list, get, create, update, delete, pause, resume, trigger (issue 12).

One client over either transport: Service Binding RPC to the scheduler's entrypoint (``env.TSUMUGI``, methods
``list_schedules`` ...) or HTTP to the REST API (``/api/schedules``). Options are snake_case keywords, sent as
the API's camelCase body. A refusal raises `ScheduleError` with the HTTP status it maps to and, for invalid
input, the field (as the body spells it) and the rule.

Example:
    >>> schedules = create_schedule_client(base_url="https://tsumugi.example.com", token="secret")
    >>> schedule_body("nightly", binding="Report", payload={}, cron="0 3 * * *", timezone="Asia/Tokyo",
    ...               max_attempts=5)
    {'name': 'nightly', 'binding': 'Report', 'payload': {}, 'cron': '0 3 * * *', 'timezone': 'Asia/Tokyo', 'maxAttempts': 5}
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, cast

import msgspec

from tsumugi_client._errors import TsumugiClientError
from tsumugi_client._httpx import load_httpx
from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.time_values import duration_ms

if TYPE_CHECKING:
    import httpx

__all__ = ["ScheduleClient", "ScheduleError", "create_schedule_client", "schedule_body"]

_CAMEL: Final = {
    "every_ms": "everyMs",
    "partition_key": "partitionKey",
    "max_attempts": "maxAttempts",
    "timeout_ms": "timeoutMs",
    "concurrency_key": "concurrencyKey",
    "deadline_ms": "deadlineMs",
}
_OPTIONS: Final = frozenset(
    {
        "payload",
        "every_ms",
        "cron",
        "timezone",
        "overlap",
        "binding",
        "partition_key",
        "max_attempts",
        "backoff",
        "timeout_ms",
        "priority",
        "guarantee",
        "concurrency_key",
        "flow",
        "input",
        "deadline_ms",
    }
)


_DURATIONS: Final = frozenset({"every_ms", "timeout_ms", "deadline_ms"})
"""Options that take milliseconds or a `timedelta` (ADR-0156)."""


class ScheduleError(TsumugiClientError):
    """The scheduler refused a schedule call.

    Attributes:
        field: The refused field as the API spells it (``everyMs``), for invalid input.
        rule: What the field must satisfy.
    """

    def __init__(
        self, status: int | None, message: str, *, field: str | None = None, rule: str | None = None
    ) -> None:
        super().__init__(status, message)
        self.field = field
        self.rule = rule


def schedule_body(name: str | None = None, **options: Any) -> dict[str, Any]:
    """The camelCase body of ``options`` (snake_case keywords; None values left out, except payload and input).

    ``every_ms``, ``timeout_ms`` and ``deadline_ms`` may be `timedelta` values; they are sent as milliseconds.

    Raises:
        ValueError: an unknown option.
    """
    body: dict[str, Any] = {} if name is None else {"name": name}
    for key, value in options.items():
        if key not in _OPTIONS:
            raise InvalidFieldError(key, f"is not a schedule option (one of {', '.join(sorted(_OPTIONS))})")
        if value is None and key not in ("payload", "input"):
            continue
        body[_CAMEL.get(key, key)] = msgspec.to_builtins(
            duration_ms(key, value) if key in _DURATIONS else value
        )
    return body


def _refusal(answer: Mapping[str, Any], status: int | None = None) -> ScheduleError:
    return ScheduleError(
        int(answer.get("status", status or 0)) or status,
        str(answer.get("error") or "schedule call refused"),
        field=answer.get("field"),
        rule=answer.get("rule"),
    )


class ScheduleClient:
    """Schedule calls over RPC (``env`` given to each call) or HTTP (``base_url``)."""

    def __init__(
        self,
        *,
        base_url: str | None = None,
        token: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        service: str = "TSUMUGI",
    ) -> None:
        """Use HTTP when ``base_url`` is given, else the Service Binding ``env.<service>``."""
        self._base_url = None if base_url is None else base_url.rstrip("/")
        self._token = token
        self._http_client = http_client
        self._owned: httpx.AsyncClient | None = None
        self._service = service

    # -- transports -----------------------------------------------------------------------------------------

    def _stub(self, env: object) -> Any:
        stub: Any = getattr(env, self._service, None)
        if stub is None and isinstance(env, Mapping):
            stub = cast("Mapping[str, Any]", env).get(self._service)
        if stub is None:
            raise ScheduleError(
                None, f"env has no {self._service} binding (or create the client with base_url=...)"
            )
        return stub

    async def _rpc(self, env: object, method: str, *args: Any) -> Any:
        try:
            answer = await getattr(self._stub(env), method)(*args)
        except ScheduleError:
            raise
        except Exception as exc:
            raise ScheduleError(None, f"scheduler RPC {method} failed: {type(exc).__name__}: {exc}") from exc
        to_py = getattr(answer, "to_py", None)
        return to_py() if callable(to_py) else answer

    def _http(self) -> httpx.AsyncClient:
        if self._http_client is not None:
            return self._http_client
        if self._owned is None:
            owned: httpx.AsyncClient = load_httpx().AsyncClient()
            self._owned = owned
            return owned
        return self._owned

    async def _send(self, method: str, path: str, body: Any = None) -> Any:
        http_errors: Any = load_httpx().HTTPError
        headers = {} if self._token is None else {"authorization": f"Bearer {self._token}"}
        try:
            response = await self._http().request(
                method, f"{self._base_url}{path}", json=body, headers=headers
            )
        except http_errors as exc:
            raise ScheduleError(None, f"the scheduler could not be reached: {exc}") from exc
        try:
            answer: Any = response.json()
        except ValueError:
            answer = {"error": response.text}
        if response.status_code >= 400:
            raise _refusal(answer if isinstance(answer, Mapping) else {}, response.status_code)  # pyright: ignore[reportUnknownArgumentType]
        return answer

    async def _change(
        self, env: object, rpc: str, http: tuple[str, str], *args: Any, body: Any = None
    ) -> dict[str, Any]:
        if self._base_url is not None:
            method, path = http
            return dict(await self._send(method, path, body))
        answer = await self._rpc(env, rpc, *args, *([] if body is None else [body]))
        if answer.get("ok") is not True:
            raise _refusal(answer)
        return dict(answer)

    @staticmethod
    def _path(name: str, action: str = "") -> str:
        return f"/api/schedules/{urllib.parse.quote(name, safe='')}{action}"

    # -- calls ----------------------------------------------------------------------------------------------

    async def list(self, env: object = None) -> list[dict[str, Any]]:
        """Every schedule by name (the API's view: timing words, next occurrences, last run...)."""
        if self._base_url is not None:
            return list((await self._send("GET", "/api/schedules"))["schedules"])
        return [dict(v) for v in await self._rpc(env, "list_schedules")]

    async def get(self, env: object, name: str) -> dict[str, Any] | None:
        """One schedule, or None."""
        if self._base_url is not None:
            try:
                return dict(await self._send("GET", self._path(name)))
            except ScheduleError as exc:
                if exc.status == 404:
                    return None
                raise
        found = await self._rpc(env, "get_schedule", name)
        return None if found is None else dict(found)

    async def create(self, env: object, name: str, **options: Any) -> dict[str, Any]:
        """Create a run-time schedule; the created schedule.

        Options: ``binding``, ``payload``, ``every_ms`` or ``cron`` (with ``timezone``), ``overlap`` and the
        job options a schedule allows (partition_key, max_attempts, backoff, timeout_ms, priority,
        guarantee, concurrency_key); or, to start a flow run at each occurrence, ``flow``, ``input`` and
        ``deadline_ms`` instead of the binding, payload and job options.
        """
        body = schedule_body(name, **options)
        return (await self._change(env, "create_schedule", ("POST", "/api/schedules"), body=body))["schedule"]

    async def update(self, env: object, name: str, **changes: Any) -> dict[str, Any]:
        """Change a run-time schedule's fields; the changed schedule."""
        body = schedule_body(**changes)
        return (await self._change(env, "update_schedule", ("PATCH", self._path(name)), name, body=body))[
            "schedule"
        ]

    async def delete(self, env: object, name: str) -> None:
        """Delete a run-time schedule."""
        await self._change(env, "delete_schedule", ("DELETE", self._path(name)), name)

    async def pause(self, env: object, name: str) -> dict[str, Any]:
        """Stop firing; the schedule."""
        return (await self._change(env, "pause_schedule", ("POST", self._path(name, "/pause")), name))[
            "schedule"
        ]

    async def resume(self, env: object, name: str) -> dict[str, Any]:
        """Fire again from the next boundary; the schedule."""
        return (await self._change(env, "resume_schedule", ("POST", self._path(name, "/resume")), name))[
            "schedule"
        ]

    async def trigger(self, env: object, name: str) -> str:
        """Enqueue one occurrence now; its job id (a flow schedule's: the id of the run it started)."""
        answer = await self._change(env, "trigger_schedule", ("POST", self._path(name, "/trigger")), name)
        return str(answer.get("job_id") or answer["run_id"])

    async def aclose(self) -> None:
        """Close the HTTP client this client made (not one passed in)."""
        if self._owned is not None:
            await self._owned.aclose()
            self._owned = None


def create_schedule_client(
    *,
    base_url: str | None = None,
    token: str | None = None,
    http_client: httpx.AsyncClient | None = None,
    service: str = "TSUMUGI",
) -> ScheduleClient:
    """A `ScheduleClient`: HTTP when ``base_url`` is given, else Service Binding RPC (``env.<service>``)."""
    return ScheduleClient(base_url=base_url, token=token, http_client=http_client, service=service)
