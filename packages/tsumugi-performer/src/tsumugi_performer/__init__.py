"""tsumugi_performer: write Tsumugi job bodies (performers) for Python Workers.

Subclass `Performer` with the payload and result types, implement ``async perform(payload, ctx)``, and steer
retries with `NonRetryableError` or `RetryAfterError`. `tsumugi_performer.testing` runs performers in tests.
"""

from tsumugi_performer._context import (
    DEFAULT_HEARTBEAT_INTERVAL_MS,
    HeartbeatAnswer,
    HeartbeatError,
    HeartbeatFn,
    JobContext,
)
from tsumugi_performer._errors import InvalidPayloadError, NonRetryableError, RetryAfterError
from tsumugi_performer._performer import Performer, payload_type_of
from tsumugi_performer._steps import (
    EventTimeoutError,
    StepArgumentError,
    StepArgumentTypeError,
    StepFencedError,
    StepOutcomeUnknownError,
    StepResultError,
    StepSaveLostError,
    StepsUnavailableError,
)

__all__ = [
    "DEFAULT_HEARTBEAT_INTERVAL_MS",
    "EventTimeoutError",
    "HeartbeatAnswer",
    "HeartbeatError",
    "HeartbeatFn",
    "InvalidPayloadError",
    "JobContext",
    "NonRetryableError",
    "Performer",
    "RetryAfterError",
    "StepArgumentError",
    "StepArgumentTypeError",
    "StepFencedError",
    "StepOutcomeUnknownError",
    "StepResultError",
    "StepSaveLostError",
    "StepsUnavailableError",
    "payload_type_of",
]
