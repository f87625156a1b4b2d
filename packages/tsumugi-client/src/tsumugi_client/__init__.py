"""tsumugi_client: enqueue Tsumugi jobs from a Worker (Service Binding RPC) or any Python process (HTTP).

Example:
    >>> client = create_client()                       # inside a Worker: env.TSUMUGI
    >>> remote = create_client(base_url="https://tsumugi.example.com", token="secret")
"""

from tsumugi_client._client import TsumugiClient
from tsumugi_client._defaults import (
    DEFAULTABLE_OPTIONS,
    NOT_DEFAULTABLE_OPTIONS,
    EnqueueDefaultsLike,
    OnEnqueue,
    apply_defaults,
)
from tsumugi_client._enqueue_kwargs import EnqueueItemDict, EnqueueKwargs
from tsumugi_client._errors import JobNotFoundError, TsumugiClientError
from tsumugi_client._factory import create_client
from tsumugi_client._routing import MAX_BATCH_ITEMS, BindingConfig
from tsumugi_client._runs import RunDetail, RunNodeView, RunsClient, RunStartError, RunView
from tsumugi_client._views import AttemptLogEntry, CancelResult, JobDetail
from tsumugi_core.ids import InvalidJobIdError
from tsumugi_core.options import (
    EnqueueItem,
    EnqueueValidationError,
    ExponentialBackoff,
    FixedBackoff,
    Guarantee,
)

__all__ = [
    "DEFAULTABLE_OPTIONS",
    "MAX_BATCH_ITEMS",
    "NOT_DEFAULTABLE_OPTIONS",
    "AttemptLogEntry",
    "BindingConfig",
    "CancelResult",
    "EnqueueDefaultsLike",
    "EnqueueItem",
    "EnqueueItemDict",
    "EnqueueKwargs",
    "EnqueueValidationError",
    "ExponentialBackoff",
    "FixedBackoff",
    "Guarantee",
    "InvalidJobIdError",
    "JobDetail",
    "JobNotFoundError",
    "OnEnqueue",
    "RunDetail",
    "RunNodeView",
    "RunStartError",
    "RunView",
    "RunsClient",
    "TsumugiClient",
    "TsumugiClientError",
    "apply_defaults",
    "create_client",
]
