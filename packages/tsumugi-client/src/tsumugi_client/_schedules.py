"""Recurring schedules from a producer: each schedule call as an HTTP `Call` and as a Service Binding call.

The calls live on the three clients (ADR-0162): ``list_schedules``, ``get_schedule``, ``create_schedule``,
``update_schedule``, ``delete_schedule``, ``pause_schedule``, ``resume_schedule`` and ``trigger_schedule`` on
`TsumugiClient` / `AsyncTsumugiClient` (REST, ``/api/schedules``) and on `WorkerClient` (RPC, ``env.TSUMUGI``).
Options are snake_case keywords (`ScheduleFields`), sent as the API's camelCase body. A refusal raises
`ScheduleError` with the HTTP status it maps to and, for invalid input, the field (as the body spells it) and
the rule.

Example:
    >>> schedule_body("nightly", binding="Report", payload={}, cron="0 3 * * *", timezone="Asia/Tokyo",
    ...               max_attempts=5)
    {'name': 'nightly', 'binding': 'Report', 'payload': {}, 'cron': '0 3 * * *', 'timezone': 'Asia/Tokyo', 'maxAttempts': 5}
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, TypedDict, TypeVar, cast

import msgspec

from tsumugi_client._calls import Call
from tsumugi_client._errors import TsumugiClientError
from tsumugi_client._http_errors import decode_body
from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.options import Backoff, Guarantee
from tsumugi_core.time_values import Duration, duration_ms

if TYPE_CHECKING:
    import httpx  # annotations only: the HTTP clients import it (ADR-0107)

__all__ = [
    "ScheduleError",
    "ScheduleFields",
    "create_schedule_call",
    "delete_schedule_call",
    "get_schedule_call",
    "list_schedules_call",
    "rpc_schedule",
    "schedule_action_call",
    "schedule_body",
    "schedule_call",
    "schedule_change",
    "schedule_of",
    "schedule_path",
    "schedules_of",
    "trigger_answer",
    "trigger_schedule_call",
    "update_schedule_call",
]

T = TypeVar("T")


class ScheduleFields(TypedDict, total=False):
    """A run-time schedule's options by their Python names (``create_schedule`` / ``update_schedule``).

    A job schedule: ``binding``, ``payload``, a timing (``every_ms`` or ``cron`` with ``timezone``),
    ``overlap`` and job options; a flow schedule: ``flow``, ``input``, a timing and ``deadline_ms``. Durations
    take milliseconds or a `timedelta` (ADR-0156).
    """

    payload: Any
    every_ms: Duration
    cron: str
    timezone: str
    overlap: Literal["skip", "overlap"]
    binding: str
    partition_key: str
    max_attempts: int
    backoff: Backoff
    timeout_ms: Duration
    priority: int
    guarantee: Guarantee | Literal["at-least-once", "at-most-once"]
    concurrency_key: str
    flow: str
    input: Any
    deadline_ms: Duration


_CAMEL: Final = {
    "every_ms": "everyMs",
    "partition_key": "partitionKey",
    "max_attempts": "maxAttempts",
    "timeout_ms": "timeoutMs",
    "concurrency_key": "concurrencyKey",
    "deadline_ms": "deadlineMs",
}
_OPTIONS: Final = frozenset(ScheduleFields.__annotations__)


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
    said = answer.get("status")  # an RPC answer's own status; an HTTP answer's comes with the response
    return ScheduleError(
        said if isinstance(said, int) and not isinstance(said, bool) else status,
        str(answer.get("error") or "schedule call refused"),
        field=answer.get("field"),
        rule=answer.get("rule"),
    )


def schedule_path(name: str = "", action: str = "") -> str:
    """``/api/schedules[/<name>[/<action>]]`` with the name as one encoded segment."""
    return "/api/schedules" + (f"/{urllib.parse.quote(name, safe='')}" if name else "") + action


def schedule_call(
    method: str, path: str, read: Callable[[Any], T], *, body: Any = None, absent: bool = False
) -> Call[T]:
    """A schedules REST call: a 4xx / 5xx is a `ScheduleError` (None instead for a 404 when ``absent``)."""

    def read_answer(response: httpx.Response) -> T:
        answer = decode_body(response)
        if absent and response.status_code == 404 and answer is not None:
            return read(None)
        if response.status_code >= 400:
            said = answer or {"error": response.text[:200] or response.reason_phrase}
            raise _refusal(said, response.status_code)
        if answer is None:  # a proxy's page, an empty body: never read as a schedule or as nothing
            raise ScheduleError(
                response.status_code,
                f"the scheduler answered {method} {path} without a JSON object: {response.text[:200]!r}",
            )
        return read(answer)

    # Reads repeat freely; a change is not repeated once it may have arrived (a second create answers 409).
    return Call(method=method, path=path, body=body, idempotent=method == "GET", read=read_answer)


async def rpc_schedule(stub: Any, method: str, *args: Any) -> Any:
    """Call the schedule method ``method`` on the scheduler's entrypoint ``stub``; its answer as plain values.

    Raises:
        ScheduleError: the call failed.
    """
    try:
        answer = await getattr(stub, method)(*args)
    except ScheduleError:
        raise
    except Exception as exc:
        raise ScheduleError(None, f"scheduler RPC {method} failed: {type(exc).__name__}: {exc}") from exc
    to_py = getattr(answer, "to_py", None)
    return to_py() if callable(to_py) else answer


def schedule_change(answer: Any) -> dict[str, Any]:
    """An RPC change's answer; ``ok: false`` raises its `ScheduleError`."""
    if not isinstance(answer, Mapping) or answer.get("ok") is not True:  # pyright: ignore[reportUnknownMemberType]
        raise _refusal(answer if isinstance(answer, Mapping) else {})  # pyright: ignore[reportUnknownArgumentType]
    return dict(answer)  # pyright: ignore[reportUnknownArgumentType]


def _malformed(what: str, answer: Any) -> ScheduleError:
    return ScheduleError(None, f"the scheduler answered without {what}: {str(answer)[:200]!r}")


def schedule_of(answer: Any) -> dict[str, Any]:
    """The ``schedule`` object of a change's answer."""
    found: object = cast("Mapping[str, Any]", answer).get("schedule") if isinstance(answer, Mapping) else None
    if not isinstance(found, Mapping):
        raise _malformed("the schedule", answer)
    return dict(found)  # pyright: ignore[reportUnknownArgumentType]


def schedules_of(found: Any) -> list[dict[str, Any]]:
    """A list of schedule objects (the ``schedules`` of the HTTP answer, the RPC answer itself)."""
    if not isinstance(found, list) or not all(isinstance(s, Mapping) for s in found):  # pyright: ignore[reportUnknownVariableType]
        raise _malformed("a list of schedules", found)
    return [dict(s) for s in found]  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]


def trigger_answer(answer: Mapping[str, Any]) -> str:
    """A trigger's job id (a flow schedule's: the id of the run it started)."""
    made = answer.get("job_id") or answer.get("run_id")
    if not isinstance(made, str):
        raise _malformed("the id of the job or run it started", answer)
    return made


def list_schedules_call() -> Call[list[dict[str, Any]]]:
    """``GET /api/schedules``."""
    return schedule_call("GET", schedule_path(), lambda answer: schedules_of(answer.get("schedules")))


def get_schedule_call(name: str) -> Call[dict[str, Any] | None]:
    """``GET /api/schedules/{name}``; None when there is no such schedule."""
    return schedule_call("GET", schedule_path(name), lambda a: None if a is None else dict(a), absent=True)


def create_schedule_call(name: str, options: Mapping[str, Any]) -> Call[dict[str, Any]]:
    """``POST /api/schedules``; the created schedule."""
    return schedule_call("POST", schedule_path(), schedule_of, body=schedule_body(name, **options))


def update_schedule_call(name: str, changes: Mapping[str, Any]) -> Call[dict[str, Any]]:
    """``PATCH /api/schedules/{name}``; the changed schedule."""
    return schedule_call("PATCH", schedule_path(name), schedule_of, body=schedule_body(**changes))


def delete_schedule_call(name: str) -> Call[None]:
    """``DELETE /api/schedules/{name}``."""
    return schedule_call("DELETE", schedule_path(name), lambda _: None)


def schedule_action_call(name: str, action: Literal["pause", "resume"]) -> Call[dict[str, Any]]:
    """``POST /api/schedules/{name}/pause`` or ``/resume``; the schedule."""
    return schedule_call("POST", schedule_path(name, f"/{action}"), schedule_of)


def trigger_schedule_call(name: str) -> Call[str]:
    """``POST /api/schedules/{name}/trigger``; the id of the job (or run) it made."""
    return schedule_call("POST", schedule_path(name, "/trigger"), trigger_answer)
