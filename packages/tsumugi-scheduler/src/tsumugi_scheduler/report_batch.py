"""The consumer's reports of one queue batch, sent to each shard together: one ``report_many`` per step.

Every message of a batch runs concurrently and most finish in the same event-loop step, so their reports are
collected until that step ends and sent with one RPC per shard instead of one per message: on Cloudflare
that is one Durable Object request for a batch of no-op jobs, not a hundred. Each report still resolves on
its own (its answer, or the error of that report alone). Reports and answers cross as JSON text
(``report_json``, ADR-0166); a JobShard class predating it gets ``report_many``, and one predating that one
``report`` call per report.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

import msgspec

from tsumugi_core.exceptions import TsumugiError
from tsumugi_scheduler import _runtime
from tsumugi_scheduler.remote_errors import is_missing_method

__all__ = ["REPORT_JSON_METHOD", "REPORT_MANY_METHOD", "ReportBatch", "ReportError"]

REPORT_JSON_METHOD: Final = "report_json"
"""The JobShard RPC method taking several reports as JSON text, answering JSON text (ADR-0166)."""
REPORT_MANY_METHOD: Final = "report_many"
"""The JobShard RPC method taking several reports as plain data (before ``report_json``)."""
_ENCODE: Final = msgspec.json.Encoder().encode
_DECODE: Final = msgspec.json.Decoder(list[dict[str, Any]]).decode
_log = logging.getLogger("tsumugi_scheduler")

_Entry = tuple[dict[str, Any], "asyncio.Future[dict[str, Any]]"]


class ReportError(TsumugiError):
    """One report of a ``report_many`` call failed in the shard (the message is the shard's)."""


class ReportBatch:
    """Collects reports per shard during one loop step and sends each shard's with one call."""

    def __init__(self, env: Any) -> None:
        """Report through ``env.JOB_SHARD``."""
        self._env = env
        self._pending: dict[str, list[_Entry]] = {}
        self._sending: set[asyncio.Task[None]] = set()
        self._scheduled = False

    def report(
        self, shard: str, job_id: str, attempt: int, outcome: dict[str, Any]
    ) -> asyncio.Future[dict[str, Any]]:
        """Queue one report; the future resolves with the shard's answer (``accepted``, ``state``)."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[dict[str, Any]] = loop.create_future()
        item = {"jobId": job_id, "attempt": attempt, "outcome": outcome}
        self._pending.setdefault(shard, []).append((item, answer))
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._flush)
        return answer

    def _flush(self) -> None:
        self._scheduled = False
        pending, self._pending = self._pending, {}
        for shard, entries in pending.items():
            task = asyncio.get_running_loop().create_task(self._send(shard, entries))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _send(self, shard: str, entries: list[_Entry]) -> None:
        stub = self._env.JOB_SHARD.getByName(shard)
        items = [item for item, _ in entries]
        try:
            try:
                # JSON text both ways: two C calls instead of walks of JS objects on each side (ADR-0166).
                answers: list[Any] = _DECODE(await stub.report_json(shard, _ENCODE(items).decode()))
            except Exception as exc:
                if not is_missing_method(exc, REPORT_JSON_METHOD):
                    raise
                answers = await self._older(stub, shard, entries)
        except Exception as exc:  # the call failed as a whole: every report of it fails
            for _, answer in entries:
                if not answer.done():
                    answer.set_exception(exc)
            return
        for (_, answer), reply in zip(entries, answers, strict=True):
            if answer.done():
                continue
            if isinstance(reply, BaseException):
                answer.set_exception(reply)
            elif "error" in reply:
                answer.set_exception(ReportError(str(reply["error"])))
            else:
                answer.set_result(dict(reply))

    async def _older(self, stub: Any, shard: str, entries: list[_Entry]) -> list[Any]:
        """A shard predating ``report_json``: ``report_many`` with plain data, or one ``report`` each."""
        try:
            # Plain data: converted in one walk, not the SDK wrapper's three (ADR-0129).
            calls = _runtime.JsonCalls(stub)
            return list(await calls.report_many(shard, [item for item, _ in entries]))
        except Exception as exc:
            if not is_missing_method(exc, REPORT_MANY_METHOD):
                raise
            return await self._one_by_one(stub, shard, entries)

    @staticmethod
    async def _one_by_one(stub: Any, shard: str, entries: list[_Entry]) -> list[Any]:
        _log.warning(
            "shard %s has no %s(); reporting one by one (update the scheduler's entry.py)",
            shard,
            REPORT_MANY_METHOD,
        )
        calls = (stub.report(shard, i["jobId"], i["attempt"], i["outcome"]) for i, _ in entries)
        return list(await asyncio.gather(*calls, return_exceptions=True))
