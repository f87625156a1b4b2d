"""Payload checks at enqueue: each performer's published JSON Schema, fetched once and cached (ADR-0075).

The scheduler Worker never imports performer code, so it asks each performer for its payload's JSON Schema
over the Service Binding it already has (``describe``, tsumugi_performer.entrypoint) and checks payloads with
`tsumugi_core.json_schema`. The cache lives as long as the object holding it (one per isolate: the REST app's
context, the RPC entrypoint class), so an enqueue costs no extra subrequest:

- a binding's schema is fetched on its first enqueue and kept `SCHEMA_TTL_MS`; concurrent first enqueues
  share one fetch;
- a payload the cached schema refuses is checked once more against a fresh fetch (at most one per
  `RECHECK_MIN_MS` per binding) before it is refused, so a redeployed performer that now accepts it is never
  refused by a stale schema; a schema that became stricter is learnt within `SCHEMA_TTL_MS`, and until then
  the performer itself refuses the payload, as before this check existed;
- a performer that cannot be asked (no binding, no ``describe`` method: an older performer, an error) is not
  checked: enqueue never depends on a performer Worker being up. That answer is cached like a schema.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

import msgspec

from tsumugi_core.json_path import InvalidValueError
from tsumugi_core.json_schema import Check, SchemaError, compile_schema
from tsumugi_scheduler.performer_lookup import find_performer
from tsumugi_scheduler.remote_errors import error_text
from tsumugi_scheduler.timing import time_source

__all__ = ["DESCRIBE_METHOD", "RECHECK_MIN_MS", "SCHEMA_TTL_MS", "PayloadSchemas"]

DESCRIBE_METHOD: Final = "describe"
"""The performer entrypoint's RPC method that answers ``{"payloadSchema": ...}`` as JSON text."""
SCHEMA_TTL_MS: Final = 60_000
"""How long a fetched schema (or a performer's silence) is trusted before it is fetched again."""
RECHECK_MIN_MS: Final = 1_000
"""Least time between two refreshes a refused payload triggers, per binding."""
_log = logging.getLogger("tsumugi_scheduler")


class _Entry(msgspec.Struct, kw_only=True):
    check: Check | None
    fetched_at: int
    schema: Any = None
    """The published JSON Schema as the performer sent it (None when it publishes none)."""


def _plain(value: Any) -> Any:
    to_py = getattr(value, "to_py", None)
    return to_py() if callable(to_py) else value


class PayloadSchemas:
    """The payload checks of every binding, cached for one isolate."""

    def __init__(self) -> None:
        """An empty cache."""
        self._entries: dict[str, _Entry] = {}
        self._fetching: dict[str, asyncio.Future[_Entry]] = {}

    async def check(self, binding: str, payload: Any, env: Any, exports: Any = None) -> None:
        """Check ``payload`` against ``binding``'s published schema (nothing when it publishes none).

        Raises:
            InvalidValueError: the payload does not fit, with its path and the rule.
        """
        now = time_source().now_ms()
        entry = self._entries.get(binding)
        if entry is None or now - entry.fetched_at >= SCHEMA_TTL_MS:
            entry = await self._fetch(binding, env, exports)
        if entry.check is None:
            return
        try:
            entry.check(payload)
        except InvalidValueError:
            if now - entry.fetched_at < RECHECK_MIN_MS:
                raise
            fresh = await self._fetch(binding, env, exports)
            if fresh.check is not None:
                fresh.check(payload)

    async def published(self, binding: str, env: Any, exports: Any = None) -> Any:
        """``binding``'s published payload schema (a JSON Schema document); None when it publishes none."""
        entry = self._entries.get(binding)
        if entry is None or time_source().now_ms() - entry.fetched_at >= SCHEMA_TTL_MS:
            entry = await self._fetch(binding, env, exports)
        return entry.schema if entry.check is not None else None

    async def _fetch(self, binding: str, env: Any, exports: Any) -> _Entry:
        running = self._fetching.get(binding)
        if running is not None:
            return await asyncio.shield(running)
        future: asyncio.Future[_Entry] = asyncio.get_running_loop().create_future()
        self._fetching[binding] = future
        try:
            check, schema = await _ask(binding, env, exports)
            entry = _Entry(check=check, fetched_at=time_source().now_ms(), schema=schema)
            self._entries[binding] = entry
            future.set_result(entry)
            return entry
        except BaseException as exc:  # cancelled: whoever shares the fetch sees it too
            future.set_exception(exc)
            future.exception()  # retrieved, so asyncio does not log it when nobody shared the fetch
            raise
        finally:
            del self._fetching[binding]


async def _ask(binding: str, env: Any, exports: Any) -> tuple[Check | None, Any]:
    performer = find_performer(binding, env, exports)
    if performer is None:
        return None, None
    try:
        answer = _plain(await getattr(performer, DESCRIBE_METHOD)())
        description = msgspec.json.decode(answer) if isinstance(answer, str) else answer
        schema = description["payloadSchema"]
        return compile_schema(schema), schema
    except SchemaError as exc:
        _log.warning(
            "performer %s published a schema this scheduler cannot read, so its payloads are not "
            "checked at enqueue: %s",
            binding,
            exc,
        )
    except Exception as exc:
        # No describe (an older performer), an unreachable Worker, a malformed answer: not checked.
        _log.info(
            "performer %s publishes no payload schema (%s): payloads are not checked at enqueue",
            binding,
            error_text(exc).splitlines()[0],
        )
    return None, None
