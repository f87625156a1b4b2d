"""``MailSink``: a stand-in mail API for local runs, so ``SendMail`` completes under ``tsumugi dev``.

The performer Worker serves it at ``POST /mail`` (and lists what it got at ``GET /mail``); the Worker's
``MAIL_API_URL`` var points there. It records each mail in memory (the newest ``capacity``), answers
``202 {"id": ...}`` and honours the ``idempotency-key`` header the way a real mail API would: a repeat of a
key answers the first id and records nothing, which is what makes an at-least-once ``SendMail`` safe.

Example:
    >>> sink = MailSink()
    >>> sink.post('{"to": "a@example.com", "subject": "hi"}', "job-1")
    SinkAnswer(status=202, body={'id': 'mail-1'})
    >>> sink.post('{"to": "a@example.com", "subject": "hi"}', "job-1").body, len(sink.messages)
    ({'id': 'mail-1'}, 1)
    >>> sink.post('{"subject": "hi"}', None)
    SinkAnswer(status=400, body={'error': 'to must be a string'})

Only SendMail (an HTTP client, not a browser) and a person at the address bar use it: a request that a web
page made (``Origin``, or ``Sec-Fetch-Site`` other than ``none`` / ``same-origin``) is refused, so a page on
another local port can neither post mail into it nor, by DNS rebinding, read it (issue 15 item 6).

    >>> MailSink.from_a_page({"sec-fetch-site": "same-site"}), MailSink.from_a_page({"sec-fetch-site": "none"})
    (True, False)
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any

import msgspec

__all__ = ["MailSink", "SentMail", "SinkAnswer"]

_log = logging.getLogger("tsumugi_examples")


class SentMail(msgspec.Struct, frozen=True, kw_only=True):
    """One mail the sink accepted."""

    id: str
    to: str
    subject: str
    body: str
    idempotency_key: str | None


class SinkAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """The HTTP status and JSON body to answer with."""

    status: int
    body: dict[str, Any]


def _refusal(rule: str) -> SinkAnswer:
    return SinkAnswer(status=400, body={"error": rule})


class MailSink:
    """Records mails posted to it; nothing is ever delivered."""

    def __init__(self, capacity: int = 100) -> None:
        """Keep at most ``capacity`` mails (the oldest go first), so a long dev session stays small."""
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self._mails: deque[SentMail] = deque(maxlen=capacity)
        self._count = 0

    @staticmethod
    def from_a_page(headers: Any) -> bool:
        """True when a web page sent the request (``headers`` has ``get``, case-insensitive names)."""
        site = headers.get("sec-fetch-site")
        return headers.get("origin") is not None or (site is not None and site not in ("none", "same-origin"))

    @property
    def messages(self) -> list[SentMail]:
        """The mails kept, oldest first."""
        return list(self._mails)

    def post(self, text: str, idempotency_key: str | None) -> SinkAnswer:
        """Accept one mail (JSON ``{"to", "subject", "body"?}``); 400 names the field that is wrong."""
        try:
            mail: Any = msgspec.json.decode(text)
        except msgspec.DecodeError:
            return _refusal("body must be valid JSON")
        if not isinstance(mail, dict):
            return _refusal("body must be a JSON object")
        fields: dict[str, Any] = mail  # pyright: ignore[reportUnknownVariableType]
        for name in ("to", "subject"):
            if not isinstance(fields.get(name), str):
                return _refusal(f"{name} must be a string")
        if not isinstance(fields.get("body", ""), str):
            return _refusal("body must be a string")
        for kept in self._mails:
            if idempotency_key is not None and kept.idempotency_key == idempotency_key:
                return SinkAnswer(status=202, body={"id": kept.id})
        self._count += 1
        sent = SentMail(
            id=f"mail-{self._count}",
            to=fields["to"],
            subject=fields["subject"],
            body=fields.get("body", ""),
            idempotency_key=idempotency_key,
        )
        self._mails.append(sent)
        _log.info("mail sink: %s to %s: %s", sent.id, sent.to, sent.subject)
        return SinkAnswer(status=202, body={"id": sent.id})

    def listing(self) -> dict[str, Any]:
        """``{"messages": [...]}`` for ``GET /mail``, oldest first."""
        return {"messages": msgspec.to_builtins(self.messages)}
