"""Flow runs from a producer: start a run, read it (with its nodes and output), cancel or resume it.

Over a Service Binding (``env.TSUMUGI``, the scheduler's RPC entrypoint) or HTTP (the REST API), with the same
answers on both. Kept in a module of its own, beside the job client, so it can join whichever client class
hosts it.

Example (inside a Worker)::

    runs = RunsClient()
    run_id = await runs.start(self.env, "greetings", {"names": ["a", "b"]})
    detail = await runs.get(self.env, run_id)
    if detail is not None and detail.run.state == "COMPLETED":
        print(detail.run.output_value())
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol
from urllib.parse import quote

import msgspec

from tsumugi_client._errors import INVALID_STATE_MESSAGE, TsumugiClientError
from tsumugi_client._httpx import load_httpx
from tsumugi_core.exceptions import TsumugiError
from tsumugi_core.time_values import Duration, duration_ms

if TYPE_CHECKING:
    import httpx

__all__ = [
    "RUN_GONE_MESSAGE",
    "FlowLike",
    "RunDetail",
    "RunNodeView",
    "RunStartError",
    "RunView",
    "RunsClient",
]
# Exported from tsumugi_client; kept apart from the job client so it can join whichever client class hosts it.

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


def _body(
    flow: str | FlowLike, run_input: Any, run_id: str | None, deadline_ms: Duration | None
) -> dict[str, Any]:
    body: dict[str, Any] = {"flow": _name(flow), "input": msgspec.to_builtins(run_input)}
    if run_id is not None:
        body["id"] = run_id
    if deadline_ms is not None:
        body["deadlineMs"] = duration_ms("deadline_ms", deadline_ms)  # the scheduler checks the value
    return body


def _control(answer: Mapping[str, Any], run_id: str) -> None:
    if answer.get("ok") is True:
        return
    if answer.get("reason") == "gone":
        raise TsumugiClientError(410, f"{RUN_GONE_MESSAGE} ({run_id})", reason="gone")
    raise TsumugiClientError(409, INVALID_STATE_MESSAGE, reason="invalid-state")


def _start_error(text: str) -> RunStartError | None:
    for line in reversed(text.splitlines()):
        kind, sep, message = line.partition(": ")
        if sep and kind.endswith(("RunStartError", "RunInputError", "RunError")):
            return RunStartError(message)
    return None


class RunsClient:
    """Runs over the Service Binding ``binding`` (default ``TSUMUGI``), or over HTTP when ``base_url`` is given."""

    def __init__(
        self,
        *,
        binding: str = "TSUMUGI",
        base_url: str | None = None,
        token: str | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        """Choose the transport; ``http`` lets a caller share (and close) its own httpx client."""
        self._binding = binding
        self._http = http
        if base_url is not None and http is None:
            headers = {} if token is None else {"authorization": f"Bearer {token}"}
            self._http = load_httpx().AsyncClient(base_url=base_url, headers=headers)

    async def aclose(self) -> None:
        """Close the HTTP client this object created."""
        if self._http is not None:
            await self._http.aclose()

    def _stub(self, env: object) -> Any:
        stub = getattr(env, self._binding, None)
        if stub is None:
            raise TsumugiClientError(None, f"env has no {self._binding} binding (or give base_url= for HTTP)")
        return stub

    async def _rpc(self, env: object, method: str, *args: Any) -> Any:
        try:
            return await getattr(self._stub(env), method)(*args)
        except TsumugiClientError:
            raise
        except Exception as exc:
            refused = _start_error(f"{type(exc).__name__}: {exc}")
            if refused is not None:
                raise refused from exc
            raise TsumugiClientError(
                None, f"scheduler RPC {method} failed: {type(exc).__name__}: {exc}"
            ) from exc

    async def _request(self, method: str, path: str, body: Any = None) -> httpx.Response:
        http_errors: Any = load_httpx().HTTPError
        assert self._http is not None
        try:
            return await self._http.request(method, path, json=body)
        except http_errors as exc:
            raise TsumugiClientError(None, f"{method} {path} failed: {exc}") from exc

    async def start(
        self,
        env: object,
        flow: str | FlowLike,
        run_input: Any,
        *,
        run_id: str | None = None,
        deadline_ms: Duration | None = None,
    ) -> str:
        """Start a run of ``flow`` on ``run_input``; answers ``<flow>:<local>``.

        A ``run_id`` used before answers that run's id (the start is idempotent).
        ``deadline_ms`` (milliseconds or a `timedelta`) overrides the flow's deadline for this run.

        Raises:
            RunStartError: the scheduler refused it (the message is its rule).
            TsumugiClientError: the scheduler could not be reached or has no flows (501).
        """
        body = _body(flow, run_input, run_id, deadline_ms)
        if self._http is None:
            return str(await self._rpc(env, "start_run", body))
        response = await self._request("POST", "/api/runs", body)
        if response.status_code == 400:
            raise RunStartError(str(response.json().get("error")))
        if response.status_code != 201:
            raise TsumugiClientError(response.status_code, response.text)
        return str(response.json()["id"])

    async def get(self, env: object, run_id: str) -> RunDetail | None:
        """The run and its nodes, or None when the read model has no such run."""
        if self._http is None:
            found = await self._rpc(env, "get_run", run_id)
            return None if found is None else msgspec.convert(found, RunDetail)
        response = await self._request("GET", f"/api/runs/{quote(run_id, safe=':')}")
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise TsumugiClientError(response.status_code, response.text)
        return msgspec.json.decode(response.content, type=RunDetail)

    async def _mutate(self, env: object, action: str, run_id: str) -> None:
        if self._http is None:
            _control(await self._rpc(env, f"{action}_run", run_id), run_id)
            return
        response = await self._request("POST", f"/api/runs/{quote(run_id, safe=':')}/{action}")
        if response.status_code in (200, 409, 410):
            _control(response.json(), run_id)
            return
        raise TsumugiClientError(response.status_code, response.text)

    async def cancel(self, env: object, run_id: str) -> None:
        """Cancel a RUNNING run (it drains to CANCELLED).

        Raises:
            TsumugiClientError: 409 ``invalid-state`` / 410 ``gone`` / transport failures.
        """
        await self._mutate(env, "cancel", run_id)

    async def retry(self, env: object, run_id: str) -> None:
        """Resume a FAILED run.

        Raises:
            TsumugiClientError: 409 ``invalid-state`` / 410 ``gone`` / transport failures.
        """
        await self._mutate(env, "retry", run_id)
