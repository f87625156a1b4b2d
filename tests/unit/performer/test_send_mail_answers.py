"""``SendMail`` maps the mail API's answers to outcomes, and posts through the platform's fetch (ADR-0107).

The answers come from a `Post` the test gives; the default (``platform_post``) is the Worker's
``workers.fetch``, which ``tests/integration/test_mail_sink.py`` runs end to end under the local runtime.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping

import pytest

from tsumugi_examples.send_mail import Answer, Mail, SendMail, platform_post
from tsumugi_performer import NonRetryableError, RetryAfterError
from tsumugi_performer.testing import Raised, Returned, create_test_context, run_performer

MAIL = Mail(to="a@example.com", subject="hi", body="text")


class Api:
    """A mail API that answers ``answer`` and records what it was sent."""

    def __init__(self, answer: Answer | BaseException) -> None:
        self.answer = answer
        self.sent: list[tuple[str, dict[str, object], Mapping[str, str]]] = []

    async def __call__(self, url: str, body: str, headers: Mapping[str, str]) -> Answer:
        self.sent.append((url, json.loads(body), headers))
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


async def _send(api: Api) -> Returned[object] | Raised:
    return await run_performer(SendMail("https://mail.example/send", post=api), MAIL, create_test_context())


async def test_an_accepted_mail_returns_the_status_and_answer_and_sends_the_idempotency_key() -> None:
    api = Api(Answer(202, {}, '{"id": "m1"}'))
    outcome = await _send(api)
    assert outcome == Returned(value={"status": 202, "answer": {"id": "m1"}})
    ((url, body, headers),) = api.sent
    assert (url, body) == (
        "https://mail.example/send",
        {"to": "a@example.com", "subject": "hi", "body": "text"},
    )
    assert headers["idempotency-key"] == create_test_context().idempotency_key
    assert headers["content-type"] == "application/json"


@pytest.mark.parametrize(
    ("answer", "error", "message"),
    [
        (Answer(429, {"retry-after": "7"}, ""), RetryAfterError, "mail API: 429"),
        (Answer(400, {}, "bad address"), NonRetryableError, "mail API refused the mail: 400 bad address"),
        (Answer(503, {}, ""), RuntimeError, "mail API failed: 503"),
        (OSError("connection refused"), OSError, "connection refused"),
        (TimeoutError(), RuntimeError, "mail API did not answer within 10 s"),
    ],
)
async def test_each_answer_is_the_outcome_it_stands_for(
    answer: Answer | BaseException, error: type[Exception], message: str
) -> None:
    outcome = await _send(Api(answer))
    assert isinstance(outcome, Raised)
    assert isinstance(outcome.error, error)
    assert str(outcome.error) == message
    if isinstance(outcome.error, RetryAfterError):
        assert outcome.error.retry_at(1_000) == 8_000  # Retry-After: 7 (seconds)


def test_by_default_the_mail_goes_through_the_platforms_fetch_not_httpx() -> None:
    performer = SendMail("https://mail.example/send")
    assert performer._post is platform_post  # pyright: ignore[reportPrivateUsage]
    assert asyncio.iscoroutinefunction(platform_post)
