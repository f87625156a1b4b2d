"""``SendMail``: posts a mail to an HTTP API (its URL comes from the Worker's vars) with httpx.

A 429 becomes `RetryAfterError` (honouring ``Retry-After``), another 4xx `NonRetryableError` (retrying cannot
help), a 5xx or a network error an ordinary failure (retried with backoff). The job id is sent as the
idempotency key, so an at-least-once repeat does not send twice at an API that honours it.
"""

from __future__ import annotations

from typing import Any

import httpx
import msgspec

from tsumugi_performer import JobContext, NonRetryableError, Performer, RetryAfterError

__all__ = ["Mail", "SendMail"]


class Mail(msgspec.Struct, frozen=True, kw_only=True):
    """``{"to": ..., "subject": ..., "body": ...}``."""

    to: str
    subject: str
    body: str = ""


class SendMail(Performer[Mail, dict[str, Any]]):
    """Sends one mail; returns the API's status code and answer."""

    def __init__(self, api_url: str, client: httpx.AsyncClient | None = None) -> None:
        """Post to ``api_url`` (through ``client`` when given, e.g. one with a mock transport)."""
        if not api_url.startswith(("http://", "https://")):
            raise ValueError(f"api_url must be an http(s) URL, got {api_url!r}")
        self.api_url = api_url
        self._client = client

    @classmethod
    def from_env(cls, env: Any) -> SendMail:
        """Build from the Worker's vars (``MAIL_API_URL``)."""
        return cls(str(env.MAIL_API_URL))

    async def _post(self, mail: Mail, key: str) -> httpx.Response:
        body = {"to": mail.to, "subject": mail.subject, "body": mail.body}
        headers = {"idempotency-key": key}
        if self._client is not None:
            return await self._client.post(self.api_url, json=body, headers=headers)
        async with httpx.AsyncClient(timeout=10.0) as client:
            return await client.post(self.api_url, json=body, headers=headers)

    async def perform(self, payload: Mail, ctx: JobContext) -> dict[str, Any]:
        """Send, mapping the API's answer to success or a retry decision."""
        response = await self._post(payload, ctx.idempotency_key)
        if response.status_code == 429:
            raise RetryAfterError.from_retry_after(response.headers.get("retry-after", "60"), "mail API: 429")
        if 400 <= response.status_code < 500:
            raise NonRetryableError(
                f"mail API refused the mail: {response.status_code} {response.text[:200]}"
            )
        if response.status_code >= 500:
            raise RuntimeError(f"mail API failed: {response.status_code}")
        answer: Any = response.json() if response.content else None
        return {"status": response.status_code, "answer": answer}
