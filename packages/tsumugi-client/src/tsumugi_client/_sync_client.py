"""`TsumugiClient`: the blocking HTTP client for ordinary Python programs (scripts, Django, Flask, workers).

Its twin `AsyncTsumugiClient` has the same methods, awaited (ADR-0061). Both build every request with
`tsumugi_client._calls` and decide retries with `HttpSetup`; this module only performs them.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Self, TypeVar, Unpack, overload

import httpx

from tsumugi_client import _calls as calls
from tsumugi_client._calls import Call
from tsumugi_client._enqueue_kwargs import EnqueueItemDict, EnqueueKwargs
from tsumugi_client._enqueue_plan import item_of, relocate, unprefixed
from tsumugi_client._events import EventSent, event_body, send_event_call
from tsumugi_client._http_setup import DEFAULT_TIMEOUT_S, HttpSetup, request_timeout
from tsumugi_client._job import Job, PollSchedule
from tsumugi_client._retry import RetryPolicy
from tsumugi_client._routing import BindingConfig
from tsumugi_client._runs import (
    FlowLike,
    RunDetail,
    get_run_call,
    run_body,
    run_control_call,
    start_run_call,
)
from tsumugi_client._schedules import (
    ScheduleFields,
    create_schedule_call,
    delete_schedule_call,
    get_schedule_call,
    list_schedules_call,
    schedule_action_call,
    trigger_schedule_call,
    update_schedule_call,
)
from tsumugi_client._targets import P, PerformerRef, Performs, R
from tsumugi_client._views import CancelResult, JobDetail
from tsumugi_client._wire import reschedule_body
from tsumugi_core.clock import IdSource
from tsumugi_core.enqueue_defaults import OnEnqueue, apply_defaults
from tsumugi_core.ids import InvalidJobIdError, parse_job_id
from tsumugi_core.options import EnqueueItem, EnqueueValidationError
from tsumugi_core.time_values import Duration, Instant, Seconds

__all__ = ["TsumugiClient", "checked_job_id"]

T = TypeVar("T")


def checked_job_id(job_id: object) -> str:
    """``job_id`` when it is a well-formed job id (nothing is sent otherwise).

    Raises:
        InvalidJobIdError: it is not.
    """
    if not isinstance(job_id, str):
        raise InvalidJobIdError(f"job id must be a string, got {type(job_id).__name__}")
    parse_job_id(job_id)
    return job_id


class TsumugiClient:
    """Enqueue, wait for and steer jobs over the scheduler's REST API, blocking.

    Example:
        >>> with TsumugiClient("http://127.0.0.1:8787", token="secret") as client:  # doctest: +SKIP
        ...     job = client.enqueue("Hello", {"name": "a"}, priority=5)
        ...     job.result(timeout=30)
        'Hello, a!'
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        bindings: Mapping[str, BindingConfig] | None = None,
        on_enqueue: OnEnqueue | None = None,
        timeout: Seconds | httpx.Timeout = DEFAULT_TIMEOUT_S,
        limits: httpx.Limits | None = None,
        retry: RetryPolicy | None = None,
        http_client: httpx.Client | None = None,
        seed: int | None = None,
        ids: IdSource | None = None,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], None] | None = None,
        poll: PollSchedule | None = None,
    ) -> None:
        """Talk to the scheduler Worker at ``base_url`` (its origin, e.g. ``https://tsumugi.example.com``).

        Args:
            base_url: The scheduler's origin; requests go to ``<base_url>/api/...``.
            token: The REST API's bearer token.
            bindings: ``{binding: {"shards": N}}``; bindings left out are asked of the scheduler once.
            on_enqueue: Defaults for options the caller left out (docs/reference/additions.md A1);
                must not be async.
            timeout: Seconds (a number or a `timedelta`, or an ``httpx.Timeout``) for each request.
            limits: The connection pool's limits (httpx's defaults otherwise).
            retry: Tries and backoff for connection failures and 502 / 503 / 504 (`RetryPolicy`).
            http_client: An ``httpx.Client`` to use instead of one of our own (the caller closes it).
            seed: Seeds the jitter and the client-made job ids (tests); the OS's randomness otherwise.
            ids: A source of local job ids (tests); overrides ``seed`` for ids.
            clock: Monotonic seconds, for waiting (``time.monotonic``).
            sleep: Blocks for a number of seconds (``time.sleep``); tests pass a fake.
            poll: Pauses between looks while waiting for a job (`PollSchedule`).

        Raises:
            ValueError: a setting breaks its rule; the message names it.
        """
        self._setup = HttpSetup(
            base_url,
            token=token,
            bindings=bindings,
            on_enqueue=on_enqueue,
            retry=retry,
            seed=seed,
            ids=ids,
            clock=clock,
            poll=poll,
        )
        self._owns_http = http_client is None
        per_request = request_timeout(timeout)
        self._http = http_client or httpx.Client(timeout=per_request, limits=limits or httpx.Limits())
        self._sleep = sleep or time.sleep

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool (unless the caller gave its own ``http_client``)."""
        if self._owns_http:
            self._http.close()

    def _run(self, call: Call[T]) -> T:
        """Perform ``call``, trying again after connection failures and 502 / 503 / 504 (ADR-0063)."""
        tried = 0
        while True:
            try:
                response = self._http.request(**self._setup.request(call))
            except httpx.TransportError as exc:
                self._sleep(self._setup.after_error(call, tried, exc))
            else:
                delay = self._setup.after_answer(call, tried, response)
                if delay is None:
                    return call.read(response)
                self._sleep(delay)
            tried += 1

    # enqueue ------------------------------------------------------------------------------------------

    @overload
    def enqueue(
        self, target: type[Performs[P, R]], payload: P, /, **options: Unpack[EnqueueKwargs]
    ) -> Job[R]: ...
    @overload
    def enqueue(
        self, target: PerformerRef[P, R], payload: P, /, **options: Unpack[EnqueueKwargs]
    ) -> Job[R]: ...
    @overload
    def enqueue(self, target: str, payload: Any, /, **options: Unpack[EnqueueKwargs]) -> Job[Any]: ...
    def enqueue(self, target: Any, payload: Any, /, **options: Unpack[EnqueueKwargs]) -> Job[Any]:
        """Enqueue one job and return its handle (the existing job's on a ``unique_key`` or ``id`` hit).

        ``target`` is a performer class, a `PerformerRef` or a binding name; with the first two, pyright
        checks ``payload`` against the performer's payload type and the handle's ``result()`` has its
        result type. Options are keyword-only (``priority=5``, ``delay_ms=1_000``, ...).

        Raises:
            EnqueueValidationError: an option breaks a rule (nothing is sent), or the scheduler refused it.
            AuthError, ConflictError, UnavailableError, TsumugiClientError: the scheduler's refusals / failure.
        """
        try:
            item, result_type = self._setup.item(target, payload, options)
            (job_id,) = self._enqueue([self._prepare(item)])
        except EnqueueValidationError as exc:
            raise unprefixed(exc) from None
        return self._job(job_id, result_type)

    def enqueue_many(self, items: Sequence[EnqueueItem | EnqueueItemDict]) -> list[Job[Any]]:
        """Enqueue several jobs, one call per destination shard (at most 500 items a call); handles in order.

        Every item is checked before any is sent; errors name the item as ``items[<index>].<field>``.

        Raises:
            EnqueueValidationError: an item breaks a rule (nothing is sent), or the scheduler refused one.
            AuthError, ConflictError, UnavailableError, TsumugiClientError: as for `enqueue`; calls to other
                shards may have stored their items.
        """
        prepared: list[EnqueueItem] = []
        for index, raw in enumerate(items):
            try:
                prepared.append(self._prepare(item_of(raw)))
            except EnqueueValidationError as exc:
                raise EnqueueValidationError(f"items[{index}].{exc.field}", exc.rule) from None
        return [self._job(job_id, None) for job_id in self._enqueue(prepared)]

    def _prepare(self, item: EnqueueItem) -> EnqueueItem:
        hook = self._setup.on_enqueue
        if hook is not None:
            defaults = hook(item)
            if inspect.isawaitable(defaults):
                if inspect.iscoroutine(defaults):
                    defaults.close()  # never awaited: closed so it leaves no warning behind
                raise EnqueueValidationError(
                    "on_enqueue", "must be a plain function for TsumugiClient, not async"
                )
            item = apply_defaults(item, defaults)
        return self._setup.plan.check(item)

    def _enqueue(self, items: list[EnqueueItem]) -> list[str]:
        if not items:
            return []
        plan = self._setup.plan
        if plan.needs_shard_counts(items):
            plan.learn(self._run(calls.list_bindings()))
        ids = [""] * len(items)
        for send in plan.sends(items):
            try:
                answer = self._run(send.call)
            except EnqueueValidationError as exc:
                raise relocate(exc, send.positions) from None
            for position, job_id in zip(send.positions, answer, strict=True):
                ids[position] = job_id
        return ids

    # jobs ---------------------------------------------------------------------------------------------

    def _job(self, job_id: str, result_type: Any) -> Job[Any]:
        return Job(
            job_id, result_type, get=self.get, now=self._setup.now, sleep=self._sleep, poll=self._setup.poll
        )

    @overload
    def job(self, job_id: str) -> Job[Any]: ...
    @overload
    def job(self, job_id: str, result_type: type[T]) -> Job[T]: ...
    def job(self, job_id: str, result_type: Any = None) -> Job[Any]:
        """A handle on an existing job (e.g. an id kept from an earlier enqueue); nothing is sent.

        Raises:
            InvalidJobIdError: ``job_id`` is malformed.
        """
        return self._job(checked_job_id(job_id), result_type)

    def get(self, job_id: str) -> JobDetail | None:
        """The job's current detail, or None when the scheduler does not know it."""
        return self._run(calls.get_job(checked_job_id(job_id)))

    def cancel(self, job_id: str) -> CancelResult:
        """Cancel a job; a QUEUED or RUNNING job is asked to stop (``requested=True``).

        Raises:
            JobNotFoundError: the job is not in its shard. ConflictError: its state does not permit it.
        """
        return self._run(calls.cancel_job(checked_job_id(job_id)))

    def retry(self, job_id: str) -> None:
        """Run a FAILED or STALLED job again now (`ConflictError` in any other state)."""
        self._run(calls.retry_job(checked_job_id(job_id)))

    def send_event(
        self, name: str, *, key: str, payload: Any = None, event_id: str | None = None
    ) -> EventSent:
        """Send event ``name``/``key`` to the jobs waiting for it (ADR-0146); see `WorkerClient.send_event`."""
        return self._run(send_event_call(event_body(name, key, payload, event_id)))

    def reschedule(
        self,
        job_id: str,
        *,
        run_at: Instant | None = None,
        delay_ms: Duration | None = None,
        priority: int | None = None,
    ) -> None:
        """Move a SCHEDULED job to ``run_at`` or ``delay_ms`` from now, optionally re-prioritised.

        ``run_at`` is epoch ms or an aware `datetime`; ``delay_ms`` is ms or a `timedelta`.
        """
        checked = checked_job_id(job_id)
        self._run(calls.reschedule_job(checked, reschedule_body(run_at, delay_ms, priority)))

    # runs ---------------------------------------------------------------------------------------------

    def start_run(
        self,
        flow: str | FlowLike,
        run_input: Any,
        *,
        run_id: str | None = None,
        deadline_ms: Duration | None = None,
    ) -> str:
        """Start a run of ``flow`` (a name or a declared `Flow`) on ``run_input``; answers ``<flow>:<local>``.

        A ``run_id`` used before answers that run's id (the start is idempotent, and repeated after a lost
        answer). ``deadline_ms`` (milliseconds or a `timedelta`) overrides the flow's deadline for this run.

        Raises:
            RunStartError: the scheduler refused it (the message is its rule).
            TsumugiClientError: the scheduler could not be reached or has no flows (501).
        """
        return self._run(start_run_call(run_body(flow, run_input, run_id, deadline_ms)))

    def get_run(self, run_id: str) -> RunDetail | None:
        """The run and its nodes, or None when the scheduler has no such run."""
        return self._run(get_run_call(run_id))

    def cancel_run(self, run_id: str) -> None:
        """Cancel a RUNNING run (it drains to CANCELLED); 409 ``invalid-state`` / 410 ``gone`` otherwise."""
        self._run(run_control_call("cancel", run_id))

    def retry_run(self, run_id: str) -> None:
        """Resume a FAILED run; 409 ``invalid-state`` / 410 ``gone`` otherwise."""
        self._run(run_control_call("retry", run_id))

    # schedules ----------------------------------------------------------------------------------------

    def list_schedules(self) -> list[dict[str, Any]]:
        """Every schedule (the API's view: timing in words, next occurrences, last run...)."""
        return self._run(list_schedules_call())

    def get_schedule(self, name: str) -> dict[str, Any] | None:
        """One schedule, or None."""
        return self._run(get_schedule_call(name))

    def create_schedule(self, name: str, **options: Unpack[ScheduleFields]) -> dict[str, Any]:
        """Create a run-time schedule (`ScheduleFields`); the created schedule.

        Raises:
            ScheduleError: the scheduler refused it (``field`` as the body spells it, ``rule``, ``status``).
        """
        return self._run(create_schedule_call(name, options))

    def update_schedule(self, name: str, **changes: Unpack[ScheduleFields]) -> dict[str, Any]:
        """Change a run-time schedule's fields; the changed schedule."""
        return self._run(update_schedule_call(name, changes))

    def delete_schedule(self, name: str) -> None:
        """Delete a run-time schedule."""
        self._run(delete_schedule_call(name))

    def pause_schedule(self, name: str) -> dict[str, Any]:
        """Stop firing; the schedule."""
        return self._run(schedule_action_call(name, "pause"))

    def resume_schedule(self, name: str) -> dict[str, Any]:
        """Fire again from the next boundary; the schedule."""
        return self._run(schedule_action_call(name, "resume"))

    def trigger_schedule(self, name: str) -> str:
        """Enqueue one occurrence now; its job id (a flow schedule's: the id of the run it started)."""
        return self._run(trigger_schedule_call(name))
