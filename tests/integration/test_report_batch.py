"""The consumer's reports of one step go to each shard in one call (report_json, ADR-0166); each resolves on its
own; older shards get report_many, or report."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tsumugi_scheduler.report_batch import ReportBatch, ReportError

OK = {"ok": True, "result": None}


class Shard:
    """A JobShard stub recording calls; ``report_json`` and ``report_many`` answer per report, as the shard
    host does."""

    def __init__(
        self,
        *,
        has_report_json: bool = True,
        has_report_many: bool = True,
        fail_ids: frozenset[str] = frozenset(),
        missing: Exception | None = None,
    ) -> None:
        self.calls: list[tuple[str, str, int]] = []  # (method, shard, reports in the call)
        self.has_report_json = has_report_json
        self.has_report_many = has_report_many
        self.fail_ids = fail_ids
        self.missing = missing or _absent("report_many")

    async def report(self, name: str, job_id: str, attempt: int, outcome: Any) -> dict[str, Any]:
        self.calls.append(("report", name, 1))
        if job_id in self.fail_ids:
            raise RuntimeError(f"disk on fire for {job_id}")
        return {"accepted": True, "state": "COMPLETED"}

    async def report_json(self, name: str, reports: str) -> str:
        if not self.has_report_json:
            raise _absent("report_json")
        items = json.loads(reports)
        self.calls.append(("report_json", name, len(items)))
        return json.dumps(self._answers(items))

    async def report_many(self, name: str, reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if not self.has_report_many:  # what workerd answers for a method the class lacks
            raise self.missing
        self.calls.append(("report_many", name, len(reports)))
        return self._answers(reports)

    def _answers(self, reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {"error": f"RuntimeError: disk on fire for {r['jobId']}"}
            if r["jobId"] in self.fail_ids
            else {"accepted": True, "state": "COMPLETED"}
            for r in reports
        ]


def _absent(method: str) -> RuntimeError:
    """workerd's error for a method a JavaScript class lacks."""
    return RuntimeError(f'The RPC receiver does not implement the method "{method}".')


class Namespace:
    def __init__(self, shard: Shard) -> None:
        self.shard = shard

    def getByName(self, name: str) -> Shard:
        return self.shard


class Env:
    def __init__(self, shard: Shard) -> None:
        self.JOB_SHARD = Namespace(shard)


async def test_reports_of_one_step_go_to_each_shard_in_one_call() -> None:
    shard = Shard()
    batch = ReportBatch(Env(shard))
    answers = [batch.report("A#0", f"A#0:j{i}", 1, OK) for i in range(100)]
    answers += [batch.report("B#1", f"B#1:j{i}", 2, OK) for i in range(3)]
    assert await asyncio.gather(*answers) == [{"accepted": True, "state": "COMPLETED"}] * 103
    assert sorted(shard.calls) == [("report_json", "A#0", 100), ("report_json", "B#1", 3)]
    later = await batch.report("A#0", "A#0:late", 1, OK)  # a later step is a call of its own
    assert later == {"accepted": True, "state": "COMPLETED"}
    assert shard.calls[-1] == ("report_json", "A#0", 1)


async def test_a_shard_without_report_json_gets_report_many() -> None:
    shard = Shard(has_report_json=False, fail_ids=frozenset({"A#0:bad"}))
    batch = ReportBatch(Env(shard))
    good, bad = batch.report("A#0", "A#0:good", 1, OK), batch.report("A#0", "A#0:bad", 1, OK)
    assert await good == {"accepted": True, "state": "COMPLETED"}
    with pytest.raises(ReportError, match="RuntimeError: disk on fire for A#0:bad"):
        await bad
    assert shard.calls == [("report_many", "A#0", 2)]


async def test_a_failing_report_fails_alone() -> None:
    shard = Shard(fail_ids=frozenset({"A#0:bad"}))
    batch = ReportBatch(Env(shard))
    good, bad = batch.report("A#0", "A#0:good", 1, OK), batch.report("A#0", "A#0:bad", 1, OK)
    assert await good == {"accepted": True, "state": "COMPLETED"}
    with pytest.raises(ReportError, match="RuntimeError: disk on fire for A#0:bad"):
        await bad


async def test_a_failed_call_fails_every_report_in_it() -> None:
    class Broken(Shard):
        async def report_json(self, name: str, reports: str) -> str:
            raise ConnectionError("shard unreachable")

    batch = ReportBatch(Env(Broken()))
    answers = [batch.report("A#0", f"A#0:j{i}", 1, OK) for i in range(3)]
    results = await asyncio.gather(*answers, return_exceptions=True)
    assert [type(r) for r in results] == [ConnectionError] * 3


async def test_a_shard_without_report_many_is_reported_to_one_by_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    shard = Shard(has_report_json=False, has_report_many=False, fail_ids=frozenset({"A#0:bad"}))
    batch = ReportBatch(Env(shard))
    good, bad = batch.report("A#0", "A#0:good", 1, OK), batch.report("A#0", "A#0:bad", 1, OK)
    assert await good == {"accepted": True, "state": "COMPLETED"}
    with pytest.raises(RuntimeError, match="disk on fire"):
        await bad
    assert shard.calls == [("report", "A#0", 1), ("report", "A#0", 1)]
    assert "update the scheduler's entry.py" in caplog.text


class JsError(Exception):
    """A JS error as Pyodide raises it: ``name`` and ``message``, ``str`` as ``name: message``."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name, self.message = name, message


async def test_a_python_shard_without_report_many_is_detected_by_workerds_text() -> None:
    # A Python Durable Object lacking the method: workerd's python-entrypoint-helper.ts throws this TypeError.
    shard = Shard(
        has_report_json=False,
        has_report_many=False,
        missing=JsError("TypeError", "Method report_many does not exist"),
    )
    assert await ReportBatch(Env(shard)).report("A#0", "A#0:j", 1, OK) == {
        "accepted": True,
        "state": "COMPLETED",
    }
    assert shard.calls == [("report", "A#0", 1)]


async def test_the_shards_own_error_quoting_that_text_is_not_a_missing_method() -> None:
    trace = "Traceback (most recent call last):\n  ...\nTypeError: Method report_many does not exist\n"
    shard = Shard(has_report_json=False, has_report_many=False, missing=JsError("PythonError", trace))
    with pytest.raises(JsError, match="PythonError"):
        await ReportBatch(Env(shard)).report("A#0", "A#0:j", 1, OK)
    assert shard.calls == []
