"""Flow runs from a producer: the run views, and each run call as an HTTP `Call` and as a Service Binding call.

The calls live on the three clients (ADR-0162): ``start_run``, ``get_run``, ``cancel_run`` and ``retry_run`` on
`TsumugiClient` / `AsyncTsumugiClient` (REST, ``/api/runs``) and on `WorkerClient` (RPC, ``env.TSUMUGI``), with
the same answers and errors on both.

Example (inside a Worker)::

    run_id = await client.start_run(self.env, "greetings", {"names": ["a", "b"]})
    detail = await client.get_run(self.env, run_id)
    if detail is not None and detail.run.state == "COMPLETED":
        print(detail.run.output_value())
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol, cast
from urllib.parse import quote

import msgspec

from tsumugi_client._calls import Call
from tsumugi_client._errors import INVALID_STATE_MESSAGE, TsumugiClientError
from tsumugi_client._http_errors import decode_body, error_of
from tsumugi_core.exceptions import TsumugiError
from tsumugi_core.time_values import Duration, duration_ms

if TYPE_CHECKING:
    import httpx  # annotations only: the HTTP clients import it (ADR-0107)

__all__ = [
    "RUN_GONE_MESSAGE",
    "FlowLike",
    "RunDetail",
    "RunNodeView",
    "RunStartError",
    "RunView",
    "get_run_call",
    "rpc_run",
    "run_body",
    "run_control",
    "run_control_call",
    "start_run_call",
]

RUN_GONE_MESSAGE: Final = "run not found (deleted after its retention, or never started)"


class FlowLike(Protocol):
    """Anything with a flow ``name`` (a ``tsumugi_performer.flow.Flow``)."""

    @property
    def name(self) -> str:
        """The flow's name."""
        ...


class RunStartError(TsumugiError, ValueError):
    """The scheduler refused the start (``unknown flow: X``, ``input is required``, ...)."""


class RunView(msgspec.Struct, frozen=True, kw_only=True):
    """A run as ``GET /api/runs/{id}`` shows it."""

    id: str
    flow: str
    state: str
    node_total: int
    node_done: int
    node_failed: int
    created_at: int
    updated_at: int
    input: str
    parent_run_id: str | None = None
    parent_node_id: str | None = None
    retryable: bool = False
    output: str | None = None

    def input_value(self) -> Any:
        """The run input, decoded."""
        return msgspec.json.decode(self.input)

    def output_value(self) -> Any:
        """The declared output node's result, decoded (None until COMPLETED, or without an output node)."""
        return None if self.output is None else msgspec.json.decode(self.output)


class RunNodeView(msgspec.Struct, frozen=True, kw_only=True):
    """One node of a run."""

    id: str
    binding: str
    state: str
    container: bool
    parent: str | None
    origin: str
    after: list[str]
    job_id: str | None
    child_run_id: str | None
    result: str | None
    error: str | None
    position: int
    created_at: int
    updated_at: int
    waiting_on: list[str] = []
    scheduled_at: int | None = None
    """When the node was last scheduled; None before (and from a scheduler older than these times)."""
    finished_at: int | None = None
    """When the node ended; None until then."""


class RunDetail(msgspec.Struct, frozen=True, kw_only=True):
    """A run and its nodes in position order."""

    run: RunView
    nodes: list[RunNodeView]


def _name(flow: str | FlowLike) -> str:
    return flow if isinstance(flow, str) else flow.name


def run_body(
    flow: str | FlowLike, run_input: Any, run_id: str | None, deadline_ms: Duration | None
) -> dict[str, Any]:
    """The start body: ``flow``, ``input``, optional ``id`` and ``deadlineMs`` (a `timedelta` sent as ms)."""
    body: dict[str, Any] = {"flow": _name(flow), "input": msgspec.to_builtins(run_input)}
    if run_id is not None:
        body["id"] = run_id
    if deadline_ms is not None:
        body["deadlineMs"] = duration_ms("deadline_ms", deadline_ms)  # the scheduler checks the value
    return body


def run_control(answer: Any, run_id: str) -> None:
    """Raise the refusal a cancel / retry answer stands for (``gone`` 410, else ``invalid-state`` 409)."""
    if not isinstance(answer, Mapping):
        raise TsumugiClientError(
            None, f"the scheduler answered a run's control without an object: {answer!r:.200}"
        )
    said = cast("Mapping[str, Any]", answer)
    if said.get("ok") is True:
        return
    if said.get("reason") == "gone":
        raise TsumugiClientError(410, f"{RUN_GONE_MESSAGE} ({run_id})", reason="gone")
    error = said.get("error")  # why, when the scheduler says more than the reason (a subflow's run)
    raise TsumugiClientError(
        409, error if isinstance(error, str) and error else INVALID_STATE_MESSAGE, reason="invalid-state"
    )


def started_run_id(answer: Any) -> str:
    """The id of the run a start answered (``{"id"}`` over HTTP, the id itself over RPC)."""
    run_id: object = cast("Mapping[str, Any]", answer).get("id") if isinstance(answer, Mapping) else answer
    if not isinstance(run_id, str):
        raise TsumugiClientError(
            None, f"the scheduler answered a run's start without its id: {answer!r:.200}"
        )
    return run_id


def read_run_detail(found: Any) -> RunDetail:
    """A run's detail from the plain values an RPC answered."""
    try:
        return msgspec.convert(found, RunDetail)
    except msgspec.ValidationError as exc:
        raise TsumugiClientError(None, f"the scheduler answered a malformed run: {exc}") from None


def _start_error(text: str) -> RunStartError | None:
    for line in reversed(text.splitlines()):
        kind, sep, message = line.partition(": ")
        if sep and kind.endswith(("RunStartError", "RunInputError", "RunError")):
            return RunStartError(message)
    return None


async def rpc_run(stub: Any, method: str, *args: Any) -> Any:
    """Call the run method ``method`` on the scheduler's entrypoint ``stub``; its refusals as our errors.

    Raises:
        RunStartError: the scheduler refused a start (its rule is the message).
        TsumugiClientError: any other failure of the call.
    """
    try:
        return await getattr(stub, method)(*args)
    except TsumugiClientError:
        raise
    except Exception as exc:
        refused = _start_error(f"{type(exc).__name__}: {exc}")
        if refused is not None:
            raise refused from exc
        raise TsumugiClientError(None, f"scheduler RPC {method} failed: {type(exc).__name__}: {exc}") from exc


def _run_path(run_id: str, *action: str) -> str:
    return "/".join(["/api/runs", quote(run_id, safe=":"), *action])


def start_run_call(body: dict[str, Any]) -> Call[str]:
    """``POST /api/runs``; repeated after a lost answer only with a run id (then the start is idempotent)."""

    def read(response: httpx.Response) -> str:
        answer = decode_body(response)
        if response.status_code == 400:
            raise RunStartError(str((answer or {}).get("error") or response.text[:200]))
        if not response.is_success:
            raise error_of(response)
        return started_run_id(answer)

    return Call(method="POST", path="/api/runs", body=body, idempotent="id" in body, read=read)


def get_run_call(run_id: str) -> Call[RunDetail | None]:
    """``GET /api/runs/{id}``; a JSON 404 means no such run (None)."""

    def read(response: httpx.Response) -> RunDetail | None:
        if response.status_code == 404 and decode_body(response) is not None:
            return None
        if not response.is_success:
            raise error_of(response)
        try:
            return msgspec.json.decode(response.content, type=RunDetail)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise TsumugiClientError(None, f"the scheduler answered a malformed run: {exc}") from None

    return Call(method="GET", path=_run_path(run_id), idempotent=True, read=read)


def run_control_call(action: str, run_id: str) -> Call[None]:
    """``POST /api/runs/{id}/cancel`` or ``/retry``; a refusal (409 / 410 or ``ok: false``) raises."""

    def read(response: httpx.Response) -> None:
        answer = decode_body(response)
        if response.status_code in (200, 409, 410) and answer is not None:
            run_control(answer, run_id)
            return
        raise error_of(response)

    return Call(method="POST", path=_run_path(run_id, action), idempotent=False, read=read)
