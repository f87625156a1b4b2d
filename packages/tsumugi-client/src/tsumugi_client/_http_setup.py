"""What `TsumugiClient` and `AsyncTsumugiClient` share: settings, checks, retries and enqueue preparation.

Everything that does not block or await lives here, so the two clients are thin twins that only perform
calls (ADR-0061): a request's headers and body, how a failure counts for retrying, the item of an enqueue.
"""

from __future__ import annotations

import math
import os
import random
import re
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

import httpx
import msgspec

from tsumugi_client._calls import Call
from tsumugi_client._enqueue_kwargs import item_from_fields
from tsumugi_client._enqueue_plan import EnqueuePlan
from tsumugi_client._errors import UnavailableError
from tsumugi_client._http_errors import RETRYABLE_STATUSES
from tsumugi_client._job import PollSchedule
from tsumugi_client._retry import Failure, RetryPolicy
from tsumugi_client._routing import BindingConfig, normalize_bindings
from tsumugi_client._targets import resolve_target
from tsumugi_core.clock import IdSource
from tsumugi_core.enqueue_defaults import OnEnqueue
from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.ids import LOCAL_ID_ENTROPY_BYTES, new_local_id
from tsumugi_core.options import EnqueueItem
from tsumugi_core.time_values import Seconds, as_seconds

__all__ = ["DEFAULT_TIMEOUT_S", "HttpSetup", "RandomIds", "request_timeout"]

DEFAULT_TIMEOUT_S: Final = 10.0
"""Connect, read, write and pool timeout of each request, unless the caller gives its own."""

_TOKEN_TEXT: Final = re.compile(r"[!-~]+")
"""What a bearer token may hold: printable ASCII, no space (RFC 6750's b64token is narrower still)."""
_NOT_SENT: Final = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


class RandomIds:
    """Local job ids from the operating system's randomness (or from ``rng`` when given, for tests)."""

    def __init__(self, rng: random.Random | None = None) -> None:
        """Use ``os.urandom`` unless ``rng`` is given."""
        self._rng = rng

    def new_local_id(self) -> str:
        """A fresh 24-character local id."""
        if self._rng is None:
            return new_local_id(os.urandom(LOCAL_ID_ENTROPY_BYTES))
        return new_local_id(self._rng.randbytes(LOCAL_ID_ENTROPY_BYTES))


def request_timeout(timeout: Seconds | httpx.Timeout) -> float | httpx.Timeout:
    """The per-request timeout httpx gets: an ``httpx.Timeout`` as it is, else seconds above 0.

    Raises:
        InvalidFieldError: the seconds are not a finite number above 0 (httpx would refuse them only at the
            first request, with a bare ``ValueError``).
    """
    if isinstance(timeout, httpx.Timeout):
        return timeout
    seconds = as_seconds(timeout)
    if not (math.isfinite(seconds) and seconds > 0):
        raise InvalidFieldError("timeout", f"must be a finite number of seconds above 0, got {seconds}")
    return seconds


class HttpSetup:
    """The checked settings of one HTTP client and the decisions both twins make the same way."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None,
        bindings: Mapping[str, BindingConfig] | None,
        on_enqueue: OnEnqueue | None,
        retry: RetryPolicy | None,
        seed: int | None,
        ids: IdSource | None,
        clock: Callable[[], float] | None,
        poll: PollSchedule | None,
    ) -> None:
        """Check every setting; the message of a `ValueError` names the one at fault."""
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise InvalidFieldError(
                "base_url", f"must be an absolute http:// or https:// URL, got {base_url!r}"
            )
        if token is not None and (not isinstance(token, str) or not token.strip()):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise InvalidFieldError(
                "token", "must be a non-empty string (or None when the scheduler needs no token)"
            )
        if token is not None and _TOKEN_TEXT.fullmatch(token) is None:
            # Never echoed: a header value httpx refuses would carry the token into its error's message.
            raise InvalidFieldError(
                "token",
                "must be printable ASCII without spaces or line ends (a token read from a file keeps its"
                " newline: strip it)",
            )
        if on_enqueue is not None and not callable(on_enqueue):
            raise InvalidFieldError("on_enqueue", f"must be callable, got {type(on_enqueue).__name__}")
        self.base_url = base_url.rstrip("/")
        self.headers = {"authorization": f"Bearer {token}"} if token is not None else {}
        self.on_enqueue = on_enqueue
        self.retry = retry or RetryPolicy()
        self.rng = random.Random(seed)
        self.plan = EnqueuePlan(
            normalize_bindings(bindings), ids or RandomIds(None if seed is None else self.rng)
        )
        self.now: Callable[[], float] = clock or time.monotonic
        self.poll = poll or PollSchedule()

    def request(self, call: Call[Any]) -> dict[str, Any]:
        """The keyword arguments of ``httpx.Client.request`` for ``call``."""
        headers = self.headers
        content: bytes | None = None
        if call.body is not None:
            content = msgspec.json.encode(call.body)
            headers = {**headers, "content-type": "application/json"}
        return {
            "method": call.method,
            "url": self.base_url + call.path,
            "content": content,
            "headers": headers,
        }

    def after_error(self, call: Call[Any], tried: int, exc: httpx.TransportError) -> float:
        """The pause before trying ``call`` again after a transport failure.

        Raises:
            UnavailableError: no more tries (status None: no answer came).
        """
        failure = Failure.NOT_SENT if isinstance(exc, _NOT_SENT) else Failure.MAYBE_SENT
        delay = self.retry.delay_s(tried, failure, idempotent=call.idempotent, rand=self.rng.random())
        if delay is None:
            raise UnavailableError(
                None, f"could not reach the scheduler at {self.base_url} ({tried + 1} tries): {exc!r}"
            ) from exc
        return delay

    def after_answer(self, call: Call[Any], tried: int, response: httpx.Response) -> float | None:
        """The pause before trying ``call`` again after ``response``; None to read the answer as final."""
        if response.status_code not in RETRYABLE_STATUSES:
            return None
        return self.retry.delay_s(
            tried, Failure.UNAVAILABLE, idempotent=call.idempotent, rand=self.rng.random()
        )

    @staticmethod
    def item(target: object, payload: object, options: Mapping[str, Any]) -> tuple[EnqueueItem, Any]:
        """The item of ``enqueue(target, payload, **options)`` and the result type of its target."""
        binding, result_type = resolve_target(target)
        return item_from_fields({"binding": binding, "payload": payload, **options}), result_type
