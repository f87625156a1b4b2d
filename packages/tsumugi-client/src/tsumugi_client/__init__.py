"""tsumugi_client: jobs, flow runs and schedules from any Python program (HTTP) or a Worker (Service Binding).

- `TsumugiClient` (blocking) and `AsyncTsumugiClient` (asyncio): the REST API over httpx, with job handles
  (`Job` / `AsyncJob`: ``state()``, ``wait()``, ``result()``), retries and typed errors;
- `create_client` -> `WorkerClient`: inside a Worker, the same methods through the Service Binding in ``env``
  (``env`` first, as the original's ``enqueue(env, ...)``; ``enqueue`` answers ids). ADR-0162.

The two HTTP clients are loaded on first use (PEP 562), and with them httpx: a Worker's code enqueues through
its Service Binding, and a Worker's upload carries no httpx (ADR-0107).

Example:
    >>> client = create_client()                       # inside a Worker: env.TSUMUGI
    >>> remote = TsumugiClient("https://tsumugi.example.com", token="secret")
    >>> remote.close()
"""

import importlib as _importlib
import typing as _typing

from tsumugi_client._client import WorkerClient
from tsumugi_client._enqueue_kwargs import EnqueueItemDict, EnqueueKwargs
from tsumugi_client._errors import (
    AuthError,
    ConflictError,
    JobFailedError,
    JobNotFoundError,
    TsumugiClientError,
    UnavailableError,
    WaitTimeoutError,
)
from tsumugi_client._events import EventSent
from tsumugi_client._factory import create_client
from tsumugi_client._job import AsyncJob, Job, PollSchedule
from tsumugi_client._retry import RetryPolicy
from tsumugi_client._routing import MAX_BATCH_ITEMS, BindingConfig
from tsumugi_client._runs import FlowLike, RunDetail, RunNodeView, RunStartError, RunView
from tsumugi_client._schedules import ScheduleError, ScheduleFields
from tsumugi_client._targets import PerformerRef, Performs, performer_ref
from tsumugi_client._views import AttemptLogEntry, CancelResult, JobDetail, StepEntry
from tsumugi_core.enqueue_defaults import (
    DEFAULTABLE_OPTIONS,
    NOT_DEFAULTABLE_OPTIONS,
    EnqueueDefaultsLike,
    OnEnqueue,
    apply_defaults,
)
from tsumugi_core.ids import InvalidJobIdError
from tsumugi_core.options import (
    EnqueueItem,
    EnqueueValidationError,
    ExponentialBackoff,
    FixedBackoff,
    Guarantee,
)
from tsumugi_core.states import JobState

if _typing.TYPE_CHECKING:
    from tsumugi_client._async_client import AsyncTsumugiClient
    from tsumugi_client._sync_client import TsumugiClient

__all__ = [
    "DEFAULTABLE_OPTIONS",
    "MAX_BATCH_ITEMS",
    "NOT_DEFAULTABLE_OPTIONS",
    "AsyncJob",
    "AsyncTsumugiClient",
    "AttemptLogEntry",
    "AuthError",
    "BindingConfig",
    "CancelResult",
    "ConflictError",
    "EnqueueDefaultsLike",
    "EnqueueItem",
    "EnqueueItemDict",
    "EnqueueKwargs",
    "EnqueueValidationError",
    "EventSent",
    "ExponentialBackoff",
    "FixedBackoff",
    "FlowLike",
    "Guarantee",
    "InvalidJobIdError",
    "Job",
    "JobDetail",
    "JobFailedError",
    "JobNotFoundError",
    "JobState",
    "OnEnqueue",
    "PerformerRef",
    "Performs",
    "PollSchedule",
    "RetryPolicy",
    "RunDetail",
    "RunNodeView",
    "RunStartError",
    "RunView",
    "ScheduleError",
    "ScheduleFields",
    "StepEntry",
    "TsumugiClient",
    "TsumugiClientError",
    "UnavailableError",
    "WaitTimeoutError",
    "WorkerClient",
    "apply_defaults",
    "create_client",
    "performer_ref",
]

_HTTP_CLIENTS = {"AsyncTsumugiClient": "_async_client", "TsumugiClient": "_sync_client"}


def __getattr__(name: str) -> _typing.Any:
    home = _HTTP_CLIENTS.get(name)
    if home is None:
        raise AttributeError(f"module 'tsumugi_client' has no attribute {name!r}")
    value = getattr(_importlib.import_module(f"tsumugi_client.{home}"), name)
    globals()[name] = value
    return value
