"""``SendMail``: posts a mail to an HTTP API (its URL comes from the Worker's vars) with the platform's fetch.

A 429 becomes `RetryAfterError` (honouring ``Retry-After``), another 4xx `NonRetryableError` (retrying cannot
help), a 5xx, a network error or no answer within `TIMEOUT_S` an ordinary failure (retried with backoff). The
job id is sent as the idempotency key, so an at-least-once repeat does not send twice at an API that honours it.

Inside a Worker the request goes through ``workers.fetch`` (the SDK's, over workerd's ``fetch``), not httpx:
PyPI's httpx needs httpcore, anyio and sockets, which Pyodide lacks, and a Worker's upload carries no httpx
(ADR-0107). Tests and other hosts may pass their own `Post`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from http import HTTPMethod
from typing import Any, Final, NamedTuple

import msgspec

from tsumugi_performer import JobContext, NonRetryableError, Performer, RetryAfterError

__all__ = ["TIMEOUT_S", "Answer", "Mail", "Post", "SendMail", "platform_post"]

TIMEOUT_S: Final = 10.0
"""How long the mail API may take to answer."""


class Mail(msgspec.Struct, frozen=True, kw_only=True):
    """``{"to": ..., "subject": ..., "body": ...}``."""

    to: str
    subject: str
    body: str = ""


class Answer(NamedTuple):
    """What an HTTP API answered: status, headers (names in lower case) and body text."""

    status: int
    headers: Mapping[str, str]
    text: str


Post = Callable[[str, str, Mapping[str, str]], Awaitable[Answer]]
"""POST a body (text) with headers to a URL; raises ``OSError`` (or any exception) when nothing came back."""


async def platform_post(url: str, body: str, headers: Mapping[str, str]) -> Answer:
    """POST through the Worker's ``fetch`` (``workers.fetch``)."""
    from workers import fetch  # the SDK: present in a Worker, and under the local runtime

    async def send() -> Answer:
        response = await fetch(url, method=HTTPMethod.POST, headers=dict(headers), body=body)
        answered = {str(name).lower(): str(value) for name, value in response.headers.items()}
        return Answer(int(response.status), answered, await response.text())

    return await asyncio.wait_for(send(), TIMEOUT_S)


class SendMail(Performer[Mail, dict[str, Any]]):
    """Sends one mail; returns the API's status code and answer."""

    def __init__(self, api_url: str, post: Post | None = None) -> None:
        """Post to ``api_url`` (through ``post`` when given, else the platform's fetch)."""
        if not api_url.startswith(("http://", "https://")):
            raise ValueError(f"api_url must be an http(s) URL, got {api_url!r}")
        self.api_url = api_url
        self._post: Post = post or platform_post

    @classmethod
    def from_env(cls, env: Any) -> SendMail:
        """Build from the Worker's vars (``MAIL_API_URL``)."""
        return cls(str(env.MAIL_API_URL))

    async def perform(self, payload: Mail, ctx: JobContext) -> dict[str, Any]:
        """Send, mapping the API's answer to success or a retry decision."""
        body = json.dumps({"to": payload.to, "subject": payload.subject, "body": payload.body})
        headers = {"content-type": "application/json", "idempotency-key": ctx.idempotency_key}
        try:
            answer = await self._post(self.api_url, body, headers)
        except TimeoutError:
            raise RuntimeError(f"mail API did not answer within {TIMEOUT_S:g} s") from None
        if answer.status == 429:
            raise RetryAfterError.from_retry_after(answer.headers.get("retry-after", "60"), "mail API: 429")
        if 400 <= answer.status < 500:
            raise NonRetryableError(f"mail API refused the mail: {answer.status} {answer.text[:200]}")
        if answer.status >= 500:
            raise RuntimeError(f"mail API failed: {answer.status}")
        return {"status": answer.status, "answer": json.loads(answer.text) if answer.text else None}
